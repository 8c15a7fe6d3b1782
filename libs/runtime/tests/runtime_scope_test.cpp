// Scopes and task windows: a launch holds a slot of its scope's ring until it has finished and its
// scope has ended; a scope that submits more than its window holds is diagnosed, not hung.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// Adds 1 to the first tensor's first element, after an optional pause (so that submits catch up with
// running tasks and have to wait for slots).
class CountingExecutor : public CoreExecutor {
 public:
  explicit CountingExecutor(std::chrono::microseconds pause = {}) : pause_(pause) {}
  Result Execute(const KernelLaunch& launch) override {
    if (pause_.count() > 0) std::this_thread::sleep_for(pause_);
    int32_t* value = DataPointer<int32_t>(TensorArgOf(launch, 0));
    ++*value;
    ++runs_;
    return {};
  }
  int runs() const { return runs_; }

 private:
  std::chrono::microseconds pause_;
  std::atomic<int> runs_{0};
};

TaskArgs Increment(std::vector<int32_t>& counter, int32_t blocks = 1) {
  TaskArgs args;
  args.add_inout(IntTensor(counter));
  args.launch_spec.block_num = blocks;
  return args;
}

RuntimeOptions WithWindow(int window, Dispatch dispatch) {
  return {.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2, .dispatch = dispatch, .task_window = window};
}

class ScopeTest : public ::testing::TestWithParam<Dispatch> {};

// Upstream's fatal-code test for SCOPE_DEADLOCK: 8 tasks in one scope with a window of 4.
TEST_P(ScopeTest, EightTasksInOneScopeWithAWindowOfFourIsAScopeDeadlock) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor;
  Runtime runtime(WithWindow(4, GetParam()), executor);
  int submitted = 0;
  pypto::expected<TaskId, FatalError> id;
  for (int i = 0; i < 8 && id; ++i) {
    id = runtime.SubmitAiv(i, Increment(counter));
    if (id) ++submitted;
  }
  EXPECT_EQ(submitted, 3);  // a window of 4 has 3 usable slots
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, FatalCode::ScopeDeadlock);
  EXPECT_EQ(id.error().str(),
            "fatal error 1 (ScopeDeadlock): task 3 (func_id 3) needs a slot of task ring 0, but all 3 usable slots "
            "(task window 4) are held by tasks of scopes still open, which give them back only when those scopes "
            "end: the scope at depth 0 submits more tasks than its window holds; raise the window "
            "(RunConfig(ring_task_window=...), PTO2_RING_TASK_WINDOW) or split the work into smaller scopes (e.g. a "
            "loop, whose body is a scope)");
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::ScopeDeadlock);
}

// Upstream's fatal-code test for FLOW_CONTROL_DEADLOCK: scopes nested 8 deep, 3 tasks each. Depths 3
// and deeper share ring 3, whose 7 usable slots they fill between them although none holds more than 3.
TEST_P(ScopeTest, NestedScopesFillingTheSharedRingAreAFlowControlDeadlock) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor;
  Runtime runtime(WithWindow(8, GetParam()), executor);
  pypto::expected<TaskId, FatalError> id;
  int submitted = 0;
  for (int depth = 1; depth <= 8 && id; ++depth) {
    ASSERT_TRUE(runtime.ScopeBegin());
    for (int task = 0; task < 3 && id; ++task) {
      id = runtime.SubmitAiv(submitted, Increment(counter));
      if (id) ++submitted;
    }
  }
  EXPECT_EQ(submitted, 3 + 3 + 7);  // 3 on each of rings 1 and 2, and 7 on ring 3
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().str(),
            "fatal error 3 (FlowControlDeadlock): task 13 (func_id 13) needs a slot of task ring 3, but all 7 usable "
            "slots (task window 8) are held by tasks of the scopes at depths 3 to 5, which share that ring and give "
            "them back only when they end: none of them submits more tasks than the window holds, but together they "
            "do; raise the window (RunConfig(ring_task_window=...), PTO2_RING_TASK_WINDOW) or submit fewer tasks in "
            "scopes nested at depth 3 and deeper");
  for (int depth = 1; depth <= 5; ++depth) runtime.ScopeEnd();
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::FlowControlDeadlock);
}

// A loop body is a scope: its finished tasks give their slots back when it ends, so a loop submits
// any number of tasks through a small window, waiting for slots when it runs ahead.
TEST_P(ScopeTest, ScopesThatEndGiveTheirSlotsBack) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor(std::chrono::microseconds(200));
  Runtime runtime(WithWindow(4, GetParam()), executor);
  for (int iteration = 0; iteration < 50; ++iteration) {
    runtime.ScopeBegin();
    for (int task = 0; task < 3; ++task) ASSERT_TRUE(runtime.SubmitAiv(task, Increment(counter)));
    runtime.ScopeEnd();
  }
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(counter[0], 150);
}

TEST_P(ScopeTest, AnInnerScopeOverItsWindowIsDiagnosedWithItsDepth) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor;
  Runtime runtime(WithWindow(2, GetParam()), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Increment(counter)));  // ring 0's one usable slot
  runtime.ScopeBegin();
  ASSERT_TRUE(runtime.SubmitAiv(1, Increment(counter)));  // ring 1's
  auto refused = runtime.SubmitAiv(2, Increment(counter));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("task 2 (func_id 2) needs a slot of task ring 1, but all 1 usable slots"),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("the scope at depth 1"), std::string::npos);
  runtime.ScopeEnd();
  EXPECT_FALSE(runtime.WaitAll());
}

// An SPMD launch is one submit: all its blocks share one slot.
TEST_P(ScopeTest, AllBlocksOfALaunchShareOneSlot) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor;
  Runtime runtime(WithWindow(4, GetParam()), executor);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(runtime.SubmitAiv(i, Increment(counter, 8)));
  EXPECT_FALSE(runtime.SubmitAiv(3, Increment(counter, 8)));
  EXPECT_FALSE(runtime.WaitAll());
}

// WaitAll ends the run's outer scope, and Reset forgets a deadlock: the window is whole again.
TEST_P(ScopeTest, TheOuterScopeEndsWithTheRun) {
  std::vector<int32_t> counter(1, 0);
  CountingExecutor executor;
  Runtime runtime(WithWindow(4, GetParam()), executor);
  for (int run = 0; run < 3; ++run) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(runtime.SubmitAiv(i, Increment(counter)));
    ASSERT_TRUE(runtime.WaitAll());
  }
  EXPECT_EQ(counter[0], 9);
  for (int i = 0; i < 4; ++i) (void)runtime.SubmitAiv(i, Increment(counter));
  EXPECT_FALSE(runtime.WaitAll());
  runtime.Reset();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(runtime.SubmitAiv(i, Increment(counter)));
  EXPECT_TRUE(runtime.WaitAll());
}

INSTANTIATE_TEST_SUITE_P(Dispatch, ScopeTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
