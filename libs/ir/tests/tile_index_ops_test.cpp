// Type deduction of the gathers and scatters by index (tile.gather, tile.gather_dim, tile.scatter,
// tile.scatter_dim, tile.scatter_mask, tile.scatter_update, the compare gather, tile.mscatter,
// tile.paged_gather) and of tile.random: result types and the errors for wrong dtypes and shapes.
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

// A whole [shape] tensor loaded as a tile.
ExprPtr Load(const std::string& name, Shape shape, DataType dtype = DataType::FP32) {
  std::vector<ExprPtr> origin(shape.size(), Index(0)), dims;
  for (int64_t dim : shape) dims.push_back(Index(dim));
  return testing::Op("tile.load", {Tensor(name, shape, dtype), std::make_shared<TupleLiteral>(origin, Span{}),
                                   std::make_shared<TupleLiteral>(dims, Span{})});
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 4, 9});
}

TEST(TileIndexOps, GatherTakesTheShapeOfItsFlatIndices) {
  auto call = Create("tile.gather", {Load("x", {8, 64}), Load("i", {8, 32}, DataType::INT32)});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**call), CoreAffinity::Vector);
  auto narrow = Create("tile.gather", {Load("x", {4, 64}), Load("n", {4, 8}, DataType::INT16)});
  ASSERT_FALSE(narrow);
  EXPECT_EQ(narrow.error().message, "the indices of tile.gather into FP32 elements must be INT32, got INT16");
  auto half = Create("tile.gather", {Load("h", {4, 64}, DataType::FP16), Load("n", {4, 8}, DataType::INT16)});
  ASSERT_TRUE(half) << half.error().str();
}

TEST(TileIndexOps, GatherDimReachesAlongOneAxisOfAnyRank) {
  auto last = Create("tile.gather_dim", {Load("x", {4, 16}), Load("i", {2, 8}, DataType::INT32)});
  ASSERT_TRUE(last) << last.error().str();
  EXPECT_EQ((*last)->type()->str(), "pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]");
  auto middle = Create("tile.gather_dim", {Load("x", {2, 8, 8}), Load("i", {2, 3, 8}, DataType::INT32)},
                       {{"dim", int64_t{1}}});
  ASSERT_TRUE(middle) << middle.error().str();
  EXPECT_EQ((*middle)->type()->str(), "pl.Tile[[2, 3, 8], pl.FP32, pl.Mem.Vec]");
  auto wide = Create("tile.gather_dim", {Load("x", {4, 16}), Load("i", {4, 32}, DataType::INT32)});
  ASSERT_TRUE(wide) << wide.error().str();  // the indexed axis may be longer than the source's
  auto longer = Create("tile.gather_dim", {Load("x", {4, 16}), Load("i", {8, 8}, DataType::INT32)});
  ASSERT_FALSE(longer);
  EXPECT_EQ(longer.error().message,
            "the indices pl.Tile[[8, 8], pl.INT32, pl.Mem.Vec] of tile.gather_dim are longer than "
            "pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] on axis 0, which is not the one indexed");
  auto axis = Create("tile.gather_dim", {Load("x", {4, 16}), Load("i", {4, 8}, DataType::INT32)},
                     {{"dim", int64_t{2}}});
  ASSERT_FALSE(axis);
  EXPECT_EQ(axis.error().message, "dim=2 of tile.gather_dim is outside [-2, 2) for a rank-2 tile");
}

TEST(TileIndexOps, ScattersReturnTheDestination) {
  auto flat = Create("tile.scatter", {Load("d", {8, 16}), Load("s", {8, 8}), Load("i", {8, 8}, DataType::INT32)});
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ((*flat)->type()->str(), "pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]");
  auto along = Create("tile.scatter_dim",
                      {Load("d", {16, 32}, DataType::FP16), Load("i", {16, 16}, DataType::INT16),
                       Load("s", {16, 16}, DataType::FP16)},
                      {{"dim", int64_t{-1}}});
  ASSERT_TRUE(along) << along.error().str();
  EXPECT_EQ((*along)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  auto wide = Create("tile.scatter_dim", {Load("d", {16, 32}, DataType::FP16), Load("i", {16, 16}, DataType::INT32),
                                          Load("s", {16, 16}, DataType::FP16)});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().message, "the indices of tile.scatter_dim into FP16 elements must be INT16, got INT32");
  auto dtype = Create("tile.scatter", {Load("d", {8, 16}), Load("s", {8, 8}, DataType::INT32),
                                       Load("i", {8, 8}, DataType::INT32)});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message,
            "the source pl.Tile[[8, 8], pl.INT32, pl.Mem.Vec] of tile.scatter must have the dtype of the destination "
            "pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]");
}

TEST(TileIndexOps, ScatterMaskNeedsADestinationAsWideAsThePattern) {
  auto even = Create("tile.scatter_mask", {Load("d", {8, 16}), Load("s", {8, 8})}, {{"mask_pattern", int64_t{1}}});
  ASSERT_TRUE(even) << even.error().str();
  EXPECT_EQ((*even)->type()->str(), "pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]");
  auto narrow = Create("tile.scatter_mask", {Load("d", {8, 16}), Load("s", {8, 8})}, {{"mask_pattern", int64_t{3}}});
  ASSERT_FALSE(narrow);
  EXPECT_EQ(narrow.error().message,
            "mask pattern P0001 writes one lane of every 4, so the destination of pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec] "
            "must be [8, 32], got pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]");
}

TEST(TileIndexOps, ScatterUpdateWritesRowsOfA2DOr4DInput) {
  auto rows = Create("tile.scatter_update",
                     {Load("d", {32, 32}), Load("i", {2, 8}, DataType::INT32), Load("s", {16, 32})});
  ASSERT_TRUE(rows) << rows.error().str();
  EXPECT_EQ((*rows)->type()->str(), "pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec]");
  auto paged = Create("tile.scatter_update", {Load("d", {4, 8, 1, 16}), Load("i", {2, 3}, DataType::INT32),
                                               Load("s", {2, 3, 1, 16})});
  ASSERT_TRUE(paged) << paged.error().str();
  auto short_src = Create("tile.scatter_update",
                          {Load("d", {32, 32}), Load("i", {2, 8}, DataType::INT32), Load("s", {8, 32})});
  ASSERT_FALSE(short_src);
  EXPECT_EQ(short_src.error().message,
            "tile.scatter_update takes input [rows, d] with src [b * s, d], or input [blocks, block_size, 1, d] with "
            "src [b, s, 1, d], for the index [b, s]; got input pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec], src "
            "pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec], index pl.Tile[[2, 8], pl.INT32, pl.Mem.Vec]");
  auto dim = Create("tile.scatter_update",
                    {Load("d", {32, 32}), Load("i", {2, 8}, DataType::INT32), Load("s", {16, 32})},
                    {{"dim", int64_t{-1}}});
  ASSERT_FALSE(dim);
  EXPECT_EQ(dim.error().message, "tile.scatter_update writes rows: dim must be -2, got -1");
}

ExprPtr Scalar(DataType dtype) { return std::make_shared<Var>("k", std::make_shared<ScalarType>(dtype)); }

TEST(TileIndexOps, TheCompareGatherGivesColumnsAndCounts) {
  const Call::Kwargs kwargs = {{"cmp_mode", std::string("gt")}, {"out_cols", int64_t{8}}};
  auto src = Load("s", {16, 64}, DataType::FP16);
  auto cols = Create("tile.gather_compare", {src, Scalar(DataType::FP16)}, kwargs);
  ASSERT_TRUE(cols) << cols.error().str();
  EXPECT_EQ((*cols)->type()->str(), "pl.Tile[[16, 8], pl.INT32, pl.Mem.Vec]");
  auto counts = Create("tile.gather_compare_count", {src, Scalar(DataType::FP16)}, kwargs);
  ASSERT_TRUE(counts) << counts.error().str();
  EXPECT_EQ((*counts)->type()->str(), "pl.Tile[[1, 16], pl.INT32, pl.Mem.Vec]");
  auto kvalue = Create("tile.gather_compare", {src, Scalar(DataType::FP32)}, kwargs);
  ASSERT_FALSE(kvalue);
  EXPECT_EQ(kvalue.error().message,
            "the kvalue of tile.gather_compare must be a FP16 scalar (the source's dtype), got pl.Scalar[pl.FP32]");
  auto mode = Create("tile.gather_compare", {src, Scalar(DataType::FP16)},
                     {{"cmp_mode", std::string("gte")}, {"out_cols", int64_t{8}}});
  ASSERT_FALSE(mode);
  EXPECT_EQ(mode.error().message, "cmp_mode of tile.gather_compare must be one of eq, ne, lt, le, gt, ge, got 'gte'");
}

TEST(TileIndexOps, MscatterWritesItsOutputTensor) {
  auto out = Tensor("out", {256});
  auto call = Create("tile.mscatter", {Load("s", {8, 32}), Load("i", {8, 32}, DataType::INT32), out});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tensor[[256], pl.FP32]");
  EXPECT_EQ((*call)->op()->writes_arg, 2);
  auto narrow = Create("tile.mscatter", {Load("s", {8, 32}), Load("i", {8, 32}, DataType::INT16), out});
  ASSERT_FALSE(narrow);
  EXPECT_EQ(narrow.error().message,
            "the indices of pl.mscatter must be an INT32 tile of the source's shape [8, 32], got "
            "pl.Tile[[8, 32], pl.INT16, pl.Mem.Vec]");
}

TEST(TileIndexOps, PagedGatherMakesAMatTileOfTheGatheredRows) {
  const Call::Kwargs kwargs = {{"block_size", int64_t{16}}, {"size", int64_t{64}}, {"max_indices", int64_t{32}}};
  std::vector<ExprPtr> args = {Tensor("pool", {128, 64}, DataType::FP16), Tensor("idx", {32}, DataType::INT32),
                               Tensor("bt", {8}, DataType::INT32)};
  auto call = Create("tile.paged_gather", args, kwargs);
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[32, 64], pl.FP16, pl.Mem.Mat]");
  EXPECT_EQ(CallAffinity(**call), CoreAffinity::Cube);
  Call::Kwargs wide = kwargs;
  wide.emplace_back("col_off", int64_t{8});
  auto outside = Create("tile.paged_gather", args, wide);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "columns [8, 72) of pl.paged_gather are outside the pool pl.Tensor[[128, 64], pl.FP16]");
}

TEST(TileIndexOps, RandomFillsA2DIntegerTile) {
  std::vector<ExprPtr> seeds;
  for (int i = 0; i < 6; ++i) seeds.push_back(Index(i));
  auto args = seeds;
  args.push_back(testing::Ints({4, 256}));
  auto call = Create("tile.random", args);
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[4, 256], pl.UINT32, pl.Mem.Vec]");
  auto rounds = Create("tile.random", args, {{"rounds", int64_t{8}}});
  ASSERT_FALSE(rounds);
  EXPECT_EQ(rounds.error().message, "rounds of pl.random must be 7 or 10, got 8");
  auto dtype = Create("tile.random", args, {{"dtype", DataType::FP32}});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message, "pl.random makes INT32 or UINT32 tiles, not FP32");
}

}  // namespace
}  // namespace pypto::ir
