// Task submission, dependency tracking and scheduling. A platform plugin supplies the CoreExecutor
// that actually runs a kernel on a logical core; the runtime decides when and where.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pypto/runtime/fatal.h"
#include "pypto/runtime/task_args.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

enum class CoreType : uint8_t { AIC = 0, AIV = 1 };
const char* CoreTypeName(CoreType type);

// Indices into a kernel's args[] that carry the runtime contexts, after tensors and scalars.
inline constexpr int kLocalContextSlot = 48;
inline constexpr int kGlobalContextSlot = 49;
inline constexpr int kArgSlots = 50;

struct LocalContext {
  int32_t block_idx = 0;
  int32_t block_num = 1;
};
struct GlobalContext {
  int32_t sub_block_id = 0;
};

// One kernel invocation, as handed to the platform.
struct KernelLaunch {
  TaskId task_id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  int core_index = 0;  // the logical core, numbered within its core type
  int64_t* args = nullptr;  // the kernel's args[]: tensor descriptor pointers, scalars, contexts
};

class CoreExecutor {
 public:
  virtual ~CoreExecutor() = default;
  // Called from scheduler threads, concurrently for distinct cores. An error is fatal for the run.
  virtual pypto::expected<void, FatalError> Execute(const KernelLaunch& launch) = 0;
};

struct RuntimeOptions {
  int aic_cores = 24;
  int aiv_cores = 48;
  int worker_threads = 0;  // 0: one per hardware thread, at most one per core
};

class Runtime {
 public:
  Runtime(RuntimeOptions options, CoreExecutor& executor);
  ~Runtime();  // waits for submitted tasks
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Dependencies come from overlapping tensor views: read-after-write and write-after-write.
  pypto::expected<TaskId, FatalError> SubmitAic(int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitAiv(int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> Submit(CoreType core, int32_t func_id, const TaskArgs& args);

  // Blocks until every submitted task has finished; returns the first fatal error, if any.
  pypto::expected<void, FatalError> WaitAll();

  size_t tasks_completed() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::rt
