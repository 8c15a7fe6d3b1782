// tile.scatter_dim, tile.scatter_update and tile.scatter as pto.tscatter's index form, exactly: the
// flat indices row by row in an scf.for, the scatter into zeros, a mask of ones scattered the same
// way, its predicate, and tsel with the destination (index_scatter_blend.cpp); and the refusals, each
// located and saying what to change.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::ParamDirection;

struct Operand {
  ir::Shape shape;
  DataType dtype;
};

int64_t Bytes(const Operand& operand) {
  int64_t n = static_cast<int64_t>(ir::DataTypeBytes(operand.dtype));
  for (auto d : operand.shape) n *= d;
  return n;
}

// def k(x, i, z, y):
//     d = pl.load(x, ...)                              # at 0
//     n = pl.load(i, ...)                              # after d
//     s = pl.load(z, ...)                              # after n
//     r = pl.tile.<op>(d, n, s, **kwargs)              # after s  (tile.scatter: (d, s, n))
//     pl.store(r, [0, 0], y)
ir::FunctionPtr ScatterKernel(const std::string& op, Operand input, Operand index, Operand src,
                              ir::Call::Kwargs kwargs = {}) {
  auto x = TensorParam("x", input.shape, At(1, 7), input.dtype), i = TensorParam("i", index.shape, At(1, 10), index.dtype);
  auto z = TensorParam("z", src.shape, At(1, 13), src.dtype), y = TensorParam("y", input.shape, At(1, 16), input.dtype);
  auto load = [&](const ir::VarPtr& tensor, const Operand& operand, int line) {
    ir::Shape zeros(operand.shape.size(), 0);
    std::vector<ir::ExprPtr> offsets, sizes;
    for (size_t k = 0; k < operand.shape.size(); ++k) {
      offsets.push_back(Index(0));
      sizes.push_back(Index(operand.shape[k]));
    }
    return Op("tile.load", {tensor, Tuple(offsets), Tuple(sizes)}, At(line, 9));
  };
  auto load_d = load(x, input, 2), load_n = load(i, index, 3), load_s = load(z, src, 4);
  auto d = TileAt("d", load_d, 0), n = TileAt("n", load_n, Bytes(input));
  auto s = TileAt("s", load_s, Bytes(input) + Bytes(index));
  auto scatter = op == "tile.scatter" ? Op(op, {d, s, n}, At(5, 9), kwargs) : Op(op, {d, n, s}, At(5, 9), kwargs);
  auto r = TileAt("r", scatter, Bytes(input) + Bytes(index) + Bytes(src));
  return Kernel("k", {x, i, z, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                {Assign(d, load_d, At(2, 5)), Assign(n, load_n, At(3, 5)), Assign(s, load_s, At(4, 5)),
                 Assign(r, scatter, At(5, 5)), Eval(Op("tile.store", {r, Ints({0, 0}), y}, At(6, 5)), At(6, 5))});
}

TEST(EmitModuleIndexScatter, ScatterDimAddsEachRowsOffsetThenBlendsTheScatterIntoZeros) {
  auto text = EmitModule(*ScatterKernel("tile.scatter_dim", {{8, 16}, DataType::FP32}, {{8, 8}, DataType::INT32},
                                        {{8, 8}, DataType::FP32}, {{"dim", int64_t{-1}}}),
                         "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string dst = VecTileBuf("f32", 8, 16), idx = VecTileBuf("i32", 8, 8), row = VecTileBuf("i32", 1, 8);
  const std::string src = VecTileBuf("f32", 8, 8), pred = VecTileBuf("ui8", 8, 32), tmp = VecTileBuf("ui8", 1, 32);
  // d, n, s and r end at 1536: the scratch holds values, mask, ones, flat, pred and tmp from there.
  EXPECT_TRUE(HasBodyLine(*text, "%r_flat = pto.alloc_tile addr = %c2816_i64 valid_row = %c8_index valid_col = "
                                 "%c8_index : " + idx))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "scf.for %r_row = %c0_index to %c8_index step %c1_index {")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %r_index_r = pto.subset %n[%r_row, %c0_index] sizes [1, 8] : " + idx)) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %0 = arith.muli %r_row, %c16_index : index")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %1 = arith.index_cast %0 : index to i32")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  pto.tadds ins(%r_index_r, %1 : " + row + ", i32) outs(%r_flat_r : " + row + ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.texpands ins(%cst : f32) outs(%r_values : " + dst + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%s, %r_flat : " + src + ", " + idx + ") outs(%r_values : " + dst +
                                 ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.texpands ins(%cst_1 : f32) outs(%r_ones : " + src + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%r_ones, %r_flat : " + src + ", " + idx + ") outs(%r_mask : " +
                                 dst + ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tcmps ins(%r_mask, %cst {cmpMode = #pto<cmp ne>} : " + dst + ", f32) outs(%r_pred : " +
                                 pred + ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tsel ins(%r_pred, %r_values, %d, %r_sel_tmp : " + pred + ", " + dst + ", " + dst +
                                 ", " + tmp + ") outs(%r : " + dst + ")"))
      << *text;
}

TEST(EmitModuleIndexScatter, ScatterUpdateStartsEachRowAtItsIndexTimesTheRowLength) {
  auto text = EmitModule(*ScatterKernel("tile.scatter_update", {{32, 32}, DataType::FP16}, {{2, 8}, DataType::INT32},
                                        {{16, 32}, DataType::FP16}, {{"dim", int64_t{-2}}}),
                         "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string row = VecTileBuf("i16", 1, 32), dst = VecTileBuf("f16", 32, 32);
  EXPECT_TRUE(HasBodyLine(*text, "  %0 = pto.tgetval ins(%n, %r_row : " + VecTileBuf("i32", 2, 8) + ", index) outs : i32"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %1 = arith.index_cast %0 : i32 to index")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %2 = arith.muli %1, %c32_index : index")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  %3 = arith.index_cast %2 : index to i16")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  pto.tci ins(%3 : i16) outs(%r_flat_r : " + row + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%s, %r_flat : " + VecTileBuf("f16", 16, 32) + ", " +
                                 VecTileBuf("i16", 16, 32) + ") outs(%r_values : " + dst + ")"))
      << *text;
}

// A BF16 element moves as i16, through alloc_tiles of the same bytes: a2a3's tsel takes no BF16.
TEST(EmitModuleIndexScatter, Bf16MovesAsI16) {
  auto text = EmitModule(*ScatterKernel("tile.scatter_dim", {{16, 32}, DataType::BF16}, {{16, 16}, DataType::INT16},
                                        {{16, 16}, DataType::BF16}),
                         "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string dst = VecTileBuf("i16", 16, 32);
  EXPECT_TRUE(HasBodyLine(*text, "%d_i16 = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c32_index : " +
                                 dst))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%s_i16, %r_flat : " + VecTileBuf("i16", 16, 16) + ", " +
                                 VecTileBuf("i16", 16, 16) + ") outs(%r_values : " + dst + ")"))
      << *text;
  EXPECT_NE(text->find("outs(%r_i16 : " + dst + ")"), std::string::npos) << *text;
}

// tile.scatter's indices are the program's: no loop.
TEST(EmitModuleIndexScatter, FlatScatterUsesTheProgramsIndices) {
  auto text = EmitModule(*ScatterKernel("tile.scatter", {{8, 16}, DataType::INT32}, {{8, 8}, DataType::INT32},
                                        {{8, 8}, DataType::INT32}),
                         "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(text->find("scf.for"), std::string::npos) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%s, %n : " + VecTileBuf("i32", 8, 8) + ", " + VecTileBuf("i32", 8, 8) +
                                 ") outs(%r_values : " + VecTileBuf("i32", 8, 16) + ")"))
      << *text;
}

TEST(EmitModuleIndexScatter, FlatIndicesPastInt16AreRefused) {
  auto text = EmitModule(*ScatterKernel("tile.scatter_dim", {{130, 256}, DataType::FP16}, {{8, 16}, DataType::INT16},
                                        {{8, 16}, DataType::FP16}),
                         "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(),
            "k.py:5:9: backend-ptoas cannot lower 'tile.scatter_dim' into pl.Tile[[130, 256], pl.FP16, pl.MemRef(0, "
            "66560), pl.Mem.Vec] in kernel 'k': pto.tscatter takes INT16 indices for 16-bit elements, and the flat "
            "index of its last element, 33279, is past INT16's 32767; scatter into at most 32768 elements (fewer rows "
            "at a time) or use a 4-byte dtype");
}

TEST(EmitModuleIndexScatter, ScatterDimAlongTheFirstAxisIsRefused) {
  auto text = EmitModule(*ScatterKernel("tile.scatter_dim", {{8, 16}, DataType::FP32}, {{4, 16}, DataType::INT32},
                                        {{4, 16}, DataType::FP32}, {{"dim", int64_t{0}}}),
                         "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(),
            "k.py:5:9: backend-ptoas cannot lower 'tile.scatter_dim' into pl.Tile[[8, 16], pl.FP32, pl.MemRef(0, 512), "
            "pl.Mem.Vec] in kernel 'k': it scatters along dim=0, but the flat indices are built along the last axis "
            "only (dim=-1), as upstream pypto lowers it");
}

}  // namespace
}  // namespace pypto::backend_ptoas
