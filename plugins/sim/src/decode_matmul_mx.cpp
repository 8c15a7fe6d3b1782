// Decoding the MX block-scale matmuls (tile.matmul_mx, _acc, _bias): the four operands in their
// cube buffers, and the accumulator or bias the product starts from. Only A5 has the scale buffers.
#include "kernel_decoder.h"

#include <fmt/format.h>

namespace pypto::sim::decode {

pypto::expected<void, std::string> Decoder::DecodeMatmulMx(const std::string& op, const TileValue& out,
                                                           const ir::Call& call, Instr& instr) {
  if (soc_.capacity(ir::MemorySpace::LeftScale) == 0)
    return Fail(fmt::format("{} needs the MX scale buffers of A5; {} ({}) has none: run it on a5 or a5sim", op,
                            soc_.name, soc_.arch));
  ComputeInfo& info = instr.compute;
  const size_t first = info.op == kMatmulAcc ? 1 : 0;
  const char* roles[] = {"left operand", "left scale", "right operand", "right scale"};
  TileRef refs[4];
  int64_t shapes[4][2] = {};
  for (size_t i = 0; i < 4; ++i) {
    auto tile = Tile(call.args()[first + i], roles[i]);
    if (!tile) return Error(tile.error());
    refs[i] = tile->ref;
    shapes[i][0] = tile->rows();
    shapes[i][1] = tile->cols();
  }
  instr.src0 = refs[0];
  instr.src2 = refs[1];
  instr.src1 = refs[2];
  instr.src3 = refs[3];
  info.rows = shapes[0][0];
  info.inner = shapes[0][1];
  info.cols = shapes[2][1];
  info.in_dtype = ir::DataType::FP8E4M3FN;
  info.accumulate = info.op != kMatmulPlain;
  if (info.op == kMatmulPlain) return {};
  // The product adds to the accumulator (in place, or a copy of it) or to the bias row in every row.
  auto start = Tile(call.args()[info.op == kMatmulAcc ? 0 : 4], info.op == kMatmulAcc ? "accumulator" : "bias");
  if (!start) return Error(start.error());
  if (info.op == kMatmulAcc && start->ref.byte_offset == out.ref.byte_offset && start->ref.space == out.ref.space)
    return {};
  Instr init;
  init.op = Opcode::Compute;
  init.dst = out.ref;
  init.num_elements = out.num_elements;
  if (info.op == kMatmulAcc) {
    init.kind = ElemKind::Raw;
    init.compute.kind = ComputeKind::Copy;
    init.src0 = start->ref;
  } else {
    init.kind = ElemKind::F32;
    init.elem_bytes = 4;
    init.compute.kind = ComputeKind::ColBroadcast;  // dst[r][c] = bias[c]
    init.compute.rows = out.rows();
    init.compute.cols = out.cols();
    init.src1 = start->ref;
  }
  Emit(init);
  return {};
}

}  // namespace pypto::sim::decode
