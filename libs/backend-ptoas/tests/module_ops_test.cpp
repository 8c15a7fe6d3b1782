// One test per op family: the exact PTO text each tile op lowers to (spellings, operand order and
// tile_buf types as upstream PyPTO emits them for ptoas).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <tuple>

#include "kernel_builder.h"
#include "kernel_plan.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::MemorySpace;
using ir::ParamDirection;

std::string Emit(const ir::Function& kernel, std::string_view arch = "a2a3") {
  auto text = EmitModule(kernel, arch, {.source_locations = false});
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

// The tile_buf type of a tile in `loc` with the layout fields given (blayout, slayout, fractal).
std::string Buf(std::string_view loc, std::string_view dtype, int rows, int cols, std::string_view blayout,
                std::string_view slayout, int fractal = 512) {
  return fmt::format("!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout={}, slayout={}, "
                     "fractal={}, pad=0>",
                     loc, dtype, rows, cols, blayout, slayout, fractal);
}

// A Vec tile: row-major, except a column vector [N, 1], which is column-major.
std::string Vec(int rows, int cols, std::string_view dtype = "f32") {
  return Buf("vec", dtype, rows, cols, cols == 1 && rows > 1 ? "col_major" : "row_major", "none_box");
}

// The line of `text` that starts (after indentation) with `prefix`, or "" when there is none.
std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  size_t at = text.find("    " + prefix);
  if (at == std::string::npos) return "";
  size_t end = text.find('\n', at);
  return text.substr(at + 4, end - at - 4);
}

// def k(x, z, y, *scalars):                       # x, z: [16, 64] of `dtype`
//     t = pl.load(x, [0, 0], [16, 64])             # at 0
//     r = <make(tiles)>                             # at 4096
//     u = pl.load(z, [0, 0], [16, 64])             # at 8192
//     row = pl.create_tile([16, 1], dtype)          # at 16384
//     col = pl.create_tile([1, 64], dtype)          # at 16448
//     pl.store(r, [0, 0], y)                        # y has r's shape and dtype; no store of a column vector
struct Tiles {
  ir::VarPtr t, u, row, col;
};
using MakeOp = std::function<ir::CallPtr(const Tiles&)>;

ir::FunctionPtr OneOpKernel(const MakeOp& make, DataType dtype = DataType::FP32, std::vector<ir::VarPtr> scalars = {}) {
  auto x = TensorParam("x", {16, 64}, {}, dtype);
  auto z = TensorParam("z", {16, 64}, {}, dtype);
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, {});
  auto load2 = Op("tile.load", {z, Ints({0, 0}), Ints({16, 64})}, {});
  auto create_row = Op("tile.create", {Ints({16, 1})}, {}, {{"dtype", dtype}});
  auto create_col = Op("tile.create", {Ints({1, 64})}, {}, {{"dtype", dtype}});
  Tiles tiles{TileAt("t", load, 0), TileAt("u", load2, 8192), TileAt("row", create_row, 16384),
              TileAt("col", create_col, 16448)};
  auto call = make(tiles);
  auto r = TileAt("r", call, 4096);
  std::vector<ir::VarPtr> params = {x, z};
  std::vector<ir::StmtPtr> body = {Assign(tiles.t, load, {}), Assign(tiles.u, load2, {}),
                                   Assign(tiles.row, create_row, {}), Assign(tiles.col, create_col, {}),
                                   Assign(r, call, {})};
  const auto* result = r->type()->As<ir::TileType>();
  if (result->shape().back() != 1) {
    auto y = TensorParam("y", result->shape(), {}, result->dtype());
    params.push_back(y);
    body.push_back(Eval(Op("tile.store", {r, Ints({0, 0}), y}, {}), {}));
  }
  params.insert(params.end(), scalars.begin(), scalars.end());
  return Kernel("k", params, std::vector<ParamDirection>(params.size(), ParamDirection::InOut), body);
}

// The op line of OneOpKernel(make).
std::string OpLine(const MakeOp& make, std::string_view pto, DataType dtype = DataType::FP32,
                   std::vector<ir::VarPtr> scalars = {}) {
  return LineStartingWith(Emit(*OneOpKernel(make, dtype, std::move(scalars))), std::string(pto) + " ");
}

const std::string kV = Vec(16, 64);  // t, u and most results

TEST(EmitModuleOps, BinaryElementwise) {
  const std::pair<const char*, const char*> ops[] = {{"tile.add", "pto.tadd"},         {"tile.sub", "pto.tsub"},
                                                     {"tile.mul", "pto.tmul"},         {"tile.div", "pto.tdiv"},
                                                     {"tile.maximum", "pto.tmax"},     {"tile.minimum", "pto.tmin"}};
  for (auto [op, pto] : ops) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  }
}

// The scalar is passed at the tile's element type: literals are declared in it, parameters of
// another type are converted first (here FP32 -> FP16).
TEST(EmitModuleOps, TileScalar) {
  auto s = ScalarParam("s", DataType::FP32, {});
  auto divs = OneOpKernel([&](const Tiles& v) { return Op("tile.divs", {v.t, s}, {}); }, DataType::FP16, {s});
  const std::string h = Vec(16, 64, "f16"), hc = Vec(16, 1, "f16"), hr = Vec(1, 64, "f16");
  const std::string tv = "!pto.tensor_view<?x?xf16>", pv = "!pto.partition_tensor_view<16x64xf16>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @k(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f16>, %arg3: f32) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c8192_i64 = arith.constant 8192 : i64\n"
      "    %c16384_i64 = arith.constant 16384 : i64\n"
      "    %c16448_i64 = arith.constant 16448 : i64\n"
      "    %c4096_i64 = arith.constant 4096 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %z_view = pto.make_tensor_view %arg1, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %y_view = pto.make_tensor_view %arg2, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %t = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + h + "\n"
      "    %u = pto.alloc_tile addr = %c8192_i64 valid_row = %c16_index valid_col = %c64_index : " + h + "\n"
      "    %row = pto.alloc_tile addr = %c16384_i64 valid_row = %c16_index valid_col = %c1_index : " + hc + "\n"
      "    %col = pto.alloc_tile addr = %c16448_i64 valid_row = %c1_index valid_col = %c64_index : " + hr + "\n"
      "    %r = pto.alloc_tile addr = %c4096_i64 valid_row = %c16_index valid_col = %c64_index : " + h + "\n"
      "    %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + "\n"
      "    pto.tload ins(%x_pview : " + pv + ") outs(%t : " + h + ")\n"
      "    %z_pview = pto.partition_view %z_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + "\n"
      "    pto.tload ins(%z_pview : " + pv + ") outs(%u : " + h + ")\n"
      "    %0 = arith.truncf %arg3 : f32 to f16\n"
      "    pto.tdivs ins(%t, %0 : " + h + ", f16) outs(%r : " + h + ")\n"
      "    %y_pview = pto.partition_view %y_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + "\n"
      "    pto.tstore ins(%r : " + h + ") outs(%y_pview : " + pv + ")\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*divs), expected);

  // A float literal, and an integer literal scaling a float tile, become float constants.
  auto adds = Emit(*OneOpKernel([](const Tiles& v) { return Op("tile.adds", {v.t, Float(1.5)}, {}); }));
  EXPECT_EQ(LineStartingWith(adds, "%cst "), "%cst = arith.constant 1.50000000000000000e+00 : f32");
  EXPECT_EQ(LineStartingWith(adds, "pto.tadds "), "pto.tadds ins(%t, %cst : " + kV + ", f32) outs(%r : " + kV + ")");
  auto muls = Emit(*OneOpKernel([](const Tiles& v) { return Op("tile.muls", {v.t, Int(2)}, {}); }, DataType::FP16));
  EXPECT_EQ(LineStartingWith(muls, "%cst "), "%cst = arith.constant 2.00000000000000000e+00 : f16");
  EXPECT_EQ(LineStartingWith(muls, "pto.tmuls "), "pto.tmuls ins(%t, %cst : " + h + ", f16) outs(%r : " + h + ")");
  // A parameter of the tile's type is passed as it is.
  auto m = ScalarParam("m", DataType::FP32, {});
  EXPECT_EQ(OpLine([&](const Tiles& v) { return Op("tile.maximums", {v.t, m}, {}); }, "pto.tmaxs", DataType::FP32,
                   {m}),
            "pto.tmaxs ins(%t, %arg3 : " + kV + ", f32) outs(%r : " + kV + ")");
  // Integer tiles: an i32 literal, and an INT16 parameter widened to i32.
  const std::string i = Vec(16, 64, "i32");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.subs", {v.t, Int(3)}, {}); }, "pto.tsubs", DataType::INT32),
            "pto.tsubs ins(%t, %c3_i32 : " + i + ", i32) outs(%r : " + i + ")");
  // A float literal that holds an integer (pl.const(2.0, pl.FP32) on an INT16 tile) is that integer.
  const std::string i16 = Vec(16, 64, "i16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.subs", {v.t, Float(2.0)}, {}); }, "pto.tsubs", DataType::INT16),
            "pto.tsubs ins(%t, %c2_i16 : " + i16 + ", i16) outs(%r : " + i16 + ")");
  auto n = ScalarParam("n", DataType::INT16, {});
  auto mins = Emit(*OneOpKernel([&](const Tiles& v) { return Op("tile.minimums", {v.t, n}, {}); }, DataType::INT32,
                                {n}));
  EXPECT_EQ(LineStartingWith(mins, "%0 "), "%0 = arith.extsi %arg3 : i16 to i32");
  EXPECT_EQ(LineStartingWith(mins, "pto.tmins "), "pto.tmins ins(%t, %0 : " + i + ", i32) outs(%r : " + i + ")");
  // arith.constant is signless: an unsigned constant is declared as iN and cast, as upstream does.
  auto unsigned_adds =
      Emit(*OneOpKernel([](const Tiles& v) { return Op("tile.adds", {v.t, Int(1)}, {}); }, DataType::UINT8));
  EXPECT_NE(unsigned_adds.find("    %0 = arith.constant 1 : i8\n"
                               "    %c1_ui8 = builtin.unrealized_conversion_cast %0 : i8 to ui8\n"),
            std::string::npos)
      << unsigned_adds;
  // tadds is row-major only: on a column vector it reads and writes the [1, 16] row views.
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.adds", {v.row, Float(1.0)}, {}); }, "pto.tadds"),
            "pto.tadds ins(%row_row, %cst : " + Vec(1, 16) + ", f32) outs(%r_row : " + Vec(1, 16) + ")");
  EXPECT_EQ(LineStartingWith(unsigned_adds, "pto.tadds "),
            "pto.tadds ins(%t, %c1_ui8 : " + Vec(16, 64, "ui8") + ", ui8) outs(%r : " + Vec(16, 64, "ui8") + ")");
}

TEST(EmitModuleOps, Unary) {
  const std::pair<const char*, const char*> ops[] = {
      {"tile.exp", "pto.texp"},     {"tile.log", "pto.tlog"},   {"tile.sqrt", "pto.tsqrt"},
      {"tile.rsqrt", "pto.trsqrt"}, {"tile.recip", "pto.trecip"}, {"tile.relu", "pto.trelu"},
      {"tile.abs", "pto.tabs"},     {"tile.neg", "pto.tneg"}};
  for (auto [op, pto] : ops) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t : " + kV + ") outs(%r : " + kV + ")");
  }
  // rsqrt's optional scratch tile follows the source.
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.rsqrt", {v.t, v.u}, {}); }, "pto.trsqrt"),
            "pto.trsqrt ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  // Bitwise NOT of a 16-bit integer tile.
  const std::string i16 = Vec(16, 64, "i16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.not", {v.t}, {}); }, "pto.tnot", DataType::INT16),
            "pto.tnot ins(%t : " + i16 + ") outs(%r : " + i16 + ")");
  // Leaky ReLU passes its slope as an f32 whatever the tile's type (PTOAS's TLReluOp takes F32:$slope):
  // a literal is an f32 constant, a half-precision parameter is extended.
  auto lrelu = Emit(*OneOpKernel([](const Tiles& v) { return Op("tile.lrelu", {v.t, Float(0.25)}, {}); }));
  EXPECT_EQ(LineStartingWith(lrelu, "%cst "), "%cst = arith.constant 2.50000000000000000e-01 : f32");
  EXPECT_EQ(LineStartingWith(lrelu, "pto.tlrelu "),
            "pto.tlrelu ins(%t, %cst : " + kV + ", f32) outs(%r : " + kV + ")");
  const std::string h = Vec(16, 64, "f16");
  auto half = Emit(*OneOpKernel([](const Tiles& v) { return Op("tile.lrelu", {v.t, Float(0.1)}, {}); }, DataType::FP16));
  EXPECT_EQ(LineStartingWith(half, "%cst "), "%cst = arith.constant 1.00000000000000006e-01 : f32");
  EXPECT_EQ(LineStartingWith(half, "pto.tlrelu "), "pto.tlrelu ins(%t, %cst : " + h + ", f32) outs(%r : " + h + ")");
  auto s = ScalarParam("s", DataType::FP16, {});
  auto param = Emit(*OneOpKernel([&](const Tiles& v) { return Op("tile.lrelu", {v.t, s}, {}); }, DataType::FP16, {s}));
  EXPECT_EQ(LineStartingWith(param, "%0 "), "%0 = arith.extf %arg3 : f16 to f32");
  EXPECT_EQ(LineStartingWith(param, "pto.tlrelu "), "pto.tlrelu ins(%t, %0 : " + h + ", f32) outs(%r : " + h + ")");
}

// high_precision=True selects PTOAS's precise division and logarithm with an attribute after outs();
// False (the default) prints the plain op.
TEST(EmitModuleOps, HighPrecisionDivAndLog) {
  auto with = [](const char* op, bool binary, std::optional<bool> precise) {
    return [=](const Tiles& v) {
      ir::Call::Kwargs kwargs;
      if (precise) kwargs.emplace_back("high_precision", *precise);
      std::vector<ir::ExprPtr> args = {v.t};
      if (binary) args.push_back(v.u);
      return Op(op, std::move(args), {}, kwargs);
    };
  };
  EXPECT_EQ(OpLine(with("tile.div", true, true), "pto.tdiv"),
            "pto.tdiv ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV +
                ") {precisionType = #pto<div_precision high_precision>}");
  EXPECT_EQ(OpLine(with("tile.div", true, false), "pto.tdiv"),
            "pto.tdiv ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  const std::string h = Vec(16, 64, "f16");
  EXPECT_EQ(OpLine(with("tile.log", false, true), "pto.tlog", DataType::FP16),
            "pto.tlog ins(%t : " + h + ") outs(%r : " + h + ") {precisionType = #pto<log_precision high_precision>}");
  EXPECT_EQ(OpLine(with("tile.log", false, std::nullopt), "pto.tlog"),
            "pto.tlog ins(%t : " + kV + ") outs(%r : " + kV + ")");
}

// tcvt carries its rounding mode inside ins(); the DSL's default mode is "round".
TEST(EmitModuleOps, Cast) {
  auto cast = [](std::optional<std::string> mode) {
    return [mode](const Tiles& v) {
      ir::Call::Kwargs kwargs = {{"target_type", DataType::FP16}};
      if (mode) kwargs.emplace_back("mode", *mode);
      return Op("tile.cast", {v.t}, {}, kwargs);
    };
  };
  const std::string h = Vec(16, 64, "f16");
  EXPECT_EQ(OpLine(cast(std::nullopt), "pto.tcvt"),
            "pto.tcvt ins(%t {rmode = #pto<round_mode ROUND>} : " + kV + ") outs(%r : " + h + ")");
  EXPECT_EQ(OpLine(cast("rint"), "pto.tcvt"),
            "pto.tcvt ins(%t {rmode = #pto<round_mode RINT>} : " + kV + ") outs(%r : " + h + ")");
  EXPECT_EQ(OpLine(cast("none"), "pto.tcvt"),
            "pto.tcvt ins(%t {rmode = #pto<round_mode NONE>} : " + kV + ") outs(%r : " + h + ")");
}

// Row reductions take a scratch tile and give a column-major [16, 1]; column reductions give a
// row-major [1, 64], col_sum with a scratch tile reducing as a binary tree.
TEST(EmitModuleOps, Reductions) {
  const std::string rv = Vec(16, 1), cv = Vec(1, 64);
  for (auto [op, pto] : {std::pair{"tile.row_sum", "pto.trowsum"}, {"tile.row_max", "pto.trowmax"},
                         {"tile.row_min", "pto.trowmin"}, {"tile.row_prod", "pto.trowprod"}}) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + rv + ")");
  }
  for (auto [op, pto] : {std::pair{"tile.col_sum", "pto.tcolsum"}, {"tile.col_max", "pto.tcolmax"},
                         {"tile.col_min", "pto.tcolmin"}, {"tile.col_prod", "pto.tcolprod"}}) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t : " + kV + ") outs(%r : " + cv + ")");
  }
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.col_sum", {v.t, v.u}, {}); }, "pto.tcolsum"),
            "pto.tcolsum ins(%t, %u {isBinary = true} : " + kV + ", " + kV + ") outs(%r : " + cv + ")");
}

// The index-of-extremum reductions read the tile and a scratch tile of its shape into INT32
// indices: a column-major [16, 1] for the row forms, a row-major [1, 64] for the column forms.
TEST(EmitModuleOps, ArgReductions) {
  const std::string rv = Vec(16, 1, "i32"), cv = Vec(1, 64, "i32");
  for (auto [op, pto, out] : {std::tuple{"tile.row_argmax", "pto.trowargmax", rv},
                              {"tile.row_argmin", "pto.trowargmin", rv},
                              {"tile.col_argmax", "pto.tcolargmax", cv},
                              {"tile.col_argmin", "pto.tcolargmin", cv}}) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + out + ")");
  }
  const std::string hv = Vec(16, 64, "f16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.row_argmin", {v.t, v.u}, {}); }, "pto.trowargmin",
                   DataType::FP16),
            "pto.trowargmin ins(%t, %u : " + hv + ", " + hv + ") outs(%r : " + rv + ")");
}

// row_expand / col_expand pass only the vector (the target gives the shape); the combining forms
// pass the tile, then the vector.
TEST(EmitModuleOps, Broadcasts) {
  const std::string rv = Vec(16, 1), cv = Vec(1, 64);
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.row_expand", {v.t, v.row}, {}); }, "pto.trowexpand"),
            "pto.trowexpand ins(%row : " + rv + ") outs(%r : " + kV + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.col_expand", {v.t, v.col}, {}); }, "pto.tcolexpand"),
            "pto.tcolexpand ins(%col : " + cv + ") outs(%r : " + kV + ")");
  for (std::string combine : {"add", "sub", "mul", "div", "max", "min", "expdif"}) {
    auto row = [&](const Tiles& v) { return Op("tile.row_expand_" + combine, {v.t, v.row}, {}); };
    EXPECT_EQ(OpLine(row, "pto.trowexpand" + combine),
              "pto.trowexpand" + combine + " ins(%t, %row : " + kV + ", " + rv + ") outs(%r : " + kV + ")");
    auto col = [&](const Tiles& v) { return Op("tile.col_expand_" + combine, {v.t, v.col}, {}); };
    EXPECT_EQ(OpLine(col, "pto.tcolexpand" + combine),
              "pto.tcolexpand" + combine + " ins(%t, %col : " + kV + ", " + cv + ") outs(%r : " + kV + ")");
  }
}

// def fill(x, y, flat_out):                                        # line 1
//     scratch = pl.create_tile([16, 64], dtype=pl.FP32)            # line 2, at 0: nothing but its alloc
//     low = pl.full([16, 64], dtype=pl.FP32, value=-inf)           # line 3, at 4096
//     t = pl.load(x, [0, 0], [16, 64])                             # line 4, at 8192
//     half = pl.expands(t, 0.5)                                    # line 5, at 12288
//     copy = pl.move(half, target_memory=pl.Mem.Vec)               # line 6, at 0
//     flat = pl.reshape(copy, [1, 1024])                           # line 7, at 0: copy's bytes re-typed
//     pl.store(low, [0, 0], y)                                     # line 8
//     pl.store(flat, [0, 0], flat_out)                             # line 9
ir::FunctionPtr FillKernel() {
  auto x = TensorParam("x", {16, 64}, At(1, 10));
  auto y = TensorParam("y", {16, 64}, At(1, 13));
  auto flat_out = TensorParam("flat_out", {1, 1024}, At(1, 16));
  auto create = Op("tile.create", {Ints({16, 64})}, At(2, 15), {{"dtype", DataType::FP32}});
  auto scratch = TileAt("scratch", create, 0);
  auto full = Op("tile.full", {Ints({16, 64}), Float(-std::numeric_limits<double>::infinity())}, At(3, 11),
                 {{"dtype", DataType::FP32}});
  auto low = TileAt("low", full, 4096);
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, At(4, 9));
  auto t = TileAt("t", load, 8192);
  auto expands = Op("tile.expands", {t, Float(0.5)}, At(5, 12));
  auto half = TileAt("half", expands, 12288);
  auto move = Op("tile.move", {half}, At(6, 12), {{"target_memory", MemorySpace::Vec}});
  auto copy = TileAt("copy", move, 0);
  auto reshape = Op("tile.reshape", {copy, Ints({1, 1024})}, At(7, 12));
  auto flat = TileAt("flat", reshape, 0);
  return Kernel("fill", {x, y, flat_out}, {ParamDirection::In, ParamDirection::Out, ParamDirection::Out},
                {Assign(scratch, create, At(2, 5)), Assign(low, full, At(3, 5)), Assign(t, load, At(4, 5)),
                 Assign(half, expands, At(5, 5)), Assign(copy, move, At(6, 5)), Assign(flat, reshape, At(7, 5)),
                 Eval(Op("tile.store", {low, Ints({0, 0}), y}, At(8, 5)), At(8, 5)),
                 Eval(Op("tile.store", {flat, Ints({0, 0}), flat_out}, At(9, 5)), At(9, 5))});
}

// def softmax(x, y):
//     t = pl.load(x, [0, 0], [16, 64])                   # at 0
//     tmp = pl.create_tile([16, 64], dtype=pl.FP32)      # at 4096
//     m = pl.row_max(t, tmp)                             # at 8192, [16, 1]
//     e = pl.exp(pl.row_expand_sub(t, m))                # d and e at 12288
//     s = pl.row_sum(e, tmp)                             # at 8256, [16, 1]
//     inv = pl.recip(s)                                  # at 8320, [16, 1]: recip is row-major only
//     r = pl.row_expand_mul(e, inv)                      # at 0
//     pl.store(r, [0, 0], y)
ir::FunctionPtr SoftmaxKernel() {
  auto x = TensorParam("x", {16, 64}, {});
  auto y = TensorParam("y", {16, 64}, {});
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, {});
  auto t = TileAt("t", load, 0);
  auto create = Op("tile.create", {Ints({16, 64})}, {}, {{"dtype", DataType::FP32}});
  auto tmp = TileAt("tmp", create, 4096);
  auto row_max = Op("tile.row_max", {t, tmp}, {});
  auto m = TileAt("m", row_max, 8192);
  auto sub = Op("tile.row_expand_sub", {t, m}, {});
  auto d = TileAt("d", sub, 12288);
  auto exp = Op("tile.exp", {d}, {});
  auto e = TileAt("e", exp, 12288);
  auto row_sum = Op("tile.row_sum", {e, tmp}, {});
  auto s = TileAt("s", row_sum, 8256);
  auto recip = Op("tile.recip", {s}, {});
  auto inv = TileAt("inv", recip, 8320);
  auto mul = Op("tile.row_expand_mul", {e, inv}, {});
  auto r = TileAt("r", mul, 0);
  return Kernel("softmax", {x, y}, {ParamDirection::In, ParamDirection::Out},
                {Assign(t, load, {}), Assign(tmp, create, {}), Assign(m, row_max, {}), Assign(d, sub, {}),
                 Assign(e, exp, {}), Assign(s, row_sum, {}), Assign(inv, recip, {}), Assign(r, mul, {}),
                 Eval(Op("tile.store", {r, Ints({0, 0}), y}, {}), {})});
}

// A tile with source locations, every constant kind, and ops that print nothing but their alloc_tile.
TEST(EmitModuleOps, CreateFullExpandsMoveReshape) {
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<16x64xf32>";
  const std::string flat = Vec(1, 1024), flat_pv = "!pto.partition_tensor_view<1x1024xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @fill(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c1024_index = arith.constant 1024 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c4096_i64 = arith.constant 4096 : i64\n"
      "    %c8192_i64 = arith.constant 8192 : i64\n"
      "    %c12288_i64 = arith.constant 12288 : i64\n"
      // -inf has no decimal spelling; MLIR reads a hex literal as the float's bits.
      "    %cst = arith.constant 0xFF800000 : f32\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %cst_1 = arith.constant 5.00000000000000000e-01 : f32\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:10)\n"
      "    %y_view = pto.make_tensor_view %arg1, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:13)\n"
      "    %flat_out_view = pto.make_tensor_view %arg2, shape = [%c1_index, %c1024_index], strides = [%c1024_index, "
      "%c1_index] {layout = #pto.layout<nd>} : " + tv + " loc(\"k.py\":1:16)\n"
      "    %scratch = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + kV +
      " loc(\"k.py\":2:15)\n"
      "    %low = pto.alloc_tile addr = %c4096_i64 valid_row = %c16_index valid_col = %c64_index : " + kV +
      " loc(\"k.py\":3:11)\n"
      "    %t = pto.alloc_tile addr = %c8192_i64 valid_row = %c16_index valid_col = %c64_index : " + kV +
      " loc(\"k.py\":4:9)\n"
      "    %half = pto.alloc_tile addr = %c12288_i64 valid_row = %c16_index valid_col = %c64_index : " + kV +
      " loc(\"k.py\":5:12)\n"
      "    %copy = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + kV +
      " loc(\"k.py\":6:12)\n"
      // The reshape is this alloc_tile: copy's bytes under the new shape.
      "    %flat = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c1024_index : " + flat +
      " loc(\"k.py\":7:12)\n"
      "    pto.texpands ins(%cst : f32) outs(%low : " + kV + ") loc(\"k.py\":3:11)\n"
      "    %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":4:9)\n"
      "    pto.tload ins(%x_pview : " + pv + ") outs(%t : " + kV + ") loc(\"k.py\":4:9)\n"
      "    pto.texpands ins(%cst_1 : f32) outs(%half : " + kV + ") loc(\"k.py\":5:12)\n"
      "    pto.tmov ins(%half : " + kV + ") outs(%copy : " + kV + ") loc(\"k.py\":6:12)\n"
      "    %y_pview = pto.partition_view %y_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + " loc(\"k.py\":8:5)\n"
      "    pto.tstore ins(%low : " + kV + ") outs(%y_pview : " + pv + ") loc(\"k.py\":8:5)\n"
      "    %flat_out_pview = pto.partition_view %flat_out_view, offsets = [%c0_index, %c0_index], sizes = [%c1_index, "
      "%c1024_index] : " + tv + " -> " + flat_pv + " loc(\"k.py\":9:5)\n"
      "    pto.tstore ins(%flat : " + flat + ") outs(%flat_out_pview : " + flat_pv + ") loc(\"k.py\":9:5)\n"
      "    return\n"
      "  }\n"
      "}\n";
  auto text = EmitModule(*FillKernel(), "a2a3");
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, expected);
}

// Reductions into column vectors, broadcasts back across rows, and a row-major op (recip) on a
// column vector, which reads and writes the [1, 16] row views of s and inv.
TEST(EmitModuleOps, SoftmaxRows) {
  const std::string col = Vec(16, 1), row = Vec(1, 16);
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<16x64xf32>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @softmax(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c4096_i64 = arith.constant 4096 : i64\n"
      "    %c8192_i64 = arith.constant 8192 : i64\n"
      "    %c12288_i64 = arith.constant 12288 : i64\n"
      "    %c8256_i64 = arith.constant 8256 : i64\n"
      "    %c8320_i64 = arith.constant 8320 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %x_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %y_view = pto.make_tensor_view %arg1, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %t = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + kV + "\n"
      "    %tmp = pto.alloc_tile addr = %c4096_i64 valid_row = %c16_index valid_col = %c64_index : " + kV + "\n"
      "    %m = pto.alloc_tile addr = %c8192_i64 valid_row = %c16_index valid_col = %c1_index : " + col + "\n"
      "    %d = pto.alloc_tile addr = %c12288_i64 valid_row = %c16_index valid_col = %c64_index : " + kV + "\n"
      "    %e = pto.alloc_tile addr = %c12288_i64 valid_row = %c16_index valid_col = %c64_index : " + kV + "\n"
      "    %s = pto.alloc_tile addr = %c8256_i64 valid_row = %c16_index valid_col = %c1_index : " + col + "\n"
      "    %s_row = pto.alloc_tile addr = %c8256_i64 valid_row = %c1_index valid_col = %c16_index : " + row + "\n"
      "    %inv = pto.alloc_tile addr = %c8320_i64 valid_row = %c16_index valid_col = %c1_index : " + col + "\n"
      "    %inv_row = pto.alloc_tile addr = %c8320_i64 valid_row = %c1_index valid_col = %c16_index : " + row + "\n"
      "    %r = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + kV + "\n"
      "    %x_pview = pto.partition_view %x_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + "\n"
      "    pto.tload ins(%x_pview : " + pv + ") outs(%t : " + kV + ")\n"
      "    pto.trowmax ins(%t, %tmp : " + kV + ", " + kV + ") outs(%m : " + col + ")\n"
      "    pto.trowexpandsub ins(%t, %m : " + kV + ", " + col + ") outs(%d : " + kV + ")\n"
      "    pto.texp ins(%d : " + kV + ") outs(%e : " + kV + ")\n"
      "    pto.trowsum ins(%e, %tmp : " + kV + ", " + kV + ") outs(%s : " + col + ")\n"
      "    pto.trecip ins(%s_row : " + row + ") outs(%inv_row : " + row + ")\n"
      "    pto.trowexpandmul ins(%e, %inv : " + kV + ", " + col + ") outs(%r : " + kV + ")\n"
      "    %y_pview = pto.partition_view %y_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + pv + "\n"
      "    pto.tstore ins(%r : " + kV + ") outs(%y_pview : " + pv + ")\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*SoftmaxKernel()), expected);
}

// Cube buffers are boxed (fractal) tiles: Mat and Left NZ, Right ZN, Acc NZ in 1024-byte boxes.
TEST(EmitModuleOps, Matmul) {
  const std::string a_mat = Buf("mat", "f16", 16, 32, "col_major", "row_major");
  const std::string b_mat = Buf("mat", "f16", 32, 64, "col_major", "row_major");
  const std::string left = Buf("left", "f16", 16, 32, "col_major", "row_major");
  const std::string right = Buf("right", "f16", 32, 64, "row_major", "col_major");
  const std::string acc = Buf("acc", "f32", 16, 64, "col_major", "row_major", 1024);
  const std::string tv = "!pto.tensor_view<?x?xf16>";
  const std::string a_pv = "!pto.partition_tensor_view<16x32xf16>", b_pv = "!pto.partition_tensor_view<32x64xf16>",
                    c_pv = "!pto.partition_tensor_view<16x64xf16>";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @matmul(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f16>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c32_index = arith.constant 32 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c1024_i64 = arith.constant 1024 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %a_view = pto.make_tensor_view %arg0, shape = [%c16_index, %c32_index], strides = [%c32_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %b_view = pto.make_tensor_view %arg1, shape = [%c32_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %c_view = pto.make_tensor_view %arg2, shape = [%c16_index, %c64_index], strides = [%c64_index, %c1_index] "
      "{layout = #pto.layout<nd>} : " + tv + "\n"
      "    %a_mat = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c32_index : " + a_mat + "\n"
      "    %b_mat = pto.alloc_tile addr = %c1024_i64 valid_row = %c32_index valid_col = %c64_index : " + b_mat + "\n"
      "    %a_left = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c32_index : " + left + "\n"
      "    %b_right = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = %c64_index : " + right + "\n"
      "    %acc = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + acc + "\n"
      "    %acc2 = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %c64_index : " + acc + "\n"
      "    %a_pview = pto.partition_view %a_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c32_index] : " +
      tv + " -> " + a_pv + "\n"
      "    pto.tload ins(%a_pview : " + a_pv + ") outs(%a_mat : " + a_mat + ")\n"
      "    %b_pview = pto.partition_view %b_view, offsets = [%c0_index, %c0_index], sizes = [%c32_index, %c64_index] : " +
      tv + " -> " + b_pv + "\n"
      "    pto.tload ins(%b_pview : " + b_pv + ") outs(%b_mat : " + b_mat + ")\n"
      "    pto.tmov ins(%a_mat : " + a_mat + ") outs(%a_left : " + left + ")\n"
      "    pto.tmov ins(%b_mat : " + b_mat + ") outs(%b_right : " + right + ")\n"
      "    pto.tmatmul ins(%a_left, %b_right : " + left + ", " + right + ") outs(%acc : " + acc + ")\n"
      // The accumulator operand is the result itself: acc2 is acc's buffer, updated in place.
      "    pto.tmatmul.acc ins(%acc2, %a_left, %b_right : " + acc + ", " + left + ", " + right + ") outs(%acc2 : " +
      acc + ")\n"
      "    %c_pview = pto.partition_view %c_view, offsets = [%c0_index, %c0_index], sizes = [%c16_index, %c64_index] : " +
      tv + " -> " + c_pv + "\n"
      "    pto.tstore ins(%acc2 : " + acc + ") outs(%c_pview : " + c_pv + ")\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*MatmulKernel()), expected);
}

// def moves():                                             an AIC kernel
//     acc = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)   # Acc at 0
//     mat = pl.move(acc, target_memory=pl.Mem.Mat)                              # Mat at 0
//     vec = pl.move(acc, target_memory=pl.Mem.Vec)                              # Vec at 0
//     bias = pl.move(mat, target_memory=pl.Mem.Bias)                            # Bias at 0
//     back = pl.move(vec, target_memory=pl.Mem.Mat)                             # Mat at 4096 (A5 only)
ir::FunctionPtr MovesKernel() {
  auto create = Op("tile.create", {Ints({16, 64})}, {}, {{"dtype", DataType::FP32}, {"target_memory", MemorySpace::Acc}});
  auto acc = TileAt("acc", create, 0);
  auto move = [](const ir::VarPtr& tile, MemorySpace to) { return Op("tile.move", {tile}, {}, {{"target_memory", to}}); };
  auto to_mat = move(acc, MemorySpace::Mat);
  auto mat = TileAt("mat", to_mat, 0);
  auto to_vec = move(acc, MemorySpace::Vec);
  auto vec = TileAt("vec", to_vec, 0);
  auto to_bias = move(mat, MemorySpace::Bias);
  auto bias = TileAt("bias", to_bias, 0);
  auto to_back = move(vec, MemorySpace::Mat);
  auto back = TileAt("back", to_back, 4096);
  return Kernel("moves", {}, {},
                {Assign(acc, create, {}), Assign(mat, to_mat, {}), Assign(vec, to_vec, {}),
                 Assign(bias, to_bias, {}), Assign(back, to_back, At(6, 5))},
                ir::FunctionType::AIC);
}

TEST(EmitModuleOps, MovesBetweenBuffers) {
  const std::string acc = Buf("acc", "f32", 16, 64, "col_major", "row_major", 1024);
  const std::string mat = Buf("mat", "f32", 16, 64, "col_major", "row_major");
  const std::string bias = Buf("bias", "f32", 16, 64, "row_major", "none_box");
  const std::string text = Emit(*MovesKernel(), "a5");
  EXPECT_EQ(LineStartingWith(text, "pto.tmov ins(%acc : " + acc + ") outs(%mat"),
            "pto.tmov ins(%acc : " + acc + ") outs(%mat : " + mat + ")");
  EXPECT_EQ(LineStartingWith(text, "pto.tmov ins(%acc : " + acc + ") outs(%vec"),
            "pto.tmov ins(%acc : " + acc + ") outs(%vec : " + kV + ")");
  EXPECT_EQ(LineStartingWith(text, "pto.tmov ins(%mat "),
            "pto.tmov ins(%mat : " + mat + ") outs(%bias : " + bias + ")");
  EXPECT_EQ(LineStartingWith(text, "pto.tmov ins(%vec "),
            "pto.tmov ins(%vec : " + kV + ") outs(%back : " + mat + ")");
  // ptoas's tmov has no UB -> L1 path on A2/A3.
  auto a2a3 = EmitModule(*MovesKernel(), "a2a3");
  ASSERT_FALSE(a2a3);
  EXPECT_EQ(a2a3.error(),
            "k.py:6:5: backend-ptoas cannot lower the tile.move of 'vec' from Vec to Mat in kernel 'moves': pto.tmov "
            "on a2a3 moves Mat -> Left/Right/Bias, Acc -> Mat/Vec and Vec -> Vec");
}

// The README's op table is the reference the unsupported-op error points to; it must stay complete.
// Comparisons carry their mode in ins(); the mask they give is a UINT8 tile of 32-byte rows.
// fmod/fmods are element-wise.
TEST(EmitModuleOps, CompareAndRemainder) {
  const std::string mask = Vec(16, 32, "ui8");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.cmp", {v.t, v.u}, {}, {{"cmp_type", int64_t{3}}}); },
                   "pto.tcmp"),
            "pto.tcmp ins(%t, %u {cmpMode = #pto<cmp le>} : " + kV + ", " + kV + ") outs(%r : " + mask + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.cmps", {v.t, Float(0.5)}, {}, {{"cmp_type", int64_t{5}}}); },
                   "pto.tcmps"),
            "pto.tcmps ins(%t, %cst {cmpMode = #pto<cmp ge>} : " + kV + ", f32) outs(%r : " + mask + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.fmod", {v.t, v.u}, {}); }, "pto.tfmod"),
            "pto.tfmod ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.fmods", {v.t, Float(2.5)}, {}); }, "pto.tfmods"),
            "pto.tfmods ins(%t, %cst : " + kV + ", f32) outs(%r : " + kV + ")");
}

// The bitwise, shift and remainder ops: tile operands as they are, the scratch tile of txor, trem,
// txors and trems last; the bitwise and shift instructions take their scalar as an i32 whatever the
// tile's dtype, trems at the tile's.
TEST(EmitModuleOps, BitwiseShiftAndRemainder) {
  const std::string h = Vec(16, 64, "i16");
  const std::pair<const char*, const char*> binary[] = {
      {"tile.and", "pto.tand"}, {"tile.or", "pto.tor"}, {"tile.shl", "pto.tshl"}, {"tile.shr", "pto.tshr"}};
  for (auto [op, pto] : binary) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto, DataType::INT16),
              std::string(pto) + " ins(%t, %u : " + h + ", " + h + ") outs(%r : " + h + ")");
  }
  for (auto [op, pto] : {std::pair{"tile.xor", "pto.txor"}, std::pair{"tile.rem", "pto.trem"}}) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto, DataType::INT16),
              std::string(pto) + " ins(%t, %u, %u : " + h + ", " + h + ", " + h + ") outs(%r : " + h + ")");
  }
  const std::pair<const char*, const char*> with_scalar[] = {
      {"tile.ands", "pto.tands"}, {"tile.ors", "pto.tors"}, {"tile.shls", "pto.tshls"}, {"tile.shrs", "pto.tshrs"}};
  for (auto [op, pto] : with_scalar) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, Int(3, DataType::INT16)}, {}); };
    EXPECT_EQ(OpLine(make, pto, DataType::INT16),
              std::string(pto) + " ins(%t, %c3_i32 : " + h + ", i32) outs(%r : " + h + ")");
  }
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.xors", {v.t, Int(-2), v.u}, {}); }, "pto.txors",
                   DataType::INT16),
            "pto.txors ins(%t, %cn2_i32, %u : " + h + ", i32, " + h + ") outs(%r : " + h + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.rems", {v.t, Int(5), v.u}, {}); }, "pto.trems",
                   DataType::INT16),
            "pto.trems ins(%t, %c5_i16, %u : " + h + ", i16, " + h + ") outs(%r : " + h + ")");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.rems", {v.t, Float(1.5), v.u}, {}); }, "pto.trems"),
            "pto.trems ins(%t, %cst, %u : " + kV + ", f32, " + kV + ") outs(%r : " + kV + ")");
}

// tsels takes mask, source, scratch and the scalar; an unsigned source's scalar is passed in the
// signed type of its width, its bits kept (0x8007 is -32761 as an i16, %cn32761_i16).
TEST(EmitModuleOps, SelectScalar) {
  const std::string h = Vec(16, 64, "i16"), tmp = Vec(1, 64, "i16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.sels", {v.u, v.t, v.col, Int(-7, DataType::INT16)}, {}); },
                   "pto.tsels", DataType::INT16),
            "pto.tsels ins(%u, %t, %col, %cn7_i16 : " + h + ", " + h + ", " + tmp + ", i16) outs(%r : " + h + ")");
  // An integer source's floating-point scalar holds an integer: it is passed as that integer.
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.sels", {v.u, v.t, v.col, Float(-3.0)}, {}); }, "pto.tsels",
                   DataType::INT16),
            "pto.tsels ins(%u, %t, %col, %cn3_i16 : " + h + ", " + h + ", " + tmp + ", i16) outs(%r : " + h + ")");
  const std::string u = Vec(16, 64, "ui16"), utmp = Vec(1, 64, "ui16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.sels", {v.u, v.t, v.col, Index(0x8007)}, {}); },
                   "pto.tsels", DataType::UINT16),
            "pto.tsels ins(%u, %t, %col, %cn32761_i16 : " + u + ", " + u + ", " + utmp + ", i16) outs(%r : " + u +
                ")");
  // a2a3's tsels has no 8-bit source.
  auto int8 = EmitModule(*OneOpKernel([](const Tiles& v) { return Op("tile.sels", {v.u, v.t, v.col, Int(1)}, {}); },
                                      DataType::INT8),
                         "a2a3", {.source_locations = false});
  ASSERT_FALSE(int8);
  EXPECT_EQ(int8.error(),
            "<unknown>: backend-ptoas cannot lower 'tile.sels' in kernel 'k' on a2a3: pto.tsels there takes 16- and "
            "32-bit integers, FP16 and FP32, not INT8; a5 takes INT8");
}

TEST(EmitModuleOps, PreluAndPartialCombines) {
  const std::string tmp = Vec(1, 64);
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.prelu", {v.t, v.u, v.col}, {}); }, "pto.tprelu"),
            "pto.tprelu ins(%t, %u, %col : " + kV + ", " + kV + ", " + tmp + ") outs(%r : " + kV + ")");
  const std::pair<const char*, const char*> ops[] = {{"tile.part_add", "pto.tpartadd"},
                                                     {"tile.part_mul", "pto.tpartmul"},
                                                     {"tile.part_max", "pto.tpartmax"},
                                                     {"tile.part_min", "pto.tpartmin"}};
  for (auto [op, pto] : ops) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u}, {}); };
    EXPECT_EQ(OpLine(make, pto), std::string(pto) + " ins(%t, %u : " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  }
}

TEST(EmitModuleOps, ThreeOperandSums) {
  const std::pair<const char*, const char*> tiles[] = {{"tile.addc", "pto.taddc"}, {"tile.subc", "pto.tsubc"}};
  for (auto [op, pto] : tiles) {
    auto make = [op](const Tiles& v) { return Op(op, {v.t, v.u, v.t}, {}); };
    EXPECT_EQ(OpLine(make, pto),
              std::string(pto) + " ins(%t, %u, %t : " + kV + ", " + kV + ", " + kV + ") outs(%r : " + kV + ")");
  }
  // The scalar sits between the two tiles, at their element type.
  auto m = ScalarParam("m", DataType::FP32, {});
  EXPECT_EQ(OpLine([&](const Tiles& v) { return Op("tile.subsc", {v.t, m, v.u}, {}); }, "pto.tsubsc", DataType::FP32,
                   {m}),
            "pto.tsubsc ins(%t, %arg3, %u : " + kV + ", f32, " + kV + ") outs(%r : " + kV + ")");
  const std::string h = Vec(16, 64, "f16");
  EXPECT_EQ(OpLine([](const Tiles& v) { return Op("tile.addsc", {v.t, Int(2), v.u}, {}); }, "pto.taddsc",
                   DataType::FP16),
            "pto.taddsc ins(%t, %cst, %u : " + h + ", f16, " + h + ") outs(%r : " + h + ")");
}

// A reinterpreted view prints no op: its alloc_tile holds the source's bytes as the view's elements.
TEST(EmitModuleOps, ReinterpretViewIsAnAllocAtTheSourcesAddress) {
  auto x = TensorParam("x", {16, 64}, {});
  auto y = TensorParam("y", {16, 128}, {}, DataType::INT16);
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, {});
  auto t = TileAt("t", load, 4096);
  auto view = Op("tile.reinterpret_view", {t}, {}, {{"dtype", DataType::INT16}});
  auto v = TileAt("v", view, 4096);
  auto text = Emit(*Kernel("k", {x, y}, {ParamDirection::In, ParamDirection::Out},
                           {Assign(t, load, {}), Assign(v, view, {}),
                            Eval(Op("tile.store", {v, Ints({0, 0}), y}, {}), {})}));
  const std::string i16 = Vec(16, 128, "i16");
  EXPECT_EQ(LineStartingWith(text, "%v "),
            "%v = pto.alloc_tile addr = %c4096_i64 valid_row = %c16_index valid_col = %c128_index : " + i16);
  EXPECT_EQ(LineStartingWith(text, "pto.tstore ").substr(0, 27 + i16.size()), "pto.tstore ins(%v : " + i16 + ") outs(");
}

// ptoas reads ttri's side only from the generic form, so that is how the op is written.
TEST(EmitModuleOps, TriangleIsWrittenInTheGenericForm) {
  auto text = Emit(*OneOpKernel([](const Tiles&) {
    return Op("tile.tri", {Int(2), Ints({16, 64})}, {}, {{"dtype", DataType::FP32}, {"upper", true}});
  }));
  EXPECT_EQ(LineStartingWith(text, "\"pto.ttri\""),
            "\"pto.ttri\"(%c2_i32, %r) {upperOrLower = 1 : i32} : (i32, " + kV + ") -> ()");
  auto bf16 = EmitModule(*OneOpKernel([](const Tiles&) {
    return Op("tile.tri", {Int(0), Ints({16, 64})}, {}, {{"dtype", DataType::BF16}});
  }),
                         "a2a3", {.source_locations = false});
  ASSERT_FALSE(bf16);
  EXPECT_EQ(bf16.error(),
            "<unknown>: backend-ptoas cannot lower 'tile.tri' in kernel 'k' on a2a3: pto.ttri there takes 16- and "
            "32-bit integers, FP16 and FP32, not BF16; a5 takes BF16");
}

TEST(EmitModuleOps, FillPadExpand) {
  auto expand = Emit(*OneOpKernel([](const Tiles& v) {
    return Op("tile.fillpad_expand", {v.t, Ints({32, 64})}, {}, {{"pad_value", std::string("max")}});
  }));
  // The larger result gives the shape; its tile_buf carries the pad value (2: max).
  EXPECT_EQ(LineStartingWith(expand, "pto.tfillpad_expand "),
            "pto.tfillpad_expand ins(%t : " + kV +
                ") outs(%r : !pto.tile_buf<loc=vec, dtype=f32, rows=32, cols=64, v_row=?, v_col=?, "
                "blayout=row_major, slayout=none_box, fractal=512, pad=2>)");
}

TEST(EmitModuleOps, GatherbReadsItsBlocksAsTheOutputDtype) {
  // 64 byte offsets into t pick 64 blocks of 32 bytes: one row of 1024 FP16 elements.
  auto line = OpLine(
      [](const Tiles& v) { return Op("tile.gatherb", {v.t, v.col}, {}, {{"output_dtype", DataType::FP16}}); },
      "pto.tgatherb", DataType::UINT32);
  EXPECT_EQ(line, "pto.tgatherb ins(%t, %col : " + Vec(16, 64, "ui32") + ", " + Vec(1, 64, "ui32") + ") outs(%r : " +
                      Vec(1, 1024, "f16") + ")");
}

TEST(EmitModuleOps, ReadmeListsEveryLoweredOp) {
  std::ifstream file(PYPTO_PTOAS_README);
  ASSERT_TRUE(file) << PYPTO_PTOAS_README;
  const std::string readme((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const auto& lowering : Lowerings()) {
    EXPECT_NE(readme.find(fmt::format("| `{}` | `{}` |", lowering.op, lowering.pto)), std::string::npos)
        << lowering.op;
  }
}

// def k(x, y):                                      # x, y: [16, 64] FP32
//     t = pl.load(x, [0, 0], [16, 64])
//     pl.store(t, [0, 0], y, atomic="add")
// An atomic-add store is tstore with PTOAS's atomicType attribute after outs(...).
TEST(EmitModuleOps, AtomicAddStoreCarriesItsAtomicType) {
  auto x = TensorParam("x", {16, 64}, {});
  auto y = TensorParam("y", {16, 64}, {});
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, {});
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Ints({0, 0}), y}, {}, {{"atomic", std::string("add")}});
  auto kernel = Kernel("k", {x, y}, {ParamDirection::In, ParamDirection::InOut}, {Assign(t, load, {}), Eval(store, {})});
  EXPECT_EQ(LineStartingWith(Emit(*kernel), "pto.tstore"),
            "pto.tstore ins(%t : " + Vec(16, 64) +
                ") outs(%y_pview : !pto.partition_tensor_view<16x64xf32>) {atomicType = #pto<atomic_type atomic_add>}");
}

// def k(x, y):                                      # x: [16, 64], y: [64, 8] FP32
//     t = pl.load(x, [0, 0], [16, 64])
//     pl.store(t, [i, 0], y, shapes=[1, 8])         # the tile's top-left [1, 8]
// tstore writes its source's valid region into the window: the corner is a second alloc_tile at
// the tile's address, valid [1, 8], stored into a [1, 8] window.
TEST(EmitModuleOps, StoreOfATileCornerGoesThroughAValidRegionOfThatSize) {
  auto x = TensorParam("x", {16, 64}, {});
  auto y = TensorParam("y", {64, 8}, {});
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 64})}, {});
  auto t = TileAt("t", load, 4096);
  auto store = Op("tile.store", {t, Ints({3, 0}), y, Ints({1, 8})}, {});
  auto kernel = Kernel("k", {x, y}, {ParamDirection::In, ParamDirection::InOut}, {Assign(t, load, {}), Eval(store, {})});
  const std::string text = Emit(*kernel);
  EXPECT_NE(text.find("    %t_corner = pto.alloc_tile addr = %c4096_i64 valid_row = %c1_index valid_col = %c8_index : " +
                      Vec(16, 64) + "\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(LineStartingWith(text, "%y_pview"),
            "%y_pview = pto.partition_view %y_view, offsets = [%c3_index, %c0_index], sizes = [%c1_index, %c8_index] : "
            "!pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x8xf32>");
  EXPECT_EQ(LineStartingWith(text, "pto.tstore"),
            "pto.tstore ins(%t_corner : " + Vec(16, 64) + ") outs(%y_pview : !pto.partition_tensor_view<1x8xf32>)");
}

// def k(x, y):                                      # x: [16, 8], y: [16, 1] FP32
//     t = pl.load(x, [0, 0], [1, 8])
//     pl.store(t, [5, 0], y, shapes=[1, 1])         # the row's first element
// y is a column-major (DN) view; pto-isa's TSTORE takes a one-row tile into it (its "special case
// of one row"), so the [1, 8] tile's corner, valid [1, 1], stores into a [1, 1] window of y.
TEST(EmitModuleOps, OneRowTileStoresItsCornerIntoAColumnVectorTensor) {
  auto x = TensorParam("x", {16, 8}, {});
  auto y = TensorParam("y", {16, 1}, {});
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({1, 8})}, {});
  auto t = TileAt("t", load, 0);
  auto store = Op("tile.store", {t, Ints({5, 0}), y, Ints({1, 1})}, {});
  auto kernel = Kernel("k", {x, y}, {ParamDirection::In, ParamDirection::InOut}, {Assign(t, load, {}), Eval(store, {})});
  const std::string text = Emit(*kernel);
  EXPECT_EQ(LineStartingWith(text, "%y_view"),
            "%y_view = pto.make_tensor_view %arg1, shape = [%c16_index, %c1_index], strides = [%c1_index, %c16_index] "
            "{layout = #pto.layout<dn>} : !pto.tensor_view<?x?xf32>");
  EXPECT_NE(text.find("    %t_corner = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c1_index : " +
                      Vec(1, 8) + "\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(LineStartingWith(text, "pto.tstore"),
            "pto.tstore ins(%t_corner : " + Vec(1, 8) + ") outs(%y_pview : !pto.partition_tensor_view<1x1xf32>)");
}

}  // namespace
}  // namespace pypto::backend_ptoas
