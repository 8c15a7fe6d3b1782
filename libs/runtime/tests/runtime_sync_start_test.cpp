// sync_start launches (all blocks start together, or the run fails with code 7) and the syncall
// barrier the runtime offers kernels (LaunchBarrier), including the diagnosis of a barrier that can
// never complete.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using testing::Rendezvous;
using Result = pypto::expected<void, FatalError>;

// Runs a test-supplied body per block and counts how many blocks run at once.
class BlockExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  explicit BlockExecutor(Body body) : body_(std::move(body)) {}

  Result Execute(const KernelLaunch& launch) override {
    const int now = ++running_;
    int seen = max_running_.load();
    while (now > seen && !max_running_.compare_exchange_weak(seen, now)) {
    }
    Result result = body_(launch);
    --running_;
    return result;
  }
  int max_running() const { return max_running_.load(); }

 private:
  Body body_;
  std::atomic<int> running_{0};
  std::atomic<int> max_running_{0};
};

int32_t BlockIdx(const KernelLaunch& launch) {
  return reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot])->block_idx;
}

TaskArgs Launch(int32_t blocks, bool sync_start, std::vector<int32_t>* tensor = nullptr) {
  TaskArgs args;
  if (tensor) args.add_inout(IntTensor(*tensor));
  args.launch_spec.set_block_num(blocks);
  args.launch_spec.set_require_sync_start(sync_start);
  return args;
}

TEST(SyncStart, MoreBlocksThanAivCoresIsFatalCode7) {
  BlockExecutor executor([](const KernelLaunch&) -> Result { return {}; });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2}, executor);
  auto id = runtime.SubmitAiv(3, Launch(5, true));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, FatalCode::RequireSyncStartInvalid);
  EXPECT_EQ(id.error().str(),
            "fatal error 7 (RequireSyncStartInvalid): task 0 (func_id 3) requires sync_start for 5 blocks, but there "
            "are only 4 AIV cores: every block of a sync_start launch must hold a core at the same time; launch at "
            "most 4 blocks (pl.system.available_aiv_count())");
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::RequireSyncStartInvalid);
}

TEST(SyncStart, MoreBlocksThanClustersIsFatalCode7) {
  BlockExecutor executor([](const KernelLaunch&) -> Result { return {}; });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2}, executor);
  auto id = runtime.SubmitAic(1, Launch(3, true));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().str(),
            "fatal error 7 (RequireSyncStartInvalid): task 0 (func_id 1) requires sync_start for 3 blocks, but there "
            "are only 2 clusters: every block of a sync_start launch must hold a core at the same time; launch at "
            "most 2 blocks (pl.system.available_cluster_count())");
  // Without sync_start the same launch simply runs in waves.
  Runtime waves({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2}, executor);
  ASSERT_TRUE(waves.SubmitAic(1, Launch(3, false)));
  ASSERT_TRUE(waves.WaitAll());
}

// Every block of a co-started launch is running at the same moment, even on one worker thread and
// although the blocks share a written tensor (which would otherwise order them one after another).
TEST(SyncStart, AllBlocksRunAtTheSameTime) {
  constexpr int kBlocks = 6;
  Rendezvous all(kBlocks);
  BlockExecutor executor([&](const KernelLaunch&) -> Result {
    if (!all.ArriveAndWait()) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "not co-started"});
    return {};
  });
  for (Dispatch dispatch : {Dispatch::Eager, Dispatch::CallerFirst}) {
    Rendezvous again(kBlocks);
    std::vector<int32_t> data(4);
    Runtime runtime({.aic_cores = 1, .aiv_cores = kBlocks, .worker_threads = 1, .dispatch = dispatch}, executor);
    ASSERT_TRUE(runtime.SubmitAiv(0, Launch(kBlocks, true, &data)));
    auto done = runtime.WaitAll();
    ASSERT_TRUE(done) << done.error().str();
    EXPECT_EQ(runtime.tasks_completed(), static_cast<size_t>(kBlocks));
    EXPECT_EQ(executor.max_running(), kBlocks);
  }
}

// A co-started launch waits until all its cores are free: no block starts while an earlier task
// still holds one of them, and later tasks wait for every block.
TEST(SyncStart, StartsOnlyWhenEveryBlockHasACore) {
  std::vector<int32_t> earlier(1), shared(4), later(1);
  std::atomic<bool> earlier_done{false};
  std::atomic<int> blocks_before_earlier_done{0}, blocks_done{0};
  std::atomic<bool> later_saw_all{false};
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 0) {
      std::this_thread::sleep_for(50ms);
      earlier_done = true;
    } else if (launch.func_id == 1) {
      if (!earlier_done) ++blocks_before_earlier_done;
      ++blocks_done;
    } else {
      later_saw_all = blocks_done == 4;
    }
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 4}, executor);
  TaskArgs first;
  first.add_inout(IntTensor(earlier));
  ASSERT_TRUE(runtime.SubmitAiv(0, first));
  ASSERT_TRUE(runtime.SubmitAiv(1, Launch(4, true, &shared)));
  TaskArgs reader;
  reader.add_input(IntTensor(shared));
  reader.add_output(IntTensor(later));
  ASSERT_TRUE(runtime.SubmitAiv(2, reader));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(blocks_before_earlier_done, 0);
  EXPECT_TRUE(later_saw_all);
}

// A kernel that is merely slow is never taken for a stalled barrier: the other blocks wait for it.
TEST(Syncall, ASlowBlockIsWaitedFor) {
  constexpr int kBlocks = 4;
  std::mutex mu;
  std::vector<int> order;
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (BlockIdx(launch) == 2) std::this_thread::sleep_for(300ms);
    {
      std::lock_guard lock(mu);
      order.push_back(BlockIdx(launch));
    }
    if (auto ok = launch.barrier->SyncAll(launch, "slow"); !ok) return ok;
    std::lock_guard lock(mu);
    order.push_back(10 + BlockIdx(launch));
    return {};
  });
  for (bool sync_start : {true, false}) {
    order.clear();
    Runtime runtime({.aic_cores = 1, .aiv_cores = kBlocks, .worker_threads = 1, .dispatch = Dispatch::CallerFirst},
                    executor);
    ASSERT_TRUE(runtime.SubmitAiv(0, Launch(kBlocks, sync_start)));
    auto done = runtime.WaitAll();
    ASSERT_TRUE(done) << done.error().str();
    ASSERT_EQ(order.size(), 2u * kBlocks);
    EXPECT_EQ(order[kBlocks - 1], 2);  // the slow block arrives last, and only then does anyone pass
    for (int i = kBlocks; i < 2 * kBlocks; ++i) EXPECT_GE(order[static_cast<size_t>(i)], 10) << i;
  }
}

// Six blocks on four cores, none co-started: four wait at the barrier holding every core, and the
// other two can never start.
TEST(Syncall, ABarrierThatCanNeverCompleteIsDiagnosed) {
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result {
    return launch.barrier->SyncAll(launch, "neighbours");
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2}, executor);
  ASSERT_TRUE(runtime.SubmitAiv(5, Launch(6, false)));
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::SchedulerTimeout);
  EXPECT_EQ(done.error().str(),
            "fatal error 100 (SchedulerTimeout): task 0 (kernel 'neighbours', func_id 5): the syncall among its 6 "
            "blocks can never complete: 4 of 6 blocks arrived (block 0 on AIV core 0, block 1 on AIV core 1, block 2 "
            "on AIV core 2, block 3 on AIV core 3); block 4, 5 cannot start: no AIV core is free, all 4 are held by "
            "blocks waiting at a barrier; launch it with pl.spmd(..., sync_start=True) and at most 4 blocks, so that "
            "every block holds a core at the same time");
  // A new run on the same runtime is not affected.
  runtime.Reset();
  ASSERT_TRUE(runtime.SubmitAiv(5, Launch(4, false)));
  auto again = runtime.WaitAll();
  EXPECT_TRUE(again) << again.error().str();
}

// Without sync_start, the blocks of a launch still run side by side, up to the cores of their type,
// although they all write one tensor: a barrier among as many blocks as there are free cores completes.
TEST(Syncall, BlocksWritingOneTensorRunSideBySide) {
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result { return launch.barrier->SyncAll(launch, "k"); });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2}, executor);
  std::vector<int32_t> data(4);
  ASSERT_TRUE(runtime.SubmitAiv(0, Launch(3, false, &data)));
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
  EXPECT_EQ(executor.max_running(), 3);
}

// A block that finishes without reaching the barrier leaves the others waiting forever.
TEST(Syncall, ABlockThatSkipsTheBarrierIsDiagnosed) {
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (BlockIdx(launch) == 1) return {};
    return launch.barrier->SyncAll(launch, "skips");
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2}, executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Launch(3, true)));
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 100 (SchedulerTimeout): task 0 (kernel 'skips', func_id 0): the syncall among its 3 blocks "
            "can never complete: 2 of 3 blocks arrived (block 0 on AIV core 0, block 2 on AIV core 2); block 1 "
            "finished without reaching it");
}

// pypto-lib's qwen3_14b decode_fwd hung here: a launch co-started on every core, then a task reading
// what it writes, after an AIC producer the launch waits for. Nothing runs before WaitAll (CallerFirst,
// one thread), so the consumer is submitted while the launch still waits to be dispatched. The launch's join was released early at once (it held
// nothing back), so the consumer was staged on a core the launch needs, and the launch never started;
// the run failed with SchedulerTimeout S3 (runtime_idle_stall.cpp) naming both. The consumer now runs
// after every block, and the run succeeds.
struct CoStartedThenConsumer {
  const char* name;
  bool mixed;
};

void PrintTo(const CoStartedThenConsumer& param, std::ostream* os) { *os << param.name; }

class SyncStartConsumer : public ::testing::TestWithParam<CoStartedThenConsumer> {};

TEST_P(SyncStartConsumer, ALaunchOnEveryCoreThenItsConsumerRunsInOrder) {
  std::atomic<int> blocks_done{0};
  std::atomic<int> seen_by_consumer{-1};
  BlockExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 3)
      seen_by_consumer = blocks_done.load();
    else if (launch.func_id != 4)
      ++blocks_done;
    return {};
  });
  Runtime runtime({.aic_cores = 6, .aiv_cores = 12, .worker_threads = 1, .dispatch = Dispatch::CallerFirst},
                  executor);
  std::vector<int32_t> data(4, 0);
  // An AIC producer first: the launch waits for it, so no AIV task is queued when the consumer comes.
  TaskArgs writes;
  writes.add_output(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAic(4, writes));
  TaskArgs launch = Launch(GetParam().mixed ? 6 : 12, true, &data);
  launch.set_allow_early_resolve(true);
  ASSERT_TRUE(GetParam().mixed ? runtime.SubmitMixed({.aic = 1, .aiv0 = 2, .aiv1 = 2}, launch)
                               : runtime.SubmitAiv(2, launch));
  TaskArgs reads;
  reads.add_input(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(3, reads));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(blocks_done.load(), GetParam().mixed ? 18 : 12);
  EXPECT_EQ(seen_by_consumer.load(), blocks_done.load());
}

INSTANTIATE_TEST_SUITE_P(SyncStart, SyncStartConsumer,
                         ::testing::Values(CoStartedThenConsumer{"Mixed", true}, CoStartedThenConsumer{"Aiv", false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pypto::rt
