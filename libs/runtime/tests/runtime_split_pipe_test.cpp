// Split cross-core pipes (PipeSplit::UpDown / LeftRight): the two AIV lanes of a mixed block share
// each cube tile, lane 0 taking the first half and lane 1 the second; a slot is free once both lanes
// have freed it, and the cube pops a tile once both lanes have pushed their halves.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <numeric>
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

// A pipe op on a rows x cols tile of `split`.
PipeRef Pipe(PipeDirection direction, PipeSplit split, int64_t rows, int64_t cols) {
  return PipeRef{.id = 0, .direction = direction, .slots = 2, .split = split, .rows = rows, .cols = cols};
}

class MemberExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&, int lane)>;
  MemberExecutor(Body aic, Body aiv) : aic_(std::move(aic)), aiv_(std::move(aiv)) {}
  Result Execute(const KernelLaunch& launch) override {
    const int lane = reinterpret_cast<const GlobalContext*>(launch.args[kGlobalContextSlot])->sub_block_id;
    return launch.func_id == kAic ? aic_(launch, lane) : aiv_(launch, lane);
  }

 private:
  Body aic_, aiv_;
};

int32_t* Data(const KernelLaunch& launch) { return DataPointer<int32_t>(TensorArgOf(launch, 0)); }

// One mixed task {AIC, AIV on both lanes} over `data`.
Result RunSplit(MemberExecutor& executor, std::vector<int32_t>& data, bool both_lanes = true) {
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 3}, executor);
  TaskArgs args;
  args.add_inout(IntTensor(data));
  if (auto id = runtime.SubmitMixed({.aic = kAic, .aiv0 = kAiv, .aiv1 = both_lanes ? kAiv : kNoKernel}, args); !id)
    return pypto::unexpected(id.error());
  return runtime.WaitAll();
}

// The cube pushes tile t (a 4 x 2 matrix holding 10 * t + its element index) `tiles` times; each
// lane pops its 2 x 2 or 4 x 1 half and writes it to data[(t * 2 + lane) * 4, +4].
Result CubeToLanes(PipeSplit split, int tiles, std::vector<int32_t>& data) {
  const auto [half_rows, half_cols] = split == PipeSplit::UpDown ? std::pair{2, 2} : std::pair{4, 1};
  MemberExecutor executor(
      [=](const KernelLaunch& launch, int) -> Result {
        for (int32_t t = 0; t < tiles; ++t) {
          std::array<int32_t, 8> tile;
          std::iota(tile.begin(), tile.end(), 10 * t);
          const PipeRef pipe = Pipe(PipeDirection::AicToAiv, split, 4, 2);
          if (auto ok = launch.barrier->PipePush(launch, "cube", pipe, std::as_bytes(std::span(tile))); !ok) return ok;
        }
        return {};
      },
      [=](const KernelLaunch& launch, int lane) -> Result {
        const PipeRef pipe = Pipe(PipeDirection::AicToAiv, split, half_rows, half_cols);
        for (int t = 0; t < tiles; ++t) {
          // Lane 1 lags behind, so that the cube waits for its frees as well as lane 0's.
          if (lane == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          std::array<int32_t, 4> half{};
          if (auto ok = launch.barrier->PipePop(launch, "vec", pipe, std::as_writable_bytes(std::span(half))); !ok)
            return ok;
          std::copy(half.begin(), half.end(), Data(launch) + (t * 2 + lane) * 4);
          if (auto ok = launch.barrier->PipeFree(launch, "vec", pipe); !ok) return ok;
        }
        return {};
      });
  return RunSplit(executor, data);
}

TEST(SplitPipeTest, UpDownHandsLaneZeroTheUpperRowsAndLaneOneTheLower) {
  std::vector<int32_t> data(3 * 8, -1);
  auto done = CubeToLanes(PipeSplit::UpDown, 3, data);  // three tiles through two slots
  ASSERT_TRUE(done) << done.error().str();
  std::vector<int32_t> expected;
  for (int t = 0; t < 3; ++t)
    for (int e = 0; e < 8; ++e) expected.push_back(10 * t + e);  // rows 0-1 then rows 2-3: the tile in order
  EXPECT_EQ(data, expected);
}

TEST(SplitPipeTest, LeftRightHandsLaneZeroTheLeftColumnsAndLaneOneTheRight) {
  std::vector<int32_t> data(8, -1);
  auto done = CubeToLanes(PipeSplit::LeftRight, 1, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(data, (std::vector<int32_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(SplitPipeTest, TheCubePopsBothLanesHalvesPutTogether) {
  // An odd cut: a 3 x 2 tile whose halves are 2 x 2 boxes, lane 1's second row beyond the tile.
  MemberExecutor executor(
      [](const KernelLaunch& launch, int) -> Result {
        std::array<int32_t, 6> tile{};
        const PipeRef pipe = Pipe(PipeDirection::AivToAic, PipeSplit::UpDown, 3, 2);
        if (auto ok = launch.barrier->PipePop(launch, "cube", pipe, std::as_writable_bytes(std::span(tile))); !ok)
          return ok;
        std::copy(tile.begin(), tile.end(), Data(launch));
        return launch.barrier->PipeFree(launch, "cube", pipe);
      },
      [](const KernelLaunch& launch, int lane) -> Result {
        std::array<int32_t, 4> half{};
        std::iota(half.begin(), half.end(), 100 * (lane + 1));
        const PipeRef pipe = Pipe(PipeDirection::AivToAic, PipeSplit::UpDown, 2, 2);
        return launch.barrier->PipePush(launch, "vec", pipe, std::as_bytes(std::span(half)));
      });
  std::vector<int32_t> data(6, -1);
  auto done = RunSplit(executor, data);
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(data, (std::vector<int32_t>{100, 101, 102, 103, 200, 201}));
}

TEST(SplitPipeTest, APipeIsSplitOrWholeThroughout) {
  MemberExecutor executor(
      [](const KernelLaunch& launch, int) -> Result {
        std::array<int32_t, 4> tile{};
        for (PipeSplit split : {PipeSplit::UpDown, PipeSplit::Whole}) {
          const PipeRef pipe = Pipe(PipeDirection::AicToAiv, split, 2, 2);
          if (auto ok = launch.barrier->PipePush(launch, "cube", pipe, std::as_bytes(std::span(tile))); !ok)
            return ok;
        }
        return {};
      },
      [](const KernelLaunch&, int) -> Result { return {}; });
  std::vector<int32_t> data(1, 0);
  auto done = RunSplit(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 203 (KernelFailed): task 0 (kernel 'cube'): tpush_to_aiv uses pipe 0 (AIC to AIV) whole, but "
            "it was first used split: a pipe is split between the AIV lanes or whole throughout");
}

TEST(SplitPipeTest, ASplitPipeNeedsBothLanes) {
  MemberExecutor executor(
      [](const KernelLaunch&, int) -> Result { return {}; },
      [](const KernelLaunch& launch, int) -> Result {
        std::array<int32_t, 4> half{};
        const PipeRef pipe = Pipe(PipeDirection::AicToAiv, PipeSplit::UpDown, 2, 2);
        return launch.barrier->PipePop(launch, "vec", pipe, std::as_writable_bytes(std::span(half)));
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunSplit(executor, data, /*both_lanes=*/false);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 203 (KernelFailed): task 1 (kernel 'vec'): tpop_from_aic uses pipe 0 (AIC to AIV) split "
            "up-down, which needs the AIV kernel on both lanes (dual AIV dispatch), but this block runs it on one");
}

TEST(SplitPipeTest, AHalfOfTheWrongShapeIsDiagnosed) {
  MemberExecutor executor(
      [](const KernelLaunch& launch, int) -> Result {
        std::array<int32_t, 8> tile{};
        const PipeRef pipe = Pipe(PipeDirection::AicToAiv, PipeSplit::UpDown, 4, 2);
        return launch.barrier->PipePush(launch, "cube", pipe, std::as_bytes(std::span(tile)));
      },
      [](const KernelLaunch& launch, int lane) -> Result {
        if (lane == 1) return {};
        std::array<int32_t, 4> half{};
        const PipeRef pipe = Pipe(PipeDirection::AicToAiv, PipeSplit::UpDown, 4, 1);  // a left-right half
        return launch.barrier->PipePop(launch, "vec", pipe, std::as_writable_bytes(std::span(half)));
      });
  std::vector<int32_t> data(1, 0);
  auto done = RunSplit(executor, data);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            "fatal error 203 (KernelFailed): task 1 (kernel 'vec'): tpop_from_aic on pipe 0 (AIC to AIV) receives a "
            "[4, 1] tile of 16 bytes on lane 0, but the tile pushed is [4, 2] of 32 bytes, whose up-down halves are "
            "[2, 2]: both sides must agree on the tile's shape and dtype");
}

}  // namespace
}  // namespace pypto::rt
