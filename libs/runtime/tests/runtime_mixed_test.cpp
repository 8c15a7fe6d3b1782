// Mixed submits (MixedKernels): the members of each block run as one task for dependencies, the
// AIV lanes see their lane as sub_block_id, and later tasks wait for every member.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// What each launch saw: (func_id, core type, block, lane), and the first tensor's first element then.
struct Seen {
  int32_t func_id;
  CoreType core;
  int32_t block;
  int32_t lane;
  int32_t value;
  bool operator<(const Seen& o) const {
    return std::tie(func_id, block, lane) < std::tie(o.func_id, o.block, o.lane);
  }
};

class RecordingExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch& launch) override {
    const auto* local = reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot]);
    const auto* global = reinterpret_cast<const GlobalContext*>(launch.args[kGlobalContextSlot]);
    int32_t* value = DataPointer<int32_t>(TensorArgOf(launch, 0));
    if (launch.func_id == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a slow producer
    std::lock_guard lock(mu_);
    seen_.push_back({launch.func_id, launch.core_type, local->block_idx, global->sub_block_id, *value});
    if (launch.func_id == 0) *value = 7;                 // the producer
    if (launch.func_id == 1 || launch.func_id == 2) ++*value;  // the mixed members
    return {};
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<Seen> seen_;
};

TaskArgs Args(std::vector<int32_t>& data, int32_t blocks = 1) {
  TaskArgs args;
  args.add_inout(IntTensor(data));
  args.launch_spec.block_num = blocks;
  return args;
}

class MixedTest : public ::testing::TestWithParam<Dispatch> {};

TEST_P(MixedTest, MembersWaitForProducersAndConsumersWaitForAllMembers) {
  std::vector<int32_t> data(1, 0);
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 3, .dispatch = GetParam()}, executor);
  ASSERT_TRUE(runtime.SubmitAiv(0, Args(data)));  // producer: writes 7
  // AIC member 1, AIV member 2 on both lanes (dual dispatch), on 2 blocks: 6 launches, each adds 1.
  ASSERT_TRUE(runtime.SubmitMixed({.aic = 1, .aiv0 = 2, .aiv1 = 2}, Args(data, 2)));
  ASSERT_TRUE(runtime.SubmitAiv(3, Args(data)));  // consumer: must see 7 + 6
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(runtime.tasks_completed(), 8u);  // producer, 6 members, consumer: the gates and joins are not tasks

  auto seen = executor.seen();
  ASSERT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen.front().func_id, 0);
  EXPECT_EQ(seen.back().func_id, 3);
  EXPECT_EQ(seen.back().value, 13);
  std::vector<Seen> members(seen.begin() + 1, seen.end() - 1);
  std::sort(members.begin(), members.end());
  const std::vector<std::tuple<int32_t, CoreType, int32_t, int32_t>> expected = {
      {1, CoreType::AIC, 0, 0}, {1, CoreType::AIC, 1, 0}, {2, CoreType::AIV, 0, 0},
      {2, CoreType::AIV, 0, 1}, {2, CoreType::AIV, 1, 0}, {2, CoreType::AIV, 1, 1}};
  ASSERT_EQ(members.size(), expected.size());
  for (size_t i = 0; i < members.size(); ++i) {
    EXPECT_EQ(std::make_tuple(members[i].func_id, members[i].core, members[i].block, members[i].lane), expected[i]) << i;
    EXPECT_GE(members[i].value, 7) << "a member ran before the producer finished";
  }
}

TEST_P(MixedTest, ASingleLaneMixedTaskRunsItsAivOnLaneZero) {
  std::vector<int32_t> data(1, 0);
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2, .dispatch = GetParam()}, executor);
  ASSERT_TRUE(runtime.SubmitMixed({.aic = 1, .aiv0 = 2}, Args(data)));
  ASSERT_TRUE(runtime.WaitAll());
  auto seen = executor.seen();
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& s : seen) EXPECT_EQ(s.lane, 0);
  EXPECT_EQ(data[0], 2);
}

TEST_P(MixedTest, AMixedTaskWithoutKernelsIsInvalid) {
  std::vector<int32_t> data(1, 0);
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .dispatch = GetParam()}, executor);
  auto refused = runtime.SubmitMixed({}, Args(data));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().str(), "fatal error 5 (InvalidArgs): a mixed task names no kernel");
}

INSTANTIATE_TEST_SUITE_P(Dispatch, MixedTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
