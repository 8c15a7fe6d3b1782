// Type deduction of the ops added for upstream's comparison, remainder and padding tests: tile.cmp /
// tile.cmps (a packed UINT8 predicate mask), tile.sel, tile.fmod / tile.fmods, tile.fillpad_inplace,
// tile.fillpad_expand and row_expand_add's packed row vector and scratch tile.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }
ExprPtr Float(double value) { return std::make_shared<ConstFloat>(value, DataType::FP32, Span{}); }

ExprPtr Loaded(DataType dtype, int64_t rows = 16, int64_t cols = 32) {
  return testing::Op("tile.load", {Tensor("x", {rows, cols}, dtype), Ints({0, 0}), Ints({rows, cols})});
}

// A [rows, cols] tile of which only [valid_rows, valid_cols] holds data.
ExprPtr Ragged(int64_t rows, int64_t cols, int64_t valid_rows, int64_t valid_cols) {
  return testing::Op("tile.load", {Tensor("x", {rows, cols}), Ints({0, 0}), Ints({rows, cols}),
                                   Ints({valid_rows, valid_cols})});
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 7, 5});
}

TEST(TileCompareOps, CmpGivesAPackedMaskOfThirtyTwoByteRows) {
  auto mask = Create("tile.cmp", {Loaded(DataType::FP32), Loaded(DataType::FP32)}, {{"cmp_type", int64_t{2}}});
  ASSERT_TRUE(mask) << mask.error().str();
  EXPECT_EQ((*mask)->type()->str(), "pl.Tile[[16, 32], pl.UINT8, pl.Mem.Vec]");
  // 300 columns need 38 bytes, padded to 64.
  auto wide = Create("tile.cmps", {Loaded(DataType::INT16, 4, 300), Index(0)}, {{"cmp_type", int64_t{5}}});
  ASSERT_TRUE(wide) << wide.error().str();
  EXPECT_EQ((*wide)->type()->str(), "pl.Tile[[4, 64], pl.UINT8, pl.Mem.Vec]");
  // A narrowed tile's mask is valid over ceil(valid columns / 8) bytes.
  auto ragged = Create("tile.cmps", {Ragged(16, 64, 10, 47), Float(0.0)});
  ASSERT_TRUE(ragged) << ragged.error().str();
  EXPECT_EQ((*ragged)->type()->str(), "pl.Tile[[16, 32], pl.UINT8, pl.Mem.Vec, pl.TileView(valid_shape=[10, 6])]");
}

TEST(TileCompareOps, CmpErrors) {
  auto bad_mode = Create("tile.cmp", {Loaded(DataType::FP32), Loaded(DataType::FP32)}, {{"cmp_type", int64_t{6}}});
  ASSERT_FALSE(bad_mode);
  EXPECT_EQ(bad_mode.error().str(),
            "k.py:7:5: error: tile.cmp cmp_type=6 is not a comparison\n"
            "  help: cmp_type is 0 (EQ), 1 (NE), 2 (LT), 3 (LE), 4 (GT) or 5 (GE)");
  auto mixed = Create("tile.cmp", {Loaded(DataType::FP32), Loaded(DataType::FP16)});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().message,
            "tile.cmp compares tiles of one shape and dtype, got pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] and "
            "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  auto float_scalar = Create("tile.cmps", {Loaded(DataType::INT32), Float(0.5)});
  ASSERT_FALSE(float_scalar);
  EXPECT_EQ(float_scalar.error().message, "tile.cmps compares an integer INT32 tile with a floating-point scalar");
}

TEST(TileCompareOps, SelKeepsTheOperandType) {
  auto mask = Create("tile.cmp", {Loaded(DataType::FP32), Loaded(DataType::FP32)});
  ASSERT_TRUE(mask) << mask.error().str();
  auto sel = Create("tile.sel", {*mask, Loaded(DataType::FP32), Loaded(DataType::FP32),
                                 Loaded(DataType::UINT8, 1, 32)});
  ASSERT_TRUE(sel) << sel.error().str();
  EXPECT_EQ((*sel)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  // A mask too short for the operands' rows.
  auto short_mask = Create("tile.sel", {Loaded(DataType::UINT8, 8, 32), Loaded(DataType::FP32),
                                        Loaded(DataType::FP32), Loaded(DataType::UINT8, 1, 32)});
  ASSERT_FALSE(short_mask);
  EXPECT_EQ(short_mask.error().str(),
            "k.py:7:5: error: the mask of tile.sel must hold a predicate bit for each of the 16 x 32 elements (an "
            "integer tile of at least 16 rows of 4 bytes), got pl.Tile[[8, 32], pl.UINT8, pl.Mem.Vec]\n"
            "  help: a mask comes from pl.tile.cmp or pl.tile.cmps of a tile of this shape");
}

TEST(TileCompareOps, SelsKeepsTheSourceTypeAndValidRegion) {
  auto ragged = Ragged(16, 64, 9, 37);
  auto mask = Create("tile.cmps", {ragged, Float(0.0)}, {{"cmp_type", int64_t{4}}});
  ASSERT_TRUE(mask) << mask.error().str();
  auto sels = Create("tile.sels", {*mask, ragged, Loaded(DataType::UINT8, 1, 32), Float(-3.0)});
  ASSERT_TRUE(sels) << sels.error().str();
  EXPECT_EQ((*sels)->type()->str(), "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[9, 37])]");
  // A mask of 16-bit carriers: [2, 1] INT16 holds the 2 bytes 16 columns need.
  auto carrier = Create("tile.sels", {Loaded(DataType::INT16, 2, 1), Loaded(DataType::UINT16, 2, 16),
                                      Loaded(DataType::UINT8, 1, 32), Index(0x8007)});
  ASSERT_TRUE(carrier) << carrier.error().str();
  EXPECT_EQ((*carrier)->type()->str(), "pl.Tile[[2, 16], pl.UINT16, pl.Mem.Vec]");
  // An integer tile takes a floating-point constant that holds an integer, as that integer.
  auto whole_float = Create("tile.sels", {Loaded(DataType::UINT8, 16, 32), Loaded(DataType::INT16),
                                          Loaded(DataType::UINT8, 1, 32), Float(-3.0)});
  ASSERT_TRUE(whole_float) << whole_float.error().str();
  EXPECT_FALSE(OpRegistry::Get().Find("tile.sels")->inplace_safe);
}

TEST(TileCompareOps, SelsErrors) {
  auto tmp = Loaded(DataType::UINT8, 1, 32);
  auto float_scalar = Create("tile.sels", {Loaded(DataType::UINT8, 16, 32), Loaded(DataType::INT32), tmp, Float(0.5)});
  ASSERT_FALSE(float_scalar);
  EXPECT_EQ(float_scalar.error().str(),
            "k.py:7:5: error: tile.sels selects between an integer INT32 tile and a floating-point scalar\n"
            "  help: give an integer scalar");
  auto bf16 = Create("tile.sels", {Loaded(DataType::UINT8, 16, 32), Loaded(DataType::BF16), tmp, Float(0.5)});
  ASSERT_FALSE(bf16);
  EXPECT_EQ(bf16.error().message,
            "tile.sels selects from 8-, 16- or 32-bit integer, FP16 or FP32 tiles, got BF16");
  auto short_mask = Create("tile.sels", {Loaded(DataType::UINT8, 16, 2), Loaded(DataType::FP32, 16, 32), tmp,
                                         Float(1.0)});
  ASSERT_FALSE(short_mask);
  EXPECT_EQ(short_mask.error().message,
            "the mask of tile.sels must hold a predicate bit for each of the 16 x 32 elements (an integer tile of "
            "at least 16 rows of 4 bytes), got pl.Tile[[16, 2], pl.UINT8, pl.Mem.Vec]");
  auto tile_scalar = Create("tile.sels", {Loaded(DataType::UINT8, 16, 32), Loaded(DataType::FP32), tmp, tmp});
  ASSERT_FALSE(tile_scalar);
  EXPECT_EQ(tile_scalar.error().message,
            "the scalar of tile.sels must be a number, got pl.Tile[[1, 32], pl.UINT8, pl.Mem.Vec]");
}

TEST(TileCompareOps, FmodIsElementwiseAndNotInPlace) {
  auto fmod = Create("tile.fmod", {Loaded(DataType::FP32), Loaded(DataType::FP32)});
  ASSERT_TRUE(fmod) << fmod.error().str();
  EXPECT_EQ((*fmod)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  auto fmods = Create("tile.fmods", {Loaded(DataType::FP16), Float(2.5)});
  ASSERT_TRUE(fmods) << fmods.error().str();
  EXPECT_EQ((*fmods)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  // The PTO remainder overwrites its result before reading the dividend a last time.
  EXPECT_FALSE(OpRegistry::Get().Find("tile.fmod")->inplace_safe);
  EXPECT_FALSE(OpRegistry::Get().Find("tile.fmods")->inplace_safe);
  EXPECT_TRUE(OpRegistry::Get().Find("tile.add")->inplace_safe);
}

TEST(TileCompareOps, FillPadInPlaceAndExpand) {
  auto inplace = Create("tile.fillpad_inplace", {Ragged(64, 64, 48, 64)}, {{"pad_value", std::string("max")}});
  ASSERT_TRUE(inplace) << inplace.error().str();
  EXPECT_EQ((*inplace)->type()->str(), "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(OpRegistry::Get().Find("tile.fillpad_inplace")->result_aliases_arg, 0);
  auto expand = Create("tile.fillpad_expand", {Ragged(48, 64, 40, 50), Ints({64, 96})});
  ASSERT_TRUE(expand) << expand.error().str();
  EXPECT_EQ((*expand)->type()->str(), "pl.Tile[[64, 96], pl.FP32, pl.Mem.Vec]");
  auto shrink = Create("tile.fillpad_expand", {Loaded(DataType::FP32, 48, 64), Ints({64, 32})});
  ASSERT_FALSE(shrink);
  EXPECT_EQ(shrink.error().str(),
            "k.py:7:5: error: tile.fillpad_expand expands pl.Tile[[48, 64], pl.FP32, pl.Mem.Vec] to a shape of the "
            "same rank and no smaller dimension, got [64, 32]\n"
            "  help: pl.tile.fillpad pads a tile within its own shape");
  auto bad_pad = Create("tile.fillpad_expand", {Loaded(DataType::FP32), Ints({16, 64})},
                        {{"pad_value", std::string("one")}});
  ASSERT_FALSE(bad_pad);
  EXPECT_EQ(bad_pad.error().message, "tile.fillpad_expand pad_value \"one\" is not a padding mode");
}

TEST(TileCompareOps, RowExpandAddTakesAPackedBlockAndAScratchTile) {
  // FP32: a 32-byte block is 8 lanes per row; INT16: 16.
  auto packed = Create("tile.row_expand_add", {Loaded(DataType::FP32, 32, 64), Loaded(DataType::FP32, 32, 8)});
  ASSERT_TRUE(packed) << packed.error().str();
  EXPECT_EQ((*packed)->type()->str(), "pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec]");
  auto with_tmp = Create("tile.row_expand_add", {Loaded(DataType::INT16, 16, 192), Loaded(DataType::INT16, 16, 1),
                                                 Loaded(DataType::INT16, 16, 192)});
  ASSERT_TRUE(with_tmp) << with_tmp.error().str();
  EXPECT_EQ((*with_tmp)->type()->str(), "pl.Tile[[16, 192], pl.INT16, pl.Mem.Vec]");
  // Only row_expand_add has the packed form.
  auto sub = Create("tile.row_expand_sub", {Loaded(DataType::FP32, 32, 64), Loaded(DataType::FP32, 32, 8)});
  ASSERT_FALSE(sub);
  EXPECT_EQ(sub.error().message,
            "tile.row_expand_sub broadcasts a [32, 1] FP32 vector across pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec], got "
            "pl.Tile[[32, 8], pl.FP32, pl.Mem.Vec]");
}

}  // namespace
}  // namespace pypto::ir
