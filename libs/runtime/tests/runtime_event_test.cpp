// Cross-core events between the members of a mixed task (LaunchBarrier::EventSet/EventWait): who a
// raise reaches under each FFTS mode, a wait consuming one raise, and a wait no raise can satisfy
// failing the run with every member's state.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

constexpr int32_t kAic = 0, kAiv = 1;

class MemberExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  MemberExecutor(Body aic, Body aiv) : aic_(std::move(aic)), aiv_(std::move(aiv)) {}
  Result Execute(const KernelLaunch& launch) override { return launch.func_id == kAic ? aic_(launch) : aiv_(launch); }

 private:
  Body aic_, aiv_;
};

Result Set(const KernelLaunch& launch, const char* kernel, int32_t id, int32_t mode = 2) {
  return launch.barrier->EventSet(launch, kernel, EventRef{.id = id, .mode = mode});
}
Result Wait(const KernelLaunch& launch, const char* kernel, int32_t id) {
  return launch.barrier->EventWait(launch, kernel, EventRef{.id = id});
}
int Lane(const KernelLaunch& launch) {
  return reinterpret_cast<const GlobalContext*>(launch.args[kGlobalContextSlot])->sub_block_id;
}
int32_t* Data(const KernelLaunch& launch) { return DataPointer<int32_t>(TensorArgOf(launch, 0)); }

// One mixed task {AIC, AIV on both lanes} over `data`.
Result RunDual(MemberExecutor& executor, std::vector<int32_t>& data) {
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 3}, executor);
  TaskArgs args;
  args.add_inout(IntTensor(data));
  if (auto id = runtime.SubmitMixed({.aic = kAic, .aiv0 = kAiv, .aiv1 = kAiv}, args); !id)
    return pypto::unexpected(id.error());
  return runtime.WaitAll();
}

TEST(EventTest, TheCubeWaitsForBothLanesAndBothLanesForTheCube) {
  // Each lane writes its element and raises event 4; the cube sums both once its wait passes, then
  // raises event 5, which each lane waits for before reading the sum back.
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        if (auto ok = Wait(launch, "cube", 4); !ok) return ok;
        Data(launch)[2] = Data(launch)[0] + Data(launch)[1];
        return Set(launch, "cube", 5);
      },
      [](const KernelLaunch& launch) -> Result {
        const int lane = Lane(launch);
        // Lane 1 is slow: the cube must not pass on lane 0's raise alone.
        if (lane == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Data(launch)[lane] = 10 + lane;
        if (auto ok = Set(launch, "vec", 4); !ok) return ok;
        if (auto ok = Wait(launch, "vec", 5); !ok) return ok;
        Data(launch)[3 + lane] = Data(launch)[2];
        return {};
      });
  std::vector<int32_t> data(5, 0);
  auto done = RunDual(executor, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(data, (std::vector<int32_t>{10, 11, 21, 21, 21}));
}

TEST(EventTest, ModeOneJoinsTheTwoLanes) {
  // Each lane writes its element, raises event 1 with mode 1 and waits: past the wait, the other
  // lane's element is there.
  std::atomic<int> mismatches = 0;
  MemberExecutor executor([](const KernelLaunch&) -> Result { return {}; },
                          [&](const KernelLaunch& launch) -> Result {
                            const int lane = Lane(launch);
                            if (lane == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
                            Data(launch)[lane] = 1;
                            if (auto ok = Set(launch, "vec", 1, 1); !ok) return ok;
                            if (auto ok = Wait(launch, "vec", 1); !ok) return ok;
                            if (Data(launch)[1 - lane] != 1) ++mismatches;
                            return {};
                          });
  std::vector<int32_t> data(2, 0);
  auto done = RunDual(executor, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(mismatches, 0);
}

TEST(EventTest, AWaitNoRaiseCanSatisfyFailsTheRun) {
  // Only lane 0 raises: the cube's wait can never pass once both lanes finished.
  MemberExecutor executor([](const KernelLaunch& launch) { return Wait(launch, "cube", 3); },
                          [](const KernelLaunch& launch) -> Result {
                            if (Lane(launch) == 0) return Set(launch, "vec", 3);
                            return {};
                          });
  std::vector<int32_t> data(1, 0);
  auto done = RunDual(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes and events "
            "can never move: kernel 'cube' (task 0) on AIC core 0 waits in sync_wait for event 3 (the AIV lanes "
            "raised it 1 and 0 times); kernel 'vec' (task 1) on AIV core 0 (lane 0) has finished; the kernel of func_id "
            "1 (task 2) on AIV core 1 (lane 1) has finished; every tpop needs a tpush of the peer, a tpush into a full "
            "pipe a tfree of the peer, and a sync_wait a sync_set of the peer");
}

TEST(EventTest, ModeZeroAndASixteenthPendingRaiseAreRefused) {
  MemberExecutor mode_zero([](const KernelLaunch& launch) { return Set(launch, "cube", 0, 0); },
                           [](const KernelLaunch&) -> Result { return {}; });
  std::vector<int32_t> data(1, 0);
  auto refused = RunDual(mode_zero, data);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().str(),
            "fatal error 203 (KernelFailed): task 0 (kernel 'cube'): sync_set with ffts_mode=0 joins every core of a "
            "type in the launch, which the simulator does not support yet; use ffts_mode=2 (the AIC and AIV of a "
            "group) or 1 (the AIV lanes of a group)");

  MemberExecutor overflow(
      [](const KernelLaunch& launch) -> Result {
        for (int i = 0; i < 16; ++i)
          if (auto ok = Set(launch, "cube", 9); !ok) return ok;
        return {};
      },
      [](const KernelLaunch&) -> Result { return {}; });
  auto overflowed = RunDual(overflow, data);
  ASSERT_FALSE(overflowed);
  EXPECT_EQ(overflowed.error().str(),
            "fatal error 203 (KernelFailed): task 0 (kernel 'cube'): event 9 is raised for the kernel of func_id 1 "
            "(task 1) on AIV core 0 (lane 0) 16 times without a sync_wait; the device's counter holds at most 15");
}

}  // namespace
}  // namespace pypto::rt
