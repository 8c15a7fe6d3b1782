// tile.gather_dim of a [B, R, C] tile along its second axis (index_gather.cpp, LowerBatchGather): the
// flat positions' offsets by pto.tci row by row, the indices times the row stride, one tgather, exactly.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;

// def k(x, i, y):                                 # x: [2, 8, 8] FP32, i: [2, 3, 8] INT32
//     s = pl.load(x, [0, 0, 0], [2, 8, 8])         # at 0
//     n = pl.load(i, [0, 0, 0], [2, 3, 8])         # at 512
//     g = pl.tile.gather_dim(s, n, dim=1)          # at 768
//     pl.store(g, [0, 0, 0], y)
ir::FunctionPtr GatherKernel() {
  auto x = TensorParam("x", {2, 8, 8}, At(1, 7)), i = TensorParam("i", {2, 3, 8}, At(1, 10), DataType::INT32);
  auto y = TensorParam("y", {2, 3, 8}, At(1, 13));
  auto load_s = Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 8, 8})}, At(2, 9));
  auto s = TileAt("s", load_s, 0);
  auto load_n = Op("tile.load", {i, Ints({0, 0, 0}), Ints({2, 3, 8})}, At(3, 9));
  auto n = TileAt("n", load_n, 512);
  auto gather = Op("tile.gather_dim", {s, n}, At(4, 9), {{"dim", int64_t{1}}});
  auto g = TileAt("g", gather, 768);
  return Kernel("k", {x, i, y}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                {Assign(s, load_s, At(2, 5)), Assign(n, load_n, At(3, 5)), Assign(g, gather, At(4, 5)),
                 Eval(Op("tile.store", {g, Ints({0, 0, 0}), y}, At(5, 5)), At(5, 5))});
}

TEST(EmitModuleBatchGather, FlatPositionsAndOneTgather) {
  auto text = EmitModule(*GatherKernel(), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string i = VecTileBuf("i32", 6, 8), row = VecTileBuf("i32", 1, 8);
  // The scratch starts at 1024, past g; row 4 of the indices (batch 1) has its offsets from 1 * 8 * 8.
  EXPECT_TRUE(HasBodyLine(*text, "%g_base_4 = pto.alloc_tile addr = %c1344_i64 valid_row = %c1_index valid_col = "
                             "%c8_index : " + row))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tci ins(%c64_i32 : i32) outs(%g_base_4 : " + row + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tmuls ins(%n, %c8_i32 : " + i + ", i32) outs(%g_flat : " + i + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tadd ins(%g_flat, %g_base : " + i + ", " + i + ") outs(%g_flat : " + i + ")"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tgather ins(%s, %g_flat, %g_tmp : " + VecTileBuf("f32", 16, 8) + ", " + i + ", " + i +
                                 ") outs(%g : " + VecTileBuf("f32", 6, 8) + ")"))
      << *text;
}

}  // namespace
}  // namespace pypto::backend_ptoas
