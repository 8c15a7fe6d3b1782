// The ops that reach a global tensor at per-element indices, and tile.random: tile.mgather (row and
// element mode, its gather_oob), tile.mscatter and pto.trandom's two spellings, exactly.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::ParamDirection;

std::string Vec(std::string_view dtype, int rows, int cols) {
  return fmt::format("!pto.tile_buf<loc=vec, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout=row_major, "
                     "slayout=none_box, fractal=512, pad=0>",
                     dtype, rows, cols);
}

// def k(mem, idx, y):                           # mem: [16, 64] FP32, idx: [1, 8] / [8, 64] INT32
//     i = pl.load(idx, [0, 0], [..])             # at 0
//     r = pl.tile.mgather(mem, i, coalesce=..)   # at 2048
//     pl.store(r, [0, 0], y)
ir::FunctionPtr GatherKernel(const std::string& coalesce, const std::string& oob) {
  const bool rows = coalesce == "row";
  const ir::Shape idx_shape = rows ? ir::Shape{1, 8} : ir::Shape{8, 64};
  auto mem = TensorParam("mem", {16, 64}, At(1, 7));
  auto idx = TensorParam("idx", idx_shape, At(1, 12), DataType::INT32);
  auto y = TensorParam("y", {8, 64}, At(1, 17));
  auto load = Op("tile.load", {idx, Ints({0, 0}), Ints({idx_shape[0], idx_shape[1]})}, At(2, 9));
  auto i = TileAt("i", load, 0);
  auto gather = Op("tile.mgather", {mem, i}, At(3, 9), {{"coalesce", coalesce}, {"gather_oob", oob}});
  auto r = TileAt("r", gather, 2048);
  return Kernel("k", {mem, idx, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                {Assign(i, load, At(2, 5)), Assign(r, gather, At(3, 5)),
                 Eval(Op("tile.store", {r, Ints({0, 0}), y}, At(4, 5)), At(4, 5))});
}

TEST(EmitModuleMemoryIndexed, MgatherOfRowsReadsTheWholeTensor) {
  auto text = EmitModule(*GatherKernel("row", "undefined"), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "%mem_pview = pto.partition_view %mem_view, offsets = [%c0_index, %c0_index], "
                             "sizes = [%c16_index, %c64_index] : !pto.tensor_view<?x?xf32> -> "
                             "!pto.partition_tensor_view<16x64xf32>"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.mgather ins(%mem_pview, %i : !pto.partition_tensor_view<16x64xf32>, " +
                                 Vec("i32", 1, 8) + ") outs(%r : " + Vec("f32", 8, 64) +
                                 ") {coalesce = #pto<coalesce row>}"))
      << *text;
}

TEST(EmitModuleMemoryIndexed, MgatherOfElementsNamesItsOutOfBoundsMode) {
  auto text = EmitModule(*GatherKernel("elem", "clamp"), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "pto.mgather ins(%mem_pview, %i : !pto.partition_tensor_view<16x64xf32>, " +
                                 Vec("i32", 8, 64) + ") outs(%r : " + Vec("f32", 8, 64) +
                                 ") {coalesce = #pto<coalesce elem>, gatherOob = #pto<gather_oob clamp>}"))
      << *text;
}

// def k(src, idx, out):                  # src: [4, 64] FP32, idx: [4, 64] INT32, out: [256] FP32
//     s = pl.load(src, [0, 0], [4, 64])   # at 0
//     i = pl.load(idx, [0, 0], [4, 64])   # at 1024
//     out = pl.mscatter(s, i, out)
ir::FunctionPtr ScatterKernel() {
  auto src = TensorParam("src", {4, 64}, At(1, 7)), idx = TensorParam("idx", {4, 64}, At(1, 12), DataType::INT32);
  auto out = TensorParam("out", {256}, At(1, 17));
  auto load_s = Op("tile.load", {src, Ints({0, 0}), Ints({4, 64})}, At(2, 9));
  auto s = TileAt("s", load_s, 0);
  auto load_i = Op("tile.load", {idx, Ints({0, 0}), Ints({4, 64})}, At(3, 9));
  auto i = TileAt("i", load_i, 1024);
  auto scatter = Op("tile.mscatter", {s, i, out}, At(4, 11));
  auto out2 = std::make_shared<ir::Var>("out2", scatter->type(), At(4, 5));
  return Kernel("k", {src, idx, out}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                {Assign(s, load_s, At(2, 5)), Assign(i, load_i, At(3, 5)), Assign(out2, scatter, At(4, 5))});
}

TEST(EmitModuleMemoryIndexed, MscatterWritesTheWholeTensor) {
  auto text = EmitModule(*ScatterKernel(), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "%out_pview = pto.partition_view %out_view, offsets = [%c0_index], "
                             "sizes = [%c256_index] : !pto.tensor_view<?xf32> -> !pto.partition_tensor_view<256xf32>"))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.mscatter ins(%s, %i : " + Vec("f32", 4, 64) + ", " + Vec("i32", 4, 64) +
                                 ") outs(%out_pview : !pto.partition_tensor_view<256xf32>)"))
      << *text;
}

// def k(y):
//     r = pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 256], dtype=pl.INT32, rounds=..)  # at 0
//     pl.store(r, [0, 0], y)
ir::FunctionPtr RandomKernel(int64_t rounds) {
  auto y = TensorParam("y", {4, 256}, At(1, 7), DataType::INT32);
  auto random = Op("tile.random", {Int(0x1234), Int(0x5678), Int(1), Int(2), Int(3), Int(4), Ints({4, 256})},
                   At(2, 9), {{"dtype", DataType::INT32}, {"rounds", rounds}});
  auto r = TileAt("r", random, 0);
  return Kernel("k", {y}, {ParamDirection::Out},
                {Assign(r, random, At(2, 5)), Eval(Op("tile.store", {r, Ints({0, 0}), y}, At(3, 5)), At(3, 5))});
}

TEST(EmitModuleMemoryIndexed, TrandomOfTenRoundsIsTheCustomForm) {
  auto text = EmitModule(*RandomKernel(10), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "pto.trandom ins(%c4660_i32, %c22136_i32, %c1_i32, %c2_i32, %c3_i32, %c4_i32 : i32, i32, "
                             "i32, i32, i32, i32) outs(%r : " + Vec("i32", 4, 256) + ")"))
      << *text;
}

TEST(EmitModuleMemoryIndexed, TrandomOfSevenRoundsIsTheGenericForm) {
  auto text = EmitModule(*RandomKernel(7), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "\"pto.trandom\"(%c4660_i32, %c22136_i32, %c1_i32, %c2_i32, %c3_i32, %c4_i32, %r) "
                             "{rounds = 7 : i32} : (i32, i32, i32, i32, i32, i32, " + Vec("i32", 4, 256) + ") -> ()"))
      << *text;
}

}  // namespace
}  // namespace pypto::backend_ptoas
