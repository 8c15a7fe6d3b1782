// Explicit task-id dependencies and dummy tasks: what upstream's set_dependencies and
// rt_submit_dummy_task give an orchestration beyond the dependencies tensors imply.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using Result = pypto::expected<void, FatalError>;

// Records the order kernels finish in; func_id 0 is slow, so anything not made to wait for it
// finishes first.
class OrderExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch& launch) override {
    if (launch.func_id == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard lock(mu_);
    finished_.push_back(launch.func_id);
    return {};
  }
  std::vector<int32_t> finished() {
    std::lock_guard lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  std::vector<int32_t> finished_;
};

// Two tasks on unrelated tensors: nothing but an explicit dependency orders them.
TaskArgs On(std::vector<int32_t>& data, std::vector<TaskId> deps = {}, int32_t blocks = 1) {
  TaskArgs args;
  args.add_inout(IntTensor(data));
  args.set_dependencies(deps.data(), deps.size());
  args.launch_spec.block_num = blocks;
  return args;
}

RuntimeOptions Options() { return {.aic_cores = 2, .aiv_cores = 8, .worker_threads = 4}; }

TEST(ExplicitDependencies, OrderTasksThatShareNoTensor) {
  std::vector<int32_t> a(1), b(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  auto slow = runtime.SubmitAiv(0, On(a));
  ASSERT_TRUE(slow);
  ASSERT_TRUE(runtime.SubmitAiv(1, On(b, {*slow})));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{0, 1}));
}

TEST(ExplicitDependencies, WithoutOneTheFastTaskFinishesFirst) {
  std::vector<int32_t> a(1), b(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, On(a)));
  ASSERT_TRUE(runtime.SubmitAiv(1, On(b)));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 0}));
}

TEST(ExplicitDependencies, TheIdOfAnSpmdLaunchStandsForEveryBlock) {
  std::vector<int32_t> a(1), b(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  auto launch = runtime.SubmitAiv(0, On(a, {}, 4));  // four slow blocks
  ASSERT_TRUE(launch);
  ASSERT_TRUE(runtime.SubmitAiv(1, On(b, {*launch})));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{0, 0, 0, 0, 1}));
}

TEST(ExplicitDependencies, FinishedAndInvalidIdsImposeNothing) {
  std::vector<int32_t> a(1), b(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  auto first = runtime.SubmitAiv(1, On(a));
  ASSERT_TRUE(first);
  ASSERT_TRUE(runtime.WaitAll());
  ASSERT_TRUE(runtime.SubmitAiv(2, On(b, {*first, kInvalidTaskId})));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 2}));
}

TEST(ExplicitDependencies, ADummyTaskJoinsSeveralTasks) {
  std::vector<int32_t> a(1), b(1), c(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  auto slow = runtime.SubmitAiv(0, On(a));
  auto fast = runtime.SubmitAiv(1, On(b));
  ASSERT_TRUE(slow && fast);
  TaskArgs join;
  const TaskId both[] = {*slow, *fast};
  join.set_dependencies(both, 2);
  auto dummy = runtime.SubmitDummy(join);
  ASSERT_TRUE(dummy);
  ASSERT_TRUE(runtime.SubmitAiv(2, On(c, {*dummy})));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.finished(), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(runtime.tasks_completed(), 3u);  // the dummy runs nothing
}

// Upstream's fatal-code trigger for INVALID_ARGS: set_dependencies(nullptr, 4).
TEST(ExplicitDependencies, ANullArrayIsInvalidArguments) {
  std::vector<int32_t> a(1);
  OrderExecutor executor;
  Runtime runtime(Options(), executor);
  TaskArgs args;
  args.add_inout(IntTensor(a));
  args.set_dependencies(nullptr, 4);
  auto refused = runtime.SubmitAiv(0, args);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().str(),
            "fatal error 5 (InvalidArgs): task for func_id 0 has invalid arguments: set_dependencies: 4 dependencies "
            "from a null array");
}

}  // namespace
}  // namespace pypto::rt
