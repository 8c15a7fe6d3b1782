// Type deduction of the top-k family (sort32, mrgsort formats 1 and 2, gather mask form), pl.arange
// (tile.ci): the result types, and the errors for wrong dtypes and shapes.
#include <gtest/gtest.h>

#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

ExprPtr Row(int64_t cols, DataType dtype = DataType::FP32) {
  return testing::Op("tile.load", {Tensor("x", {1, cols}, dtype), Ints({0, 0}), Ints({1, cols})});
}

ExprPtr Indices(int64_t cols) {
  return testing::Op("tile.ci", {Index(0), Ints({1, cols})}, 0);
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 4, 9});
}

ExprPtr UintIndices(int64_t cols) {
  auto call = Create("tile.ci", {Index(0), Ints({1, cols})}, {{"dtype", DataType::UINT32}});
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

TEST(TileSortOps, ArangeDefaultsToInt32AndTakesADtype) {
  auto plain = Create("tile.ci", {Index(0), Ints({1, 64})});
  ASSERT_TRUE(plain) << plain.error().str();
  EXPECT_EQ((*plain)->type()->str(), "pl.Tile[[1, 64], pl.INT32, pl.Mem.Vec]");
  EXPECT_EQ(UintIndices(64)->type()->str(), "pl.Tile[[1, 64], pl.UINT32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**plain), CoreAffinity::Vector);
}

TEST(TileSortOps, ArangeErrors) {
  auto rows = Create("tile.ci", {Index(0), Ints({4, 64})});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().message,
            "pl.arange fills a single row; every dimension but the last must be 1, got [4, 64]");
  auto dtype = Create("tile.ci", {Index(0), Ints({1, 64})}, {{"dtype", DataType::FP32}});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message, "pl.arange makes INT16, INT32, UINT16 or UINT32 tiles, not FP32");
  auto column = Create("tile.ci", {Index(0), Ints({1, 1})});
  ASSERT_FALSE(column);
  EXPECT_EQ(column.error().message, "pl.arange needs a row of at least 2 elements, got [1, 1]");
}

TEST(TileSortOps, Sort32DoublesTheRow) {
  auto call = Create("tile.sort32", {Row(512), UintIndices(512)});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[1, 1024], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**call), CoreAffinity::Vector);
}

TEST(TileSortOps, Sort32Errors) {
  auto ints = Create("tile.sort32", {Row(64, DataType::INT32), UintIndices(64)});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().str(), "k.py:4:9: error: pl.sort32 sorts FP32 or FP16 values, got INT32");
  auto signed_idx = Create("tile.sort32", {Row(64), Indices(64)});
  ASSERT_FALSE(signed_idx);
  EXPECT_EQ(signed_idx.error().message, "pl.sort32 carries UINT32 indices, got INT32");
  EXPECT_EQ(signed_idx.error().hint, "create them with pl.arange(0, [1, N], dtype=pl.UINT32)");
  auto ragged = Create("tile.sort32", {Row(48), UintIndices(48)});
  ASSERT_FALSE(ragged);
  EXPECT_EQ(ragged.error().message,
            "pl.sort32 sorts blocks of 32 elements; the row length 48 is not a multiple of 32");
  auto mismatch = Create("tile.sort32", {Row(64), UintIndices(32)});
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().message,
            "the indices pl.Tile[[1, 32], pl.UINT32, pl.Mem.Vec] and the values pl.Tile[[1, 64], pl.FP32, "
            "pl.Mem.Vec] of pl.sort32 differ in shape");
}

TEST(TileSortOps, MergeSortKeepsTheShape) {
  auto call = Create("tile.mrgsort_format1", {Row(1024), Index(64)});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[1, 1024], pl.FP32, pl.Mem.Vec]");
}

TEST(TileSortOps, MergeSortErrors) {
  auto odd = Create("tile.mrgsort_format1", {Row(1024), Index(96)});
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().message, "block_len of pl.mrgsort must be a positive multiple of 64, got 96");
  auto short_row = Create("tile.mrgsort_format1", {Row(512), Index(256)});
  ASSERT_FALSE(short_row);
  EXPECT_EQ(short_row.error().message,
            "pl.mrgsort merges 4 runs of block_len=256 at a time, so the row length must be a multiple of 1024 (at "
            "most 255 of them), got 512");
  auto rows = Create("tile.mrgsort_format1",
                     {testing::Op("tile.load", {Tensor("x", {2, 256}), Ints({0, 0}), Ints({2, 256})}), Index(64)});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().message,
            "pl.mrgsort merges the runs of a single row, got pl.Tile[[2, 256], pl.FP32, pl.Mem.Vec]");
  auto tensor = Create("tile.mrgsort_format1", {Row(256), Tensor("n", {1})});
  ASSERT_FALSE(tensor);
  EXPECT_EQ(tensor.error().message, "block_len of pl.mrgsort must be an integer, got pl.Tensor[[1], pl.FP32]");
}

// A block_len a loop computes (`1 << (6 + 2 * i)`) is checked when the merge runs.
TEST(TileSortOps, MergeSortTakesABlockLenKnownAtRunTime) {
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto call = Create("tile.mrgsort_format1", {Row(4096), i});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[1, 4096], pl.FP32, pl.Mem.Vec]");
}

ExprPtr Scratch(int64_t cols, DataType dtype = DataType::FP32) {
  auto call = Create("tile.create", {Ints({1, cols})}, {{"dtype", dtype}});
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

TEST(TileSortOps, MergeOfSeparateListsIsAsLongAsTheListsTogether) {
  auto two = Create("tile.mrgsort_format2", {Row(256), Row(128), Scratch(384)});
  ASSERT_TRUE(two) << two.error().str();
  EXPECT_EQ((*two)->type()->str(), "pl.Tile[[1, 384], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**two), CoreAffinity::Vector);
  auto four = Create("tile.mrgsort_format2", {Row(64), Row(64), Row(64), Row(64), Scratch(256)},
                     {{"exhausted", true}});
  ASSERT_TRUE(four) << four.error().str();
  EXPECT_EQ((*four)->type()->str(), "pl.Tile[[1, 256], pl.FP32, pl.Mem.Vec]");
  auto half = Create("tile.mrgsort_format2",
                     {Row(64, DataType::FP16), Row(64, DataType::FP16), Row(64, DataType::FP16),
                      Scratch(192, DataType::FP16)});
  ASSERT_TRUE(half) << half.error().str();
  EXPECT_EQ((*half)->type()->str(), "pl.Tile[[1, 192], pl.FP16, pl.Mem.Vec]");
}

TEST(TileSortOps, MergeOfSeparateListsErrors) {
  auto mixed = Create("tile.mrgsort_format2", {Row(64), Row(64, DataType::FP16), Scratch(128)});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().str(),
            "k.py:4:9: error: the sorted lists of pl.mrgsort differ in dtype: list 0 is FP32, list 1 is FP16");
  auto ints = Create("tile.mrgsort_format2", {Row(64, DataType::INT32), Row(64, DataType::INT32), Scratch(128)});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().message, "pl.mrgsort sorts FP32 or FP16 values, got INT32");
  auto rows = Create("tile.mrgsort_format2",
                     {Row(64), testing::Op("tile.load", {Tensor("x", {2, 64}), Ints({0, 0}), Ints({2, 64})}),
                      Scratch(192)});
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().message,
            "pl.mrgsort merges single-row lists, got pl.Tile[[2, 64], pl.FP32, pl.Mem.Vec] for list 1");
  auto small = Create("tile.mrgsort_format2", {Row(64), Row(64), Scratch(64)});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message,
            "the scratch tile of pl.mrgsort must be a [1, 128] FP32 tile (the lists together), got pl.Tile[[1, 64], "
            "pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(small.error().hint, "leave tmp out and pl.mrgsort creates one");
  auto one = Create("tile.mrgsort_format2", {Row(64), Scratch(64)});
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().message,
            "'tile.mrgsort_format2' takes 3 to 5 arguments (src0, src1, src2_or_tmp, src3_or_tmp, tmp), got 2");
}

TEST(TileSortOps, GatherMaskHalvesOrQuartersTheRow) {
  auto even = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{1}}});
  ASSERT_TRUE(even) << even.error().str();
  EXPECT_EQ((*even)->type()->str(), "pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec]");
  auto odd = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{2}}, {"output_dtype", DataType::INT32}});
  ASSERT_TRUE(odd) << odd.error().str();
  EXPECT_EQ((*odd)->type()->str(), "pl.Tile[[1, 16], pl.INT32, pl.Mem.Vec]");
  auto quarter = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{6}}});
  ASSERT_TRUE(quarter);
  EXPECT_EQ((*quarter)->type()->str(), "pl.Tile[[1, 8], pl.FP32, pl.Mem.Vec]");
  auto all = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{7}}});
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)->type()->str(), "pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]");
}

TEST(TileSortOps, GatherMaskErrors) {
  auto pattern = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{9}}});
  ASSERT_FALSE(pattern);
  EXPECT_EQ(pattern.error().message, "mask_pattern must be one of pl.tile.MaskPattern (1 to 7), got 9");
  auto width = Create("tile.gather_mask", {Row(32)}, {{"mask_pattern", int64_t{2}}, {"output_dtype", DataType::INT16}});
  ASSERT_FALSE(width);
  EXPECT_EQ(width.error().message,
            "output_dtype INT16 reinterprets the lanes, so it must be as wide as the source's FP32");
  auto ragged = Create("tile.gather_mask", {Row(34)}, {{"mask_pattern", int64_t{3}}});
  ASSERT_FALSE(ragged);
  EXPECT_EQ(ragged.error().message,
            "mask pattern P0001 keeps one lane of every 4; the row length 34 is not a multiple of 4");
  auto missing = Create("tile.gather_mask", {Row(32)});
  ASSERT_FALSE(missing);
}

TEST(TileSortOps, MaskPatternNames) {
  EXPECT_EQ(MaskPatternFromName("P1010"), 2);
  EXPECT_EQ(MaskPatternFromName("P1111"), 7);
  EXPECT_FALSE(MaskPatternFromName("P0110"));
  EXPECT_EQ(MaskPatternName(5), "P0100");
  EXPECT_EQ(LanesOf(2).group, 2);
  EXPECT_EQ(LanesOf(2).lane, 1);
  EXPECT_EQ(LanesOf(6).lane, 3);
}

}  // namespace
}  // namespace pypto::ir
