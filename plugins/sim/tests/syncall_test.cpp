// pl.system.syncall in the simulator: a real barrier among the blocks of a launch. Values every
// block writes before it are seen by every block after it; a block that is slow to arrive is waited
// for; a sync_start launch larger than the cores is fatal error 7; and a barrier that can never
// complete (more blocks than cores, none co-started) is diagnosed instead of hanging.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "sim_test_util.h"

namespace simtest {
namespace {

constexpr int kBlocks = 4;
constexpr int kCols = 16;
// Block b spins b * kSpin iterations before writing its slot, so that a missing barrier shows: its
// left neighbour would read the slot before it is written. The last block is the slow one.
constexpr int64_t kSpin = 60000;

// Each block b: spin, slots[b] = x[b], syncall, y[b] = slots[(b + 1) % N].
ir::FunctionPtr NeighbourKernel() {
  KernelBuilder k("neighbour");
  auto x = k.Tensor("x", {kBlocks, kCols});
  auto slots = k.Tensor("slots", {kBlocks, kCols}, ir::DataType::FP32, ir::ParamDirection::InOut);
  auto y = k.Tensor("y", {kBlocks, kCols}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto block = ir::OpRegistry::Get().CreateCall("tile.get_block_idx", {}, {}, ir::Span{});
  auto b = k.Let("b", *block);
  k.For("i", Idx(0), Mul(b, kSpin));
  k.LoadAt("spin", x, Tuple({Idx(0), Idx(0)}), {1, kCols}, 128);
  k.EndFor();
  auto mine = k.LoadAt("mine", x, Tuple({b, Idx(0)}), {1, kCols}, 0);
  k.StoreAt(mine, Tuple({b, Idx(0)}), slots, /*as_eval=*/true);
  k.Syncall();
  auto next = k.Let("next", Bin(ir::BinaryOp::FloorMod, Bin(ir::BinaryOp::Add, b, Idx(1)), Idx(kBlocks)));
  auto theirs = k.LoadAt("theirs", slots, Tuple({next, Idx(0)}), {1, kCols}, 64);
  k.StoreAt(theirs, Tuple({b, Idx(0)}), y);
  return k.Build();
}

pypto_rt_plan NeighbourPlan(int32_t blocks, bool sync_start) {
  auto plan = SingleTaskPlan("neighbour",
                             {{"x", PYPTO_RT_FLOAT32, {kBlocks, kCols}},
                              {"slots", PYPTO_RT_FLOAT32, {kBlocks, kCols}},
                              {"y", PYPTO_RT_FLOAT32, {kBlocks, kCols}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::InOut, rt::ArgDirection::OutputExisting});
  plan.plan.submits[0].block_num = blocks;
  plan.plan.submits[0].require_sync_start = sync_start;
  return plan;
}

TEST(SimSyncall, EveryBlockSeesWhatEveryBlockWroteBeforeTheBarrier) {
  auto program = MakeProgram({NeighbourKernel()});
  auto plan = NeighbourPlan(kBlocks, /*sync_start=*/true);
  std::vector<float> x(kBlocks * kCols), slots(x.size(), 0.0f), y(x.size(), -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5f;
  auto result =
      Execute(*program, plan, {Dense(x, {kBlocks, kCols}), Dense(slots, {kBlocks, kCols}), Dense(y, {kBlocks, kCols})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  // The reference: y is x with its rows rotated up by one.
  for (int b = 0; b < kBlocks; ++b)
    for (int c = 0; c < kCols; ++c)
      EXPECT_EQ(y[static_cast<size_t>(b * kCols + c)], x[static_cast<size_t>(((b + 1) % kBlocks) * kCols + c)])
          << b << "," << c;
  EXPECT_EQ(slots, x);
}

TEST(SimSyncall, MoreCoStartedBlocksThanAivCoresIsFatalCode7) {
  auto program = MakeProgram({NeighbourKernel()});
  auto plan = NeighbourPlan(49, /*sync_start=*/true);
  std::vector<float> x(kBlocks * kCols), slots(x.size()), y(x.size());
  auto result =
      Execute(*program, plan, {Dense(x, {kBlocks, kCols}), Dense(slots, {kBlocks, kCols}), Dense(y, {kBlocks, kCols})});
  ASSERT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_EQ(result.message,
            "sim: fatal error 7 (RequireSyncStartInvalid): task 0 (func_id 0) requires sync_start for 49 blocks, but "
            "there are only 48 AIV cores: every block of a sync_start launch must hold a core at the same time; "
            "launch at most 48 blocks (pl.system.available_aiv_count())");
}

// A soft syncall in a launch of 50 blocks on the 48 AIV cores of a2a3sim, without sync_start: the
// first 48 blocks wait at the barrier on every core, and blocks 48 and 49 can never start.
TEST(SimSyncall, ABarrierThatCanNeverCompleteIsDiagnosed) {
  KernelBuilder k("gather_all");
  auto workspace = k.Tensor("workspace", {16}, ir::DataType::INT32);
  k.Syncall({workspace}, {{"mode", std::string("soft")}});
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("gather_all", {{"workspace", PYPTO_RT_INT32, {16}}}, {rt::ArgDirection::Input});
  plan.plan.submits[0].block_num = 50;
  std::vector<int32_t> counters(16, 0);
  auto result = Execute(*program, plan, {Dense(counters, {16}, PYPTO_RT_INT32)});
  ASSERT_EQ(result.status, PYPTO_ERR_RUNTIME);
  std::string waiting;
  for (int b = 0; b < 48; ++b) waiting += fmt::format("{}block {} on AIV core {}", b ? ", " : "", b, b);
  EXPECT_EQ(result.message,
            "sim: fatal error 100 (SchedulerTimeout): task 0 (kernel 'gather_all', func_id 0): the syncall among its "
            "50 blocks can never complete: 48 of 50 blocks arrived (" + waiting + "); block 48, 49 cannot start: no "
            "AIV core is free, all 48 are held by blocks waiting at a barrier; launch it with pl.spmd(..., "
            "sync_start=True) and at most 48 blocks, so that every block holds a core at the same time");
}

TEST(SimSyncall, ListingShowsTheBarrier) {
  auto kernel = pypto::sim::DecodeKernel(*NeighbourKernel(), 0, rt::CoreType::AIV, ir::Ascend910B());
  ASSERT_TRUE(kernel) << kernel.error();
  const std::string listing = pypto::sim::FormatListing(*kernel, ir::Ascend910B());
  EXPECT_NE(listing.find(": syncall\n       ; pl.system.syncall()  @ kernels.py:"), std::string::npos) << listing;
}

}  // namespace
}  // namespace simtest
