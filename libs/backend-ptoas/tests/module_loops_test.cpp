// Loops: scf.for with index bounds, and windows at offsets computed from loop variables.
#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/kernel_wrapper.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/ir/op_registry.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::BinaryOp;

std::string Emit(const ir::Function& kernel, ModuleOptions options = {}) {
  auto text = EmitModule(kernel, "a2a3", options);
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

std::string TileBuf(int rows, int cols) {
  return "!pto.tile_buf<loc=vec, dtype=f32, rows=" + std::to_string(rows) + ", cols=" + std::to_string(cols) +
         ", v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>";
}

TEST(EmitModuleLoops, ChunkedAdd) {
  const std::string tb = TileBuf(128, 128);
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<128x128xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @chunked_add_incore_0(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c512_index = arith.constant 512 : index\n"
      "    %c128_index = arith.constant 128 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c65536_i64 = arith.constant 65536 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %c4_index = arith.constant 4 : index\n"
      "    %a_view = pto.make_tensor_view %arg0, shape = [%c512_index, %c128_index], strides = [%c128_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:31)\n"
      "    %b_view = pto.make_tensor_view %arg1, shape = [%c512_index, %c128_index], strides = [%c128_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:34)\n"
      "    %c_view = pto.make_tensor_view %arg2, shape = [%c512_index, %c128_index], strides = [%c128_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:37)\n"
      // Tiles defined in the loop are allocated once, up front: their addresses are static.
      "    %tile_a = pto.alloc_tile addr = %c0_i64 valid_row = %c128_index valid_col = %c128_index : " + tb +
      " loc(\"k.py\":3:18)\n"
      "    %tile_b = pto.alloc_tile addr = %c65536_i64 valid_row = %c128_index valid_col = %c128_index : " + tb +
      " loc(\"k.py\":4:18)\n"
      "    %__tmp_v0 = pto.alloc_tile addr = %c0_i64 valid_row = %c128_index valid_col = %c128_index : " + tb +
      " loc(\"k.py\":5:20)\n"
      "    scf.for %i = %c0_index to %c4_index step %c1_index {\n"
      "      %0 = arith.muli %i, %c128_index : index loc(\"k.py\":3:18)\n"
      "      %a_pview = pto.partition_view %a_view, offsets = [%0, %c0_index], sizes = [%c128_index, %c128_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":3:18)\n"
      "      pto.tload ins(%a_pview : " + pv + ") outs(%tile_a : " + tb + ") loc(\"k.py\":3:18)\n"
      "      %1 = arith.muli %i, %c128_index : index loc(\"k.py\":4:18)\n"
      "      %b_pview = pto.partition_view %b_view, offsets = [%1, %c0_index], sizes = [%c128_index, %c128_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":4:18)\n"
      "      pto.tload ins(%b_pview : " + pv + ") outs(%tile_b : " + tb + ") loc(\"k.py\":4:18)\n"
      "      pto.tadd ins(%tile_a, %tile_b : " + tb + ", " + tb + ") outs(%__tmp_v0 : " + tb + ") loc(\"k.py\":5:20)\n"
      "      %2 = arith.muli %i, %c128_index : index loc(\"k.py\":6:9)\n"
      "      %c_pview = pto.partition_view %c_view, offsets = [%2, %c0_index], sizes = [%c128_index, %c128_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":6:9)\n"
      "      pto.tstore ins(%__tmp_v0 : " + tb + ") outs(%c_pview : " + pv + ") loc(\"k.py\":6:9)\n"
      "    }\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*ChunkedAddKernel()), expected);
}

// def rows(x):                                          # line 1 (a pl.spmd scope, one row block each)
//     b = pl.tile.get_block_idx()                       # line 2
//     r = b * 16                                        # line 3
//     t = pl.load(x, [r, 0], [16, 16])                  # line 4
// The block index is a trailing i32 argument, cast to index once; `r` is index arithmetic.
TEST(EmitModuleLoops, BlockIndexIsATrailingArgument) {
  auto x = TensorParam("x", {64, 16}, {});
  auto block = ir::OpRegistry::Get().CreateCall("tile.get_block_idx", {}, {}, At(2, 13));
  auto b = std::make_shared<ir::Var>("b", (*block)->type());
  auto r = std::make_shared<ir::Var>("r", (*block)->type());
  auto load = Op("tile.load", {x, Tuple({r, Index(0)}), Ints({16, 16})}, At(4, 13));
  auto kernel = Kernel("rows", {x}, {ir::ParamDirection::In},
                       {Assign(b, *block, At(2, 9)), Assign(r, Bin(BinaryOp::Mul, b, Index(16)), At(3, 9)),
                        Assign(TileAt("t", load, 0), load, At(4, 9))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("func.func @rows(%arg0: !pto.ptr<f32>, %arg1: i32, %arg2: i32)"), std::string::npos) << text;
  EXPECT_NE(text.find("    %b = arith.index_cast %arg1 : i32 to index\n"
                      "    %0 = arith.muli %b, %c16_index : index\n"
                      "    %x_pview = pto.partition_view %x_view, offsets = [%0, %c0_index]"),
            std::string::npos)
      << text;
  auto wrapper = EmitKernelWrapper(*kernel, "static __aicore__ void rows(__gm__ float* v1, int32_t v2, int32_t v3) {}");
  ASSERT_TRUE(wrapper) << wrapper.error();
  EXPECT_NE(wrapper->find("#include \"intrinsic.h\""), std::string::npos);
  EXPECT_NE(wrapper->find("  rows(x, static_cast<int32_t>(get_block_idx(args)), "
                          "static_cast<int32_t>(get_block_num(args)));\n"),
            std::string::npos)
      << *wrapper;
}

// def gather(table, cache):                             # line 1 (table: [2, 4] INT32, cache: [64, 16])
//     b = pl.read(table, [1, 2])                        # line 2
//     t = pl.load(cache, [b * 16, 0], [16, 16])         # line 3
//     pl.write(table, [0, 3], b + 1)                    # line 4
// An element of an integer tensor parameter is a pto.load_scalar from its pointer at the flat
// offset of its indices, widened to index like a scalar parameter; a write narrows the index value
// and is a pto.store_scalar.
TEST(EmitModuleLoops, TensorElementsAreScalarLoadsAndStoresOfTheParameter) {
  auto table = TensorParam("table", {2, 4}, {}, ir::DataType::INT32);
  auto cache = TensorParam("cache", {64, 16}, {});
  auto read = Op("tensor.read", {table, Tuple({Index(1), Index(2)})}, At(2, 9));
  auto b = std::make_shared<ir::Var>("b", read->type());
  auto load = Op("tile.load", {cache, Tuple({Bin(BinaryOp::Mul, b, Index(16)), Index(0)}), Ints({16, 16})}, At(3, 9));
  auto write = Op("tensor.write", {table, Tuple({Index(0), Index(3)}), Bin(BinaryOp::Add, b, Index(1))}, At(4, 5));
  auto kernel = Kernel("gather", {table, cache}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(b, read, At(2, 5)), Assign(TileAt("t", load, 0), load, At(3, 5)),
                        std::make_shared<ir::EvalStmt>(write, At(4, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("func.func @gather(%arg0: !pto.ptr<i32>, %arg1: !pto.ptr<f32>)"), std::string::npos) << text;
  EXPECT_EQ(text.find("%table_view"), std::string::npos) << text;  // read through the pointer, not a view
  EXPECT_NE(text.find("    %0 = arith.muli %c1_index, %c4_index : index\n"  // 1 * 4 + 2
                      "    %1 = arith.addi %c2_index, %0 : index\n"
                      "    %2 = pto.load_scalar %arg0[%1] : !pto.ptr<i32> -> i32\n"
                      "    %b = arith.index_cast %2 : i32 to index\n"
                      "    %3 = arith.muli %b, %c16_index : index\n"
                      "    %cache_pview = pto.partition_view %cache_view, offsets = [%3, %c0_index]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    %4 = arith.muli %c0_index, %c4_index : index\n"  // 0 * 4 + 3
                      "    %5 = arith.addi %c3_index, %4 : index\n"
                      "    %6 = arith.addi %b, %c1_index : index\n"
                      "    %7 = arith.index_cast %6 : index to i32\n"
                      "    pto.store_scalar %7, %arg0[%5] : !pto.ptr<i32>, i32\n"),
            std::string::npos)
      << text;
  // The generic form lists the operands in PTOAS's order: (ptr, offset) and (ptr, offset, value).
  const std::string generic = Emit(*kernel, ModuleOptions{.source_locations = false, .generic_form = true});
  EXPECT_NE(generic.find("    %2 = \"pto.load_scalar\"(%arg0, %1) : (!pto.ptr<i32>, index) -> i32\n"),
            std::string::npos)
      << generic;
  EXPECT_NE(generic.find("    \"pto.store_scalar\"(%arg0, %5, %7) : (!pto.ptr<i32>, index, i32) -> ()\n"),
            std::string::npos)
      << generic;
}

// def bump(ids, out):                                   # line 1 (INT32 [8, 8] each)
//     t = pl.load(ids, [0, 0], [8, 8])                  # line 2
//     v = pl.read(t, [2, 3])                            # line 3
//     t = pl.write(t, [0, 0], v * 2)                    # line 4 (in place)
//     pl.store(t, [0, 0], out)                          # line 5
// A tile's integer element is a pto.tgetval / pto.tsetval at the flat offset of its indices.
TEST(EmitModuleLoops, TileElementsAreGetValAndSetVal) {
  auto ids = TensorParam("ids", {8, 8}, {}, ir::DataType::INT32);
  auto out = TensorParam("out", {8, 8}, {}, ir::DataType::INT32);
  auto load = Op("tile.load", {ids, Ints({0, 0}), Ints({8, 8})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto read = Op("tile.read", {t, Ints({2, 3})}, At(3, 9));
  auto v = std::make_shared<ir::Var>("v", read->type());
  auto write = Op("tile.write", {t, Ints({0, 0}), Bin(BinaryOp::Mul, v, Index(2))}, At(4, 9));
  auto t2 = std::make_shared<ir::Var>("t", t->type());
  auto store = Op("tile.store", {t2, Ints({0, 0}), out}, At(5, 5));
  auto kernel = Kernel("bump", {ids, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(t, load, At(2, 5)), Assign(v, read, At(3, 5)), Assign(t2, write, At(4, 5)),
                        std::make_shared<ir::EvalStmt>(store, At(5, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  const std::string tb = "!pto.tile_buf<loc=vec, dtype=i32, rows=8, cols=8, v_row=?, v_col=?, blayout=row_major, "
                         "slayout=none_box, fractal=512, pad=0>";
  EXPECT_NE(text.find("    %0 = arith.muli %c2_index, %c8_index : index\n"  // 2 * 8 + 3
                      "    %1 = arith.addi %c3_index, %0 : index\n"
                      "    %2 = pto.tgetval ins(%t, %1 : " + tb + ", index) outs : i32\n"
                      "    %v = arith.index_cast %2 : i32 to index\n"
                      "    %3 = arith.muli %c0_index, %c8_index : index\n"
                      "    %4 = arith.addi %c0_index, %3 : index\n"
                      "    %5 = arith.muli %v, %c2_index : index\n"
                      "    %6 = arith.index_cast %5 : index to i32\n"
                      "    pto.tsetval ins(%4, %6 : index, i32) outs(%t : " + tb + ")\n"
                      "    %out_pview = "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pto.tstore ins(%t : " + tb + ")"), std::string::npos) << text;
  // Generically, PTOAS's argument order: tgetval (src, offset), tsetval (dst, offset, val).
  const std::string generic = Emit(*kernel, ModuleOptions{.source_locations = false, .generic_form = true});
  EXPECT_NE(generic.find("    %2 = \"pto.tgetval\"(%t, %1) : (" + tb + ", index) -> i32\n"), std::string::npos)
      << generic;
  EXPECT_NE(generic.find("    \"pto.tsetval\"(%t, %4, %6) : (" + tb + ", index, i32) -> ()\n"), std::string::npos)
      << generic;
}

// def scale(w, x, out):                                 # line 1 (w: [2, 4] FP32, x and out: [16, 16] FP32)
//     s = pl.read(w, [1, 2])                            # line 2
//     t = pl.load(x, [0, 0], [16, 16])                  # line 3
//     pl.store(pl.mul(t, s), [0, 0], out)               # line 4
//     pl.write(w, [0, 0], s)                            # line 5
// A floating-point element is read at its own type (pto.load_scalar ... -> f32) and passed to a
// tile op as its scalar operand, like a scalar parameter; a float element is written from one.
TEST(EmitModuleLoops, AFloatElementIsAScalarOperand) {
  auto w = TensorParam("w", {2, 4}, {});
  auto x = TensorParam("x", {16, 16}, {});
  auto out = TensorParam("out", {16, 16}, {});
  auto read = Op("tensor.read", {w, Tuple({Index(1), Index(2)})}, At(2, 9));
  auto s = std::make_shared<ir::Var>("s", read->type());
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 16})}, At(3, 9));
  auto t = TileAt("t", load, 0);
  auto mul = Op("tile.muls", {t, s}, At(4, 15));
  auto y = TileAt("y", mul, 1024);
  auto write = Op("tensor.write", {w, Tuple({Index(0), Index(0)}), s}, At(5, 5));
  auto kernel = Kernel("scale", {w, x, out}, {ir::ParamDirection::InOut, ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(s, read, At(2, 5)), Assign(t, load, At(3, 5)), Assign(y, mul, At(4, 15)),
                        Eval(Op("tile.store", {y, Ints({0, 0}), out}, At(4, 5)), At(4, 5)), Eval(write, At(5, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %2 = pto.load_scalar %arg0[%1] : !pto.ptr<f32> -> f32\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    pto.tmuls ins(%t, %2 : " + TileBuf(16, 16) + ", f32) outs(%y : " + TileBuf(16, 16) + ")\n"),
            std::string::npos)
      << text;
  // and written back from such a value, with no cast.
  EXPECT_NE(text.find("    pto.store_scalar %2, %arg0[%4] : !pto.ptr<f32>, f32\n"), std::string::npos) << text;
  const std::string generic = Emit(*kernel, ModuleOptions{.source_locations = false, .generic_form = true});
  EXPECT_NE(generic.find("    %2 = \"pto.load_scalar\"(%arg0, %1) : (!pto.ptr<f32>, index) -> f32\n"),
            std::string::npos)
      << generic;
}

// def rows(x, n):                                      # line 1 (n: pl.Scalar[pl.INT64])
//     m = pl.cast(n, pl.INT8)                           # line 2 (wraps to 8 bits)
//     w = pl.cast(m, pl.INT64)                          # line 3 (the same value)
//     t = pl.load(x, [w, 0], [16, 16])                  # line 4
// An integer cast of an index value is the value, wrapped through the narrower width when it narrows.
TEST(EmitModuleLoops, IntegerCastsOfIndexValues) {
  auto x = TensorParam("x", {256, 16}, {});
  auto n = ScalarParam("n", ir::DataType::INT64, {});
  auto narrow = Op("scalar.cast", {n}, At(2, 9), {{"target_type", ir::DataType::INT8}});
  auto m = std::make_shared<ir::Var>("m", narrow->type());
  auto widen = Op("scalar.cast", {m}, At(3, 9), {{"target_type", ir::DataType::INT64}});
  auto w = std::make_shared<ir::Var>("w", widen->type());
  auto load = Op("tile.load", {x, Tuple({w, Index(0)}), Ints({16, 16})}, At(4, 9));
  auto kernel = Kernel("rows", {x, n}, {ir::ParamDirection::In, ir::ParamDirection::In},
                       {Assign(m, narrow, At(2, 5)), Assign(w, widen, At(3, 5)),
                        Assign(TileAt("t", load, 0), load, At(4, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %n_idx = arith.index_cast %arg1 : i64 to index\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    %0 = arith.index_cast %n_idx : index to i8\n"
                      "    %m = arith.index_cast %0 : i8 to index\n"
                      "    %x_pview = pto.partition_view %x_view, offsets = [%m, %c0_index]"),
            std::string::npos)
      << text;
}

// def numbered(out, n):                              # line 1 (out: [1, 32] UINT32, n: pl.Scalar[pl.INT64])
//     s = pl.cast(n, pl.UINT32)                         # line 2 (wraps to 32 bits, unsigned)
//     r = pl.arange(s, [1, 32], dtype=pl.UINT32)        # line 3
//     pl.store(r, [0, 0], out)                          # line 4
// An unsigned cast of an index value is the value wrapped to its width and zero-extended
// (arith.index_castui); as the start of a UINT32 tci it is narrowed to i32 and re-typed ui32, as
// unsigned constants are.
TEST(EmitModuleLoops, UnsignedCastOfAnIndexValueStartsAnArange) {
  auto out = TensorParam("out", {1, 32}, {}, ir::DataType::UINT32);
  auto n = ScalarParam("n", ir::DataType::INT64, {});
  auto cast = Op("scalar.cast", {n}, At(2, 9), {{"target_type", ir::DataType::UINT32}});
  auto s = std::make_shared<ir::Var>("s", cast->type());
  auto arange = Op("tile.ci", {s, Ints({1, 32})}, At(3, 9), {{"dtype", ir::DataType::UINT32}});
  auto r = TileAt("r", arange, 0);
  auto kernel = Kernel("numbered", {out, n}, {ir::ParamDirection::Out, ir::ParamDirection::In},
                       {Assign(s, cast, At(2, 5)), Assign(r, arange, At(3, 5)),
                        Eval(Op("tile.store", {r, Ints({0, 0}), out}, At(4, 5)), At(4, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %0 = arith.index_cast %n_idx : index to i32\n"
                      "    %s = arith.index_castui %0 : i32 to index\n"
                      "    %1 = arith.index_cast %s : index to i32\n"
                      "    %2 = builtin.unrealized_conversion_cast %1 : i32 to ui32\n"
                      "    pto.tci ins(%2 : ui32) outs(%r : "),
            std::string::npos)
      << text;
}

// def signs(x, n):                                    # line 1 (x: [8] FP32, n: pl.Scalar[pl.INT64])
//     s = pl.cast(n, pl.FP32)                           # line 2
//     z = pl.cast(0.0, pl.FP32)                         # line 3
//     pl.write(x, [0], s)                               # line 4
//     pl.write(x, [1], z)                               # line 5
// A cast to a floating-point type is a scalar of that type: an integer index value goes through i64
// (arith.sitofp), a literal is a constant; pl.write stores either.
TEST(EmitModuleLoops, FloatCastsOfIntegersAndLiterals) {
  auto x = TensorParam("x", {8}, {});
  auto n = ScalarParam("n", ir::DataType::INT64, {});
  auto from_int = Op("scalar.cast", {n}, At(2, 9), {{"target_type", ir::DataType::FP32}});
  auto s = std::make_shared<ir::Var>("s", from_int->type());
  auto literal = Op("scalar.cast", {Float(0.0)}, At(3, 9), {{"target_type", ir::DataType::FP32}});
  auto z = std::make_shared<ir::Var>("z", literal->type());
  auto kernel = Kernel("signs", {x, n}, {ir::ParamDirection::InOut, ir::ParamDirection::In},
                       {Assign(s, from_int, At(2, 5)), Assign(z, literal, At(3, 5)),
                        Eval(Op("tensor.write", {x, Ints({0}), s}, At(4, 5)), At(4, 5)),
                        Eval(Op("tensor.write", {x, Ints({1}), z}, At(5, 5)), At(5, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %0 = arith.index_cast %n_idx : index to i64\n"
                      "    %1 = arith.sitofp %0 : i64 to f32\n"
                      "    pto.store_scalar %1, %arg0[%c0_index] : !pto.ptr<f32>, f32\n"
                      "    pto.store_scalar %cst, %arg0[%c1_index] : !pto.ptr<f32>, f32\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    %cst = arith.constant 0.00000000000000000e+00 : f32\n"), std::string::npos) << text;
}

// def flags(x, n):                                    # line 1 (x: [8] FP32, n: [8] INT32)
//     f = pl.read(x, [0])                               # line 2
//     b = pl.cast(f == f, pl.INT32)                     # line 3 (0 for NaN)
//     i = pl.cast(f, pl.INT32)                          # line 4 (toward zero)
//     pl.write(n, [0], b)                               # line 5
//     if f > 0.5:                                       # line 6
//         pl.write(n, [1], i)                           # line 7
// A comparison of floating-point scalars is arith.cmpf, made an integer by zero-extending its i1; a
// floating-point scalar becomes one by arith.fptosi; either is then an index value like any other.
TEST(EmitModuleLoops, ComparisonsAndFloatScalarsAsIntegers) {
  auto x = TensorParam("x", {8}, {});
  auto n = TensorParam("n", {8}, {}, ir::DataType::INT32);
  auto read = Op("tensor.read", {x, Ints({0})}, At(2, 9));
  auto f = std::make_shared<ir::Var>("f", read->type());
  auto same = Op("scalar.cast", {Bin(BinaryOp::Eq, f, f)}, At(3, 9), {{"target_type", ir::DataType::INT32}});
  auto b = std::make_shared<ir::Var>("b", same->type());
  auto truncate = Op("scalar.cast", {f}, At(4, 9), {{"target_type", ir::DataType::INT32}});
  auto i = std::make_shared<ir::Var>("i", truncate->type());
  auto branch = std::make_shared<ir::IfStmt>(
      Bin(BinaryOp::Gt, f, Float(0.5)),
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{Eval(Op("tensor.write", {n, Ints({1}), i}, At(7, 9)), At(7, 9))}),
      nullptr, std::vector<ir::VarPtr>{}, At(6, 5));
  auto kernel = Kernel("flags", {x, n}, {ir::ParamDirection::In, ir::ParamDirection::InOut},
                       {Assign(f, read, At(2, 5)), Assign(b, same, At(3, 5)), Assign(i, truncate, At(4, 5)),
                        Eval(Op("tensor.write", {n, Ints({0}), b}, At(5, 5)), At(5, 5)), branch});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %0 = pto.load_scalar %arg0[%c0_index] : !pto.ptr<f32> -> f32\n"
                      "    %1 = arith.cmpf oeq, %0, %0 : f32\n"
                      "    %2 = arith.extui %1 : i1 to i64\n"
                      "    %b = arith.index_cast %2 : i64 to index\n"
                      "    %3 = arith.fptosi %0 : f32 to i32\n"
                      "    %i = arith.index_cast %3 : i32 to index\n"
                      "    %4 = arith.index_cast %b : index to i32\n"
                      "    pto.store_scalar %4, %arg1[%c0_index] : !pto.ptr<i32>, i32\n"
                      "    %5 = arith.cmpf ogt, %0, %cst : f32\n"
                      "    scf.if %5 {\n"),
            std::string::npos)
      << text;
}

// def bounded(x, k):                                   # line 1 (x: [8] INT64, k: pl.Scalar[pl.INT64])
//     if k < pl.cast(4096, pl.INT32):                   # line 2
//         pl.write(x, [0], k)                           # line 3
//     if pl.read(x, [1]) > 0:                           # line 4
//         pl.write(x, [2], k)                           # line 5
// A cast or an element read inside an index expression is lowered where it stands.
TEST(EmitModuleLoops, CastsAndReadsInsideAnIndexExpression) {
  auto x = TensorParam("x", {8}, {}, ir::DataType::INT64);
  auto k = ScalarParam("k", ir::DataType::INT64, {});
  auto limit = Op("scalar.cast", {Int(4096, ir::DataType::INDEX)}, At(2, 12), {{"target_type", ir::DataType::INT32}});
  auto branch = std::make_shared<ir::IfStmt>(
      Bin(BinaryOp::Lt, k, limit),
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{Eval(Op("tensor.write", {x, Ints({0}), k}, At(3, 9)), At(3, 9))}),
      nullptr, std::vector<ir::VarPtr>{}, At(2, 5));
  auto positive = std::make_shared<ir::IfStmt>(
      Bin(BinaryOp::Gt, Op("tensor.read", {x, Ints({1})}, At(4, 8)), Index(0)),
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{Eval(Op("tensor.write", {x, Ints({2}), k}, At(5, 9)), At(5, 9))}),
      nullptr, std::vector<ir::VarPtr>{}, At(4, 5));
  auto kernel = Kernel("bounded", {x, k}, {ir::ParamDirection::InOut, ir::ParamDirection::In}, {branch, positive});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %0 = arith.index_cast %c4096_index : index to i32\n"
                      "    %cast = arith.index_cast %0 : i32 to index\n"
                      "    %1 = arith.cmpi slt, %k_idx, %cast : index\n"
                      "    scf.if %1 {\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    %3 = pto.load_scalar %arg0[%c1_index] : !pto.ptr<i64> -> i64\n"
                      "    %element = arith.index_cast %3 : i64 to index\n"
                      "    %4 = arith.cmpi sgt, %element, %c0_index : index\n"
                      "    scf.if %4 {\n"),
            std::string::npos)
      << text;
}

// def shift(x, out):                                  # line 1 (x, out: [4, 8] INT32)
//     for b in pl.range(4):                             # line 2
//         t = pl.load(x, [b, 0], [1, 8])                # line 3
//         pl.store(pl.add(t, b), [b, 0], out)           # line 4
// An integer the kernel computed is the scalar of a signed integer tile op, narrowed to its width.
TEST(EmitModuleLoops, IndexValuesAreScalarsOfIntegerTileOps) {
  auto x = TensorParam("x", {4, 8}, {}, ir::DataType::INT32);
  auto out = TensorParam("out", {4, 8}, {}, ir::DataType::INT32);
  auto b = LoopVar("b");
  auto load = Op("tile.load", {x, Tuple({b, Index(0)}), Ints({1, 8})}, At(3, 13));
  auto t = TileAt("t", load, 0);
  auto add = Op("tile.adds", {t, b}, At(4, 18));
  auto y = TileAt("y", add, 32);
  auto loop = For(b, Index(0), Index(4), Index(1),
                  {Assign(t, load, At(3, 9)), Assign(y, add, At(4, 18)),
                   Eval(Op("tile.store", {y, Tuple({b, Index(0)}), out}, At(4, 9)), At(4, 9))},
                  At(2, 5));
  auto kernel = Kernel("shift", {x, out}, {ir::ParamDirection::In, ir::ParamDirection::Out}, {loop});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  const std::string tile = "!pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8, v_row=?, v_col=?, blayout=row_major, "
                           "slayout=none_box, fractal=512, pad=0>";
  EXPECT_NE(text.find("      %0 = arith.index_cast %b : index to i32\n"
                      "      pto.tadds ins(%t, %0 : " + tile + ", i32) outs(%y : " + tile + ")\n"),
            std::string::npos)
      << text;
}

// def column(x, out):                                  # line 1 (x: [64, 1], out: [4, 16, 1])
//     t = pl.load(x, [16, 0], [16, 1])                  # line 2
//     pl.store(t, [2, 0, 0], out)                       # line 3
// ptoas reads a tensor whose last dimension is 1 as column-major (DN): its view says so, with
// upstream's strides, and the [16, 1] tile (column-major too) moves through it.
TEST(EmitModuleLoops, ColumnVectorTensorsAreDnViews) {
  auto x = TensorParam("x", {64, 1}, {});
  auto out = TensorParam("out", {4, 16, 1}, {});
  auto load = Op("tile.load", {x, Ints({16, 0}), Ints({16, 1})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Ints({2, 0, 0}), out}, At(3, 5));
  auto kernel = Kernel("column", {x, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(t, load, At(2, 5)), std::make_shared<ir::EvalStmt>(store, At(3, 5))});
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %x_view = pto.make_tensor_view %arg0, shape = [%c64_index, %c1_index], strides = "
                      "[%c1_index, %c64_index] {layout = #pto.layout<dn>} : !pto.tensor_view<?x?xf32>\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    %out_view = pto.make_tensor_view %arg1, shape = [%c4_index, %c16_index, %c1_index], "
                      "strides = [%c16_index, %c1_index, %c1_index] {layout = #pto.layout<dn>} : "
                      "!pto.tensor_view<?x?x?xf32>\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("blayout=col_major"), std::string::npos) << text;
}

// def acc_rows(a, out):                                 # line 1
//     acc = pl.full([16, 16], dtype=pl.FP32, value=0.0) # line 2 (at 0)
//     for i in pl.range(4):                             # line 3, carrying acc
//         t = pl.load(a, [i * 16, 0], [16, 16])         # line 4 (at 1024)
//         if i < 2:                                     # line 5
//             s = pl.mul(t, 2.0)                        # line 6 (at 2048)
//         else:
//             s = pl.add(t, 1.0)                        # line 8 (at 2048)
//         acc = pl.add(acc, s)                          # line 9 (at 0)
//     pl.store(acc, [0, 0], out)                        # line 10
// The carried tile and the if's result stay in their buffers, so scf.for and scf.if have no results:
// every name of the accumulator is the one alloc_tile at address 0.
TEST(EmitModuleLoops, CarriedTileAndIfUpdateTheirBuffersInPlace) {
  auto a = TensorParam("a", {64, 16}, {});
  auto out = TensorParam("out", {16, 16}, {});
  auto full = Op("tile.full", {Ints({16, 16}), Float(0.0)}, At(2, 11), {{"dtype", ir::DataType::FP32}});
  auto acc = TileAt("acc", full, 0), acc_in = TileAt("acc_in", full, 0), acc_out = TileAt("acc_out", full, 0);
  auto i = LoopVar("i");
  auto load = Op("tile.load", {a, Tuple({Bin(BinaryOp::Mul, i, Index(16)), Index(0)}), Ints({16, 16})}, At(4, 13));
  auto t = TileAt("t", load, 1024);
  auto doubled = Op("tile.muls", {t, Float(2.0)}, At(6, 17));
  auto shifted = Op("tile.adds", {t, Float(1.0)}, At(8, 17));
  auto s_then = TileAt("s", doubled, 2048), s_else = TileAt("s", shifted, 2048), s = TileAt("s", shifted, 2048);
  auto branch = std::make_shared<ir::IfStmt>(
      Bin(BinaryOp::Lt, i, Index(2)),
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          Assign(s_then, doubled, At(6, 13)), std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{s_then})}),
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          Assign(s_else, shifted, At(8, 13)), std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{s_else})}),
      std::vector<ir::VarPtr>{s}, At(5, 9));
  auto sum = Op("tile.add", {acc_in, s}, At(9, 15));
  auto acc_next = TileAt("acc_next", sum, 0);
  auto loop = std::make_shared<ir::ForStmt>(
      i, Index(0), Index(4), Index(1), std::vector<ir::IterArg>{{acc_in, acc}},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          Assign(t, load, At(4, 9)), branch, Assign(acc_next, sum, At(9, 9)),
          std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{acc_next})}),
      std::vector<ir::VarPtr>{acc_out}, ir::ForKind::Sequential, At(3, 5));
  auto store = Op("tile.store", {acc_out, Ints({0, 0}), out}, At(10, 5));
  auto kernel = Kernel("acc_rows", {a, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(acc, full, At(2, 5)), loop, Eval(store, At(10, 5))});
  const std::string tb = TileBuf(16, 16);
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    scf.for %i = %c0_index to %c4_index step %c1_index {\n"
                      "      %1 = arith.muli %i, %c16_index : index\n"
                      "      %a_pview = pto.partition_view %a_view, offsets = [%1, %c0_index], sizes = [%c16_index, "
                      "%c16_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>\n"
                      "      pto.tload ins(%a_pview : !pto.partition_tensor_view<16x16xf32>) outs(%t : " + tb + ")\n"
                      "      %2 = arith.cmpi slt, %i, %c2_index : index\n"
                      "      scf.if %2 {\n"
                      "        pto.tmuls ins(%t, %cst_1 : " + tb + ", f32) outs(%s : " + tb + ")\n"
                      "      } else {\n"
                      "        pto.tadds ins(%t, %cst_2 : " + tb + ", f32) outs(%0 : " + tb + ")\n"
                      "      }\n"
                      "      pto.tadd ins(%acc, %s : " + tb + ", " + tb + ") outs(%acc_next : " + tb + ")\n"
                      "    }\n"
                      "    %out_pview = pto.partition_view %out_view"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    pto.tstore ins(%acc : " + tb + ")"), std::string::npos) << text;
  EXPECT_NE(text.find("%acc = pto.alloc_tile addr = %c0_i64"), std::string::npos) << text;
  EXPECT_NE(text.find("%acc_next = pto.alloc_tile addr = %c0_i64"), std::string::npos) << text;
}

// An integer scalar carried by a loop is an scf.for iter_arg and result; one merged by an if is an
// scf.if result, yielded by both branches:
//   n = 0
//   for i in pl.range(4):
//       if i < 2: m = n + i  else: m = n
//       t = pl.load(a, [m, 0], [16, 16]); pl.store(t, [i * 16, 0], out)
//       n = m
TEST(EmitModuleLoops, CarriedAndMergedIntegerScalarsAreScfResults) {
  auto a = TensorParam("a", {64, 16}, {});
  auto out = TensorParam("out", {64, 16}, {});
  auto index = std::make_shared<ir::ScalarType>(ir::DataType::INDEX);
  auto n = std::make_shared<ir::Var>("n", index), n_out = std::make_shared<ir::Var>("n_out", index);
  auto m = std::make_shared<ir::Var>("m", index), m_sum = std::make_shared<ir::Var>("m_sum", index);
  auto i = LoopVar("i");
  auto branch = std::make_shared<ir::IfStmt>(
      Bin(BinaryOp::Lt, i, Index(2)),
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          Assign(m_sum, Bin(BinaryOp::Add, n, i), At(3, 13)),
          std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{m_sum})}),
      std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{n}), std::vector<ir::VarPtr>{m}, At(3, 9));
  auto load = Op("tile.load", {a, Tuple({m, Index(0)}), Ints({16, 16})}, At(4, 13));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Tuple({Bin(BinaryOp::Mul, i, Index(16)), Index(0)}), out}, At(4, 40));
  auto loop = std::make_shared<ir::ForStmt>(
      i, Index(0), Index(4), Index(1), std::vector<ir::IterArg>{{n, Index(0)}},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{branch, Assign(t, load, At(4, 9)), Eval(store, At(4, 40)),
                                                              std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{m})}),
      std::vector<ir::VarPtr>{n_out}, ir::ForKind::Sequential, At(2, 5));
  auto kernel = Kernel("offsets", {a, out}, {ir::ParamDirection::In, ir::ParamDirection::Out}, {loop});
  const std::string tb = TileBuf(16, 16);
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %n_out = scf.for %i = %c0_index to %c4_index step %c1_index iter_args(%n = %c0_index) -> "
                      "(index) {\n"
                      "      %0 = arith.cmpi slt, %i, %c2_index : index\n"
                      "      %m = scf.if %0 -> (index) {\n"
                      "        %1 = arith.addi %n, %i : index\n"
                      "        scf.yield %1 : index\n"
                      "      } else {\n"
                      "        scf.yield %n : index\n"
                      "      }\n"
                      "      %a_pview = pto.partition_view %a_view, offsets = [%m, %c0_index], sizes = [%c16_index, "
                      "%c16_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>\n"
                      "      pto.tload ins(%a_pview : !pto.partition_tensor_view<16x16xf32>) outs(%t : " + tb + ")\n"
                      "      %2 = arith.muli %i, %c16_index : index\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      scf.yield %m : index\n    }\n"), std::string::npos) << text;
}

// def rows(a, out):                                     # line 1
//     acc = pl.full([16, 16], 0.0)                      # line 2
//     r = 0
//     while r < 64:                                     # line 3
//         t = pl.load(a, [r, 0], [16, 16])              # line 4
//         acc = pl.add(acc, t)                          # line 5
//         r = r + 16
//     pl.store(acc, [0, 0], out)                        # line 6
// The carried scalar is the scf.while's operand, block argument and result; the carried tile stays in
// its buffer.
TEST(EmitModuleLoops, WhileLoopCarriesItsScalarsThroughScfWhile) {
  auto a = TensorParam("a", {64, 16}, {});
  auto out = TensorParam("out", {16, 16}, {});
  auto full = Op("tile.full", {Ints({16, 16}), Float(0.0)}, At(2, 11), {{"dtype", ir::DataType::FP32}});
  auto acc = TileAt("acc", full, 0), acc_in = TileAt("acc_in", full, 0), acc_out = TileAt("acc_out", full, 0);
  auto r = LoopVar("r"), r_out = LoopVar("r_out");
  auto load = Op("tile.load", {a, Tuple({r, Index(0)}), Ints({16, 16})}, At(4, 13));
  auto t = TileAt("t", load, 1024);
  auto sum = Op("tile.add", {acc_in, t}, At(5, 15));
  auto acc_next = TileAt("acc_next", sum, 0);
  auto loop = std::make_shared<ir::WhileStmt>(
      Bin(BinaryOp::Lt, r, Index(64)), std::vector<ir::IterArg>{{acc_in, acc}, {r, Index(0)}},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          Assign(t, load, At(4, 9)), Assign(acc_next, sum, At(5, 9)),
          std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{acc_next, Bin(BinaryOp::Add, r, Index(16))})}),
      std::vector<ir::VarPtr>{acc_out, r_out}, At(3, 5));
  auto store = Op("tile.store", {acc_out, Ints({0, 0}), out}, At(6, 5));
  auto kernel = Kernel("acc_rows", {a, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(acc, full, At(2, 5)), loop, Eval(store, At(6, 5))});
  const std::string tb = TileBuf(16, 16);
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("    %r_out = scf.while (%r = %c0_index) : (index) -> index {\n"
                      "      %0 = arith.cmpi slt, %r, %c64_index : index\n"
                      "      scf.condition(%0) %r : index\n"
                      "    } do {\n"
                      "      ^bb0(%1: index):\n"
                      "      %a_pview = pto.partition_view %a_view, offsets = [%1, %c0_index], sizes = [%c16_index, "
                      "%c16_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>\n"
                      "      pto.tload ins(%a_pview : !pto.partition_tensor_view<16x16xf32>) outs(%t : " + tb + ")\n"
                      "      pto.tadd ins(%acc, %t : " + tb + ", " + tb + ") outs(%acc_next : " + tb + ")\n"
                      "      %2 = arith.addi %1, %c16_index : index\n"
                      "      scf.yield %2 : index\n"
                      "    }\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    pto.tstore ins(%acc : " + tb + ")"), std::string::npos) << text;
}

// def tiles_2d(x, y):                                   # line 1
//     for i in pl.range(2):                             # line 2
//         for j in pl.parallel(4):                      # line 3
//             t = pl.load(x, [i * 32, j * 32], [32, 32])  # line 4
//             pl.store(t, [i * 32, j * 32], y)          # line 5
TEST(EmitModuleLoops, Nested2D) {
  auto x = TensorParam("x", {64, 128}, At(1, 14));
  auto y = TensorParam("y", {64, 128}, At(1, 17));
  auto i = LoopVar("i"), j = LoopVar("j");
  auto window = [&] { return Tuple({Bin(BinaryOp::Mul, i, Index(32)), Bin(BinaryOp::Mul, j, Index(32))}); };
  auto load = Op("tile.load", {x, window(), Ints({32, 32})}, At(4, 17));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, window(), y}, At(5, 13));
  auto inner = For(j, Index(0), Index(4), Index(1), {Assign(t, load, At(4, 13)), Eval(store, At(5, 13))}, At(3, 9),
                   ir::ForKind::Parallel);
  auto outer = For(i, Index(0), Index(2), Index(1), {inner}, At(2, 5));
  auto kernel = Kernel("tiles_2d", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out}, {outer});
  const std::string tb = TileBuf(32, 32);
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<32x32xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @tiles_2d(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c128_index = arith.constant 128 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c32_index = arith.constant 32 : index\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %c2_index = arith.constant 2 : index\n"
      "    %c4_index = arith.constant 4 : index\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c64_index, %c128_index], strides = [%c128_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + "\n"
      "    %y_view = pto.make_tensor_view %arg1, shape = [%c64_index, %c128_index], strides = [%c128_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + "\n"
      "    %t = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = %c32_index : " + tb + "\n"
      "    scf.for %i = %c0_index to %c2_index step %c1_index {\n"
      "      scf.for %j = %c0_index to %c4_index step %c1_index {\n"
      "        %0 = arith.muli %i, %c32_index : index\n"
      "        %1 = arith.muli %j, %c32_index : index\n"
      "        %x_pview = pto.partition_view %x_view, offsets = [%0, %1], sizes = [%c32_index, %c32_index] : " + tv +
      " -> " + pv + "\n"
      "        pto.tload ins(%x_pview : " + pv + ") outs(%t : " + tb + ")\n"
      "        %2 = arith.muli %i, %c32_index : index\n"
      "        %3 = arith.muli %j, %c32_index : index\n"
      "        %y_pview = pto.partition_view %y_view, offsets = [%2, %3], sizes = [%c32_index, %c32_index] : " + tv +
      " -> " + pv + "\n"
      "        pto.tstore ins(%t : " + tb + ") outs(%y_pview : " + pv + ")\n"
      "      }\n"
      "    }\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*kernel, {.source_locations = false}), expected);
}

// def strided(x, n: pl.INT32, y):                               # line 1
//     for k in pl.range(1, n, 2):                               # line 2
//         t = pl.load(x, [k // 2 * 16, max(k % 4, 1) * 8], [16, 8])   # line 3
//         pl.store(t, [k - 1, min(k, 8)], y)                    # line 4
// Bounds that are neither 0 nor 1, an INT32 scalar widened once to index, and every arith op.
TEST(EmitModuleLoops, StartStepScalarBoundAndArithOps) {
  auto x = TensorParam("x", {128, 64}, At(1, 13));
  auto n = ScalarParam("n", ir::DataType::INT32, At(1, 16));
  auto y = TensorParam("y", {128, 64}, At(1, 30));
  auto k = LoopVar("k");
  auto row = Bin(BinaryOp::Mul, Bin(BinaryOp::FloorDiv, k, Index(2)), Index(16));
  auto col = Bin(BinaryOp::Mul, Bin(BinaryOp::Max, Bin(BinaryOp::FloorMod, k, Index(4)), Index(1)), Index(8));
  auto load = Op("tile.load", {x, Tuple({row, col}), Ints({16, 8})}, At(3, 13));
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Tuple({Bin(BinaryOp::Sub, k, Index(1)), Bin(BinaryOp::Min, k, Index(8))}), y},
                  At(4, 9));
  auto loop = For(k, Index(1), n, Index(2), {Assign(t, load, At(3, 9)), Eval(store, At(4, 9))}, At(2, 5));
  auto kernel = Kernel("strided", {x, n, y}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                       {loop});
  const std::string tb = TileBuf(16, 8);
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<16x8xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @strided(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: i32) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c128_index = arith.constant 128 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c8_index = arith.constant 8 : index\n"
      "    %c2_index = arith.constant 2 : index\n"
      "    %c4_index = arith.constant 4 : index\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c128_index, %c64_index], strides = [%c64_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:13)\n"
      "    %y_view = pto.make_tensor_view %arg1, shape = [%c128_index, %c64_index], strides = [%c64_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:30)\n"
      "    %n_idx = arith.index_cast %arg2 : i32 to index loc(\"k.py\":1:16)\n"
      "    %t = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c8_index : " + tb +
      " loc(\"k.py\":3:13)\n"
      "    scf.for %k = %c1_index to %n_idx step %c2_index {\n"
      "      %0 = arith.floordivsi %k, %c2_index : index loc(\"k.py\":3:13)\n"
      "      %1 = arith.muli %0, %c16_index : index loc(\"k.py\":3:13)\n"
      "      %2 = arith.floordivsi %k, %c4_index : index loc(\"k.py\":3:13)\n"
      "      %3 = arith.muli %2, %c4_index : index loc(\"k.py\":3:13)\n"
      "      %4 = arith.subi %k, %3 : index loc(\"k.py\":3:13)\n"
      "      %5 = arith.maxsi %4, %c1_index : index loc(\"k.py\":3:13)\n"
      "      %6 = arith.muli %5, %c8_index : index loc(\"k.py\":3:13)\n"
      "      %x_pview = pto.partition_view %x_view, offsets = [%1, %6], sizes = [%c16_index, %c8_index] : " + tv +
      " -> " + pv + " loc(\"k.py\":3:13)\n"
      "      pto.tload ins(%x_pview : " + pv + ") outs(%t : " + tb + ") loc(\"k.py\":3:13)\n"
      "      %7 = arith.subi %k, %c1_index : index loc(\"k.py\":4:9)\n"
      "      %8 = arith.minsi %k, %c8_index : index loc(\"k.py\":4:9)\n"
      "      %y_pview = pto.partition_view %y_view, offsets = [%7, %8], sizes = [%c16_index, %c8_index] : " + tv +
      " -> " + pv + " loc(\"k.py\":4:9)\n"
      "      pto.tstore ins(%t : " + tb + ") outs(%y_pview : " + pv + ") loc(\"k.py\":4:9)\n"
      "    }\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*kernel), expected);
}

// Bounds computed from an INDEX scalar and an enclosing loop variable: arith ops before the loop,
// located at the loop statement; an INDEX parameter needs no cast.
TEST(EmitModuleLoops, ComputedBoundsAreEmittedBeforeTheLoop) {
  auto x = TensorParam("x", {64}, {});
  auto m = ScalarParam("m", ir::DataType::INDEX, {});
  auto i = LoopVar("i"), j = LoopVar("j");
  auto load = Op("tile.load", {x, Tuple({j}), Ints({8})}, At(4, 13));
  auto t = TileAt("t", load, 0);
  auto inner = For(j, Bin(BinaryOp::Mul, i, Index(8)), Bin(BinaryOp::Add, Bin(BinaryOp::Mul, i, Index(8)), m),
                   Index(8), {Assign(t, load, At(4, 9))}, At(3, 9));
  auto outer = For(i, Index(0), Index(2), Index(1), {inner}, At(2, 5));
  auto kernel = Kernel("bounds", {x, m}, {ir::ParamDirection::InOut, ir::ParamDirection::In}, {outer});
  const std::string text = Emit(*kernel);
  const std::string loop =
      "    scf.for %i = %c0_index to %c2_index step %c1_index {\n"
      "      %0 = arith.muli %i, %c8_index : index loc(\"k.py\":3:9)\n"
      "      %1 = arith.muli %i, %c8_index : index loc(\"k.py\":3:9)\n"
      "      %2 = arith.addi %1, %arg1 : index loc(\"k.py\":3:9)\n"
      "      scf.for %j = %0 to %2 step %c8_index {\n"
      "        %x_pview = pto.partition_view %x_view, offsets = [%j], sizes = [%c8_index] : ";
  EXPECT_NE(text.find(loop), std::string::npos) << text;
  EXPECT_NE(text.find("func.func @bounds(%arg0: !pto.ptr<f32>, %arg1: index)"), std::string::npos) << text;
  EXPECT_EQ(text.find("index_cast"), std::string::npos) << text;
}

// Two sibling loops over variables of the same name get distinct SSA names.
TEST(EmitModuleLoops, SiblingLoopsWithTheSameVariableName) {
  auto x = TensorParam("x", {64}, {});
  auto first = LoopVar("i"), second = LoopVar("i");
  auto load1 = Op("tile.load", {x, Tuple({first}), Ints({8})}, {});
  auto load2 = Op("tile.load", {x, Tuple({second}), Ints({8})}, {});
  auto t1 = TileAt("t", load1, 0), t2 = TileAt("u", load2, 0);
  auto kernel = Kernel("k", {x}, {ir::ParamDirection::In},
                       {For(first, Index(0), Index(8), Index(8), {Assign(t1, load1, {})}, {}),
                        For(second, Index(0), Index(8), Index(8), {Assign(t2, load2, {})}, {})});
  const std::string text = Emit(*kernel);
  EXPECT_NE(text.find("    scf.for %i = %c0_index to %c8_index step %c8_index {\n"
                      "      %x_pview = pto.partition_view %x_view, offsets = [%i]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    scf.for %0 = %c0_index to %c8_index step %c8_index {\n"
                      "      %1 = pto.partition_view %x_view, offsets = [%0]"),
            std::string::npos)
      << text;
}

// def first_copy(a, out, is_first: pl.Scalar[pl.BOOL]):   # line 1
//     t = pl.load(a, [0, 0], [16, 16])                    # line 2, at 0
//     if is_first:                                        # line 3
//         pl.store(t, [0, 0], out)                        # line 4
//     u = t                                               # line 5
//     pl.store(u, [0, 0], out)                            # line 6
// A BOOL parameter is the condition as it is (its i1 argument), and a plain assignment of a tile
// names the same buffer.
TEST(EmitModuleLoops, ABoolParameterIsAConditionAndAPlainTileAssignmentAnAlias) {
  auto a = TensorParam("a", {16, 16}, At(1, 16));
  auto out = TensorParam("out", {16, 16}, At(1, 19));
  auto is_first = ScalarParam("is_first", ir::DataType::BOOL, At(1, 24));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto u = std::make_shared<ir::Var>("u", t->type(), At(5, 5));
  auto branch = std::make_shared<ir::IfStmt>(
      is_first,
      std::make_shared<ir::SeqStmts>(
          std::vector<ir::StmtPtr>{Eval(Op("tile.store", {t, Ints({0, 0}), out}, At(4, 9)), At(4, 9))}),
      nullptr, std::vector<ir::VarPtr>{}, At(3, 5));
  auto kernel = Kernel("first_copy", {a, out, is_first},
                       {ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::In},
                       {Assign(t, load, At(2, 5)), branch, Assign(u, t, At(5, 5)),
                        Eval(Op("tile.store", {u, Ints({0, 0}), out}, At(6, 5)), At(6, 5))});
  const std::string tb = TileBuf(16, 16);
  const std::string text = Emit(*kernel, ModuleOptions{.source_locations = false});
  EXPECT_NE(text.find("func.func @first_copy(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: i1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    scf.if %arg2 {\n"
                      "      %out_pview = pto.partition_view %out_view, offsets = [%c0_index, %c0_index], sizes = "
                      "[%c16_index, %c16_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>\n"
                      "      pto.tstore ins(%t : " + tb + ") outs(%out_pview : !pto.partition_tensor_view<16x16xf32>)\n"
                      "    }\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("%u"), std::string::npos) << text;  // u is t's buffer
}

// The wrapper depends on the parameters only; a loop in the body changes nothing in it.
TEST(EmitModuleLoops, KernelWrapperOfALoopKernel) {
  auto wrapper = EmitKernelWrapper(*ChunkedAddKernel());
  ASSERT_TRUE(wrapper) << wrapper.error();
  const std::string entry = wrapper->substr(wrapper->find("extern \"C\""));
  EXPECT_EQ(entry,
            "extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args) {\n"
            "#if !defined(__CPU_SIM)\n"
            "  set_atomic_none();\n"
            "#endif\n"
            "  __gm__ ChipTensor* a_desc = reinterpret_cast<__gm__ ChipTensor*>(args[0]);\n"
            "  __gm__ float* a = reinterpret_cast<__gm__ float*>(a_desc->buffer.addr) + a_desc->start_offset;\n"
            "  __gm__ ChipTensor* b_desc = reinterpret_cast<__gm__ ChipTensor*>(args[1]);\n"
            "  __gm__ float* b = reinterpret_cast<__gm__ float*>(b_desc->buffer.addr) + b_desc->start_offset;\n"
            "  __gm__ ChipTensor* c_desc = reinterpret_cast<__gm__ ChipTensor*>(args[2]);\n"
            "  __gm__ float* c = reinterpret_cast<__gm__ float*>(c_desc->buffer.addr) + c_desc->start_offset;\n"
            "  chunked_add_incore_0(a, b, c);\n"
            "}\n");
}

}  // namespace
}  // namespace pypto::backend_ptoas
