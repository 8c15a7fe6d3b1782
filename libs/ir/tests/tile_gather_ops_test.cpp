// Type deduction of the byte-run gathers: tile.gatherb (32-byte blocks at UINT32 byte offsets) and
// tile.mgather (rows or elements of a global tensor at INT32 indices, into Vec or Mat).
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

ExprPtr Ints(const std::vector<int64_t>& values) {
  std::vector<ExprPtr> elements;
  for (int64_t value : values) elements.push_back(Index(value));
  return std::make_shared<TupleLiteral>(elements, Span{});
}

// A [shape] tile loaded from the origin of a tensor of that shape, narrowed to `valid` if given.
ExprPtr Load(const std::string& name, Shape shape, DataType dtype = DataType::FP32, std::vector<int64_t> valid = {}) {
  std::vector<ExprPtr> args = {Tensor(name, shape, dtype), Ints(std::vector<int64_t>(shape.size(), 0)), Ints(shape)};
  if (!valid.empty()) args.push_back(Ints(valid));
  return testing::Op("tile.load", std::move(args));
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 4, 9});
}

TEST(TileGatherOps, GatherbWidensEachOffsetColumnIntoOneBlockOfTheOutputDtype) {
  auto src = Load("s", {1, 256});
  auto call = Create("tile.gatherb", {src, Load("o", {4, 8}, DataType::UINT32)});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[4, 64], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**call), CoreAffinity::Vector);
  // Bytes read as INT8: 32 elements per block; the valid region scales alike.
  auto bytes = Create("tile.gatherb", {src, Load("o", {4, 8}, DataType::UINT32, {3, 5})},
                      {{"output_dtype", DataType::INT8}});
  ASSERT_TRUE(bytes) << bytes.error().str();
  EXPECT_EQ((*bytes)->type()->str(), "pl.Tile[[4, 256], pl.INT8, pl.Mem.Vec, pl.TileView(valid_shape=[3, 160])]");
}

TEST(TileGatherOps, GatherbRefusesOffsetsThatAreNotUint32RowsOfEight) {
  auto src = Load("s", {1, 256});
  auto signed_offsets = Create("tile.gatherb", {src, Load("o", {4, 8}, DataType::INT32)});
  ASSERT_FALSE(signed_offsets);
  EXPECT_EQ(signed_offsets.error().message, "the offsets of tile.gatherb must be UINT32 byte offsets, got INT32");
  EXPECT_EQ(signed_offsets.error().span.str(), "k.py:4:9");
  auto ragged = Create("tile.gatherb", {src, Load("o", {4, 6}, DataType::UINT32)});
  ASSERT_FALSE(ragged);
  EXPECT_EQ(ragged.error().message,
            "the offsets of tile.gatherb must have a multiple of 8 columns (whole 32-byte rows of UINT32), got "
            "pl.Tile[[4, 6], pl.UINT32, pl.Mem.Vec]");
  auto wide = Create("tile.gatherb", {Load("s", {1, 64}, DataType::INT64), Load("o", {1, 8}, DataType::UINT32)});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().message,
            "the source of tile.gatherb must be INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16 or FP32, got "
            "INT64");
}

TEST(TileGatherOps, MgatherRowsTakeTheTensorsRowLengthAndTheIndicesValidCount) {
  auto mem = Tensor("mem", {64, 32}, DataType::FP16);
  auto row = Create("tile.mgather", {mem, Load("i", {1, 16}, DataType::INT32, {1, 9})},
                    {{"gather_oob", std::string("clamp")}});
  ASSERT_TRUE(row) << row.error().str();
  EXPECT_EQ((*row)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec, pl.TileView(valid_shape=[9, 32])]");
  auto column = Create("tile.mgather", {mem, Load("i", {16, 1}, DataType::INT32)});
  ASSERT_TRUE(column) << column.error().str();
  EXPECT_EQ((*column)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  auto square = Create("tile.mgather", {mem, Load("i", {4, 4}, DataType::INT32)});
  ASSERT_FALSE(square);
  EXPECT_EQ(square.error().message,
            "the indices of tile.mgather with coalesce=\"row\" must be [1, R] or [R, 1], got [4, 4]");
}

TEST(TileGatherOps, MgatherElementsAreShapedLikeTheIndices) {
  auto call = Create("tile.mgather", {Tensor("mem", {256}), Load("i", {8, 32}, DataType::INT32, {5, 19})},
                     {{"coalesce", std::string("elem")}});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[5, 19])]");
  auto mode = Create("tile.mgather", {Tensor("mem", {256}), Load("i", {8, 32}, DataType::INT32)},
                     {{"coalesce", std::string("elem")}, {"gather_oob", std::string("saturate")}});
  ASSERT_FALSE(mode);
  EXPECT_EQ(mode.error().message,
            "gather_oob of tile.mgather must be one of \"undefined\", \"clamp\", \"wrap\", \"zero\", got \"saturate\"");
  auto rows_of_vector = Create("tile.mgather", {Tensor("mem", {256}), Load("i", {1, 8}, DataType::INT32)});
  ASSERT_FALSE(rows_of_vector);
  EXPECT_EQ(rows_of_vector.error().message,
            "tile.mgather with coalesce=\"row\" gathers rows of a tensor of rank 2 or more, got "
            "pl.Tensor[[256], pl.FP32]");
}

TEST(TileGatherOps, MgatherIntoMatReadsIndicesFromATensorAndStagesElementsInScratch) {
  const Call::Kwargs mat = {{"target_memory", MemorySpace::Mat}};
  auto mem = Tensor("mem", {64, 32}, DataType::FP16);
  auto row = Create("tile.mgather", {mem, Tensor("idx", {1, 32}, DataType::INT32), Ints({16, 21})}, mat);
  ASSERT_TRUE(row) << row.error().str();
  EXPECT_EQ((*row)->type()->str(), "pl.Tile[[32, 32], pl.FP16, pl.Mem.Mat, pl.TileView(valid_shape=[16, 21])]");
  EXPECT_EQ(CallAffinity(**row), CoreAffinity::Cube);

  Call::Kwargs elem = mat;
  elem.emplace_back("coalesce", std::string("elem"));
  auto table = Tensor("table", {1024}, DataType::FP16);
  auto idx = Tensor("idx", {32, 32}, DataType::INT32);
  auto staged = Create("tile.mgather", {table, idx, Tensor("scratch", {1056}, DataType::FP16)}, elem);
  ASSERT_TRUE(staged) << staged.error().str();
  EXPECT_EQ((*staged)->type()->str(), "pl.Tile[[32, 32], pl.FP16, pl.Mem.Mat]");
  auto unstaged = Create("tile.mgather", {table, idx}, elem);
  ASSERT_FALSE(unstaged);
  EXPECT_EQ(unstaged.error().message,
            "tile.mgather with coalesce=\"elem\" into a Mat tile needs scratch=, a tensor of mem's dtype to stage the "
            "elements in");
  auto small = Create("tile.mgather", {table, idx, Tensor("scratch", {512}, DataType::FP16)}, elem);
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message,
            "the scratch pl.Tensor[[512], pl.FP16] of tile.mgather holds 512 elements; the result needs 1024");
  auto tile_indices = Create("tile.mgather", {mem, Load("i", {1, 32}, DataType::INT32)}, mat);
  ASSERT_FALSE(tile_indices);
  EXPECT_EQ(tile_indices.error().message,
            "the indices of tile.mgather into a Mat tile must be a tensor, got pl.Tile[[1, 32], pl.INT32, pl.Mem.Vec]");
  auto unaligned = Create("tile.mgather", {mem, Tensor("idx", {1, 24}, DataType::INT32)}, mat);
  ASSERT_FALSE(unaligned);
  EXPECT_EQ(unaligned.error().message,
            "tile.mgather into a Mat tile needs rows a multiple of 16 and columns a multiple of 16 (32 bytes of "
            "FP16), got [24, 32]");
}

TEST(TileGatherOps, MgatherIntoVecTakesNeitherScratchNorValidShape) {
  auto call = Create("tile.mgather", {Tensor("mem", {64, 32}), Load("i", {1, 16}, DataType::INT32), Ints({8, 32})});
  ASSERT_FALSE(call);
  EXPECT_EQ(call.error().message,
            "tile.mgather into a Vec tile takes neither scratch= nor valid_shape= (its valid region is the indices')");
}

}  // namespace
}  // namespace pypto::ir
