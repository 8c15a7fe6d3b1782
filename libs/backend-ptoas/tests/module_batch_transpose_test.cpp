// A transpose of the last two axes of a [B, R, C] tile (batch_transpose.cpp): one pto.ttrans per
// matrix between alloc_tiles of each matrix's band, exactly (the IR allows no other transpose of a 3-D tile).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

// def k(x, y):                                              # x: [2, 16, 8], y: [2, 8, 16] FP32
//     t = pl.load(x, [0, 0, 0], [2, 16, 8])                  # at 0
//     r = pl.tile.transpose(t, axis1=1, axis2=2)             # at 1024
//     pl.store(r, [0, 0, 0], y)
ir::FunctionPtr BatchKernel() {
  auto x = TensorParam("x", {2, 16, 8}, At(1, 7)), y = TensorParam("y", {2, 8, 16}, At(1, 10));
  auto load = Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 16, 8})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto transpose = Op("tile.transpose", {t}, At(3, 9), {{"axis1", int64_t{1}}, {"axis2", int64_t{2}}});
  auto r = TileAt("r", transpose, 1024);
  return Kernel("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                {Assign(t, load, At(2, 5)), Assign(r, transpose, At(3, 5)),
                 Eval(Op("tile.store", {r, Ints({0, 0, 0}), y}, At(4, 5)), At(4, 5))});
}

TEST(EmitModuleBatchTranspose, OneTtransPerMatrix) {
  auto text = EmitModule(*BatchKernel(), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "%t = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = %c8_index : " +
                                 VecTileBuf("f32", 32, 8)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "%r_tmp = pto.alloc_tile addr = %c2048_i64 valid_row = %c16_index valid_col = "
                             "%c8_index : " + VecTileBuf("f32", 16, 8)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "%t_1 = pto.alloc_tile addr = %c512_i64 valid_row = %c16_index valid_col = %c8_index : " +
                                 VecTileBuf("f32", 16, 8)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "%r_1 = pto.alloc_tile addr = %c1536_i64 valid_row = %c8_index valid_col = %c16_index : " +
                                 VecTileBuf("f32", 8, 16)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.ttrans ins(%t_1, %r_tmp : " + VecTileBuf("f32", 16, 8) + ", " + VecTileBuf("f32", 16, 8) + ") outs(%r_1 : " +
                                 VecTileBuf("f32", 8, 16) + ")"))
      << *text;
}

}  // namespace
}  // namespace pypto::backend_ptoas
