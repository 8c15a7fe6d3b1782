// The syncall barrier in a mixed task (AscendC's SyncAll<false>): every member, cube and vector, of
// every block of the launch reaches it before any goes on; a launch whose blocks cannot all hold their
// cores at once is diagnosed instead of hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using Result = pypto::expected<void, FatalError>;

class BodyExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  explicit BodyExecutor(Body body) : body_(std::move(body)) {}
  Result Execute(const KernelLaunch& launch) override { return body_(launch); }

 private:
  Body body_;
};

int32_t BlockIdx(const KernelLaunch& launch) {
  return reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot])->block_idx;
}

TaskArgs Launch(std::vector<int32_t>& data, int32_t blocks, bool sync_start) {
  TaskArgs args;
  args.add_inout(IntTensor(data));  // every block writes it: the blocks still run side by side
  args.launch_spec.set_block_num(blocks);
  args.launch_spec.set_require_sync_start(sync_start);
  return args;
}

struct Case {
  bool sync_start;
  Dispatch dispatch;
};

class MixedSyncall : public ::testing::TestWithParam<Case> {};

// Two blocks of an AIC and two AIV lanes; block 1's cube is slow. Nobody passes before all six arrive.
TEST_P(MixedSyncall, EveryMemberOfEveryBlockArrivesBeforeAnyGoesOn) {
  std::mutex mu;
  std::vector<std::string> order;
  BodyExecutor executor([&](const KernelLaunch& launch) -> Result {
    const std::string who = std::to_string(BlockIdx(launch)) + (launch.core_type == CoreType::AIC ? "c" : "v");
    if (launch.core_type == CoreType::AIC && BlockIdx(launch) == 1) std::this_thread::sleep_for(20ms);
    {
      std::lock_guard lock(mu);
      order.push_back("arrive " + who);
    }
    if (auto ok = launch.barrier->SyncAll(launch, "k"); !ok) return ok;
    std::lock_guard lock(mu);
    order.push_back("pass " + who);
    return {};
  });
  std::vector<int32_t> data(4);
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 1, .dispatch = GetParam().dispatch}, executor);
  ASSERT_TRUE(runtime.SubmitMixed({.aic = 1, .aiv0 = 2, .aiv1 = 2}, Launch(data, 2, GetParam().sync_start)));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  ASSERT_EQ(order.size(), 12u);
  EXPECT_EQ(order[5], "arrive 1c");  // the slow cube arrives last, and only then does anyone pass
  for (size_t i = 6; i < order.size(); ++i) EXPECT_EQ(order[i].rfind("pass", 0), 0u) << order[i];
}

INSTANTIATE_TEST_SUITE_P(Launches, MixedSyncall,
                         ::testing::Values(Case{true, Dispatch::Eager}, Case{true, Dispatch::CallerFirst},
                                           Case{false, Dispatch::Eager}, Case{false, Dispatch::CallerFirst}),
                         [](const auto& info) {
                           return std::string(info.param.sync_start ? "SyncStart" : "Resident") +
                                  (info.param.dispatch == Dispatch::Eager ? "Eager" : "CallerFirst");
                         });

// Without sync_start, two blocks on one cluster: block 0's members wait at the barrier on the only
// AIC core, and block 1 can never start. The run fails at once naming both, with the fix.
TEST(MixedSyncallStall, BlocksThatCannotAllHoldTheirCoresAreDiagnosed) {
  BodyExecutor executor([&](const KernelLaunch& launch) -> Result {
    return launch.barrier->SyncAll(launch, launch.core_type == CoreType::AIC ? "fa_aic" : "fa_aiv");
  });
  std::vector<int32_t> data(4);
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2}, executor);
  ASSERT_TRUE(runtime.SubmitMixed({.aic = 4, .aiv0 = 5, .aiv1 = 5}, Launch(data, 2, false)));
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::SchedulerTimeout);
  const std::string error = done.error().str();
  EXPECT_NE(error.find("fatal error 100 (SchedulerTimeout): task 0 (kernels '"), std::string::npos) << error;
  EXPECT_NE(error.find("', func_id 5): the syncall of every cube and vector core of its 2 blocks (SyncAll<false>, 6 "
                       "members) can never complete: 3 of 6 members arrived (every member of block 0); block 1 cannot "
                       "start: the cores a "
                       "block takes (1 AIC, 2 AIV) are held by kernels waiting at a barrier; launch it with "
                       "pl.spmd(..., sync_start=True) and at most 1 blocks, so that every member of every block holds "
                       "a core at the same time"),
            std::string::npos)
      << error;
}

// A vector lane waits at a cross-core event its cube never raises, since the cube waits at the
// barrier for that lane: neither can move, and the run fails instead of hanging.
TEST(MixedSyncallStall, AMemberWaitingForAPeerAtTheBarrierIsDiagnosed) {
  BodyExecutor executor([&](const KernelLaunch& launch) -> Result {
    const auto* global = reinterpret_cast<const GlobalContext*>(launch.args[kGlobalContextSlot]);
    if (launch.core_type == CoreType::AIV && global->sub_block_id == 1)
      return launch.barrier->EventWait(launch, "lane", EventRef{.id = 3, .mode = 2});
    return launch.barrier->SyncAll(launch, launch.core_type == CoreType::AIC ? "cube" : "lane");
  });
  std::vector<int32_t> data(4);
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 1}, executor);
  ASSERT_TRUE(runtime.SubmitMixed({.aic = 0, .aiv0 = 1, .aiv1 = 1}, Launch(data, 1, true)));
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::SchedulerTimeout);
  EXPECT_NE(done.error().str().find("2 of 3 members arrived (block 0 AIC on AIC core 0, block 0 AIV lane 0 on AIV "
                                    "core 0); block 0 AIV lane 1 on AIV core 1 waits at a cross-core pipe or event "
                                    "for a member at the barrier"),
            std::string::npos)
      << done.error().str();
}

}  // namespace
}  // namespace pypto::rt
