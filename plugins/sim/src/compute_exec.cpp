#include "compute_exec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_failure.h"
#include "kernels/arg_reduce.h"
#include "kernels/block_gather.h"
#include "kernels/compare.h"
#include "kernels/index_moves.h"
#include "kernels/integer_ops.h"
#include "kernels/mx_formats.h"
#include "kernels/random.h"
#include "kernels/select.h"
#include "kernels/sort.h"
#include "kernels/valid_region.h"
#include "pad_value.h"
#include "pypto/ir/mask_pattern.h"
#include "tile_ops.h"

namespace pypto::sim {
namespace {

using Result = pypto::expected<void, rt::FatalError>;

double ScalarValue(const ScalarOperand& scalar, const int64_t* regs) {
  switch (scalar.source) {
    case ScalarOperand::Source::Imm: return scalar.imm;
    case ScalarOperand::Source::IntReg: return static_cast<double>(regs[scalar.reg]);
    case ScalarOperand::Source::Fp32BitsReg:
      return std::bit_cast<float>(static_cast<uint32_t>(static_cast<uint64_t>(regs[scalar.reg])));
  }
  return 0;
}

ElemType ElemTypeOf(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP16: return ElemType::F16;
    case ir::DataType::BF16: return ElemType::BF16;
    case ir::DataType::INT32: return ElemType::I32;
    case ir::DataType::INT16: return ElemType::I16;
    case ir::DataType::INT8: return ElemType::I8;
    case ir::DataType::UINT8: return ElemType::U8;
    default: return ElemType::F32;
  }
}

// The typed views of an instruction's operands in this core's buffers.
struct Operands {
  std::byte* dst = nullptr;
  const std::byte* src0 = nullptr;
  const std::byte* src1 = nullptr;
  float* fdst() const { return reinterpret_cast<float*>(dst); }
  const float* fsrc0() const { return reinterpret_cast<const float*>(src0); }
  const float* fsrc1() const { return reinterpret_cast<const float*>(src1); }
  int32_t* idst() const { return reinterpret_cast<int32_t*>(dst); }
  const int32_t* isrc0() const { return reinterpret_cast<const int32_t*>(src0); }
  const int32_t* isrc1() const { return reinterpret_cast<const int32_t*>(src1); }
};

// row_expand_add's packed carrier as a full operand: each row's block of `lanes` values repeated
// across the row's `cols` elements.
template <typename T>
std::vector<T> RepeatRowBlocks(const T* blocks, size_t rows, size_t cols, size_t lanes) {
  std::vector<T> full(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) full[r * cols + c] = blocks[r * lanes + c % lanes];
  return full;
}

Result RunF32(const Instr& instr, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = instr.compute;
  const auto n = static_cast<size_t>(instr.num_elements);
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  switch (c.kind) {
    case ComputeKind::Binary: BinaryF32(static_cast<BinaryOp>(c.op), o.fdst(), o.fsrc0(), o.fsrc1(), n); break;
    case ComputeKind::BinaryScalar:
      BinaryScalarF32(static_cast<BinaryOp>(c.op), o.fdst(), o.fsrc0(), static_cast<float>(ScalarValue(c.scalar, regs)),
                      n);
      break;
    case ComputeKind::Unary: UnaryF32(static_cast<UnaryOp>(c.op), o.fdst(), o.fsrc0(), n); break;
    case ComputeKind::LeakyRelu:
      LeakyReluF32(o.fdst(), o.fsrc0(), static_cast<float>(ScalarValue(c.scalar, regs)), n);
      break;
    case ComputeKind::Prelu: PreluF32(o.fdst(), o.fsrc0(), o.fsrc1(), n); break;
    case ComputeKind::RowReduce: RowReduceF32(static_cast<ReduceOp>(c.op), o.fdst(), o.fsrc0(), rows, cols); break;
    case ComputeKind::ColReduce: ColReduceF32(static_cast<ReduceOp>(c.op), o.fdst(), o.fsrc0(), rows, cols); break;
    case ComputeKind::RowExpand:
      if (c.vec_lanes > 1) {
        const auto full = RepeatRowBlocks(o.fsrc1(), rows, cols, static_cast<size_t>(c.vec_lanes));
        BinaryF32(static_cast<BinaryOp>(c.op), o.fdst(), o.fsrc0(), full.data(), n);
        break;
      }
      RowExpandF32(static_cast<BinaryOp>(c.op), o.fdst(), o.fsrc0(), o.fsrc1(), rows, cols);
      break;
    case ComputeKind::ColExpand:
      ColExpandF32(static_cast<BinaryOp>(c.op), o.fdst(), o.fsrc0(), o.fsrc1(), rows, cols);
      break;
    case ComputeKind::RowExpDif: RowExpandExpDifF32(o.fdst(), o.fsrc0(), o.fsrc1(), rows, cols); break;
    case ComputeKind::ColExpDif: ColExpandExpDifF32(o.fdst(), o.fsrc0(), o.fsrc1(), rows, cols); break;
    case ComputeKind::RowBroadcast: RowBroadcastF32(o.fdst(), o.fsrc1(), rows, cols); break;
    case ComputeKind::ColBroadcast: ColBroadcastF32(o.fdst(), o.fsrc1(), rows, cols); break;
    case ComputeKind::Fill: FillF32(o.fdst(), static_cast<float>(ScalarValue(c.scalar, regs)), n); break;
    default: break;
  }
  return {};
}

// INT32 tiles: false when the kernels refuse (division by zero, an op without an integer form).
bool RunI32(const Instr& instr, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = instr.compute;
  const auto n = static_cast<size_t>(instr.num_elements);
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  switch (c.kind) {
    case ComputeKind::Binary: return BinaryI32(static_cast<BinaryOp>(c.op), o.idst(), o.isrc0(), o.isrc1(), n);
    case ComputeKind::BinaryScalar:
      return BinaryScalarI32(static_cast<BinaryOp>(c.op), o.idst(), o.isrc0(),
                             static_cast<int32_t>(ScalarValue(c.scalar, regs)), n);
    case ComputeKind::Unary: return UnaryI32(static_cast<UnaryOp>(c.op), o.idst(), o.isrc0(), n);
    case ComputeKind::RowReduce: return RowReduceI32(static_cast<ReduceOp>(c.op), o.idst(), o.isrc0(), rows, cols);
    case ComputeKind::ColReduce: return ColReduceI32(static_cast<ReduceOp>(c.op), o.idst(), o.isrc0(), rows, cols);
    case ComputeKind::RowExpand:
      if (c.vec_lanes > 1) {
        const auto full = RepeatRowBlocks(o.isrc1(), rows, cols, static_cast<size_t>(c.vec_lanes));
        return BinaryI32(static_cast<BinaryOp>(c.op), o.idst(), o.isrc0(), full.data(), n);
      }
      return RowExpandI32(static_cast<BinaryOp>(c.op), o.idst(), o.isrc0(), o.isrc1(), rows, cols);
    case ComputeKind::ColExpand:
      return ColExpandI32(static_cast<BinaryOp>(c.op), o.idst(), o.isrc0(), o.isrc1(), rows, cols);
    case ComputeKind::RowBroadcast: RowBroadcastI32(o.idst(), o.isrc1(), rows, cols); return true;
    case ComputeKind::ColBroadcast: ColBroadcastI32(o.idst(), o.isrc1(), rows, cols); return true;
    case ComputeKind::Fill: FillI32(o.idst(), static_cast<int32_t>(ScalarValue(c.scalar, regs)), n); return true;
    default: return false;
  }
}

int64_t OperandValue(const Operand& operand, const int64_t* regs) {
  return operand.is_reg() ? regs[operand.reg] : operand.imm;
}

// One matrix product of a (batched) Matmul: dst (+)= src0 @ src1 over the first `k` of `inner`.
void MatmulOne(const ComputeInfo& c, std::byte* dst, const std::byte* src0, const std::byte* src1, size_t k,
               bool accumulate) {
  const auto m = static_cast<size_t>(c.rows), n = static_cast<size_t>(c.cols), inner = static_cast<size_t>(c.inner);
  MatmulLayout layout{.a_trans = c.a_trans, .b_trans = c.b_trans};
  if (k != inner) {  // a narrowed contraction reads the first k elements of rows stored `inner` long
    layout.lda = c.a_trans ? m : inner;
    layout.ldb = c.b_trans ? inner : n;
  }
  auto* fdst = reinterpret_cast<float*>(dst);
  const auto* h0 = reinterpret_cast<const uint16_t*>(src0);
  const auto* h1 = reinterpret_cast<const uint16_t*>(src1);
  switch (c.in_dtype) {
    case ir::DataType::FP16: MatmulF16(fdst, h0, h1, m, k, n, accumulate, layout); break;
    case ir::DataType::BF16: MatmulBF16(fdst, h0, h1, m, k, n, accumulate, layout); break;
    case ir::DataType::INT8:
      MatmulI8(reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int8_t*>(src0),
               reinterpret_cast<const int8_t*>(src1), m, k, n, accumulate, layout);
      break;
    default:
      MatmulF32(fdst, reinterpret_cast<const float*>(src0), reinterpret_cast<const float*>(src1), m, k, n, accumulate,
                layout);
      break;
  }
}

// A product into a view of a window whose rows are strided in its tile (a window of an Acc matrix,
// AllocateMemoryAddr): its rows are gathered, accumulated into and put back. One matrix, no bias.
void MatmulStrided(const ComputeInfo& c, const Instr& instr, const Operands& o, size_t k, bool accumulate) {
  const auto rows = static_cast<size_t>(c.rows), pitch = static_cast<size_t>(instr.dst.row_pitch);
  const auto row_bytes = static_cast<size_t>(c.cols) * instr.elem_bytes;
  std::vector<std::byte> window(rows * row_bytes);
  for (size_t r = 0; r < rows; ++r) std::memcpy(window.data() + r * row_bytes, o.dst + r * pitch, row_bytes);
  MatmulOne(c, window.data(), o.src0, o.src1, k, accumulate);
  for (size_t r = 0; r < rows; ++r) std::memcpy(o.dst + r * pitch, window.data() + r * row_bytes, row_bytes);
}

// A Matmul: for each batch, dst = src0 @ src1, plus dst (an accumulator not overwritten this time by
// init_cond) or the bias row src2. The valid contraction is read when the instruction runs.
Result RunMatmul(const DecodedKernel& kernel, size_t index, const Operands& o, const std::byte* bias,
                 const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const int64_t k = OperandValue(c.valid_inner, regs);
  if (k < 0 || k > c.inner)
    return KernelFailure(kernel, index,
                         fmt::format("the valid contraction {} is outside the operands' {}", k, c.inner));
  const bool accumulate = (c.accumulate && OperandValue(c.init_cond, regs) == 0) || bias;
  if (instr.dst.row_pitch > 0) {
    MatmulStrided(c, instr, o, static_cast<size_t>(k), accumulate);
    return {};
  }
  const size_t in_bytes = ir::DataTypeBytes(c.in_dtype);
  const auto row_bytes = static_cast<size_t>(c.cols) * instr.elem_bytes;
  const size_t dst_step = static_cast<size_t>(c.rows) * row_bytes;
  for (int64_t b = 0; b < c.batch; ++b) {
    std::byte* dst = o.dst + static_cast<size_t>(b) * dst_step;
    if (bias)
      for (int64_t r = 0; r < c.rows; ++r) std::memcpy(dst + static_cast<size_t>(r) * row_bytes, bias, row_bytes);
    MatmulOne(c, dst, o.src0 + static_cast<size_t>(b * c.src0_step) * in_bytes,
              o.src1 + static_cast<size_t>(b * c.src1_step) * in_bytes, static_cast<size_t>(k), accumulate);
  }
  return {};
}

// tile.matmul_mx: the scales are src2 (the left operand's) and src3 (the right operand's).
Result RunMatmulMx(const DecodedKernel& kernel, size_t index, const Operands& o, const std::byte* a_scale,
                   const std::byte* b_scale) {
  const ComputeInfo& c = kernel.code[index].compute;
  if (!a_scale || !b_scale) return KernelFailure(kernel, index, "a scale operand lies outside its buffer on this core");
  const auto bytes = [](const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); };
  MatmulMx(o.fdst(), bytes(o.src0), bytes(a_scale), bytes(o.src1), bytes(b_scale), static_cast<size_t>(c.rows),
           static_cast<size_t>(c.inner), static_cast<size_t>(c.cols), c.accumulate);
  return {};
}

// tile.cast to or from FP4 or FP8: through FP32, each side decoded or encoded on its own.
Result RunMxCast(const DecodedKernel& kernel, size_t index, const Operands& o) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const auto n = static_cast<size_t>(instr.num_elements);
  std::vector<float> values(n);
  if (IsMxFormat(c.in_dtype)) {
    values = DecodeMxArray(c.in_dtype, o.src0, n);
  } else if (c.in_dtype == ir::DataType::FP32) {
    std::memcpy(values.data(), o.src0, n * sizeof(float));
  } else if (!Convert(ElemTypeOf(c.in_dtype), ElemType::F32, values.data(), o.src0, n, RoundMode::None)) {
    return KernelFailure(kernel, index, "this conversion is not supported by the simulator");
  }
  if (IsMxFormat(c.out_dtype)) {
    EncodeMxArray(c.out_dtype, o.dst, values);
  } else if (c.out_dtype == ir::DataType::FP32) {
    std::memcpy(o.dst, values.data(), n * sizeof(float));
  } else if (!Convert(ElemType::F32, ElemTypeOf(c.out_dtype), o.dst, values.data(), n,
                      static_cast<RoundMode>(c.round_mode))) {
    return KernelFailure(kernel, index, "this conversion is not supported by the simulator");
  }
  return {};
}

// The top-k family: sorting, lane selection, windows and index rows (the decoder checked dtypes).
void RunTopKFamily(const Instr& instr, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = instr.compute;
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  const auto elem_bytes = static_cast<size_t>(instr.elem_bytes);
  switch (c.kind) {
    case ComputeKind::Sort32:
      Sort32F32(o.fdst(), o.fsrc0(), reinterpret_cast<const uint32_t*>(o.src1), rows, cols);
      break;
    case ComputeKind::MergeLists: {
      std::vector<size_t> lanes;
      for (int64_t list : c.list_lanes)
        if (list > 0) lanes.push_back(static_cast<size_t>(list));
      MergeListsF32(o.fdst(), o.fsrc0(), lanes);
      break;
    }
    case ComputeKind::GatherMask: {
      const ir::MaskLanes lanes = ir::LanesOf(c.op);
      GatherLanes(o.dst, o.src0, rows, static_cast<size_t>(c.src_cols), elem_bytes, static_cast<size_t>(lanes.group),
                  static_cast<size_t>(lanes.lane));
      break;
    }
    case ComputeKind::Transpose:
      for (size_t b = 0, step = rows * cols * elem_bytes; b < static_cast<size_t>(c.batch); ++b)
        TransposeTile(o.dst + b * step, o.src0 + b * step, rows, cols, elem_bytes);
      break;
    case ComputeKind::Concat:
      ConcatColumns(o.dst, o.src0, o.src1, rows, static_cast<size_t>(c.src_cols), cols - static_cast<size_t>(c.src_cols),
                    elem_bytes);
      break;
    case ComputeKind::Arange:
      Arange(o.dst, static_cast<int64_t>(ScalarValue(c.scalar, regs)), c.op == 1,
             static_cast<size_t>(instr.num_elements), elem_bytes);
      break;
    default: break;
  }
}

// The valid region of the instruction's tile, read now (its extents may be computed at run time),
// checked to lie inside the [rows, cols] tile.
pypto::expected<std::pair<size_t, size_t>, rt::FatalError> ValidExtents(const DecodedKernel& kernel, size_t index,
                                                                        const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto read = [&](const Operand& operand) { return operand.is_reg() ? regs[operand.reg] : operand.imm; };
  const int64_t rows = read(instr.valid.rows), cols = read(instr.valid.cols);
  if (rows < 0 || cols < 0 || rows > instr.compute.rows || cols > instr.compute.cols)
    return KernelFailure(kernel, index,
                         fmt::format("the valid region [{}, {}] is outside the [{}, {}] tile", rows, cols,
                                     instr.compute.rows, instr.compute.cols));
  return std::pair<size_t, size_t>(static_cast<size_t>(rows), static_cast<size_t>(cols));
}

// The region an instruction covers: its valid region when it has one (read now), else the whole tile.
pypto::expected<std::pair<size_t, size_t>, rt::FatalError> CoveredExtents(const DecodedKernel& kernel, size_t index,
                                                                          const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  if (instr.partial) return ValidExtents(kernel, index, regs);
  return std::pair<size_t, size_t>(static_cast<size_t>(instr.compute.rows), static_cast<size_t>(instr.compute.cols));
}

// "[2, 5]": the position `at` (row-major) in the index tile as its coordinates.
std::string Coordinates(size_t at, const AxisIndex& view) {
  std::vector<int64_t> coords(view.rank);
  for (size_t d = view.rank; d-- > 0;) {
    coords[d] = static_cast<int64_t>(at % static_cast<size_t>(view.index_shape[d]));
    at /= static_cast<size_t>(view.index_shape[d]);
  }
  return fmt::format("[{}]", fmt::join(coords, ", "));
}

// Gathers and scatters by index, each index checked against the extent it addresses.
Result RunIndexMove(const DecodedKernel& kernel, size_t index, const Operands& o) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const char* data = c.kind == ComputeKind::GatherAlong ? "source" : "destination";
  std::optional<BadIndex> bad;
  switch (c.kind) {
    case ComputeKind::GatherAlong: bad = GatherAlong(o.dst, o.src0, o.src1, c.along); break;
    case ComputeKind::ScatterAlong: bad = ScatterAlong(o.dst, o.src0, o.src1, c.along); break;
    case ComputeKind::ScatterLanes: {
      const ir::MaskLanes lanes = ir::LanesOf(c.op);
      ScatterLanes(o.dst, o.src0, static_cast<size_t>(c.rows), static_cast<size_t>(c.src_cols), instr.elem_bytes,
                   static_cast<size_t>(lanes.group), static_cast<size_t>(lanes.lane));
      return {};
    }
    case ComputeKind::ScatterRows:
      bad = ScatterRows(o.dst, o.src0, o.src1, static_cast<size_t>(c.inner), c.index_bytes,
                        static_cast<size_t>(c.rows), static_cast<size_t>(c.cols), instr.elem_bytes);
      if (bad)
        return KernelFailure(kernel, index,
                             fmt::format("the row index {} at position {} of the indices is outside the {} rows of the "
                                         "destination",
                                         bad->value, bad->position, c.rows));
      return {};
    default: return {};
  }
  if (!bad) return {};
  if (c.along.flat)
    return KernelFailure(kernel, index,
                         fmt::format("the index {} at position {} of the indices is outside the {} elements of the {}",
                                     bad->value, bad->position, c.along.data_shape[0], data));
  return KernelFailure(kernel, index,
                       fmt::format("the index {} at {} is outside [0, {}) along axis {} of the {}", bad->value,
                                   Coordinates(bad->position, c.along), c.along.data_shape[c.along.axis], c.along.axis,
                                   data));
}

// tgatherb: the blocks the offsets' valid region picks, each offset checked against the source.
Result RunGatherBlocks(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const auto cols = static_cast<size_t>(instr.compute.cols);
  auto covered = CoveredExtents(kernel, index, regs);
  if (!covered) return pypto::unexpected(std::move(covered.error()));
  const std::pair<size_t, size_t> valid = *covered;
  const auto src_bytes = static_cast<size_t>(instr.src0.bytes);
  auto bad = GatherBlocks(o.dst, o.src0, src_bytes, o.src1, cols, valid.first, valid.second);
  if (!bad) return {};
  return KernelFailure(kernel, index,
                       fmt::format("the byte offset {} at [{}, {}] of the offsets is not the start of a 32-byte "
                                   "block of the {}-byte source",
                                   bad->value, bad->position / cols, bad->position % cols, src_bytes));
}

// The compare-form gather: the source widened to doubles (which hold every FP16, FP32, INT16 and
// INT32 value exactly), compared per row against the scalar.
Result RunGatherCompare(const Instr& instr, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = instr.compute;
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.src_cols);
  std::vector<double> values(rows * cols);
  if (c.in_dtype == ir::DataType::FP16) {
    const std::vector<float> wide = WidenHalf(o.src0, static_cast<int64_t>(values.size() * 2));
    std::copy(wide.begin(), wide.end(), values.begin());
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      switch (c.in_dtype) {
        case ir::DataType::FP32: values[i] = reinterpret_cast<const float*>(o.src0)[i]; break;
        case ir::DataType::INT16: values[i] = reinterpret_cast<const int16_t*>(o.src0)[i]; break;
        default: values[i] = reinterpret_cast<const int32_t*>(o.src0)[i]; break;
      }
    }
  }
  double kvalue = ScalarValue(c.scalar, regs);
  if (c.in_dtype == ir::DataType::FP16) {  // the scalar rounded to the elements' precision
    uint16_t bits = 0;
    const auto narrow = static_cast<float>(kvalue);
    Convert(ElemType::F32, ElemType::F16, &bits, &narrow, 1, RoundMode::Rint);
    float back = 0;
    Convert(ElemType::F16, ElemType::F32, &back, &bits, 1, RoundMode::Rint);
    kvalue = back;
  }
  const auto mode = static_cast<CompareMode>(c.op);
  if (c.compare_counts)
    CompareGather(nullptr, reinterpret_cast<uint32_t*>(o.dst), values.data(), rows, cols, kvalue, mode,
                  c.compare_offset, static_cast<size_t>(c.inner));
  else
    CompareGather(o.idst(), nullptr, values.data(), rows, cols, kvalue, mode, c.compare_offset,
                  static_cast<size_t>(c.inner));
  return {};
}

// pl.random: the generator's words over the valid region (the whole tile unless narrowed).
// mrgsort format 1: the IR checks a constant block_len; one a loop computes is checked here, as the
// IR would have (a positive multiple of 64 lanes, four runs of it tiling the row).
Result RunMergeSort(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = kernel.code[index].compute;
  const int64_t block_len = OperandValue(c.block_len, regs);
  if (block_len <= 0 || block_len % 64 != 0 || c.cols % (4 * block_len) != 0)
    return KernelFailure(kernel, index,
                         fmt::format("mrgsort block_len {} must be a positive multiple of 64 whose 4 runs tile the "
                                     "row of {} lanes",
                                     block_len, c.cols));
  MergeSortF32(o.fdst(), o.fsrc0(), static_cast<size_t>(c.cols), static_cast<size_t>(block_len));
  return {};
}

Result RunRandom(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  auto covered = CoveredExtents(kernel, index, regs);
  if (!covered) return pypto::unexpected(std::move(covered.error()));
  const std::pair<size_t, size_t> extents = *covered;
  auto word = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<int64_t>(ScalarValue(c.seeds[i], regs)));
  };
  RandomTile(reinterpret_cast<uint32_t*>(o.dst), static_cast<size_t>(c.cols), extents.first, extents.second,
             {word(0), word(1)}, {word(2), word(3), word(4), word(5)}, c.rounds);
  return {};
}

// "[32, 1, 64]": the first `rank` values, as the IR prints a shape.
template <typename T>
std::string DimsText(const std::array<T, kMaxDims>& values, size_t rank) {
  return fmt::format("[{}]", fmt::join(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), ", "));
}

// A window of an N-d tile whose leading dimensions are not all 1, at an origin read now: its rows
// (every index but the last) lie apart in the source, so each is copied from where it lies.
Result RunNdSlice(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const size_t rank = c.window_rank, last = rank - 1;
  std::array<int64_t, kMaxDims> origin{};
  bool inside = true;
  for (size_t d = 0; d < rank; ++d) {
    origin[d] = c.origin[d].is_reg() ? regs[c.origin[d].reg] : c.origin[d].imm;
    inside &= origin[d] >= 0 && origin[d] + c.window_dims[d] <= c.outer_dims[d];
  }
  if (!inside)
    return KernelFailure(kernel, index,
                         fmt::format("the {} window at {} is outside the {} tile", DimsText(c.window_dims, rank),
                                     DimsText(origin, rank), DimsText(c.outer_dims, rank)));
  // The source row of window row `at` (its index in every dimension but the last, counted like an
  // odometer) is sum((origin[d] + at[d]) * row_stride[d]).
  std::array<int64_t, kMaxDims> row_stride{}, at{};
  row_stride[last - 1] = 1;
  for (size_t d = last - 1; d-- > 0;) row_stride[d] = row_stride[d + 1] * c.outer_dims[d + 1];
  const auto elem_bytes = static_cast<size_t>(instr.elem_bytes);
  const size_t row_bytes = static_cast<size_t>(c.window_dims[last]) * elem_bytes;
  for (int64_t row = 0; row < c.rows; ++row) {
    int64_t source_row = 0;
    for (size_t d = 0; d < last; ++d) source_row += (origin[d] + at[d]) * row_stride[d];
    const auto from = static_cast<size_t>(source_row * c.outer_cols + origin[last]) * elem_bytes;
    std::memcpy(o.dst + static_cast<size_t>(row) * row_bytes, o.src0 + from, row_bytes);
    for (size_t d = last; d-- > 0 && ++at[d] == c.window_dims[d];) at[d] = 0;
  }
  return {};
}

// A window of a larger tile copied out (Slice) or written in place (Insert), at an origin read now.
Result RunWindow(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  if (c.window_rank > 0) return RunNdSlice(kernel, index, o, regs);
  auto read = [&](const Operand& operand) { return operand.is_reg() ? regs[operand.reg] : operand.imm; };
  const int64_t row = read(c.row_offset), col = read(c.col_offset);
  // An inserted tile with a valid region writes that region only: the window it declares may reach
  // past the target where its valid part does not (upstream's gather_row into the rest of a buffer).
  int64_t extent_rows = c.rows, extent_cols = c.cols;
  if (c.kind == ComputeKind::Insert && instr.partial) {
    auto valid = ValidExtents(kernel, index, regs);
    if (!valid) return pypto::unexpected(std::move(valid.error()));
    extent_rows = static_cast<int64_t>(valid->first);
    extent_cols = static_cast<int64_t>(valid->second);
  }
  if (row < 0 || col < 0 || row + extent_rows > c.outer_rows || col + extent_cols > c.outer_cols)
    return KernelFailure(kernel, index,
                         fmt::format("the [{}, {}] window at [{}, {}] is outside the [{}, {}] tile", extent_rows,
                                     extent_cols, row, col, c.outer_rows, c.outer_cols));
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  const auto outer_cols = static_cast<size_t>(c.outer_cols), elem_bytes = static_cast<size_t>(instr.elem_bytes);
  if (c.kind == ComputeKind::Insert && instr.partial) {
    for (size_t r = 0; r < static_cast<size_t>(extent_rows); ++r)
      InsertWindow(o.dst, o.src0 + r * cols * elem_bytes, 1, static_cast<size_t>(extent_cols), outer_cols,
                   static_cast<size_t>(row) + r, static_cast<size_t>(col), elem_bytes);
  } else if (c.kind == ComputeKind::Insert)
    InsertWindow(o.dst, o.src0, rows, cols, outer_cols, static_cast<size_t>(row), static_cast<size_t>(col), elem_bytes);
  else
    CopyWindow(o.dst, o.src0, rows, cols, outer_cols, static_cast<size_t>(row), static_cast<size_t>(col), elem_bytes);
  return {};
}

// tile.sels: the scalar, read now, as an element of the result's type.
Result RunSelectScalar(const DecodedKernel& kernel, size_t index, const Operands& o, const std::byte* mask,
                       const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  auto bits = ValueBits(c.out_dtype, ScalarValue(c.scalar, regs));
  if (!bits) return KernelFailure(kernel, index, "the scalar of tile.sels is not a number");
  SelectScalarByMask(o.dst, reinterpret_cast<const uint8_t*>(mask), static_cast<size_t>(c.mask_row_bytes), o.src0,
                     *bits, static_cast<size_t>(c.rows), static_cast<size_t>(c.cols), instr.elem_bytes);
  return {};
}

// tile.tri over the valid region (the whole tile unless narrowed), the diagonal read now.
Result RunTriangle(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  auto covered = CoveredExtents(kernel, index, regs);
  if (!covered) return pypto::unexpected(std::move(covered.error()));
  const std::pair<size_t, size_t> extents = *covered;
  Triangle(o.dst, static_cast<size_t>(c.cols), extents.first, extents.second,
           static_cast<int64_t>(ScalarValue(c.scalar, regs)), c.op == 1, instr.elem_bytes, c.pad_bits);
  return {};
}

Result RunFillPad(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto valid = ValidExtents(kernel, index, regs);
  if (!valid) return pypto::unexpected(std::move(valid.error()));
  FillPad(o.dst, o.src0, static_cast<size_t>(instr.compute.rows), static_cast<size_t>(instr.compute.cols),
          valid->first, valid->second, instr.elem_bytes, instr.compute.pad_bits);
  return {};
}

// A reduction over the valid region only (the whole-tile case keeps the dense kernels).
Result RunValidReduce(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  auto valid = ValidExtents(kernel, index, regs);
  if (!valid) return pypto::unexpected(std::move(valid.error()));
  const auto [rows, cols] = *valid;
  const auto op = static_cast<ReduceOp>(c.op);
  const auto stride = static_cast<size_t>(c.cols);
  const bool row = c.kind == ComputeKind::RowReduce;
  if (instr.kind == ElemKind::F32) {
    if (row) RowReduceValidF32(op, o.fdst(), o.fsrc0(), stride, rows, cols);
    else ColReduceValidF32(op, o.fdst(), o.fsrc0(), stride, rows, cols);
    return {};
  }
  const bool ok = row ? RowReduceValidI32(op, o.idst(), o.isrc0(), stride, rows, cols)
                      : ColReduceValidI32(op, o.idst(), o.isrc0(), stride, rows, cols);
  if (!ok) return KernelFailure(kernel, index, "an op without an INT32 form");
  return {};
}

// An index-of-extremum reduction over the valid region (the whole tile unless narrowed); FP16
// values are widened first, which keeps their order and ties exactly.
Result RunArgReduce(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const auto tile_rows = static_cast<size_t>(c.rows), tile_cols = static_cast<size_t>(c.cols);
  auto covered = CoveredExtents(kernel, index, regs);
  if (!covered) return pypto::unexpected(std::move(covered.error()));
  const std::pair<size_t, size_t> extents = *covered;
  const auto [rows, cols] = extents;
  const bool by_row = c.kind == ComputeKind::RowArgReduce;
  if ((by_row ? cols : rows) == 0)
    return KernelFailure(kernel, index,
                         fmt::format("the valid region [{}, {}] has no element to take the index of", rows, cols));
  if (rows == 0 || cols == 0) return {};  // no index to write
  const float* values = o.fsrc0();
  std::vector<float> widened;
  if (c.in_dtype == ir::DataType::FP16) {
    widened.resize(tile_rows * tile_cols);
    Convert(ElemType::F16, ElemType::F32, widened.data(), o.src0, widened.size(), RoundMode::None);
    values = widened.data();
  }
  const auto op = static_cast<ArgReduceOp>(c.op);
  if (by_row) RowArgReduceF32(op, o.idst(), values, tile_cols, rows, cols);
  else ColArgReduceF32(op, o.idst(), values, tile_cols, rows, cols);
  return {};
}

// tile.part_*: the op over the whole tile into a scratch copy, kept where src1 is valid; src0's
// element elsewhere. The scratch copy lets dst be either source's buffer.
Result RunPartialBinary(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  auto covered = CoveredExtents(kernel, index, regs);
  if (!covered) return pypto::unexpected(std::move(covered.error()));
  const std::pair<size_t, size_t> valid = *covered;
  const auto op = static_cast<BinaryOp>(c.op);
  const size_t n = rows * cols;
  const size_t elem_bytes = 4;  // FP32 or INT32 here (narrower types arrive widened)
  std::vector<std::byte> combined(n * elem_bytes);
  if (instr.kind == ElemKind::F32) {
    BinaryF32(op, reinterpret_cast<float*>(combined.data()), o.fsrc0(), o.fsrc1(), n);
  } else if (!BinaryI32(op, reinterpret_cast<int32_t*>(combined.data()), o.isrc0(), o.isrc1(), n)) {
    return KernelFailure(kernel, index, "an op without an INT32 form");
  }
  for (size_t r = 0; r < rows; ++r) {
    for (size_t col = 0; col < cols; ++col) {
      const size_t at = (r * cols + col) * elem_bytes;
      const bool both = r < valid.first && col < valid.second;
      std::memcpy(o.dst + at, both ? combined.data() + at : o.src0 + at, elem_bytes);
    }
  }
  return {};
}

// An op on a tile type the kernels take directly (instr.kind), or on widened copies of the operands.
// An integer bitwise, shift or remainder op over the result's valid region, one row at a time.
Result RunIntegerBinary(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  const IntegerType type{instr.elem_bytes, !ir::IsUnsignedInteger(c.out_dtype)};
  auto rows = static_cast<size_t>(c.rows), width = static_cast<size_t>(c.cols);
  if (instr.partial) {
    rows = std::min(rows, static_cast<size_t>(std::max<int64_t>(0, OperandValue(instr.valid.rows, regs))));
    width = std::min(width, static_cast<size_t>(std::max<int64_t>(0, OperandValue(instr.valid.cols, regs))));
  }
  const auto scalar = static_cast<int64_t>(ScalarValue(c.scalar, regs));
  const size_t row_bytes = static_cast<size_t>(c.cols) * instr.elem_bytes;
  for (size_t r = 0; r < rows; ++r) {
    const size_t at = r * row_bytes;
    if (!IntegerBinary(static_cast<IntegerOp>(c.op), type, o.dst + at, o.src0 + at, o.src1 ? o.src1 + at : nullptr,
                       scalar, width))
      return KernelFailure(kernel, index, "integer remainder by zero");
  }
  return {};
}

Result RunArithmetic(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeKind kind = instr.compute.kind;
  if (kind == ComputeKind::PartialBinary) return RunPartialBinary(kernel, index, o, regs);
  if (instr.partial && (kind == ComputeKind::RowReduce || kind == ComputeKind::ColReduce))
    return RunValidReduce(kernel, index, o, regs);
  if (instr.kind == ElemKind::F32) return RunF32(instr, o, regs);
  if (instr.kind == ElemKind::I32 && RunI32(instr, o, regs)) return {};
  if (instr.kind == ElemKind::I32) return KernelFailure(kernel, index,
                                                        "integer division by zero, or an op without an INT32 form");
  return KernelFailure(kernel, index, "element type without arithmetic (decoder bug)");
}

// Each element of v rounded to FP16 (to nearest even).
void RoundToHalf(std::vector<float>& v) {
  std::vector<std::byte> half(v.size() * 2);
  NarrowToHalf(half.data(), v);
  v = WidenHalf(half.data(), static_cast<int64_t>(half.size()));
}

// An FP16 column sum as the vector unit computes it (TCOLSUM), each addition of two rows rounded to
// FP16: in row order, or pairwise (rows 2i and 2i + 1 into row i, an odd last row added into row 0,
// until one row is left). `src` holds the widened [rows, cols] tile, `dst` the widened result.
void ColumnSumHalf(float* dst, const float* src, size_t rows, size_t cols, bool pairwise) {
  std::vector<std::vector<float>> buf(rows);
  for (size_t r = 0; r < rows; ++r) buf[r].assign(src + r * cols, src + (r + 1) * cols);
  auto add = [&](size_t to, const std::vector<float>& row) {
    for (size_t c = 0; c < cols; ++c) buf[to][c] += row[c];
    RoundToHalf(buf[to]);
  };
  if (!pairwise) {
    for (size_t r = 1; r < rows; ++r) add(0, buf[r]);
  } else {
    for (size_t count = rows; count > 1; count /= 2) {
      const size_t half = count / 2;
      for (size_t i = 0; i < half; ++i) {
        std::vector<float> pair = buf[2 * i];
        for (size_t c = 0; c < cols; ++c) pair[c] += buf[2 * i + 1][c];
        RoundToHalf(pair);
        buf[i] = std::move(pair);
      }
      if (count % 2 == 1) add(0, buf[count - 1]);
    }
  }
  if (rows > 0) std::copy(buf[0].begin(), buf[0].end(), dst);
  else std::fill_n(dst, cols, 0.0f);
}

template <typename Wide>
std::vector<Wide> WidenOperand(Widen widen, const std::byte* src, const TileRef& ref) {
  if (!src) return {};
  if constexpr (std::is_same_v<Wide, float>) return WidenFloats(widen, src, ref.bytes);
  else return WidenInts(widen, src, ref.bytes);
}

// An op on FP16 or 8- or 16-bit integer tiles (see Widen): the FP32 or INT32 kernel runs on widened
// copies of the operands and of the result's current contents (an op writing part of the result, a
// reduction over a valid region, leaves the rest as it was), then the result is narrowed back.
template <typename Wide>
Result RunWidened(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  std::vector<Wide> dst = WidenOperand<Wide>(instr.widen, o.dst, instr.dst);
  const std::vector<Wide> src0 = WidenOperand<Wide>(instr.widen, o.src0, instr.src0);
  const std::vector<Wide> src1 = WidenOperand<Wide>(instr.widen, o.src1, instr.src1);
  Operands wide;
  wide.dst = reinterpret_cast<std::byte*>(dst.data());
  wide.src0 = o.src0 ? reinterpret_cast<const std::byte*>(src0.data()) : nullptr;
  wide.src1 = o.src1 ? reinterpret_cast<const std::byte*>(src1.data()) : nullptr;
  const ComputeInfo& c = instr.compute;
  if constexpr (std::is_same_v<Wide, float>) {
    if (instr.widen == Widen::Half && c.kind == ComputeKind::ColReduce &&
        static_cast<ReduceOp>(c.op) == ReduceOp::Sum && !instr.partial) {
      ColumnSumHalf(dst.data(), src0.data(), static_cast<size_t>(c.rows), static_cast<size_t>(c.cols), c.pairwise);
      NarrowToHalf(o.dst, dst);
      return {};
    }
  }
  if (auto ok = RunArithmetic(kernel, index, wide, regs); !ok) return ok;
  if constexpr (std::is_same_v<Wide, float>) NarrowFloats(instr.widen, o.dst, dst);
  else NarrowInts(instr.widen, o.dst, dst);
  return {};
}

// The packed predicate mask of comparing src0 with src1 or a scalar, in src0's compute type: FP16
// (and BF16) values widen to FP32 exactly, and such a comparison's scalar is first rounded to the
// tile's type, as the instruction compares values of that type; narrow integers widen to INT32.
Result RunCompare(const Instr& instr, const Operands& o, const int64_t* regs) {
  const ComputeInfo& c = instr.compute;
  const auto rows = static_cast<size_t>(c.rows), cols = static_cast<size_t>(c.cols);
  const auto op = static_cast<CmpOp>(c.op);
  auto* mask = reinterpret_cast<uint8_t*>(o.dst);
  const auto row_bytes = static_cast<size_t>(c.mask_row_bytes);
  const double scalar = ScalarValue(c.scalar, regs);
  switch (c.in_dtype) {
    case ir::DataType::FP32:
      if (o.src1) CompareF32(op, mask, row_bytes, o.fsrc0(), o.fsrc1(), rows, cols);
      else CompareScalarF32(op, mask, row_bytes, o.fsrc0(), static_cast<float>(scalar), rows, cols);
      return {};
    case ir::DataType::FP16:
    case ir::DataType::BF16: {
      const Widen widen = WidenOf(c.in_dtype);
      const std::vector<float> a = WidenFloats(widen, o.src0, instr.src0.bytes);
      if (o.src1) {
        CompareF32(op, mask, row_bytes, a.data(), WidenFloats(widen, o.src1, instr.src1.bytes).data(), rows, cols);
        return {};
      }
      std::byte narrow[2];
      NarrowFloats(widen, narrow, {static_cast<float>(scalar)});
      CompareScalarF32(op, mask, row_bytes, a.data(), WidenFloats(widen, narrow, 2)[0], rows, cols);
      return {};
    }
    case ir::DataType::INT32:
      if (o.src1) CompareI32(op, mask, row_bytes, o.isrc0(), o.isrc1(), rows, cols);
      else CompareScalarI32(op, mask, row_bytes, o.isrc0(), static_cast<int32_t>(scalar), rows, cols);
      return {};
    default: {  // 8- and 16-bit integers (the decoder checked)
      const Widen widen = WidenOf(c.in_dtype);
      const std::vector<int32_t> a = WidenInts(widen, o.src0, instr.src0.bytes);
      if (o.src1) CompareI32(op, mask, row_bytes, a.data(), WidenInts(widen, o.src1, instr.src1.bytes).data(), rows, cols);
      else CompareScalarI32(op, mask, row_bytes, a.data(), static_cast<int32_t>(scalar), rows, cols);
      return {};
    }
  }
}

Result RunFillPadExpand(const DecodedKernel& kernel, size_t index, const Operands& o, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ComputeInfo& c = instr.compute;
  auto valid = ValidExtents(kernel, index, regs);
  if (!valid) return pypto::unexpected(std::move(valid.error()));
  FillPadExpand(o.dst, o.src0, static_cast<size_t>(c.outer_rows), static_cast<size_t>(c.outer_cols),
                static_cast<size_t>(c.cols), valid->first, valid->second, instr.elem_bytes, c.pad_bits);
  return {};
}

}  // namespace

std::vector<float> WidenHalf(const std::byte* src, int64_t bytes) {
  std::vector<float> values(static_cast<size_t>(bytes) / 2);
  Convert(ElemType::F16, ElemType::F32, values.data(), src, values.size(), RoundMode::Rint);
  return values;
}

void NarrowToHalf(std::byte* dst, const std::vector<float>& values) {
  Convert(ElemType::F32, ElemType::F16, dst, values.data(), values.size(), RoundMode::Rint);
}

std::vector<float> WidenFloats(Widen from, const std::byte* src, int64_t bytes) {
  if (from == Widen::Half) return WidenHalf(src, bytes);
  std::vector<float> values(static_cast<size_t>(bytes) / 2);
  Convert(ElemType::BF16, ElemType::F32, values.data(), src, values.size(), RoundMode::Rint);
  return values;
}

void NarrowFloats(Widen to, std::byte* dst, const std::vector<float>& values) {
  if (to == Widen::Half) return NarrowToHalf(dst, values);
  Convert(ElemType::F32, ElemType::BF16, dst, values.data(), values.size(), RoundMode::Rint);
}

namespace {

template <typename Narrow>
std::vector<int32_t> WidenAs(const std::byte* src, int64_t bytes) {
  std::vector<int32_t> values(static_cast<size_t>(bytes) / sizeof(Narrow));
  for (size_t i = 0; i < values.size(); ++i) {
    Narrow value;
    std::memcpy(&value, src + i * sizeof(Narrow), sizeof(Narrow));
    values[i] = value;
  }
  return values;
}

template <typename Narrow>
void NarrowAs(std::byte* dst, const std::vector<int32_t>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const auto value = static_cast<Narrow>(values[i]);  // the low bits (modular since C++20)
    std::memcpy(dst + i * sizeof(Narrow), &value, sizeof(Narrow));
  }
}

}  // namespace

Widen WidenOf(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP16: return Widen::Half;
    case ir::DataType::BF16: return Widen::BFloat;
    case ir::DataType::INT8: return Widen::I8;
    case ir::DataType::UINT8: return Widen::U8;
    case ir::DataType::INT16: return Widen::I16;
    case ir::DataType::UINT16: return Widen::U16;
    default: return Widen::None;
  }
}

std::vector<int32_t> WidenInts(Widen from, const std::byte* src, int64_t bytes) {
  switch (from) {
    case Widen::I8: return WidenAs<int8_t>(src, bytes);
    case Widen::U8: return WidenAs<uint8_t>(src, bytes);
    case Widen::I16: return WidenAs<int16_t>(src, bytes);
    case Widen::U16: return WidenAs<uint16_t>(src, bytes);
    default: return WidenAs<int32_t>(src, bytes);
  }
}

void NarrowInts(Widen to, std::byte* dst, const std::vector<int32_t>& values) {
  switch (to) {
    case Widen::I8: return NarrowAs<int8_t>(dst, values);
    case Widen::U8: return NarrowAs<uint8_t>(dst, values);
    case Widen::I16: return NarrowAs<int16_t>(dst, values);
    case Widen::U16: return NarrowAs<uint16_t>(dst, values);
    default: return NarrowAs<int32_t>(dst, values);
  }
}

Result RunCompute(const DecodedKernel& kernel, size_t index, CoreMemory& memory, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  Operands o;
  auto access = [&](const TileRef& ref) {
    return ref.bytes == 0 ? nullptr : memory.Access(ref.space, ref.At(regs), ref.bytes);
  };
  o.dst = access(instr.dst);
  o.src0 = access(instr.src0);
  o.src1 = access(instr.src1);
  const std::byte* src2 = access(instr.src2);
  if (!o.dst || (instr.src0.bytes && !o.src0) || (instr.src1.bytes && !o.src1) || (instr.src2.bytes && !src2)) {
    return KernelFailure(kernel, index, "an operand lies outside its buffer on this core");
  }
  const ComputeInfo& c = instr.compute;
  switch (c.kind) {
    case ComputeKind::Copy: std::memmove(o.dst, o.src0, static_cast<size_t>(instr.dst.bytes)); return {};
    case ComputeKind::BitNot: BitwiseNot(o.dst, o.src0, static_cast<size_t>(instr.dst.bytes)); return {};
    case ComputeKind::IntegerBinary: return RunIntegerBinary(kernel, index, o, regs);
    case ComputeKind::Matmul: return RunMatmul(kernel, index, o, src2, regs);
    case ComputeKind::FillPad: return RunFillPad(kernel, index, o, regs);
    case ComputeKind::FillPadExpand: return RunFillPadExpand(kernel, index, o, regs);
    case ComputeKind::Compare: return RunCompare(instr, o, regs);
    case ComputeKind::Select:
      if (!o.src1) return RunSelectScalar(kernel, index, o, src2, regs);
      SelectByMask(o.dst, reinterpret_cast<const uint8_t*>(src2), static_cast<size_t>(c.mask_row_bytes), o.src0,
                   o.src1, static_cast<size_t>(c.rows), static_cast<size_t>(c.cols), instr.elem_bytes);
      return {};
    case ComputeKind::Triangle: return RunTriangle(kernel, index, o, regs);
    case ComputeKind::FillBits:  // no valid region to keep: the whole tile is the pattern
      FillPad(o.dst, o.dst, 1, static_cast<size_t>(instr.num_elements), 0, 0, instr.elem_bytes, c.pad_bits);
      return {};
    case ComputeKind::RowArgReduce:
    case ComputeKind::ColArgReduce: return RunArgReduce(kernel, index, o, regs);
    case ComputeKind::MergeSort: return RunMergeSort(kernel, index, o, regs);
    case ComputeKind::Sort32:
    case ComputeKind::MergeLists:
    case ComputeKind::GatherMask:
    case ComputeKind::Concat:
    case ComputeKind::Transpose:
    case ComputeKind::Arange: RunTopKFamily(instr, o, regs); return {};
    case ComputeKind::Slice:
    case ComputeKind::Insert: return RunWindow(kernel, index, o, regs);
    case ComputeKind::GatherAlong:
    case ComputeKind::ScatterAlong:
    case ComputeKind::ScatterLanes:
    case ComputeKind::ScatterRows: return RunIndexMove(kernel, index, o);
    case ComputeKind::GatherCompare: return RunGatherCompare(instr, o, regs);
    case ComputeKind::GatherBlocks: return RunGatherBlocks(kernel, index, o, regs);
    case ComputeKind::Random: return RunRandom(kernel, index, o, regs);
    case ComputeKind::MatmulMx: return RunMatmulMx(kernel, index, o, src2, access(instr.src3));
    case ComputeKind::Cast:
      if (IsMxFormat(c.in_dtype) || IsMxFormat(c.out_dtype)) return RunMxCast(kernel, index, o);
      if (!Convert(ElemTypeOf(c.in_dtype), ElemTypeOf(c.out_dtype), o.dst, o.src0,
                   static_cast<size_t>(instr.num_elements), static_cast<RoundMode>(c.round_mode))) {
        return KernelFailure(kernel, index, "this conversion is not supported by the simulator");
      }
      return {};
    default: break;
  }
  if (instr.widen == Widen::Half || instr.widen == Widen::BFloat) return RunWidened<float>(kernel, index, o, regs);
  if (instr.widen != Widen::None) return RunWidened<int32_t>(kernel, index, o, regs);
  return RunArithmetic(kernel, index, o, regs);
}

}  // namespace pypto::sim
