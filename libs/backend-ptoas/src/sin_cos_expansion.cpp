// tile.sin / tile.cos of an FP32 tile. PTO has no sine or cosine instruction; upstream pypto expands
// both into tile arithmetic before codegen (hw-native-sys/pypto e2d0f78ae, LowerCompositeOps,
// src/ir/transforms/lower_composite_ops_pass.cpp, after CANN's tileop recipe). This backend writes
// the same sequence of pto ops, step for step and with the same FP32 constants, so a device computes
// what upstream's does; the IR keeps the one op, so the simulators' numbers are their own.
//
//   1. k = round(x / pi) (sin) or rint(x / pi + 1/2) (cos), through an INT32 tcvt, and
//      t = x - k * pi with pi split in four (Cody-Waite; cos adds pi/2 in two parts);
//   2. sign = floor(k / 2) * 4 - 2k + 1, that is (-1)^k;
//   3. p = 1 + t^2 (R3 + t^2 (R2 + t^2 (R1 + t^2 R0))), sin(t) / t on [-pi/2, pi/2];
//   4. result = sign * (t * p).
//
// The steps need four FP32 tiles of x's shape besides x and the result, which the IR has no variables
// for: they are in the Vec scratch (Planner::NeedScratch), one after another, each with x's valid
// extents; two of them are also typed INT32 for the tcvt to integers. The result is written last and
// only from scratch, so it may share x's buffer.
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {
namespace {

// upstream's constants, single-precision literals.
constexpr float kPiInv = 0.31830988732818603515625f;
constexpr float kPiV2 = 3.140625f;
constexpr float kPiC1 = 0.0009670257568359375f;
constexpr float kPiC2 = 6.2771141529083251953125e-7f;
constexpr float kPiC3 = 1.21644916362129151821e-10f;
constexpr float kPiC4 = -1.0290623200529979163e-13f;
constexpr float kPiHalfHead = 1.57079637050628662109375f;
constexpr float kPiHalfTail = -4.371139000189375e-8f;
constexpr float kR0 = 2.604926501e-6f;
constexpr float kR1 = -1.980894471e-4f;
constexpr float kR2 = 8.333049340e-3f;
constexpr float kR3 = -1.666665792e-1f;

}  // namespace

void KernelEmitter::LowerSinCos(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const bool cos = call.target_name() == "tile.cos";
  const TypedValue x = TileOperand(*call.args()[0]->As<ir::Var>(), false);
  const auto& x_type = *call.args()[0]->type()->As<ir::TileType>();
  const TileExtent extent = TileRowsCols(x_type);
  const int64_t bytes = extent.rows * extent.cols * 4;
  const auto [valid_rows, valid_cols] = ValidOperands(x_type, span);
  auto scratch = [&](int slot, std::string_view element, const std::string& name) {
    const TypedValue tile{names_.Named(name), TileBufType(ir::MemorySpace::Vec, element, extent)};
    const TypedValue addr{names_.Constant(plan_.vec_scratch_offset + slot * bytes, "i64"), "i64"};
    Add(body_, AllocTile(tile, addr, valid_rows, valid_cols), span);
    return tile;
  };
  const std::string stem = result.name_hint() + (cos ? "_cos" : "_sin");
  const TypedValue t = scratch(0, "f32", stem + "_t"), a = scratch(1, "f32", stem + "_a");
  const TypedValue k = scratch(2, "f32", stem + "_k"), p = scratch(3, "f32", stem + "_p");
  const TypedValue a_int = scratch(1, "i32", stem + "_a_i32"), p_int = scratch(3, "i32", stem + "_p_i32");
  auto constant = [&](float value) {
    return ScalarOperand(std::make_shared<ir::ConstFloat>(static_cast<double>(value), ir::DataType::FP32),
                         ir::DataType::FP32, span);
  };
  auto scalar_op = [&](const char* op, const TypedValue& src, float value, const TypedValue& dst) {
    Add(body_, DpsOp(op, {src, constant(value)}, dst), span);
  };
  auto tiles_op = [&](const char* op, const TypedValue& lhs, const TypedValue& rhs, const TypedValue& dst) {
    Add(body_, DpsOp(op, {lhs, rhs}, dst), span);
  };
  auto convert = [&](const TypedValue& src, const char* mode, const TypedValue& dst) {
    PtoOp op = DpsOp("pto.tcvt", {src}, dst);
    op.attrs = {{"rmode", fmt::format("#pto<round_mode {}>", mode)}};
    op.attr_placement = AttrPlacement::InIns;
    Add(body_, op, span);
  };
  // 1. k and t = x - k * pi.
  scalar_op("pto.tmuls", x, kPiInv, t);
  if (cos) scalar_op("pto.tadds", t, 0.5f, t);
  convert(t, cos ? "RINT" : "ROUND", a_int);
  convert(a_int, "NONE", k);
  scalar_op("pto.tmuls", k, kPiV2, a);
  tiles_op("pto.tsub", x, a, t);
  scalar_op("pto.tmuls", k, kPiC1, a);
  tiles_op("pto.tsub", t, a, t);
  if (cos) scalar_op("pto.tadds", t, kPiHalfHead, t);
  for (float part : {kPiC2, kPiC3, kPiC4}) {
    scalar_op("pto.tmuls", k, part, a);
    tiles_op("pto.tsub", t, a, t);
  }
  if (cos) scalar_op("pto.tadds", t, kPiHalfTail, t);
  // 2. sign = floor(k / 2) * 4 + k * -2 + 1, in a.
  scalar_op("pto.tmuls", k, 0.5f, a);
  convert(a, "FLOOR", p_int);
  convert(p_int, "NONE", a);
  scalar_op("pto.tmuls", a, 4.0f, a);
  scalar_op("pto.tmuls", k, -2.0f, p);
  tiles_op("pto.tadd", a, p, a);
  scalar_op("pto.tadds", a, 1.0f, a);
  // 3. p(t^2) by Horner, t^2 in k.
  tiles_op("pto.tmul", t, t, k);
  scalar_op("pto.tmuls", k, kR0, p);
  for (float coefficient : {kR1, kR2, kR3}) {
    scalar_op("pto.tadds", p, coefficient, p);
    tiles_op("pto.tmul", p, k, p);
  }
  scalar_op("pto.tadds", p, 1.0f, p);
  // 4. sign * (t * p).
  tiles_op("pto.tmul", t, p, p);
  tiles_op("pto.tmul", a, p, TileOperand(result, false));
}

}  // namespace pypto::backend_ptoas
