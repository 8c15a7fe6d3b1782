// Manual scopes (upstream's PTO2_SCOPE(PTO2ScopeMode::MANUAL)): their tasks take only the dependencies
// they name, so tasks writing one tensor run together unless a dependency orders them, and nothing
// nests in such a scope.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using testing::Rendezvous;
using Result = pypto::expected<void, FatalError>;

// Records the order kernels finish in; func_id 0 is slow, so a task not made to wait for it finishes
// first. func_id 7 waits at a rendezvous with the other tasks of that id, which only succeeds when
// they all run at the same time.
class OrderExecutor : public CoreExecutor {
 public:
  explicit OrderExecutor(int together = 2) : rendezvous_(together) {}
  Result Execute(const KernelLaunch& launch) override {
    if (launch.func_id == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const bool met = launch.func_id != 7 || rendezvous_.ArriveAndWait();
    std::lock_guard lock(mu_);
    finished_.push_back(launch.func_id);
    all_met_ = all_met_ && met;
    return {};
  }
  std::vector<int32_t> finished() {
    std::lock_guard lock(mu_);
    return finished_;
  }
  bool all_met() {
    std::lock_guard lock(mu_);
    return all_met_;
  }

 private:
  Rendezvous rendezvous_;
  std::mutex mu_;
  std::vector<int32_t> finished_;
  bool all_met_ = true;
};

TaskArgs Writes(std::vector<int32_t>& data, std::vector<TaskId> deps = {}, int32_t blocks = 1) {
  TaskArgs args;
  args.add_inout(IntTensor(data));
  args.set_dependencies(deps.data(), deps.size());
  args.launch_spec.block_num = blocks;
  return args;
}

TaskArgs Reads(std::vector<int32_t>& data, std::vector<TaskId> deps = {}) {
  TaskArgs args;
  args.add_input(IntTensor(data));
  args.set_dependencies(deps.data(), deps.size());
  return args;
}

RuntimeOptions Options() { return {.aic_cores = 2, .aiv_cores = 8, .worker_threads = 4}; }

TEST(ManualScope, TwoWritersOfOneTensorRunTogether) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  ASSERT_TRUE(runtime.SubmitAiv(7, Writes(t)));
  ASSERT_TRUE(runtime.SubmitAiv(7, Writes(t)));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_TRUE(executor.all_met());  // each saw the other running
}

TEST(ManualScope, WithoutADependencyTheLaterWriterMayFinishFirst) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(t)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Writes(t)));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 0}));
}

TEST(ManualScope, ADependencyOrdersThem) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  auto first = runtime.SubmitAiv(0, Writes(t));
  ASSERT_TRUE(first);
  ASSERT_TRUE(runtime.SubmitAiv(1, Writes(t, {*first})));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{0, 1}));
}

TEST(ManualScope, AnAutoScopeOrdersThemByTheTensor) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Auto));
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(t)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Writes(t)));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{0, 1}));
}

// The blocks of one launch writing one tensor, serialised in an auto scope, run together in a manual one.
TEST(ManualScope, TheBlocksOfALaunchWritingOneTensorRunTogether) {
  std::vector<int32_t> t(4);
  OrderExecutor executor(4);
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  ASSERT_TRUE(runtime.SubmitAiv(7, Writes(t, {}, 4)));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_TRUE(executor.all_met());
  EXPECT_EQ(executor.finished().size(), 4u);
}

// As upstream: a manual task looks up nothing, so it does not wait for a writer before the scope ...
TEST(ManualScope, ATaskInsideDoesNotWaitForAWriterBeforeTheScope) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(t)));
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads(t)));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 0}));
}

// ... and registers nothing, so a reader after the scope waits for a manual writer only when it names it.
TEST(ManualScope, ATaskAfterTheScopeWaitsOnlyForTheManualTasksItNames) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  auto writer = runtime.SubmitAiv(0, Writes(t));
  ASSERT_TRUE(writer);
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.SubmitAiv(1, Reads(t)));
  ASSERT_TRUE(runtime.SubmitAiv(2, Reads(t, {*writer})));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 0, 2}));
}

// Tracking resumes once the manual scope has ended.
TEST(ManualScope, TasksAfterTheScopeAreOrderedByTheirTensorsAgain) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.SubmitAiv(0, Writes(t)));
  ASSERT_TRUE(runtime.SubmitAiv(1, Writes(t)));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{0, 1}));
}

TEST(ManualScope, AManualScopeInsideAManualScopeIsRefused) {
  std::vector<int32_t> t(4);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  auto refused = runtime.ScopeBegin(ScopeMode::Manual);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().str(),
            "fatal error 5 (InvalidArgs): a manual scope opened at depth 2 inside a manual scope: nothing nests in a "
            "manual scope (its tasks take only the dependencies they name); close the manual scope first, or make "
            "the outer scope an auto one");
  EXPECT_FALSE(runtime.SubmitAiv(1, Writes(t)));  // the run has failed
  runtime.ScopeEnd();
  runtime.ScopeEnd();
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::InvalidArgs);
}

TEST(ManualScope, AnAutoScopeInsideAManualScopeIsRefused) {
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Auto));
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));  // manual inside auto is fine
  auto refused = runtime.ScopeBegin(ScopeMode::Auto);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("an auto scope opened at depth 3 inside a manual scope"), std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(runtime.WaitAll());
  // A new run starts clean.
  runtime.Reset();
  EXPECT_TRUE(runtime.ScopeBegin(ScopeMode::Auto));
}

}  // namespace
}  // namespace pypto::rt
