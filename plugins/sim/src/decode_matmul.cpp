// Decoding matmul and gemv (plain, accumulating, with bias): supported type pairs, batches and the
// valid part of K. Separate because the cube unit's products have rules of their own.
#include "kernel_decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pypto/ir/op_registry.h"

namespace pypto::sim::decode {

// The cube unit's products: floating-point inputs accumulate in FP32, INT8 inputs in INT32.
bool Decoder::MatmulSupported(ir::DataType lhs, ir::DataType rhs, ir::DataType acc) {
  if (lhs != rhs) return false;
  if (lhs == ir::DataType::INT8) return acc == ir::DataType::INT32;
  return acc == ir::DataType::FP32 &&
         (lhs == ir::DataType::FP32 || lhs == ir::DataType::FP16 || lhs == ir::DataType::BF16);
}

// A matmul of batches of matrices: the result holds info.batch of them; an operand holds as many
// (its step is one matrix) or one that serves every batch (step 0). Batches broadcast in any
// other way ([2, 1] against [1, 3]) are refused.
pypto::expected<void, std::string> Decoder::DecodeMatmulBatch(const std::string& op, const TileValue& lhs,
                                                              const TileValue& rhs, const TileValue& out,
                                                              ComputeInfo& info) {
  const auto matrices = [](const TileValue& tile) {
    return tile.num_elements / (tile.shape[tile.shape.size() - 2] * tile.shape.back());
  };
  info.batch = matrices(out);
  const int64_t lhs_batch = matrices(lhs), rhs_batch = matrices(rhs);
  if ((lhs_batch != 1 && lhs_batch != info.batch) || (rhs_batch != 1 && rhs_batch != info.batch))
    return Fail(fmt::format("{} broadcasts the batches of [{}] and [{}] in a way the simulator does not support yet "
                            "(each operand must hold every batch of the result, or one matrix)",
                            op, fmt::join(lhs.shape, ", "), fmt::join(rhs.shape, ", ")));
  if (info.batch > 1) {
    info.src0_step = lhs_batch == 1 ? 0 : info.rows * info.inner;
    info.src1_step = rhs_batch == 1 ? 0 : info.inner * info.cols;
  }
  return {};
}

// The part of K the product sums: the lhs's valid extent along its contraction dimension.
pypto::expected<Operand, std::string> Decoder::ValidInner(const ir::ExprPtr& lhs, bool a_trans, int64_t inner) {
  const auto* tile = lhs->type()->As<ir::TileType>();
  if (!tile->has_partial_valid_shape()) return Operand::Imm(inner);
  const auto& valid = tile->valid_shape();
  return Scalar(valid[valid.size() - (a_trans ? 2 : 1)]);
}

pypto::expected<void, std::string> Decoder::DecodeMatmul(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const bool acc = info.op == kMatmulAcc;
  const bool bias = info.op == kMatmulBias;
  const size_t first = acc ? 1 : 0;
  auto lhs = Tile(call.args()[first], "left operand");
  if (!lhs) return Error(lhs.error());
  auto rhs = Tile(call.args()[first + 1], "right operand");
  if (!rhs) return Error(rhs.error());
  if (!MatmulSupported(lhs->dtype, rhs->dtype, out.dtype)) {
    return Fail(fmt::format("{} of {} by {} tiles into {} is not supported by the simulator (FP32, FP16 or BF16 "
                            "inputs into an FP32 accumulator, INT8 inputs into an INT32 one)",
                            op, ir::DataTypeName(lhs->dtype), ir::DataTypeName(rhs->dtype),
                            ir::DataTypeName(out.dtype)));
  }
  if (lhs->shape.size() < 2 || rhs->shape.size() < 2) return Fail(fmt::format("{} multiplies 2-D tiles", op));
  // Each operand is a batch of matrices of its last two dimensions (one matrix when the others are 1).
  info.a_trans = ir::FindAttr<bool>(call.kwargs(), "a_trans").value_or(false);
  info.b_trans = ir::FindAttr<bool>(call.kwargs(), "b_trans").value_or(false);
  const int64_t lhs_rows = lhs->shape[lhs->shape.size() - 2], rhs_rows = rhs->shape[rhs->shape.size() - 2];
  info.rows = info.a_trans ? lhs->cols() : lhs_rows;
  info.inner = info.a_trans ? lhs_rows : lhs->cols();
  info.cols = info.b_trans ? rhs_rows : rhs->cols();
  info.in_dtype = lhs->dtype;
  info.accumulate = acc;
  if (auto ok = DecodeMatmulBatch(op, *lhs, *rhs, out, info); !ok) return ok;
  if (out.ref.row_pitch > 0 && (info.batch > 1 || bias))
    return Fail(fmt::format("{} into a view of a window whose rows are strided in its tile runs on one matrix "
                            "without a bias in the simulator", op));
  auto valid_inner = ValidInner(call.args()[first], info.a_trans, info.inner);
  if (!valid_inner) return Error(valid_inner.error());
  info.valid_inner = *valid_inner;
  instr.src0 = lhs->ref;
  instr.src1 = rhs->ref;
  if (bias) {
    auto row = Tile(call.args()[2], "bias");
    if (!row) return Error(row.error());
    if (row->dtype != out.dtype || row->num_elements != info.cols)
      return Fail(fmt::format("the bias of {} must be one {} row of {} elements", op, ir::DataTypeName(out.dtype),
                              info.cols));
    instr.src2 = row->ref;
  }
  if (acc && call.args().size() > 3) {
    auto cond = Scalar(call.args()[3]);
    if (!cond) return Error(cond.error());
    info.init_cond = *cond;
  }
  if (acc) {
    auto accumulator = Tile(call.args()[0], "accumulator");
    if (!accumulator) return Error(accumulator.error());
    // The allocator gives the result the accumulator's storage; if it did not, start from a copy.
    if (accumulator->ref.byte_offset != out.ref.byte_offset || accumulator->ref.space != out.ref.space) {
      Instr copy;
      copy.op = Opcode::Compute;
      copy.kind = ElemKind::Raw;
      copy.compute.kind = ComputeKind::Copy;
      copy.dst = out.ref;
      copy.src0 = accumulator->ref;
      copy.num_elements = out.num_elements;
      Emit(copy);
    }
  }
  return {};
}

}  // namespace pypto::sim::decode
