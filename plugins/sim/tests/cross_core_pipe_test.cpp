// Cross-core pipes in the simulator: the AIC and AIV members of a mixed task hand tiles to each other
// through rings of slots that really block. Values cross intact and in order; a ring too shallow
// for the program deadlocks, which is diagnosed from the members' states (naming task, kernel, core
// and pipe) instead of hanging; the listing shows the pipe instructions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim_test_util.h"

namespace simtest {
namespace {

constexpr int kTiles = 4;
constexpr int kRows = 16, kCols = 16;
constexpr int64_t kTileBytes = kRows * kCols * 4;

ir::TypePtr MatTile(int64_t byte_offset) {
  return std::make_shared<ir::TileType>(ir::Shape{kRows, kCols}, ir::DataType::FP32, ir::MemorySpace::Mat,
                                        ir::TileMemRef{byte_offset, kTileBytes});
}

ir::Call::Kwargs PopKwargs() { return {{"dtype", ir::DataType::FP32}}; }

// `pl.aic_initialize_pipe` / `pl.aiv_initialize_pipe` of both directions with `slots` slots, when given.
void InitPipes(KernelBuilder& k, const char* op, int64_t slots) {
  if (slots > 0) k.Eval(op, {}, {{"dir_mask", int64_t{3}}, {"slot_size", kTileBytes}, {"slot_num", slots}});
}

// The AIC member: each tile popped from the vector core goes straight back to it.
ir::FunctionPtr Bouncer(int64_t slots) {
  KernelBuilder k("bounce", ir::FunctionType::AIC);
  k.Tensor("x", {kTiles * kRows, kCols});
  k.Tensor("y", {kTiles * kRows, kCols}, ir::DataType::FP32, ir::ParamDirection::Out);
  InitPipes(k, "system.aic_initialize_pipe", slots);
  k.For("i", kTiles);
  auto tile = k.Call("tile.tpop_from_aiv", "t", {Ints({kRows, kCols})}, PopKwargs(), MatTile(0));
  k.Eval("tile.tpush_to_aiv", {tile});
  k.Eval("system.tfree_to_aiv", {tile});
  k.EndFor();
  return k.Build();
}

// The AIV member: pushes every row block of x, then pops each back and stores twice it into y.
ir::FunctionPtr Sender(int64_t slots) {
  KernelBuilder k("send");
  auto x = k.Tensor("x", {kTiles * kRows, kCols});
  auto y = k.Tensor("y", {kTiles * kRows, kCols}, ir::DataType::FP32, ir::ParamDirection::Out);
  InitPipes(k, "system.aiv_initialize_pipe", slots);
  auto i = k.For("i", kTiles);
  auto block = k.LoadAt("block", x, Tuple({Mul(i, kRows), Idx(0)}), {kRows, kCols}, 0);
  k.Eval("tile.tpush_to_aic", {block});
  k.EndFor();
  auto j = k.For("j", kTiles);
  auto back = k.Call("tile.tpop_from_aic", "back", {Ints({kRows, kCols})}, PopKwargs(),
                     KernelBuilder::TileAt({kRows, kCols}, ir::DataType::FP32, kTileBytes));
  auto twice = k.Op("tile.add", "twice", back, back, 2 * kTileBytes);
  k.StoreAt(twice, Tuple({Mul(j, kRows), Idx(0)}), y, /*as_eval=*/true);
  k.Eval("system.tfree_to_aic", {back});
  k.EndFor();
  return k.Build();
}

pypto_rt_plan MixedPlan() {
  auto plan = SingleTaskPlan("send", {{"x", PYPTO_RT_FLOAT32, {kTiles * kRows, kCols}},
                                      {"y", PYPTO_RT_FLOAT32, {kTiles * kRows, kCols}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  plan.plan.kernels = {rt::PlanKernel{.func_id = 0, .name = "bounce", .core_type = rt::CoreType::AIC},
                       rt::PlanKernel{.func_id = 1, .name = "send", .core_type = rt::CoreType::AIV}};
  plan.plan.submits[0].mixed = rt::MixedKernels{.aic = 0, .aiv0 = 1};
  return plan;
}

RunResult RunBounce(int64_t slots, std::vector<float>& x, std::vector<float>& y) {
  auto program = MakeProgram({Bouncer(slots), Sender(slots)});
  return Execute(*program, MixedPlan(),
                 {Dense(x, {kTiles * kRows, kCols}), Dense(y, {kTiles * kRows, kCols})});
}

TEST(SimCrossCorePipe, TilesCrossBothWaysInOrder) {
  // Four tiles through rings of two slots: the sender fills its ring and waits for the cube core to
  // free a slot; the cube core waits likewise for the sender's second loop.
  std::vector<float> x(kTiles * kRows * kCols), y(x.size(), -1.0f);
  for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e) * 0.25f - 100.0f;
  auto result = RunBounce(/*slots=*/0, x, y);
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t e = 0; e < x.size(); ++e) ASSERT_EQ(y[e], 2 * x[e]) << e;
}

TEST(SimCrossCorePipe, RingsOfOneSlotDeadlockAndSaySo) {
  // With one slot each way the sender's third push waits for a slot the cube core frees only after
  // pushing the second tile back, and that push waits for the sender, which pops only after pushing
  // all four: a deadlock of the program, found from what each core waits for.
  std::vector<float> x(kTiles * kRows * kCols, 1.0f), y(x.size(), 0.0f);
  auto result = RunBounce(/*slots=*/1, x, y);
  ASSERT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_EQ(result.message,
            "sim: fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes can "
            "never move: kernel 'bounce' (task 0) on AIC core 0 waits in tpush_to_aiv for a free slot of pipe 0 (AIC "
            "to AIV), whose 1 slots are all taken (1 pushed, 0 popped, 0 freed so far); kernel 'send' (task 1) on AIV "
            "core 0 waits in tpush_to_aic for a free slot of pipe 0 (AIV to AIC), whose 1 slots are all taken (2 "
            "pushed, 2 popped, 1 freed so far); every tpop needs a tpush of the peer, and a tpush into a full pipe a "
            "tfree of the peer");
}

TEST(SimCrossCorePipe, ListingShowsThePipes) {
  auto kernel = pypto::sim::DecodeKernel(*Bouncer(4), 0, rt::CoreType::AIC, ir::Ascend910B());
  ASSERT_TRUE(kernel) << kernel.error();
  const std::string listing = pypto::sim::FormatListing(*kernel, ir::Ascend910B());
  EXPECT_NE(listing.find("tpop  pipe 0 (AIV to AIC, 4 slots) -> Mat[0x00000, +1024]"), std::string::npos) << listing;
  EXPECT_NE(listing.find("tpush pipe 0 (AIC to AIV, 4 slots) <- Mat[0x00000, +1024]"), std::string::npos) << listing;
  EXPECT_NE(listing.find("tfree pipe 0 (AIV to AIC, 4 slots)\n"), std::string::npos) << listing;
}

TEST(SimCrossCorePipe, SplitPipesCarryTheirSplitAndTileShape) {
  KernelBuilder k("split", ir::FunctionType::AIV);
  auto x = k.Tensor("x", {kRows, kCols});
  auto tile = k.Load("t", x, {0, 0}, {kRows, kCols}, 0);
  k.Eval("tile.tpush_to_aic", {tile}, {{"split", int64_t{4}}});
  auto kernel = pypto::sim::DecodeKernel(*k.Build(), 0, rt::CoreType::AIV, ir::Ascend910B());
  ASSERT_TRUE(kernel) << kernel.error();
  const auto& push = kernel->code.back();
  EXPECT_EQ(push.pipe.split, rt::PipeSplit::LeftRight);  // 4: left-right of an odd extent
  EXPECT_EQ(push.pipe.rows, kRows);
  EXPECT_EQ(push.pipe.cols, kCols);
  const std::string listing = pypto::sim::FormatListing(*kernel, ir::Ascend910B());
  EXPECT_NE(listing.find("tpush pipe 0 (AIV to AIC, 2 slots, split left-right) <- Vec"), std::string::npos) << listing;
}

}  // namespace
}  // namespace simtest
