// Checks of a task plan before it runs, for mistakes the device would not report: reading an
// intermediate that no task ever writes gives whatever its memory last held there (upstream's
// runtime does not clear intermediates), where the simulator's zero-filled buffers hide it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pypto/runtime/task_plan.h"

namespace pypto::rt {

// The first task that reads an intermediate (directly or through a view) when no task of the plan
// writes any part of it and it has no starting value (init_value).
struct UnwrittenIntermediateRead {
  std::string tensor;  // the intermediate's name
  std::string kernel;  // what reads it
  size_t submit = 0;   // the reading submit's index in the plan
};

std::vector<UnwrittenIntermediateRead> FindUnwrittenIntermediateReads(const TaskPlan& plan);

}  // namespace pypto::rt
