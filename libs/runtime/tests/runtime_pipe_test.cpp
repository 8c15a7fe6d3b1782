// Cross-core pipes between the members of a mixed task (LaunchBarrier::PipePush/Pop/Free): tiles
// arrive in order, a full ring holds its producer back, and a pipe that can never move fails the run
// naming every member's state, decided from those states (a member that is only slow is waited for).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
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
using Tile = std::array<int32_t, 4>;

constexpr int32_t kAic = 0, kAiv = 1;
constexpr PipeRef kToAiv{.id = 0, .direction = PipeDirection::AicToAiv, .slots = 2};
constexpr PipeRef kToAic{.id = 0, .direction = PipeDirection::AivToAic, .slots = 2};

// Runs the AIC member's body for func_id 0 and the AIV member's for func_id 1.
class MemberExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  MemberExecutor(Body aic, Body aiv) : aic_(std::move(aic)), aiv_(std::move(aiv)) {}
  Result Execute(const KernelLaunch& launch) override { return launch.func_id == kAic ? aic_(launch) : aiv_(launch); }

 private:
  Body aic_, aiv_;
};

Result Push(const KernelLaunch& launch, const char* kernel, const PipeRef& pipe, const Tile& tile) {
  return launch.barrier->PipePush(launch, kernel, pipe, std::as_bytes(std::span(tile)));
}

Result Pop(const KernelLaunch& launch, const char* kernel, const PipeRef& pipe, Tile& tile) {
  return launch.barrier->PipePop(launch, kernel, pipe, std::as_writable_bytes(std::span(tile)));
}

int32_t* Data(const KernelLaunch& launch) { return DataPointer<int32_t>(TensorArgOf(launch, 0)); }

TaskArgs Args(std::vector<int32_t>& data) {
  TaskArgs args;
  args.add_inout(IntTensor(data));
  return args;
}

class PipeTest : public ::testing::TestWithParam<Dispatch> {
 protected:
  // One mixed task {AIC, AIV} over `data`; returns the run's result.
  Result RunMixed(MemberExecutor& executor, std::vector<int32_t>& data) {
    Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2, .dispatch = GetParam()}, executor);
    if (auto id = runtime.SubmitMixed({.aic = kAic, .aiv0 = kAiv}, Args(data)); !id)
      return pypto::unexpected(id.error());
    return runtime.WaitAll();
  }
};

TEST_P(PipeTest, TilesCrossInOrderBothWays) {
  // AIC pushes 1..5 (five tiles through two slots); AIV adds each tile's elements and pushes the sum back.
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        for (int32_t i = 1; i <= 5; ++i)
          if (auto ok = Push(launch, "cube", kToAiv, {i, i, i, i}); !ok) return ok;
        Tile total{};
        if (auto ok = Pop(launch, "cube", kToAic, total); !ok) return ok;
        Data(launch)[0] = total[0];
        return launch.barrier->PipeFree(launch, "cube", kToAic);
      },
      [](const KernelLaunch& launch) -> Result {
        Tile sum{};
        for (int32_t i = 1; i <= 5; ++i) {
          Tile tile{};
          if (auto ok = Pop(launch, "vec", kToAiv, tile); !ok) return ok;
          if (tile[3] != i) return pypto::unexpected(FatalError{FatalCode::Internal, "out of order"});
          for (size_t e = 0; e < tile.size(); ++e) sum[e] += tile[e];
          if (auto ok = launch.barrier->PipeFree(launch, "vec", kToAiv); !ok) return ok;
        }
        return Push(launch, "vec", kToAic, sum);
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(data[0], 15);
}

TEST_P(PipeTest, EachBlockHasPipesOfItsOwn) {
  // Three blocks (co-started or not) each push their block index; each AIV must receive its own.
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        const int32_t block = reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot])->block_idx;
        return Push(launch, "cube", kToAiv, {block, block, block, block});
      },
      [](const KernelLaunch& launch) -> Result {
        const int32_t block = reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot])->block_idx;
        Tile tile{};
        if (auto ok = Pop(launch, "vec", kToAiv, tile); !ok) return ok;
        Data(launch)[block] = tile[0] + 100;
        return launch.barrier->PipeFree(launch, "vec", kToAiv);
      });
  for (bool sync_start : {false, true}) {
    std::vector<int32_t> data(3, 0);
    Runtime runtime({.aic_cores = 3, .aiv_cores = 6, .worker_threads = 2, .dispatch = GetParam()}, executor);
    TaskArgs args;
    args.add_output(IntTensor(data));  // each block writes its own element
    args.launch_spec.set_block_num(3);
    args.launch_spec.set_require_sync_start(sync_start);
    ASSERT_TRUE(runtime.SubmitMixed({.aic = kAic, .aiv0 = kAiv}, args));
    auto done = runtime.WaitAll();
    ASSERT_TRUE(done) << done.error().str();
    EXPECT_EQ(data, (std::vector<int32_t>{100, 101, 102})) << "sync_start " << sync_start;
  }
}

TEST_P(PipeTest, AFullRingHoldsItsProducerBack) {
  // Three pushes into two slots, and a consumer that pops two without freeing either, then a third:
  // the third push can never happen, and the diagnosis says the ring holds 2 pushed, 2 popped, 0 freed.
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        for (int32_t i = 0; i < 3; ++i)
          if (auto ok = Push(launch, "cube", kToAiv, {i, i, i, i}); !ok) return ok;
        return {};
      },
      [](const KernelLaunch& launch) -> Result {
        Tile tile{};
        for (int i = 0; i < 3; ++i)
          if (auto ok = Pop(launch, "vec", kToAiv, tile); !ok) return ok;
        return {};
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes can never "
            "move: kernel 'cube' (task 0) on AIC core 0 waits in tpush_to_aiv for a free slot of pipe 0 (AIC to "
            "AIV), whose 2 slots are all taken (2 pushed, 2 popped, 0 freed so far); kernel 'vec' (task 1) on AIV "
            "core 0 waits in tpop_from_aic for a tile of pipe 0 (AIC to AIV), which holds none (2 pushed, 2 popped "
            "so far); every tpop needs a tpush of the peer, and a tpush into a full pipe a tfree of the peer");
}

TEST_P(PipeTest, APopAfterThePeerFinishedIsDiagnosed) {
  MemberExecutor executor([](const KernelLaunch& launch) { return Push(launch, "cube", kToAiv, {1, 2, 3, 4}); },
                          [](const KernelLaunch& launch) -> Result {
                            Tile tile{};
                            if (auto ok = Pop(launch, "vec", kToAiv, tile); !ok) return ok;
                            return Pop(launch, "vec", kToAiv, tile);
                          });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::SchedulerTimeout);
  EXPECT_EQ(done.error().message,
            "task 0 (block 0 of a mixed task): its cross-core pipes can never move: kernel 'cube' (task 0) on AIC "
            "core 0 has finished; kernel 'vec' (task 1) on AIV core 0 waits in tpop_from_aic for a tile of pipe 0 "
            "(AIC to AIV), which holds none (1 pushed, 1 popped so far); every tpop needs a tpush of the peer, and a "
            "tpush into a full pipe a tfree of the peer");
}

TEST_P(PipeTest, BothSidesPoppingFirstIsDiagnosed) {
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        Tile tile{};
        return Pop(launch, "cube", kToAic, tile);
      },
      [](const KernelLaunch& launch) -> Result {
        Tile tile{};
        return Pop(launch, "vec", kToAiv, tile);
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message,
            "task 0 (block 0 of a mixed task): its cross-core pipes can never move: kernel 'cube' (task 0) on AIC "
            "core 0 waits in tpop_from_aiv for a tile of pipe 0 (AIV to AIC), which holds none (0 pushed, 0 popped "
            "so far); kernel 'vec' (task 1) on AIV core 0 waits in tpop_from_aic for a tile of pipe 0 (AIC to AIV), "
            "which holds none (0 pushed, 0 popped so far); every tpop needs a tpush of the peer, and a tpush into a "
            "full pipe a tfree of the peer");
}

TEST_P(PipeTest, AProducerThatIsOnlySlowIsWaitedFor) {
  // The consumer waits long before the producer pushes; an idle-time detector would call this a hang.
  MemberExecutor executor(
      [](const KernelLaunch& launch) -> Result {
        Tile tile{};
        if (auto ok = Pop(launch, "cube", kToAic, tile); !ok) return ok;
        Data(launch)[0] = tile[0];
        return launch.barrier->PipeFree(launch, "cube", kToAic);
      },
      [](const KernelLaunch& launch) -> Result {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return Push(launch, "vec", kToAic, {42, 0, 0, 0});
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(data[0], 42);
}

TEST_P(PipeTest, PipeOpsMisusedAreKernelErrors) {
  MemberExecutor executor([](const KernelLaunch& launch) { return launch.barrier->PipeFree(launch, "cube", kToAic); },
                          [](const KernelLaunch&) -> Result { return {}; });
  std::vector<int32_t> data(1, 0);
  auto done = RunMixed(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 203 (KernelFailed): task 0 (kernel 'cube'): tfree_to_aiv frees a slot of pipe 0 (AIV to AIC), "
            "but no tile popped from it is still held: every tfree must follow a tpop");

  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .dispatch = GetParam()}, executor);
  ASSERT_TRUE(runtime.SubmitAic(kAic, Args(data)));
  auto alone = runtime.WaitAll();
  ASSERT_FALSE(alone);
  EXPECT_EQ(alone.error().str(),
            "fatal error 203 (KernelFailed): task 0 (kernel 'cube'): tfree_to_aiv is a cross-core pipe op, which only "
            "the members of a mixed task (an AIC and an AIV kernel called from one pl.FunctionType.Group) may use");
}

TEST_P(PipeTest, ABlockNeedingMoreCoresThanThereAreIsRefused) {
  MemberExecutor executor([](const KernelLaunch&) -> Result { return {}; },
                          [](const KernelLaunch&) -> Result { return {}; });
  std::vector<int32_t> data(1, 0);
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .dispatch = GetParam()}, executor);
  auto refused = runtime.SubmitMixed({.aic = kAic, .aiv0 = kAiv, .aiv1 = kAiv}, Args(data));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().str(),
            "fatal error 5 (InvalidArgs): a block of mixed task 0 (func_id 1) runs 1 AIC and 2 AIV kernels at once, "
            "but there are 1 AIC and 1 AIV cores");
}

INSTANTIATE_TEST_SUITE_P(Dispatch, PipeTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
