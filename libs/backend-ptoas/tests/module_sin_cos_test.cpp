// tile.sin / tile.cos as upstream's expansion into tile arithmetic (sin_cos_expansion.cpp): its scratch
// tiles past the kernel's Vec tiles, its first and last ops and its rounding modes, exactly; a column
// vector refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

// def k(a):                        # a: [rows, cols] FP32
//     t = pl.load(a, [0, 0], ..)   # at 0
//     s = pl.tile.sin(t)           # at 1024 (or cos)
ir::FunctionPtr TrigKernel(const std::string& op, int64_t rows, int64_t cols) {
  auto a = TensorParam("a", {rows, cols}, At(1, 10));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({rows, cols})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto call = Op(op, {t}, At(3, 9));
  auto s = TileAt("s", call, 1024);
  return Kernel("k", {a}, {ir::ParamDirection::InOut}, {Assign(t, load, At(2, 5)), Assign(s, call, At(3, 5))});
}

TEST(EmitModuleSinCos, SineIsUpstreamsTileArithmeticInTheVecScratch) {
  auto text = EmitModule(*TrigKernel("tile.sin", 16, 16), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string f = VecTileBuf("f32", 16, 16), i = VecTileBuf("i32", 16, 16);
  // Four FP32 scratch tiles after the last tile (s ends at byte 2048), two also typed INT32.
  EXPECT_TRUE(HasBodyLine(*text, "%s_sin_t = pto.alloc_tile addr = %c2048_i64 valid_row = %c16_index valid_col = "
                             "%c16_index : " + f)) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "%s_sin_p_i32 = pto.alloc_tile addr = %c5120_i64 valid_row = %c16_index valid_col = "
                             "%c16_index : " + i)) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "%cst = arith.constant 3.18309873342514038e-01 : f32")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tmuls ins(%t, %cst : " + f + ", f32) outs(%s_sin_t : " + f + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tcvt ins(%s_sin_t {rmode = #pto<round_mode ROUND>} : " + f +
                             ") outs(%s_sin_a_i32 : " + i + ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tcvt ins(%s_sin_a_i32 {rmode = #pto<round_mode NONE>} : " + i + ") outs(%s_sin_k : " +
                             f + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tmul ins(%s_sin_a, %s_sin_p : " + f + ", " + f + ") outs(%s : " + f + ")")) << *text;
}

TEST(EmitModuleSinCos, CosineRoundsHalfToEvenAfterAddingAHalf) {
  auto text = EmitModule(*TrigKernel("tile.cos", 16, 16), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string f = VecTileBuf("f32", 16, 16), i = VecTileBuf("i32", 16, 16);
  EXPECT_TRUE(HasBodyLine(*text, "pto.tadds ins(%s_cos_t, %cst_1 : " + f + ", f32) outs(%s_cos_t : " + f + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tcvt ins(%s_cos_t {rmode = #pto<round_mode RINT>} : " + f +
                             ") outs(%s_cos_a_i32 : " + i + ")"))
      << *text;
}

TEST(EmitModuleSinCos, AColumnVectorIsRefused) {
  auto text = EmitModule(*TrigKernel("tile.sin", 16, 1), "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(), "k.py:3:9: backend-ptoas cannot lower 'tile.sin' of pl.Tile[[16, 1], pl.FP32, "
                          "pl.MemRef(0, 64), pl.Mem.Vec] in kernel 'k': PTO has no sine instruction, and upstream's "
                          "expansion into tile arithmetic is for FP32 row-major tiles");
}

}  // namespace
}  // namespace pypto::backend_ptoas
