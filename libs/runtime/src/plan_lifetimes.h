// When each intermediate of a task plan needs memory: from just before the first submit that uses it
// until the scope holding all its uses has ended, in the heap ring of that scope's depth. RunPlan
// takes the memory from the runtime's heap rings on that schedule instead of allocating every
// intermediate for the whole run, so that a run's memory is bounded by what its scopes hold at once,
// as on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pypto/runtime/task_plan.h"

namespace pypto::rt {

struct IntermediateLifetime {
  bool used = false;           // some submit uses it (directly or through a view)
  uint32_t first_submit = 0;   // allocated just before this submit
  uint32_t release_after = 0;  // released once this submit is made and its scopes closed
  size_t ring = 0;             // the heap ring of the scope holding all its uses
};

// One entry per intermediate of `plan`. A scope that never closes (the run's outer one) ends with the
// last submit.
std::vector<IntermediateLifetime> IntermediateLifetimes(const TaskPlan& plan);

}  // namespace pypto::rt
