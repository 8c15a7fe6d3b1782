// For C API implementations and plugins: the task-plan handle behind pypto_rt_plan.
#pragma once

#include "pypto-c/backend_plugin.h"
#include "pypto/runtime/task_plan.h"

struct pypto_rt_plan {
  pypto::rt::TaskPlan plan;
};
