#include "pypto/backend_ptoas/module.h"

#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pypto/ir/dynamic_extent.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

std::string Emit(const ir::Function& kernel, std::string_view arch, ModuleOptions options = {}) {
  auto text = EmitModule(kernel, arch, options);
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

constexpr std::string_view kVec3264 =
    "!pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=none_box, "
    "fractal=512, pad=0>";

std::string Tb() { return std::string(kVec3264); }

TEST(EmitModule, VectorAddKernel) {
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<32x64xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @vector_add(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c32_index = arith.constant 32 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c8192_i64 = arith.constant 8192 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %a_view = pto.make_tensor_view %arg0, shape = [%c32_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:16)\n"
      "    %b_view = pto.make_tensor_view %arg1, shape = [%c32_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:19)\n"
      "    %out_view = pto.make_tensor_view %arg2, shape = [%c32_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:22)\n"
      "    %tile_a = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = %c64_index : " + Tb() +
      " loc(\"k.py\":3:14)\n"
      "    %tile_b = pto.alloc_tile addr = %c8192_i64 valid_row = %c32_index valid_col = %c64_index : " + Tb() +
      " loc(\"k.py\":4:14)\n"
      "    %tile_c = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = %c64_index : " + Tb() +
      " loc(\"k.py\":5:14)\n"
      "    %a_pview = pto.partition_view %a_view, offsets = [%c0_index, %c0_index], sizes = [%c32_index, %c64_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":3:14)\n"
      "    pto.tload ins(%a_pview : " + pv + ") outs(%tile_a : " + Tb() + ") loc(\"k.py\":3:14)\n"
      "    %b_pview = pto.partition_view %b_view, offsets = [%c0_index, %c0_index], sizes = [%c32_index, %c64_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":4:14)\n"
      "    pto.tload ins(%b_pview : " + pv + ") outs(%tile_b : " + Tb() + ") loc(\"k.py\":4:14)\n"
      "    pto.tadd ins(%tile_a, %tile_b : " + Tb() + ", " + Tb() + ") outs(%tile_c : " + Tb() + ") loc(\"k.py\":5:14)\n"
      "    %out_pview = pto.partition_view %out_view, offsets = [%c0_index, %c0_index], sizes = [%c32_index, "
      "%c64_index] : " + tv + " -> " + pv + " loc(\"k.py\":6:5)\n"
      "    pto.tstore ins(%tile_c : " + Tb() + ") outs(%out_pview : " + pv + ") loc(\"k.py\":6:5)\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*VectorAddKernel(), "a2a3"), expected);
}

TEST(EmitModule, ElementwiseOpsMapToTheirPtoOps) {
  for (auto [op, pto] : {std::pair{"tile.sub", "pto.tsub"}, {"tile.mul", "pto.tmul"}, {"tile.div", "pto.tdiv"}}) {
    std::string text = Emit(*VectorAddKernel(op), "a5", {.source_locations = false});
    EXPECT_NE(text.find(std::string("    ") + pto + " ins(%tile_a, %tile_b : " + Tb() + ", " + Tb() +
                        ") outs(%tile_c : " + Tb() + ")\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("loc("), std::string::npos) << text;
    EXPECT_TRUE(text.starts_with("module attributes {pto.target_arch = \"a5\"} {\n")) << text;
  }
}

// def scale_rows(x, n, y): a kernel with a scalar, 1-D tiles, a window at an offset, a store whose
// result is stored into again, and spans a pass rebuilt (the call is on another line).
TEST(EmitModule, ScalarParam1DTilesAndStoreChain) {
  auto n = ScalarParam("n", ir::DataType::INT32, At(10, 20));
  auto x = TensorParam("x", {256}, At(10, 16), ir::DataType::FP16);
  auto y = TensorParam("y", {256}, At(10, 28), ir::DataType::FP16);
  auto load = Op("tile.load", {x, Ints({128}), Ints({128})}, At(1, 1));  // span of the function: rebuilt
  auto t = TileAt("t", load, 256);
  auto twice = Op("tile.add", {t, t}, At(12, 9));
  auto u = TileAt("0u", twice, 512);
  auto store = Op("tile.store", {u, Ints({0}), y}, At(13, 10));
  auto y2 = std::make_shared<ir::Var>("y2", store->type(), At(13, 5));
  auto store2 = Op("tile.store", {u, Ints({128}), y2}, At(14, 5));
  auto kernel = Kernel("scale_rows", {x, n, y}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(t, load, At(11, 5)), Assign(u, twice, At(12, 5)), Assign(y2, store, At(13, 5)),
                        Eval(store2, At(14, 5)), Return({y2}, {})});
  const std::string tb =
      "!pto.tile_buf<loc=vec, dtype=f16, rows=1, cols=128, v_row=?, v_col=?, blayout=row_major, slayout=none_box, "
      "fractal=512, pad=0>";
  const std::string tv = "!pto.tensor_view<?xf16>", pv = "!pto.partition_tensor_view<128xf16>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a5\"} {\n"
      "  func.func @scale_rows(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: i32) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c256_index = arith.constant 256 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c256_i64 = arith.constant 256 : i64\n"
      "    %c128_index = arith.constant 128 : index\n"
      "    %c512_i64 = arith.constant 512 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c256_index], strides = [%c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":10:16)\n"
      "    %y_view = pto.make_tensor_view %arg1, shape = [%c256_index], strides = [%c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":10:28)\n"
      "    %t = pto.alloc_tile addr = %c256_i64 valid_row = %c1_index valid_col = %c128_index : " + tb +
      " loc(\"k.py\":11:5)\n"
      "    %_0u = pto.alloc_tile addr = %c512_i64 valid_row = %c1_index valid_col = %c128_index : " + tb +
      " loc(\"k.py\":12:9)\n"
      "    %x_pview = pto.partition_view %x_view, offsets = [%c128_index], sizes = [%c128_index] : " + tv + " -> " + pv +
      " loc(\"k.py\":11:5)\n"
      "    pto.tload ins(%x_pview : " + pv + ") outs(%t : " + tb + ") loc(\"k.py\":11:5)\n"
      "    pto.tadd ins(%t, %t : " + tb + ", " + tb + ") outs(%_0u : " + tb + ") loc(\"k.py\":12:9)\n"
      "    %y_pview = pto.partition_view %y_view, offsets = [%c0_index], sizes = [%c128_index] : " + tv + " -> " + pv +
      " loc(\"k.py\":13:10)\n"
      "    pto.tstore ins(%_0u : " + tb + ") outs(%y_pview : " + pv + ") loc(\"k.py\":13:10)\n"
      "    %0 = pto.partition_view %y_view, offsets = [%c128_index], sizes = [%c128_index] : " + tv + " -> " + pv +
      " loc(\"k.py\":14:5)\n"
      "    pto.tstore ins(%_0u : " + tb + ") outs(%0 : " + pv + ") loc(\"k.py\":14:5)\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*kernel, "a5"), expected);
}

TEST(EmitModule, UnusedTensorGetsNoViewAndNamesDoNotCollide) {
  auto arg0 = TensorParam("arg1", {16, 16}, {});
  auto unused = TensorParam("unused", {16, 16}, {});
  auto load = Op("tile.load", {arg0, Ints({0, 0}), Ints({16, 16})}, {});
  auto tile = TileAt("c0_index", load, 0);
  auto store = Op("tile.store", {tile, Ints({0, 0}), arg0}, {});
  auto kernel = Kernel("k", {arg0, unused}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(tile, load, {}), Eval(store, {})});
  const std::string tb =
      "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, "
      "fractal=512, pad=0>";
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<16x16xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) attributes {pto.kernel_kind = "
      "#pto.kernel_kind<vector>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %0 = arith.constant 0 : index\n"
      "    %arg1_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c16_index], strides = [%c16_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + "\n"
      "    %c0_index = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c16_index : " + tb + "\n"
      "    %arg1_pview = pto.partition_view %arg1_view, offsets = [%0, %0], sizes = [%c16_index, %c16_index] : " + tv +
      " -> " + pv + "\n"
      "    pto.tload ins(%arg1_pview : " + pv + ") outs(%c0_index : " + tb + ")\n"
      "    %1 = pto.partition_view %arg1_view, offsets = [%0, %0], sizes = [%c16_index, %c16_index] : " + tv + " -> " +
      pv + "\n"
      "    pto.tstore ins(%c0_index : " + tb + ") outs(%1 : " + pv + ")\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*kernel, "a2a3"), expected);
}

// FlattenTileNdTo2D's form of a kernel over a [2, 16, 64] window: the load fills the merged [32, 64]
// tile from the 3-D partition, and the store names the 3-D window as its shapes.
//     t = pl.tile.load(x, [0, 0, 0], [2, 16, 64])        # line 3, t: [32, 64]
//     e = pl.tile.exp(t)                                 # line 4, in t's buffer
//     pl.tile.store(e, [0, 0, 0], y, [2, 16, 64])        # line 5
TEST(EmitModule, AMergedTileMovesThroughA3DPartition) {
  auto x = TensorParam("x", {2, 16, 64}, {});
  auto y = TensorParam("y", {2, 16, 64}, {});
  auto merged = std::make_shared<ir::TileType>(ir::Shape{32, 64}, ir::DataType::FP32, ir::MemorySpace::Vec);
  auto load = PlacedOp("tile.load", {x, Ints({0, 0, 0}), Ints({2, 16, 64})}, merged, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto exp = Op("tile.exp", {t}, At(4, 9));
  auto e = TileAt("e", exp, 0);
  auto store = Op("tile.store", {e, Ints({0, 0, 0}), y, Ints({2, 16, 64})}, At(5, 5));
  auto kernel = Kernel("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(t, load, At(3, 5)), Assign(e, exp, At(4, 5)), Eval(store, At(5, 5))});
  const std::string text = Emit(*kernel, "a2a3");
  const std::string tv = "!pto.tensor_view<?x?x?xf32>", pv = "!pto.partition_tensor_view<2x16x64xf32>";
  for (const std::string& line : std::vector<std::string>{
           "    %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index, %c0_index], sizes = "
           "[%c2_index, %c16_index, %c64_index] : " + tv + " -> " + pv + " loc(\"k.py\":3:9)\n",
           "    pto.tload ins(%x_pview : " + pv + ") outs(%t : " + Tb() + ") loc(\"k.py\":3:9)\n",
           "    pto.texp ins(%t : " + Tb() + ") outs(%e : " + Tb() + ") loc(\"k.py\":4:9)\n",
           "    %y_pview = pto.partition_view %y_view, offsets = [%c0_index, %c0_index, %c0_index], sizes = "
           "[%c2_index, %c16_index, %c64_index] : " + tv + " -> " + pv + " loc(\"k.py\":5:5)\n",
           "    pto.tstore ins(%e : " + Tb() + ") outs(%y_pview : " + pv + ") loc(\"k.py\":5:5)\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in\n" << text;
}

// A merged tile of one batch ([1, 16, 64] -> [16, 64]) is stored without shapes=: its window takes
// the tensor's rank with a leading 1, as the IR pads the tile's shape.
//     t = pl.tile.load(x, [1, 0, 0], [1, 16, 64])        # line 3, t: [16, 64]
//     pl.tile.store(t, [1, 0, 0], y)                     # line 4
TEST(EmitModule, AStoreWindowHasTheRankOfItsOffsets) {
  auto x = TensorParam("x", {4, 16, 64}, {});
  auto y = TensorParam("y", {4, 16, 64}, {});
  auto merged = std::make_shared<ir::TileType>(ir::Shape{16, 64}, ir::DataType::FP32, ir::MemorySpace::Vec);
  auto load = PlacedOp("tile.load", {x, Ints({1, 0, 0}), Ints({1, 16, 64})}, merged, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Ints({1, 0, 0}), y}, At(4, 5));
  auto kernel = Kernel("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(t, load, At(3, 5)), Eval(store, At(4, 5))});
  const std::string text = Emit(*kernel, "a2a3");
  const std::string line =
      "    %y_pview = pto.partition_view %y_view, offsets = [%c1_index, %c0_index, %c0_index], sizes = "
      "[%c1_index, %c16_index, %c64_index] : !pto.tensor_view<?x?x?xf32> -> !pto.partition_tensor_view<1x16x64xf32> "
      "loc(\"k.py\":4:5)\n";
  EXPECT_NE(text.find(line), std::string::npos) << text;
}

// A kernel of a program compiled for every extent of a pl.dynamic dimension: x is [M, 16] with M
// known when the kernel runs. Its extent is an index argument after the scalars, the view's shape
// operand, and no stride reads it.
//     t = pl.tile.load(x, [r, 0], [16, 16])     # line 3
//     pl.tile.store(t, [r, 0], x)               # line 4
TEST(EmitModule, ADynamicAxisIsAnIndexArgumentOfTheView) {
  auto x = TensorParam("x", {ir::kDynamicExtent, 16}, At(1, 7));
  auto r = ScalarParam("r", ir::DataType::INDEX, {});
  auto load = Op("tile.load", {x, Tuple({r, Index(0)}), Ints({16, 16})}, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Tuple({r, Index(0)}), x}, At(4, 5));
  auto kernel = Kernel("k", {x, r}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(t, load, At(3, 5)), Eval(store, At(4, 5))});
  const std::string text = Emit(*kernel, "a2a3");
  EXPECT_NE(text.find("func.func @k(%arg0: !pto.ptr<f32>, %arg1: index, %arg2: index) "), std::string::npos) << text;
  EXPECT_NE(text.find("%x_view = pto.make_tensor_view %arg0, shape = [%arg2, %c16_index], strides = [%c16_index, "
                      "%c1_index]"),
            std::string::npos)
      << text;
}

// A [B, S, 64] tensor with S dynamic ([B_DYN, S_DYN, D] of pypto-lib; any inner axis may be): the
// stride of its outer axis is S * 64, computed from S's index argument when the kernel runs, before
// the view. An element of a block table [B, MAX_BLOCKS] steps over its run-time row length.
//     t = pl.tile.load(y, [b, 0, 0], [1, 16, 64])     # line 3, t: [16, 64]
//     v = pl.tensor.read(table, [b, 3])               # line 4
TEST(EmitModule, AnInnerDynamicAxisMakesTheOuterStridesRunTimeProducts) {
  auto y = TensorParam("y", {4, ir::kDynamicExtent, 64}, At(1, 7));
  auto table = TensorParam("table", {4, ir::kDynamicExtent}, At(1, 20), ir::DataType::INT32);
  auto b = ScalarParam("b", ir::DataType::INDEX, {});
  auto merged = std::make_shared<ir::TileType>(ir::Shape{16, 64}, ir::DataType::FP32, ir::MemorySpace::Vec);
  auto load = PlacedOp("tile.load", {y, Tuple({b, Index(0), Index(0)}), Ints({1, 16, 64})}, merged, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto read = Op("tensor.read", {table, Tuple({b, Index(3)})}, At(4, 9));
  auto v = std::make_shared<ir::Var>("v", read->type());
  auto kernel = Kernel("k", {y, table, b}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::In},
                       {Assign(t, load, At(3, 5)), Assign(v, read, At(4, 5))});
  const std::string text = Emit(*kernel, "a2a3", {.source_locations = false});
  for (const std::string& line : std::vector<std::string>{
           "func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<i32>, %arg2: index, %arg3: index, %arg4: index) ",
           "    %y_stride = arith.muli %c64_index, %arg3 : index\n"
           "    %y_view = pto.make_tensor_view %arg0, shape = [%c4_index, %arg3, %c64_index], strides = [%y_stride, "
           "%c64_index, %c1_index] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?x?xf32>\n",
           " = arith.muli %arg2, %arg4 : index\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nnot in\n" << text;
}

// A row-major [4, M] matrix with M dynamic (pypto-lib's per-token partials, pl.create_tensor([4, t_dim]))
// steps over its M columns to reach its next row: M is the view's second extent and its first stride.
//     t = pl.tile.load(p, [0, c], [4, 16])      # line 3
//     pl.tile.store(t, [0, c], p)               # line 4
TEST(EmitModule, ADynamicColumnCountIsTheRowStride) {
  auto p = TensorParam("p", {4, ir::kDynamicExtent}, At(1, 7));
  auto c = ScalarParam("c", ir::DataType::INDEX, {});
  auto load = Op("tile.load", {p, Tuple({Index(0), c}), Ints({4, 16})}, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Tuple({Index(0), c}), p}, At(4, 5));
  auto kernel = Kernel("k", {p, c}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(t, load, At(3, 5)), Eval(store, At(4, 5))});
  const std::string text = Emit(*kernel, "a2a3");
  EXPECT_NE(text.find("%p_view = pto.make_tensor_view %arg0, shape = [%c4_index, %arg2], strides = [%arg2, "
                      "%c1_index] {layout = #pto.layout<nd>}"),
            std::string::npos)
      << text;
}

// A [M, 1] column vector (a per-row scale of M rows, as pypto-lib's kv_scale_flat) is read
// column-major: stepping to its one column passes over its M rows, so the dynamic extent is the
// view's shape and also its stride.
//     t = pl.tile.load(s, [r, 0], [16, 1])      # line 3
//     pl.tile.store(t, [r, 0], s)               # line 4
TEST(EmitModule, ADynamicColumnVectorStepsOverItsRunTimeRows) {
  auto s = TensorParam("s", {ir::kDynamicExtent, 1}, At(1, 7));
  auto r = ScalarParam("r", ir::DataType::INDEX, {});
  auto load = Op("tile.load", {s, Tuple({r, Index(0)}), Ints({16, 1})}, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Tuple({r, Index(0)}), s}, At(4, 5));
  auto kernel = Kernel("k", {s, r}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(t, load, At(3, 5)), Eval(store, At(4, 5))});
  const std::string text = Emit(*kernel, "a2a3");
  EXPECT_NE(text.find("%s_view = pto.make_tensor_view %arg0, shape = [%arg2, %c1_index], strides = [%c1_index, "
                      "%arg2] {layout = #pto.layout<dn>}"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace pypto::backend_ptoas
