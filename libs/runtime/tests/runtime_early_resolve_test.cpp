// Early resolve (TaskArgs::set_allow_early_resolve on a producer): a consumer whose producers all allow
// it and have all started is staged on an idle core before they finish, and starts there once they
// have. The swimlane records when each task was staged, so these tests read the schedule from it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "pypto/runtime/swimlane.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using Result = pypto::expected<void, FatalError>;

// Each func_id sleeps its own number of milliseconds; `started` counts the kernels that began.
class SleepExecutor : public CoreExecutor {
 public:
  explicit SleepExecutor(std::map<int32_t, int> ms) : ms_(std::move(ms)) {}
  Result Execute(const KernelLaunch& launch) override {
    ++started;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_.at(launch.func_id)));
    return {};
  }
  // Returns once `n` kernels have begun, so a test can submit against a known set of running tasks.
  void AwaitStarted(int n) const {
    while (started.load() < n) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  std::atomic<int> started{0};

 private:
  std::map<int32_t, int> ms_;
};

TaskArgs Writes(std::vector<int32_t>& out, bool early = false, int32_t blocks = 1) {
  TaskArgs args;
  args.add_output(IntTensor(out));
  args.set_allow_early_resolve(early);
  args.launch_spec.block_num = blocks;
  return args;
}

TaskArgs Reads(std::vector<std::vector<int32_t>*> inputs) {
  TaskArgs args;
  for (auto* input : inputs) args.add_input(IntTensor(*input));
  return args;
}

constexpr int kAivCores = 2;

struct Schedule {
  std::vector<SwimlaneRecord> records;
  // The record of the task that ran func_id (the last one, for a launch of several blocks).
  const SwimlaneRecord& Of(int32_t func_id) const {
    auto it = std::ranges::find_if(records.rbegin(), records.rend(),
                                   [&](const SwimlaneRecord& r) { return r.func_id == func_id; });
    EXPECT_NE(it, records.rend()) << "no task of func_id " << func_id << " ran";
    return *it;
  }
};

class EarlyResolve : public ::testing::TestWithParam<Dispatch> {
 protected:
  RuntimeOptions Options() {
    return {.aic_cores = 1, .aiv_cores = kAivCores, .worker_threads = kAivCores + 1, .dispatch = GetParam(),
            .helper_min_task_ns = 0, .observer = &swimlane_};
  }
  Schedule Run(Runtime& runtime) {
    EXPECT_TRUE(runtime.WaitAll());
    return {swimlane_.Records()};
  }
  SwimlaneRecorder swimlane_{1, {"producer", "consumer", "other", "late"}, 1, kAivCores};
};

TEST_P(EarlyResolve, AConsumerIsStagedWhileItsProducerRunsAndStartsAfterIt) {
  std::vector<int32_t> a(4);
  SleepExecutor executor({{0, 100}, {1, 1}});
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a, /*early=*/true)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a})));
  const Schedule s = Run(runtime);
  const SwimlaneRecord &producer = s.Of(0), &consumer = s.Of(1);
  ASSERT_GE(consumer.staged_ns, 0) << "the consumer was not staged";
  EXPECT_LT(consumer.staged_ns, producer.end_ns);
  EXPECT_GE(consumer.start_ns, producer.end_ns);
  EXPECT_NE(consumer.core_index, producer.core_index);  // it held the other core meanwhile
}

TEST_P(EarlyResolve, WithoutTheFlagNothingIsStaged) {
  std::vector<int32_t> a(4);
  SleepExecutor executor({{0, 50}, {1, 1}});
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a})));
  const Schedule s = Run(runtime);
  EXPECT_EQ(s.Of(1).staged_ns, -1);
  EXPECT_GE(s.Of(1).start_ns, s.Of(0).end_ns);
}

// Every unfinished producer must allow it: the consumer is staged only once the one that does not
// has finished.
TEST_P(EarlyResolve, AProducerWithoutTheFlagHoldsTheConsumerBackUntilItFinishes) {
  std::vector<int32_t> a(4), b(4);
  SleepExecutor executor({{0, 200}, {2, 30}, {1, 1}});
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a, /*early=*/true)));
  ASSERT_TRUE(runtime.SubmitAiv(2, Writes(b)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a, &b})));
  const Schedule s = Run(runtime);
  const SwimlaneRecord& consumer = s.Of(1);
  ASSERT_GE(consumer.staged_ns, 0);
  EXPECT_GE(consumer.staged_ns, s.Of(2).end_ns);
  EXPECT_LT(consumer.staged_ns, s.Of(0).end_ns);
  EXPECT_GE(consumer.start_ns, s.Of(0).end_ns);
}

// Staging takes only cores that no normally queued task wants: a task that was ready first gets the
// core that frees, and the consumer is staged on the next one.
TEST_P(EarlyResolve, ATaskQueuedNormallyGetsAFreedCoreFirst) {
  if (GetParam() == Dispatch::CallerFirst) GTEST_SKIP() << "needs the tasks running before the next submits";
  std::vector<int32_t> a(4), q(4), r(4);
  SleepExecutor executor({{0, 300}, {2, 40}, {3, 40}, {1, 1}});
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a, /*early=*/true)));
  ASSERT_TRUE(runtime.SubmitAiv(2, Writes(q)));
  executor.AwaitStarted(2);  // both cores busy
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a})));  // stageable, but no core is idle
  ASSERT_TRUE(runtime.SubmitAiv(3, Writes(r)));     // queued normally, after it
  const Schedule s = Run(runtime);
  const SwimlaneRecord &late = s.Of(3), &consumer = s.Of(1);
  EXPECT_GE(late.start_ns, s.Of(2).end_ns);
  ASSERT_GE(consumer.staged_ns, 0);
  EXPECT_GE(consumer.staged_ns, late.end_ns);
  EXPECT_LT(consumer.staged_ns, s.Of(0).end_ns);
}

// Upstream's rule for launches in waves: a launch releases its consumers only once every block has
// started, so the consumer never holds a core a block of its producer still needs. The consumer
// waits for the launch through its id (the join of its blocks), which passes the release on.
TEST_P(EarlyResolve, AnSpmdProducerReleasesItsConsumerOnlyOnceEveryBlockStarted) {
  SleepExecutor executor({{0, 40}, {1, 1}});
  Runtime runtime(Options(), executor);
  TaskArgs blocks;  // no tensors: the blocks run side by side, in two waves
  blocks.set_allow_early_resolve(true);
  blocks.launch_spec.block_num = 2 * kAivCores;
  auto launch = runtime.SubmitAiv(0, blocks);
  ASSERT_TRUE(launch);
  TaskArgs consumer_args;
  consumer_args.set_dependencies(&*launch, 1);
  ASSERT_TRUE(runtime.SubmitAiv(1, consumer_args));
  const Schedule s = Run(runtime);
  std::vector<int64_t> starts, ends;
  for (const SwimlaneRecord& r : s.records) {
    if (r.func_id != 0) continue;
    starts.push_back(r.start_ns);
    ends.push_back(r.end_ns);
  }
  ASSERT_EQ(starts.size(), 4u);
  const SwimlaneRecord& consumer = s.Of(1);
  ASSERT_GE(consumer.staged_ns, 0);
  EXPECT_GE(consumer.staged_ns, std::ranges::max(starts));  // the second wave had started
  // Every core runs a block of the second wave, so the consumer is staged on the first core one of
  // them frees: whether that is before the last block ends depends on how far apart they end, which
  // is the machine's timing, not the rule, so it is not asserted.
  EXPECT_GE(consumer.start_ns, std::ranges::max(ends));
}

TEST_P(EarlyResolve, TheSwimlaneShowsTheStagedTimeAsASliceOfItsOwn) {
  std::vector<int32_t> a(4);
  SleepExecutor executor({{0, 50}, {1, 1}});
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a, /*early=*/true)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a})));
  const Schedule s = Run(runtime);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("pypto_early_resolve_" + std::to_string(static_cast<int>(GetParam())));
  ASSERT_TRUE(swimlane_.Write(dir));
  std::ifstream trace(dir / "merged_swimlane.json");
  const nlohmann::json events = nlohmann::json::parse(trace)["traceEvents"];
  const auto staged = std::ranges::find_if(events, [](const nlohmann::json& e) { return e.value("cat", "") == "staged"; });
  ASSERT_NE(staged, events.end());
  EXPECT_EQ((*staged)["name"], "consumer (staged)");
  EXPECT_DOUBLE_EQ((*staged)["ts"].get<double>(), static_cast<double>(s.Of(1).staged_ns) / 1000.0);
  std::ifstream raw(dir / "chip_swimlane_records.json");
  const nlohmann::json tasks = nlohmann::json::parse(raw)["aicore_tasks"];
  EXPECT_EQ(std::ranges::count_if(tasks, [](const nlohmann::json& t) { return t.contains("staged_ns"); }), 1);
  std::filesystem::remove_all(dir);
}

// On a runtime with more than four cores of a type, staging leaves the last two free: a task that
// becomes ready while consumers wait staged still finds a core (without them, a mixed block that
// their producers wait for through other tasks could never start; pypto-lib's MoE deadlocked so).
TEST_P(EarlyResolve, StagingLeavesTwoCoresForTasksThatBecomeReadyLater) {
  if (GetParam() == Dispatch::CallerFirst) GTEST_SKIP() << "needs the tasks running before the next submits";
  constexpr int kCores = 8;
  SwimlaneRecorder swimlane{1, {"producer", "consumer", "other", "late"}, 1, kCores};
  RuntimeOptions options{.aic_cores = 1, .aiv_cores = kCores, .worker_threads = kCores + 1,
                         .dispatch = GetParam(), .helper_min_task_ns = 0, .observer = &swimlane};
  std::vector<int32_t> a(4), late_out(4);
  SleepExecutor executor({{0, 300}, {1, 1}, {3, 1}});
  Runtime runtime(options, executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(a, /*early=*/true)));
  executor.AwaitStarted(1);
  for (int c = 0; c < kCores; ++c) ASSERT_TRUE(runtime.SubmitAiv(1, Reads({&a})));
  ASSERT_TRUE(runtime.SubmitAiv(3, Writes(late_out)));  // ready at once, after the consumers
  ASSERT_TRUE(runtime.WaitAll());
  const auto records = swimlane.Records();
  const auto producer = std::ranges::find_if(records, [](const SwimlaneRecord& r) { return r.func_id == 0; });
  const auto late = std::ranges::find_if(records, [](const SwimlaneRecord& r) { return r.func_id == 3; });
  ASSERT_NE(producer, records.end());
  ASSERT_NE(late, records.end());
  EXPECT_LT(late->start_ns, producer->end_ns) << "the late task waited for a core the staged consumers held";
  const auto staged = std::ranges::count_if(
      records, [](const SwimlaneRecord& r) { return r.func_id == 1 && r.staged_ns >= 0; });
  EXPECT_EQ(staged, kCores - 1 - 2);  // the producer's core, and two left free
}

INSTANTIATE_TEST_SUITE_P(Dispatch, EarlyResolve, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
