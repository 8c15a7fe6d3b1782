// Type deduction of the cross-core pipe ops (tpush/tpop/tfree and the pipe setup): a pop is a tile
// of the shape and dtype it names, Vec on the vector core and Mat on the cube core; each op runs on
// its side whatever its operands; the printed calls are the DSL's spellings.
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 4, 9});
}

ExprPtr TileIn(MemorySpace space) {
  return std::make_shared<Var>("t", std::make_shared<TileType>(Shape{16, 32}, DataType::FP32, space));
}

TEST(CrossCoreOps, PopsAreTilesOnTheirSide) {
  auto vec = Create("tile.tpop_from_aic", {Ints({16, 32})}, {{"dtype", DataType::FP32}, {"id", int64_t{1}}});
  ASSERT_TRUE(vec) << vec.error().str();
  EXPECT_EQ((*vec)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**vec), CoreAffinity::Vector);
  EXPECT_EQ(PrintExpr(*vec), "pl.tile.tpop_from_aic([16, 32], dtype=pl.FP32, id=1)");

  auto mat = Create("tile.tpop_from_aiv", {Ints({16, 32})}, {{"dtype", DataType::BF16}, {"split", int64_t{0}}});
  ASSERT_TRUE(mat) << mat.error().str();
  EXPECT_EQ((*mat)->type()->str(), "pl.Tile[[16, 32], pl.BF16, pl.Mem.Mat]");
  EXPECT_EQ(CallAffinity(**mat), CoreAffinity::Cube);
}

TEST(CrossCoreOps, PushesAndFreesRunOnTheirSide) {
  struct Case {
    const char* op;
    MemorySpace space;
    CoreAffinity side;
    const char* printed;
  };
  const Case cases[] = {
      {"tile.tpush_to_aiv", MemorySpace::Acc, CoreAffinity::Cube, "pl.tile.tpush_to_aiv(t, split=0)"},
      {"tile.tpush_to_aic", MemorySpace::Vec, CoreAffinity::Vector, "pl.tile.tpush_to_aic(t, split=0)"},
      {"system.tfree_to_aic", MemorySpace::Vec, CoreAffinity::Vector, "pl.system.tfree_to_aic(t, split=0)"},
      {"system.tfree_to_aiv", MemorySpace::Mat, CoreAffinity::Cube, "pl.system.tfree_to_aiv(t, split=0)"},
  };
  for (const Case& c : cases) {
    auto call = Create(c.op, {TileIn(c.space)}, {{"split", int64_t{0}}});
    ASSERT_TRUE(call) << c.op << ": " << call.error().str();
    EXPECT_EQ((*call)->type()->str(), UnknownType().str()) << c.op;
    EXPECT_EQ(CallAffinity(**call), c.side) << c.op;
    EXPECT_EQ(PrintExpr(*call), c.printed);
  }
}

TEST(CrossCoreOps, ATileOfTheWrongSideIsRefused) {
  auto push = Create("tile.tpush_to_aiv", {TileIn(MemorySpace::Vec)});
  ASSERT_FALSE(push);
  EXPECT_EQ(push.error().message, "tile.tpush_to_aiv pushes a tile of the cube core, got one in Vec");
  auto free = Create("system.tfree_to_aic", {TileIn(MemorySpace::Mat)});
  ASSERT_FALSE(free);
  EXPECT_EQ(free.error().message, "system.tfree_to_aic frees a tile popped on the vector core, got one in Mat");
}

TEST(CrossCoreOps, APopNeedsItsShapeAndDtype) {
  auto bare = Create("tile.tpop_from_aic", {});
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error().message, "tile.tpop_from_aic needs the shape and dtype of the tile it receives");
  auto split = Create("tile.tpop_from_aic", {Ints({16, 16})}, {{"dtype", DataType::FP32}, {"split", int64_t{7}}});
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().message,
            "tile.tpop_from_aic: split=7 is not a split code (0 none, 1 up-down, 2 left-right, 3/4 their odd "
            "variants)");
}

TEST(CrossCoreOps, AShardIsTheLanesHalfOfACubeTile) {
  auto rows = Create("tile.aiv_shard", {TileIn(MemorySpace::Acc)}, {{"split", int64_t{1}}});
  ASSERT_TRUE(rows) << rows.error().str();
  EXPECT_EQ((*rows)->type()->str(), "pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(PrintExpr(*rows), "pl.tile.aiv_shard(t, split=1)");
  auto cols = Create("tile.aiv_shard", {TileIn(MemorySpace::Acc)}, {{"split", int64_t{2}}});
  ASSERT_TRUE(cols) << cols.error().str();
  EXPECT_EQ((*cols)->type()->str(), "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]");
  auto whole = Create("tile.aiv_shard", {TileIn(MemorySpace::Acc)}, {{"split", int64_t{0}}});
  ASSERT_TRUE(whole) << whole.error().str();
  EXPECT_EQ((*whole)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  auto vec = Create("tile.aiv_shard", {TileIn(MemorySpace::Vec)}, {{"split", int64_t{1}}});
  ASSERT_FALSE(vec);
  EXPECT_EQ(vec.error().message, "tile.aiv_shard hands a tile of the cube core to the vector lanes, got one in Vec");
}

TEST(CrossCoreOps, PipeSetupChecksItsGeometry) {
  auto init = Create("system.aic_initialize_pipe", {},
                     {{"dir_mask", int64_t{1}}, {"slot_size", int64_t{1024}}, {"slot_num", int64_t{4}}});
  ASSERT_TRUE(init) << init.error().str();
  EXPECT_EQ(CallAffinity(**init), CoreAffinity::Cube);
  EXPECT_EQ(PrintExpr(*init), "pl.system.aic_initialize_pipe(dir_mask=1, slot_size=1024, slot_num=4)");
  auto mask = Create("system.aiv_initialize_pipe", {}, {{"dir_mask", int64_t{4}}, {"slot_size", int64_t{1024}}});
  ASSERT_FALSE(mask);
  EXPECT_EQ(mask.error().message, "dir_mask=4 is not 1 (AIC to AIV), 2 (AIV to AIC) or 3 (both)");
  auto buffer = Create("system.reserve_buffer", {}, {{"name", std::string("slots")}, {"size", int64_t{4096}}});
  ASSERT_TRUE(buffer) << buffer.error().str();
  EXPECT_EQ((*buffer)->type()->str(), "pl.Scalar[pl.INT32]");
  EXPECT_EQ(PrintExpr(*buffer), "pl.system.reserve_buffer(name=\"slots\", size=4096)");
  EXPECT_TRUE(IsCrossCorePipeOp("system.tfree_to_aiv"));
  EXPECT_FALSE(IsCrossCorePipeOp("system.aiv_initialize_pipe"));
}

}  // namespace
}  // namespace pypto::ir
