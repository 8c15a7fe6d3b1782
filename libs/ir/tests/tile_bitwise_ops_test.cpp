// Type deduction of the bitwise, shift and remainder ops (tile.and / or / xor / shl / shr / rem and
// their scalar forms): the result keeps the left operand's type; the errors name the dtype, shape or
// scratch tile at fault.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

ExprPtr Loaded(DataType dtype, int64_t rows = 16, int64_t cols = 32) {
  return testing::Op("tile.load", {Tensor("x", {rows, cols}, dtype), Ints({0, 0}), Ints({rows, cols})});
}

ExprPtr Int(int64_t value, DataType dtype = DataType::INT32) {
  return std::make_shared<ConstInt>(value, dtype, Span{});
}
ExprPtr Float(double value) { return std::make_shared<ConstFloat>(value, DataType::FP32, Span{}); }

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args) {
  return OpRegistry::Get().CreateCall(op, std::move(args), {}, Span{"k.py", 7, 5});
}

TEST(TileBitwiseOps, TileFormsKeepTheOperandType) {
  for (DataType dtype : {DataType::INT8, DataType::UINT16, DataType::INT32, DataType::UINT32}) {
    for (const char* op : {"tile.and", "tile.or", "tile.shl", "tile.shr"}) {
      auto ok = Create(op, {Loaded(dtype), Loaded(dtype)});
      ASSERT_TRUE(ok) << op << ": " << ok.error().str();
      EXPECT_EQ((*ok)->type()->str(), fmt::format("pl.Tile[[16, 32], pl.{}, pl.Mem.Vec]", DataTypeName(dtype)));
    }
    for (const char* op : {"tile.xor", "tile.rem"}) {
      auto ok = Create(op, {Loaded(dtype), Loaded(dtype), Loaded(dtype)});
      ASSERT_TRUE(ok) << op << ": " << ok.error().str();
      EXPECT_EQ((*ok)->type()->str(), fmt::format("pl.Tile[[16, 32], pl.{}, pl.Mem.Vec]", DataTypeName(dtype)));
    }
  }
  // rem is defined on floating-point tiles too.
  auto fp = Create("tile.rem", {Loaded(DataType::FP16), Loaded(DataType::FP16), Loaded(DataType::FP16)});
  ASSERT_TRUE(fp) << fp.error().str();
  EXPECT_EQ((*fp)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
}

TEST(TileBitwiseOps, ScalarFormsKeepTheTileType) {
  for (const char* op : {"tile.ands", "tile.ors", "tile.shls", "tile.shrs"}) {
    auto ok = Create(op, {Loaded(DataType::INT16), Int(3)});
    ASSERT_TRUE(ok) << op << ": " << ok.error().str();
    EXPECT_EQ((*ok)->type()->str(), "pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec]");
  }
  auto xors = Create("tile.xors", {Loaded(DataType::UINT8), Int(0xF0), Loaded(DataType::UINT8)});
  ASSERT_TRUE(xors) << xors.error().str();
  EXPECT_EQ((*xors)->type()->str(), "pl.Tile[[16, 32], pl.UINT8, pl.Mem.Vec]");
  // rems takes a float constant holding an integer for an integer tile, as fmods does.
  auto rems = Create("tile.rems", {Loaded(DataType::INT32), Float(3.0), Loaded(DataType::INT32)});
  ASSERT_TRUE(rems) << rems.error().str();
  EXPECT_EQ((*rems)->type()->str(), "pl.Tile[[16, 32], pl.INT32, pl.Mem.Vec]");
  auto frems = Create("tile.rems", {Loaded(DataType::FP32), Float(-2.5), Loaded(DataType::FP32)});
  ASSERT_TRUE(frems) << frems.error().str();
}

TEST(TileBitwiseOps, InPlaceOnlyWithoutAScratchTile) {
  const auto& registry = OpRegistry::Get();
  for (const char* op : {"tile.and", "tile.or", "tile.shl", "tile.shr", "tile.shls", "tile.shrs"})
    EXPECT_TRUE(registry.Find(op)->inplace_safe) << op;
  for (const char* op : {"tile.xor", "tile.rem", "tile.xors", "tile.rems", "tile.ands", "tile.ors"})
    EXPECT_FALSE(registry.Find(op)->inplace_safe) << op;
}

TEST(TileBitwiseOps, FloatTilesHaveNoBits) {
  auto fp = Create("tile.and", {Loaded(DataType::FP32), Loaded(DataType::FP32)});
  ASSERT_FALSE(fp);
  EXPECT_EQ(fp.error().str(),
            "k.py:7:5: error: tile.and needs an integer tile, got FP32\n"
            "  help: bitwise ops and shifts read the bits of integers; cast the tile first");
  auto shift = Create("tile.shls", {Loaded(DataType::BF16), Int(1)});
  ASSERT_FALSE(shift);
  EXPECT_EQ(shift.error().message, "tile.shls needs an integer tile, got BF16");
}

TEST(TileBitwiseOps, OperandsShareDtypeAndShape) {
  auto mixed = Create("tile.or", {Loaded(DataType::INT32), Loaded(DataType::INT16)});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().str(),
            "k.py:7:5: error: tile.or combines tiles of one dtype, got INT32 and INT16\n"
            "  help: cast one operand to the other's dtype");
  auto counts = Create("tile.shr", {Loaded(DataType::INT32), Loaded(DataType::INT32, 16, 64)});
  ASSERT_FALSE(counts);
  EXPECT_EQ(counts.error().message, "tile.shr combines tiles of one shape, got [16, 32] and [16, 64]");
  auto scalar_rhs = Create("tile.shl", {Loaded(DataType::INT32), Int(2)});
  ASSERT_FALSE(scalar_rhs);
  EXPECT_NE(scalar_rhs.error().message.find("the shift counts of tile.shl"), std::string::npos)
      << scalar_rhs.error().message;
}

TEST(TileBitwiseOps, ScratchTileMatchesTheOperand) {
  auto small = Create("tile.xor", {Loaded(DataType::INT16), Loaded(DataType::INT16), Loaded(DataType::INT16, 16, 16)});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().str(),
            "k.py:7:5: error: the scratch tile of tile.xor must have its operand's shape and dtype, [16, 32] INT16; "
            "got pl.Tile[[16, 16], pl.INT16, pl.Mem.Vec]");
  auto retyped = Create("tile.rems", {Loaded(DataType::INT32), Int(7), Loaded(DataType::FP32)});
  ASSERT_FALSE(retyped);
  EXPECT_EQ(retyped.error().message,
            "the scratch tile of tile.rems must have its operand's shape and dtype, [16, 32] INT32; got "
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  auto missing = Create("tile.rem", {Loaded(DataType::INT32), Loaded(DataType::INT32)});
  ASSERT_FALSE(missing);
}

TEST(TileBitwiseOps, ScalarErrors) {
  auto fraction = Create("tile.ands", {Loaded(DataType::INT32), Float(3.0)});
  ASSERT_FALSE(fraction);
  EXPECT_EQ(fraction.error().str(),
            "k.py:7:5: error: tile.ands combines an integer INT32 tile with a floating-point scalar\n"
            "  help: pass an integer scalar");
  auto rem_fraction = Create("tile.rems", {Loaded(DataType::INT32), Float(2.5), Loaded(DataType::INT32)});
  ASSERT_FALSE(rem_fraction);
  EXPECT_EQ(rem_fraction.error().message, "tile.rems combines an integer INT32 tile with a floating-point scalar");
  auto wide = Create("tile.shls", {Loaded(DataType::INT16), Int(16)});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().str(), "k.py:7:5: error: tile.shls shifts INT16 elements by 0 to 15 bits, got 16");
  auto negative = Create("tile.shrs", {Loaded(DataType::UINT8), Int(-1)});
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message, "tile.shrs shifts UINT8 elements by 0 to 7 bits, got -1");
}

TEST(TileBitwiseOps, PrintedAsTheDslSpellsThem) {
  const DataType dtype = DataType::INT16;
  auto a = std::make_shared<Var>("a", Loaded(dtype)->type(), Span{});
  auto b = std::make_shared<Var>("b", Loaded(dtype)->type(), Span{});
  auto tmp = std::make_shared<Var>("tmp", Loaded(dtype)->type(), Span{});
  const std::pair<const char*, std::vector<ExprPtr>> calls[] = {
      {"tile.and", {a, b}},  {"tile.or", {a, b}},       {"tile.xor", {a, b, tmp}},      {"tile.shl", {a, b}},
      {"tile.shr", {a, b}},  {"tile.rem", {a, b, tmp}}, {"tile.ands", {a, Int(5)}},     {"tile.ors", {a, Int(5)}},
      {"tile.shls", {a, Int(5)}}, {"tile.shrs", {a, Int(5)}}, {"tile.xors", {a, Int(5), tmp}},
      {"tile.rems", {a, Int(5), tmp}}};
  std::vector<std::string> printed;
  for (const auto& [op, args] : calls) {
    auto call = Create(op, args);
    ASSERT_TRUE(call) << op << ": " << call.error().str();
    printed.push_back(PrintExpr(*call));
  }
  EXPECT_EQ(fmt::format("{}", fmt::join(printed, "; ")),
            "pl.tile.and_(a, b); pl.tile.or_(a, b); pl.tile.xor(a, b, tmp); pl.tile.shl(a, b); pl.tile.shr(a, b); "
            "pl.tile.rem(a, b, tmp); pl.tile.ands(a, 5); pl.tile.ors(a, 5); pl.tile.shls(a, 5); "
            "pl.tile.shrs(a, 5); pl.tile.xors(a, 5, tmp); pl.tile.rems(a, 5, tmp)");
}

}  // namespace
}  // namespace pypto::ir
