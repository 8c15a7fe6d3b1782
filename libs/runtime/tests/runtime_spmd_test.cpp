// The blocks of an SPMD launch without sync_start: side by side up to the cores of their type (never
// ordered among themselves through the tensors they share, whatever the host's thread count), the
// launch as a whole ordered after its producers and before its consumers, and the stall watchdog
// that fails a launch whose running blocks wait for blocks that cannot get a core.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
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

// Runs a test-supplied body per task; Abort sets a flag the body may poll, as a simulator's kernel
// gives up when the watchdog aborts it.
class SpmdExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&, const std::atomic<bool>& aborted)>;
  explicit SpmdExecutor(Body body) : body_(std::move(body)) {}

  Result Execute(const KernelLaunch& launch) override { return body_(launch, aborted_); }
  void Abort(const KernelLaunch&) override {
    ++aborts_;
    aborted_ = true;
  }
  std::string KernelName(int32_t) const override { return "spin"; }
  int aborts() const { return aborts_.load(); }
  void Rearm() { aborted_ = false; }

 private:
  Body body_;
  std::atomic<bool> aborted_{false};
  std::atomic<int> aborts_{0};
};

TaskArgs Blocks(int32_t blocks, std::vector<int32_t>& written) {
  TaskArgs args;
  args.add_inout(IntTensor(written));
  args.launch_spec.set_block_num(blocks);
  return args;
}

// Every block writes the same tensor, and each waits until all have started: they must run at once.
// One thread is not a limit: a block that does not return leaves its work to a thread of its own.
TEST(Spmd, BlocksWritingOneTensorRunSideBySideOnAnyThreadCount) {
  for (Dispatch dispatch : {Dispatch::Eager, Dispatch::CallerFirst}) {
    for (int threads : {4, 1}) {
      Rendezvous all(4);
      SpmdExecutor executor([&](const KernelLaunch&, const std::atomic<bool>&) -> Result {
        if (!all.ArriveAndWait()) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "not side by side"});
        return {};
      });
      std::vector<int32_t> data(8);
      Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = threads, .dispatch = dispatch}, executor);
      ASSERT_TRUE(runtime.SubmitAiv(0, Blocks(4, data)));
      auto done = runtime.WaitAll();
      EXPECT_TRUE(done) << done.error().str() << " (" << threads << " threads)";
    }
  }
}

// The launch waits for the task that writes what it reads, and the task reading what it writes waits
// for every block.
TEST(Spmd, TheLaunchIsOrderedAsAWhole) {
  std::vector<int32_t> input(4), output(4), result(1);
  std::atomic<bool> producer_done{false};
  std::atomic<int> blocks_done{0}, blocks_early{0};
  std::atomic<bool> consumer_saw_all{false};
  SpmdExecutor executor([&](const KernelLaunch& launch, const std::atomic<bool>&) -> Result {
    if (launch.func_id == 0) {
      std::this_thread::sleep_for(30ms);
      producer_done = true;
    } else if (launch.func_id == 1) {
      if (!producer_done) ++blocks_early;
      std::this_thread::sleep_for(5ms);
      ++blocks_done;
    } else {
      consumer_saw_all = blocks_done == 4;
    }
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 4}, executor);
  TaskArgs producer;
  producer.add_output(IntTensor(input));
  ASSERT_TRUE(runtime.SubmitAiv(0, producer));
  TaskArgs launch;
  launch.add_input(IntTensor(input));
  launch.add_inout(IntTensor(output));
  launch.launch_spec.set_block_num(4);
  ASSERT_TRUE(runtime.SubmitAiv(1, launch));
  TaskArgs consumer;
  consumer.add_input(IntTensor(output));
  consumer.add_output(IntTensor(result));
  ASSERT_TRUE(runtime.SubmitAiv(2, consumer));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(blocks_early, 0);
  EXPECT_TRUE(consumer_saw_all);
  EXPECT_EQ(runtime.tasks_completed(), 6u);
}

// Five blocks on four cores, each spinning until all five have arrived (a home-made barrier, without
// sync_start): the fifth never gets a core. The watchdog fails the run after the timeout and aborts
// the spinning kernels.
TEST(Spmd, BlocksWaitingForABlockWithoutACoreEndWithSchedulerTimeout) {
  std::atomic<int> arrived{0};
  SpmdExecutor executor([&](const KernelLaunch&, const std::atomic<bool>& aborted) -> Result {
    ++arrived;
    while (arrived < 5)
      if (aborted) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "aborted"});
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2, .scheduler_timeout_ms = 300}, executor);
  std::vector<int32_t> flags(8);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(runtime.SubmitAiv(3, Blocks(5, flags)));
  auto done = runtime.WaitAll();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::SchedulerTimeout);
  const std::string message = done.error().str();
  // The quiet spell is at least the timeout, and the tick may add a little.
  const std::string prefix = "fatal error 100 (SchedulerTimeout): task 0 (kernel 'spin', func_id 3): no progress for ";
  ASSERT_EQ(message.substr(0, prefix.size()), prefix) << message;
  const std::string rest = message.substr(message.find(" ms (scheduler timeout"));
  EXPECT_EQ(rest,
            " ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS): 4 of its 5 blocks hold all 4 AIV cores and none "
            "returns (block 0-3 on AIV core 0-3), while block 4 waits for a core. Blocks of one launch that wait for "
            "each other (a barrier, or a flag in global memory) deadlock when not all of them hold a core at once: "
            "without sync_start the runtime starts blocks in waves, as cores free ('CCE Extern Kernel Programming', "
            "section 1). Launch it with pl.spmd(..., sync_start=True) and at most 4 blocks, so that every block holds "
            "a core at the same time");
  EXPECT_EQ(executor.aborts(), 4);
  EXPECT_LT(took, 5s);
  EXPECT_GE(took, 300ms);
  // The runtime runs the next run as a fresh one.
  runtime.Reset();
  executor.Rearm();
  arrived = 1;  // the fifth block of the next launch is already "there"
  ASSERT_TRUE(runtime.SubmitAiv(3, Blocks(4, flags)));
  auto again = runtime.WaitAll();
  EXPECT_TRUE(again) << again.error().str();
}

// A kernel that is only slow, even for several timeouts, is waited for: no block of its launch waits
// for a core it holds.
TEST(Spmd, ASlowLaunchIsNeverDeclaredStalled) {
  SpmdExecutor executor([&](const KernelLaunch&, const std::atomic<bool>& aborted) -> Result {
    std::this_thread::sleep_for(250ms);
    if (aborted) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "aborted"});
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2, .scheduler_timeout_ms = 100}, executor);
  std::vector<int32_t> data(8);
  ASSERT_TRUE(runtime.SubmitAiv(0, Blocks(4, data)));
  TaskArgs single;
  single.add_inout(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(0, single));
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
  EXPECT_EQ(executor.aborts(), 0);
}

// An executor that can tell progress: the body's `progress` counter is its mark.
class MarkedExecutor : public SpmdExecutor {
 public:
  using SpmdExecutor::SpmdExecutor;
  std::optional<uint64_t> ProgressMark(const KernelLaunch&) override { return progress.load(); }
  std::atomic<uint64_t> progress{0};
};

// A lone kernel that makes no progress (its mark never moves) fails the run after the timeout with
// upstream's S1, however many cores are free, and is aborted.
TEST(Spmd, ALoneKernelMakingNoProgressEndsWithSchedulerTimeout) {
  MarkedExecutor executor([&](const KernelLaunch&, const std::atomic<bool>& aborted) -> Result {
    while (!aborted) std::this_thread::sleep_for(1ms);
    return pypto::unexpected(FatalError{FatalCode::KernelFailed, "aborted"});
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2, .scheduler_timeout_ms = 200}, executor);
  std::vector<int32_t> data(8);
  TaskArgs single;
  single.add_inout(IntTensor(data));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(runtime.SubmitAiv(0, single));
  auto done = runtime.WaitAll();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(done);
  const std::string message = done.error().str();
  const std::string prefix = "fatal error 100 (SchedulerTimeout): no progress for ";
  ASSERT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_EQ(message.substr(message.find(" ms (scheduler timeout")),
            " ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS), sub-class S1 (running-stalled): task 0 (kernel "
            "'spin' on AIV core 0) is running and has changed neither its tensors nor its core's buffers, while no "
            "task started or finished; 1 of 1 AIC and 3 of 4 AIV cores are free, 0 ready tasks wait for one. A kernel "
            "that waits for a flag, a barrier or an event that nothing sets never returns: find the loop in it that "
            "waits and what should have ended it. A kernel that is merely slow keeps changing its buffers and is "
            "waited for; one that computes longer than the timeout without writing anything needs a larger "
            "SIMPLER_SCHEDULER_TIMEOUT_MS");
  EXPECT_EQ(executor.aborts(), 1);
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 5s);
}

// A kernel whose mark keeps moving runs for several timeouts and is waited for.
TEST(Spmd, AKernelMakingProgressIsWaitedForPastTheTimeout) {
  MarkedExecutor* self = nullptr;
  MarkedExecutor executor([&](const KernelLaunch&, const std::atomic<bool>& aborted) -> Result {
    const auto until = std::chrono::steady_clock::now() + 400ms;
    while (std::chrono::steady_clock::now() < until && !aborted) {
      ++self->progress;
      std::this_thread::sleep_for(1ms);
    }
    if (aborted) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "aborted"});
    return {};
  });
  self = &executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .worker_threads = 2, .scheduler_timeout_ms = 100}, executor);
  std::vector<int32_t> data(8);
  TaskArgs single;
  single.add_inout(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(0, single));
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
  EXPECT_EQ(executor.aborts(), 0);
}

}  // namespace
}  // namespace pypto::rt
