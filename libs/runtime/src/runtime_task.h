// The scheduler's records of submitted work: a task (one kernel block, or a dependency-only node), the
// launch (one submit) and scope it belongs to, the cohort it is dispatched with, and its entries in the
// access index. Plain data shared by the runtime_*.cpp files that define Runtime::Impl (runtime_impl.h);
// only the scheduler's mutex guards them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_args.h"
#include "range_index.h"

namespace pypto::rt {

class MixedBlock;  // mixed_block.h

// A write by a submit of a scope still open, as the dependency pools see it (runtime_dep_pool.cpp):
// later submits reading those bytes count an edge to `submit`, whether or not it has finished.
struct PinnedWrite;
using PinnedWriteIndex = RangeIndex<PinnedWrite*>;
struct PinnedWrite {
  uint64_t buffer_addr = 0;
  TaskId submit = kInvalidTaskId;
  bool live = true;  // still in the index: false once a later write covering it has taken its place
  PinnedWriteIndex::Handle entry;
};

// A scope's share of its ring: launches submitted in it, and how many of those have finished.
// `manual`: its tasks get no dependencies from tensors (ScopeMode::Manual).
// For the dependency pools: `first_task`, the first id given out while it was open, `closed`, the id
// ranges [first, end) of the scopes nested in it that have ended (in order, adjacent ones merged), so
// that an id from `first_task` on is one of its own tasks unless it lies in one of those; `writes`,
// what its submits wrote.
struct Scope {
  size_t ring = 0;
  size_t launches = 0;
  size_t finished = 0;
  bool ended = false;
  bool manual = false;
  TaskId first_task = 0;
  std::vector<std::pair<TaskId, TaskId>> closed;
  std::deque<PinnedWrite> writes;
};

struct Task;

// A heap block the orchestration has released (Runtime::HeapRelease) while tasks using it were
// live: each of them holds it, and the last to retire gives the memory back to its ring.
struct HeapLease {
  HeapBlock block;
  size_t users_left = 0;
};

// One submit: its blocks, and the scope whose ring slot it holds.
struct Launch {
  std::shared_ptr<Scope> scope;
  int32_t blocks_left = 0;
  int32_t started = 0;  // its blocks dispatched so far (counted for early resolve only)
  // The kernel tasks of an AIC/AIV launch by block index while they are live (null once retired),
  // for its syncall barrier; empty for a mixed launch. `submitted`: every block is in `blocks`.
  std::vector<Task*> blocks;
  // A mixed launch: every member of every block (block by block, in member order; null once retired),
  // for SyncAll<false>, the barrier of all its cube and vector cores; empty for an AIC/AIV launch.
  std::vector<Task*> members;
  size_t members_per_block = 0;
  std::array<int, 2> block_cores{};  // a mixed launch: the AIC and AIV cores one of its blocks takes
  bool submitted = false;
  int32_t func_id = -1;
  TaskId first_task = kInvalidTaskId;
  // The barrier: blocks arrived at the current one, and how many have completed.
  int32_t arrived = 0;
  uint64_t generation = 0;
  std::string kernel;  // the name the blocks gave when waiting, for a diagnosis
  std::string call;    // where in the kernel they wait ("file:line: SyncAll()"), when they said

  // Who meets at its barrier: its blocks, or the members of a mixed launch.
  std::vector<Task*>& parties() { return members.empty() ? blocks : members; }
  const std::vector<Task*>& parties() const { return members.empty() ? blocks : members; }
};

// The tasks of a sync_start launch, or the members of one block of a mixed task: queued as one (its
// first task stands in the ready queue) once all are ready, and dispatched only onto enough free cores
// for all of them at once.
struct Cohort {
  size_t size = 0;             // its tasks, all of them known at submit
  std::vector<Task*> tasks;    // in submit order; the first stands in the ready queue
  std::array<int, 2> cores{};  // cores needed per core type
  size_t ready = 0;
};

inline constexpr size_t kRings = kScopeRings;

// An entry of the runtime's access index: task->accesses[slot] is the access it records.
struct AccessRef {
  Task* task;
  uint32_t slot;
};
using AccessIndex = RangeIndex<AccessRef>;

struct Task {
  TaskId id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  // The descriptors the kernel sees; sized once at submit, so args[] may point into it.
  std::vector<ChipTensor> tensors;
  LocalContext local;
  GlobalContext global;
  std::array<int64_t, kArgSlots> args{};

  struct Access {
    uint64_t buffer_addr;
    bool write;
    bool live;  // still in the index: false once a later write covering it has taken its place
    uint16_t arg;  // the tensor argument it comes from (for the dependency graph)
    AccessIndex::Handle entry;
  };
  std::vector<Access> accesses;  // registered with the runtime until this task retires
  std::vector<Task*> dependents;  // tasks waiting for this one
  std::vector<std::shared_ptr<HeapLease>> leases;  // heap blocks given back when it retires
  size_t pending = 0;             // unfinished tasks this one waits for
  // Early resolve. `early_resolve`: its dependents may be staged before it finishes. `released_early`:
  // it allows that, and it and every block of its launch have started. `holding_back`: of the
  // `pending` producers, those not released early; a task with none left can be staged. `staged`:
  // `core` is reserved for it while it waits for its producers.
  bool early_resolve = false;
  bool released_early = false;
  size_t holding_back = 0;
  bool staged = false;
  int64_t staged_ns = 0;
  TaskId last_dependent = kInvalidTaskId;  // the newest task given an edge from this one
  std::shared_ptr<Launch> launch;
  // A dependency-only node (the gate and join of a mixed submit): retired as soon as it is ready,
  // on no core.
  bool dummy = false;
  // A fill task (Runtime::SubmitFill): a dummy that, when it retires, sets every element of
  // `tensors` (its output tensors) to the low bytes of these bits.
  std::optional<uint64_t> fill;
  // Recording the dependency graph: the node of the submit it belongs to, and whether it has finished
  // (it is kept, accesses and all, so that later submits still find it; see RuntimeOptions::dep_graph).
  uint32_t graph_node = 0;
  bool retired = false;
  int8_t lane = -1;  // an AIV lane fixed by a mixed submit; else the core's parity
  int core = -1;     // the core it runs on, while it does
  bool running = false;  // its kernel has started (on `core`) and not yet returned
  bool at_barrier = false;  // its kernel waits in LaunchBarrier::SyncAll
  std::shared_ptr<Cohort> cohort;  // a block of a sync_start launch, or a member of a mixed task
  TaskId mixed_group = kInvalidTaskId;  // KernelLaunch::mixed_group
  std::shared_ptr<MixedBlock> mixed_block;  // a member of a mixed task's block: its pipes and peers
  size_t member = 0;                        // its index among them
  // A member of a mixed task: its launch, whose members all meet at a syncall (`launch` stays unset,
  // since the launch counts its blocks by their joins).
  std::shared_ptr<Launch> mixed_launch;
  // Only with an observer: the arguments as submitted (directions and dump marks), for ObservedTask.
  std::vector<TensorArg> observed_args;
  size_t scalar_count = 0;
};

// Copies the arguments into `task` (a blank one: new, or recycled by the runtime) and lays out
// args[]: descriptor pointers, scalar bit patterns, then the two contexts at their fixed slots.
// `observed`: an observer will look at the task, so it keeps the arguments as submitted too.
std::unique_ptr<Task> MakeTask(std::unique_ptr<Task> task, CoreType core, int32_t func_id, const TaskArgs& args,
                               int32_t block_idx, bool observed);

// Retired tasks a runtime keeps for reuse: a submit then allocates neither the task nor, up to the
// sizes they had before, its vectors. A few MB at most (a task is about 600 bytes, plus 128 per tensor).
inline constexpr size_t kSpareTasks = 4096;

}  // namespace pypto::rt
