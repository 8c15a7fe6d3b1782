// Decoding ops that rearrange tiles rather than compute: sorts and merges, windows (slice, assemble),
// concat, transposes, arange, and gathers and scatters by index, mask or block.
#include "kernel_decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"

namespace pypto::sim::decode {

// tile.mrgsort_format2(lists..., tmp): an instruction reads at most two tiles, so each list is
// first copied into its place in the scratch tile (an Insert), side by side in argument order; the
// merge then reads the scratch tile as consecutive sorted runs.
pypto::expected<void, std::string> Decoder::DecodeMergeLists(const TileValue& out, const ir::Call& call, Instr& instr) {
  const auto& args = call.args();
  const size_t lists = args.size() - 1;
  if (ir::FindAttr<bool>(call.kwargs(), "exhausted").value_or(false))
    return Fail("pl.mrgsort with exhausted=True (stopping when a list runs out) is not supported by the simulator "
                "yet");
  auto tmp = Tile(args[lists], "scratch tile");
  if (!tmp) return Error(tmp.error());
  if (tmp->dtype != ir::DataType::FP32)
    return Fail(fmt::format("pl.mrgsort of {} values is not supported yet by the simulator (FP32 only)",
                            ir::DataTypeName(tmp->dtype)));
  if (Overlap(out.ref, tmp->ref)) return Fail("the result of pl.mrgsort overlaps its scratch tile");
  int64_t col = 0;
  for (size_t i = 0; i < lists; ++i) {
    auto list = Tile(args[i], "sorted list");
    if (!list) return Error(list.error());
    if (list->cols() % 2 != 0)
      return Fail(fmt::format("sorted list {} of pl.mrgsort has {} lanes, not whole (value, index) pairs", i,
                              list->cols()));
    if (Overlap(tmp->ref, list->ref))
      return Fail(fmt::format("the scratch tile of pl.mrgsort overlaps sorted list {}", i));
    Instr stage;
    stage.op = Opcode::Compute;
    stage.kind = instr.kind;
    stage.elem_bytes = instr.elem_bytes;
    stage.dst = tmp->ref;
    stage.src0 = list->ref;
    stage.num_elements = list->num_elements;
    stage.compute.kind = ComputeKind::Insert;
    stage.compute.rows = stage.compute.outer_rows = 1;
    stage.compute.cols = list->cols();
    stage.compute.outer_cols = tmp->cols();
    stage.compute.row_offset = Operand::Imm(0);
    stage.compute.col_offset = Operand::Imm(col);
    Emit(stage);
    instr.compute.list_lanes[i] = list->cols();
    col += list->cols();
  }
  instr.src0 = tmp->ref;
  instr.compute.rows = 1;
  instr.compute.cols = out.cols();
  return {};
}

// Whether `result = tile.slice(source, ...)` is a view of its source: the allocator placed it in the
// source's own block (AllocateMemoryAddr makes a row band of an Acc tile one), so no bytes move.
bool Decoder::IsSliceView(const ir::VarPtr& target, const ir::Call& call) {
  const auto* result = target ? target->type()->As<ir::TileType>() : nullptr;
  const auto* source = call.args()[0]->type()->As<ir::TileType>();
  if (!result || !source || !result->memref() || !source->memref()) return false;
  return result->memory_space() == source->memory_space() &&
         result->memref()->byte_offset == source->memref()->byte_offset &&
         result->memref()->size == source->memref()->size;
}

// A result that is its operand's storage by definition (matmul_acc's accumulator), where that
// operand is a view of a window (IsSliceView): the result is the same view. Both have the parent's
// block, whose start the result would otherwise be placed at.
void Decoder::AdoptAliasedView(const ir::VarPtr& target, const ir::Call& call, TileValue& out) const {
  if (!call.is_op_call() || !call.op()->result_aliases_arg || !target) return;
  const auto& operand = call.args()[static_cast<size_t>(*call.op()->result_aliases_arg)];
  const auto* var = operand->As<ir::Var>();
  auto it = var ? values_.find(var) : values_.end();
  if (it == values_.end() || !std::holds_alternative<TileValue>(it->second)) return;
  const auto* mine = target->type()->As<ir::TileType>();
  const auto* theirs = operand->type()->As<ir::TileType>();
  if (!mine || !theirs || !mine->memref() || !theirs->memref() || mine->memory_space() != theirs->memory_space() ||
      mine->memref()->byte_offset != theirs->memref()->byte_offset)
    return;
  const TileRef& view = std::get<TileValue>(it->second).ref;
  if (view.space == out.ref.space && view.bytes == out.ref.bytes) out.ref = view;
}

// A view of a row band of a 2-D tile (whole rows, or part of one row): the window starts
// row * row_bytes + col * elem_bytes past the source, a distance computed by scalar code when an
// origin is computed in the kernel (a loop's row), and nothing else runs.
pypto::expected<void, std::string> Decoder::DecodeSliceView(const ir::VarPtr& target, const ir::Call& call) {
  auto out = ResultTile(target, "tile.slice");
  if (!out) return Error(out.error());
  auto source = Tile(call.args()[0], "source");
  if (!source) return Error(source.error());
  if (source->shape.size() < 2 || out->shape.size() < 2) return Fail("tile.slice runs on 2-D tiles in the simulator");
  // A narrower window's rows are strided in the source: only a product accumulates into such a view
  // (AllocateMemoryAddr makes one of a window of an Acc matrix; CheckViewOperands refuses the rest).
  const bool strided = out->cols() != source->cols() && out->rows() != 1;
  if (source->ref.row_pitch > 0 || (strided && source->ref.offset_reg >= 0))
    return Fail(fmt::format("a view of a [{}, {}] window of a [{}, {}] tile that is itself a view of a window; the "
                            "simulator views windows of whole tiles, and bands of those",
                            out->rows(), out->cols(), source->rows(), source->cols()));
  auto offsets = Offsets(call.args()[2], "window offsets");
  if (!offsets) return Error(offsets.error());
  // A view is placed by its last two offsets, so it views matrices only: a window at a batch of an
  // N-d tile would read batch 0 (AllocateMemoryAddr copies such windows; a program placed by hand
  // may not).
  if (!IsMatrixShape(source->shape))
    return Fail(fmt::format("a view of a window of the [{}] tile, whose dimensions before the last two are not all "
                            "1; the simulator views windows of matrices only, give the window a buffer of its own",
                            fmt::join(source->shape, ", ")));
  const Operand row = (*offsets)[offsets->size() - 2], col = offsets->back();
  const int64_t elem_bytes = ir::DataTypeBytes(source->dtype);
  const int64_t row_bytes = source->cols() * elem_bytes;
  TileValue view = *out;
  view.ref = source->ref;
  view.ref.bytes = out->ref.bytes;
  if (strided) view.ref.row_pitch = row_bytes;
  if (!row.is_reg() && !col.is_reg()) {
    if (row.imm < 0 || col.imm < 0 || row.imm + out->rows() > source->rows() || col.imm + out->cols() > source->cols())
      return Fail(fmt::format("the [{}, {}] window at [{}, {}] leaves the [{}, {}] tile", out->rows(), out->cols(),
                              row.imm, col.imm, source->rows(), source->cols()));
    view.ref.byte_offset += row.imm * row_bytes + col.imm * elem_bytes;
  } else {
    // distance = row * row_bytes + col * elem_bytes (+ the source's own distance, for a view of a view)
    const uint32_t distance = NewRegister(fmt::format("{} byte offset", target->name_hint()), "view offset");
    const uint32_t col_part = NewRegister("", "");
    pending_.push_back(ScalarInstr{ScalarOp::Mul, distance, row, Operand::Imm(row_bytes)});
    pending_text_.push_back(fmt::format("{} row bytes", target->name_hint()));
    pending_.push_back(ScalarInstr{ScalarOp::Mul, col_part, col, Operand::Imm(elem_bytes)});
    pending_text_.push_back(fmt::format("{} column bytes", target->name_hint()));
    pending_.push_back(ScalarInstr{ScalarOp::Add, distance, Operand::Reg(distance), Operand::Reg(col_part)});
    pending_text_.push_back(fmt::format("{} byte offset", target->name_hint()));
    if (source->ref.offset_reg >= 0) {
      pending_.push_back(ScalarInstr{ScalarOp::Add, distance, Operand::Reg(distance),
                                     Operand::Reg(static_cast<uint32_t>(source->ref.offset_reg))});
      pending_text_.push_back(fmt::format("{} byte offset", target->name_hint()));
    }
    view.ref.offset_reg = static_cast<int32_t>(distance);
  }
  values_[target.get()] = view;
  return {};
}

// A window of a larger 2-D tile: copied out (tile.slice; tile.extract into another buffer) or
// written in place (tile.assemble, whose result is the target's buffer). The origin may be computed
// in the kernel; the executor checks the window against the larger tile when it runs.
pypto::expected<void, std::string> Decoder::DecodeWindow(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const auto& args = call.args();
  const bool insert = info.kind == ComputeKind::Insert;
  auto outer = Tile(args[0], insert ? "target" : "source");
  if (!outer) return Error(outer.error());
  auto window = insert ? Tile(args[1], "source") : pypto::expected<TileValue, std::string>(out);
  if (!window) return Error(window.error());
  if (outer->shape.size() < 2 || window->shape.size() < 2)
    return Fail(fmt::format("{} runs on 2-D tiles in the simulator", op));
  std::vector<Operand> origin;
  if (op == "tile.extract") {
    for (size_t i = 1; i <= 2; ++i) {
      auto index = Scalar(args[i]);
      if (!index) return Error(index.error());
      origin.push_back(*index);
    }
  } else {
    auto offsets = Offsets(args[2], "window offsets");
    if (!offsets) return Error(offsets.error());
    if (!insert && !IsMatrixShape(outer->shape)) return DecodeNdSlice(*outer, out, *offsets, instr);
    // A matrix's dimensions before the last two are 1 (tile.assemble's target must be one), so only
    // the last two offsets move.
    origin.assign(offsets->end() - 2, offsets->end());
  }
  if (insert) {
    if (Overlap(window->ref, out.ref)) return Fail("the source of tile.assemble overlaps its target");
    instr.src0 = window->ref;
    if (auto ok = NarrowTo(args[1]->type(), instr); !ok) return ok;  // only the valid part is written
  } else {
    if (Overlap(out.ref, outer->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
    instr.src0 = outer->ref;
  }
  info.rows = window->rows();
  info.cols = window->cols();
  info.outer_rows = outer->rows();
  info.outer_cols = outer->cols();
  info.row_offset = origin[0];
  info.col_offset = origin[1];
  return {};
}

// Whether a tile of this shape is a matrix: every dimension before the last two is 1.
bool Decoder::IsMatrixShape(const ir::Shape& shape) {
  return std::all_of(shape.begin(), shape.end() - 2, [](int64_t extent) { return extent == 1; });
}

// tile.slice of a tile of rank 3 or more with a leading dimension above 1 ([32, 1, 64] of
// [128, 4, 64]): merged into rows, the window is not one rectangle of the source (its rows lie
// apart), so the executor finds each of its rows from the origin in every dimension, read when it
// runs, and checks the window against the source there.
pypto::expected<void, std::string> Decoder::DecodeNdSlice(const TileValue& source, const TileValue& out,
                                                          const std::vector<Operand>& offsets, Instr& instr) {
  const size_t rank = source.shape.size();
  if (rank > static_cast<size_t>(kMaxDims) || out.shape.size() != rank || offsets.size() != rank)
    return Fail(fmt::format("tile.slice of a rank-{} tile is not supported by the simulator (at most {} dimensions)",
                            rank, kMaxDims));
  if (Overlap(out.ref, source.ref)) return Fail("the result of tile.slice overlaps its source");
  ComputeInfo& info = instr.compute;
  instr.src0 = source.ref;
  info.rows = out.rows();
  info.cols = out.cols();
  info.outer_rows = source.rows();
  info.outer_cols = source.cols();
  info.window_rank = static_cast<uint8_t>(rank);
  for (size_t d = 0; d < rank; ++d) {
    info.origin[d] = offsets[d];
    info.outer_dims[d] = source.shape[d];
    info.window_dims[d] = out.shape[d];
  }
  return {};
}

// sort32, mrgsort, gather (mask form), concat, transposes and arange: the IR checked
// shapes and dtypes; here only what the simulator adds (FP32 sorting, 2-D tiles, results apart
// from their operands). A block_len computed at run time is checked when it runs.
pypto::expected<void, std::string> Decoder::DecodeTopKFamily(const std::string& op, const TileValue& out,
                                                             const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const auto& args = call.args();
  info.rows = out.rows();
  info.cols = out.cols();
  if (info.kind == ComputeKind::Arange) {
    auto start = ScalarArg(args[0]);
    if (!start) return Error(start.error());
    info.scalar = *start;
    info.op = ir::FindAttr<bool>(call.kwargs(), "descending").value_or(false) ? 1 : 0;
    return {};
  }
  auto src = Tile(args[0], "source");
  if (!src) return Error(src.error());
  if (src->shape.size() < 2) return Fail(fmt::format("{} runs on 2-D tiles in the simulator", op));
  instr.src0 = src->ref;
  info.src_cols = src->cols();
  switch (info.kind) {
    case ComputeKind::Sort32: {
      if (src->dtype != ir::DataType::FP32)
        return Fail(fmt::format("{} of {} values is not supported yet by the simulator (FP32 only)", op,
                                ir::DataTypeName(src->dtype)));
      auto idx = Tile(args[1], "indices");
      if (!idx) return Error(idx.error());
      instr.src1 = idx->ref;
      info.cols = src->cols();
      return {};
    }
    case ComputeKind::MergeSort: {
      if (src->dtype != ir::DataType::FP32)
        return Fail(fmt::format("{} of {} values is not supported yet by the simulator (FP32 only)", op,
                                ir::DataTypeName(src->dtype)));
      auto block_len = Scalar(args[1]);
      if (!block_len) return Error(block_len.error());
      info.block_len = *block_len;
      return {};
    }
    case ComputeKind::GatherMask:
      info.op = static_cast<uint8_t>(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
      return {};
    case ComputeKind::Transpose:
      // Rows and columns are one source matrix's (of a batch of them: a tile's last two dimensions);
      // the result, written element by element, is another buffer.
      info.rows = src->shape.size() < 2 ? 1 : src->shape[src->shape.size() - 2];
      info.cols = src->cols();
      info.batch = src->num_elements / (info.rows * info.cols);
      if (Overlap(out.ref, src->ref)) return Fail("the result of a transpose overlaps its operand");
      return {};
    case ComputeKind::Concat: {
      auto right = Tile(args[1], "second operand");
      if (!right) return Error(right.error());
      instr.src1 = right->ref;
      // The halves are copied row by row into the result, which must not overlap them.
      if (Overlap(out.ref, src->ref) || Overlap(out.ref, right->ref))
        return Fail("the result of pl.concat overlaps an operand");
      return {};
    }
    default: return {};
  }
}

// Gathers and scatters by index (the IR checked shapes and dtypes). A scatter's result starts as its
// input: a Copy runs first unless the result lies on the input's storage. The values and indices
// read must lie apart from the result, which the instruction writes element by element.
pypto::expected<void, std::string> Decoder::DecodeIndexMove(const std::string& op, const TileValue& out,
                                                            const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const auto& args = call.args();
  const bool gather = info.kind == ComputeKind::GatherAlong;
  const bool along_dim = op.ends_with("_dim");
  // Operand positions: tile.scatter is (dst, src, indexes), the others (data, index[, src]).
  const size_t index_at = op == "tile.scatter" ? 2 : 1;
  const size_t src_at = gather ? 0 : op == "tile.scatter" ? 1 : 2;
  auto src = Tile(args[info.kind == ComputeKind::ScatterLanes ? 1 : src_at], "source");
  if (!src) return Error(src.error());
  std::optional<TileValue> index;
  if (info.kind != ComputeKind::ScatterLanes) {
    auto tile = Tile(args[index_at], "indices");
    if (!tile) return Error(tile.error());
    index = *tile;
    if (Overlap(out.ref, index->ref)) return Fail(fmt::format("the result of {} overlaps its indices", op));
    instr.src1 = index->ref;
    info.index_bytes = static_cast<uint8_t>(ir::DataTypeBytes(index->dtype));
  }
  if (Overlap(out.ref, src->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
  instr.src0 = src->ref;
  if (!gather) {
    auto input = Tile(args[0], "input");
    if (!input) return Error(input.error());
    if (auto ok = CopyInto(*input, out, instr); !ok) return ok;
  }
  switch (info.kind) {
    case ComputeKind::ScatterLanes: {
      const ir::MaskLanes lanes = ir::LanesOf(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
      info.op = static_cast<uint8_t>(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
      info.rows = src->rows();
      info.src_cols = src->cols();
      info.cols = src->cols() * lanes.group;
      return {};
    }
    case ComputeKind::ScatterRows:
      info.rows = out.num_elements / out.cols();  // rows counted across the blocks of a paged cache
      info.cols = out.cols();
      info.inner = index->num_elements;
      return {};
    default: break;
  }
  const TileValue& data = gather ? *src : out;
  AxisIndex& view = info.along;
  view.index_bytes = info.index_bytes;
  view.elem_bytes = instr.elem_bytes;
  view.flat = !along_dim;
  if (!along_dim) {
    view.rank = 1;
    view.index_shape[0] = index->num_elements;
    view.data_shape[0] = data.num_elements;
    return {};
  }
  if (data.shape.size() > kMaxIndexRank)
    return Fail(fmt::format("{} of a rank-{} tile is not supported by the simulator (at most {})", op,
                            data.shape.size(), kMaxIndexRank));
  const auto rank = static_cast<int64_t>(data.shape.size());
  const int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
  view.rank = data.shape.size();
  view.axis = static_cast<size_t>(dim < 0 ? dim + rank : dim);
  for (size_t d = 0; d < view.rank; ++d) {
    view.index_shape[d] = index->shape[d];
    view.data_shape[d] = data.shape[d];
  }
  return {};
}

// `tile.gatherb(src, offset)`: the offsets' valid region picks the blocks written (the IR checked
// dtypes and shapes); each offset is checked against the source when it runs.
pypto::expected<void, std::string> Decoder::DecodeGatherBlocks(const TileValue& out, const ir::Call& call,
                                                               Instr& instr) {
  auto src = Tile(call.args()[0], "source");
  if (!src) return Error(src.error());
  auto offsets = Tile(call.args()[1], "offsets");
  if (!offsets) return Error(offsets.error());
  if (Overlap(out.ref, src->ref) || Overlap(out.ref, offsets->ref))
    return Fail("the result of tile.gatherb overlaps an operand");
  instr.src0 = src->ref;
  instr.src1 = offsets->ref;
  instr.compute.rows = offsets->rows();
  instr.compute.cols = offsets->cols();
  return NarrowTo(call.args()[1]->type(), instr);
}

// The compare-form gather: one instruction per result, the columns or their counts.
pypto::expected<void, std::string> Decoder::DecodeGatherCompare(const std::string& op, const ir::Call& call,
                                                                Instr& instr) {
  static constexpr std::string_view kModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  ComputeInfo& info = instr.compute;
  auto src = Tile(call.args()[0], "source");
  if (!src) return Error(src.error());
  auto kvalue = ScalarArg(call.args()[1]);
  if (!kvalue) return Error(kvalue.error());
  if (Overlap(instr.dst, src->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
  const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "cmp_mode").value_or("eq");
  info.op = static_cast<uint8_t>(std::find(std::begin(kModes), std::end(kModes), mode) - std::begin(kModes));
  info.scalar = *kvalue;
  info.in_dtype = src->dtype;
  info.rows = src->rows();
  info.src_cols = src->cols();
  info.inner = *ir::FindAttr<int64_t>(call.kwargs(), "out_cols");
  info.compare_offset = ir::FindAttr<int64_t>(call.kwargs(), "offset").value_or(0);
  info.compare_counts = op.ends_with("_count");
  instr.src0 = src->ref;
  return {};
}

// Emits the copy of `input` into `out` a destination-passing op starts from, unless they share
// storage.
pypto::expected<void, std::string> Decoder::CopyInto(const TileValue& input, const TileValue& out, const Instr& instr) {
  if (auto ok = SameSize(input, out); !ok) return ok;
  if (input.ref.space == out.ref.space && input.ref.byte_offset == out.ref.byte_offset) return {};
  Instr copy;
  copy.op = Opcode::Compute;
  copy.kind = instr.kind;
  copy.elem_bytes = instr.elem_bytes;
  copy.dst = out.ref;
  copy.src0 = input.ref;
  copy.num_elements = out.num_elements;
  copy.compute.kind = ComputeKind::Copy;
  Emit(copy);
  return {};
}

}  // namespace pypto::sim::decode
