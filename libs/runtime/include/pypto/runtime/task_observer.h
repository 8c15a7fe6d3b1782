// A hook into the runtime's task life, for debugging outputs (args dump, swimlane). The runtime calls
// it only when one is set (RuntimeOptions::observer), so a run without DFX pays one null check per task.
#pragma once

#include <cstdint>
#include <span>

#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_args.h"

namespace pypto::rt {

// One kernel task as it runs on a core: what the kernel is given and, once it has finished, when it ran.
struct ObservedTask {
  TaskId id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  int core_index = 0;                  // the logical core, numbered within its core type
  std::span<const TensorArg> tensors;  // as submitted: descriptor, direction, dump mark
  std::span<const int64_t> scalars;    // the kernel's scalar slots of args[], in order
  int64_t start_ns = 0;                // steady clock; set for AfterCompletion only
  int64_t end_ns = 0;
  int64_t staged_ns = 0;               // when early resolve staged it on its core; 0 if it was not
};

// Called from the threads that run tasks, concurrently for distinct tasks: implementations lock.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  // On the task's core, just before its kernel starts: inputs hold what the kernel will read.
  virtual void BeforeDispatch(const ObservedTask& task) = 0;
  // Just after its kernel returned successfully: outputs hold what it wrote.
  virtual void AfterCompletion(const ObservedTask& task) = 0;
};

// The steady clock in nanoseconds, the time base of ObservedTask.
int64_t SteadyNowNs();

}  // namespace pypto::rt
