// Decoding moves between tensor arguments and tiles: tile.load, pl.paged_gather and pl.mgather in,
// tile.store and pl.mscatter out. Separate from single-element access and from on-chip compute.
#include "kernel_decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "pypto/ir/mx_layout.h"
#include "pypto/ir/op_registry.h"

namespace pypto::sim::decode {

namespace {

// A region of an FP4 tensor as the bytes that hold it: the last axis halved (two values a byte), so
// its extent and a constant offset along it must be even. Valid regions are not narrowed in FP4.
pypto::expected<void, std::string> PackedFp4Region(const char* op, ir::Shape& shape, std::vector<Operand>& offsets,
                                                   bool partial) {
  Operand& last = offsets.back();
  if (partial || shape.back() % 2 != 0 || last.is_reg() || last.imm % 2 != 0) {
    return pypto::unexpected(fmt::format(
        "{} of FP4 moves whole pairs of values: the simulator needs an even extent and a constant even offset along "
        "the last axis, and the whole tile valid (got extent {}{})",
        op, shape.back(), last.is_reg() ? ", a computed offset" : fmt::format(", offset {}", last.imm)));
  }
  shape.back() /= 2;
  last.imm /= 2;
  return {};
}

// An MX scale tensor's blocks land in the tile as they lie (the order the cube's scale buffers read),
// so the simulator moves the tensor whole.
pypto::expected<void, std::string> WholeMxTensor(const char* op, const KernelParam& tensor, const ir::Shape& shape,
                                                 const std::vector<Operand>& offsets) {
  bool whole = shape == tensor.shape;
  for (const Operand& offset : offsets) whole = whole && !offset.is_reg() && offset.imm == 0;
  const bool blocks = tensor.shape.size() == 2 && ir::MxWholeBlocks(tensor.layout, tensor.shape[0], tensor.shape[1]);
  if (whole && blocks) return {};
  return pypto::unexpected(fmt::format(
      "{} of tensor '{}' (pl.{}) moves the MX scale tensor whole in the simulator, a 2-D tensor of whole {}x{} "
      "blocks: load [{}] at the origin",
      op, tensor.name, ir::TensorLayoutName(tensor.layout),
      tensor.layout == ir::TensorLayout::MX_A_ZZ ? ir::kMxBlockRows : ir::kMxBlockGroups,
      tensor.layout == ir::TensorLayout::MX_A_ZZ ? ir::kMxBlockGroups : ir::kMxBlockRows,
      fmt::join(tensor.shape, ", ")));
}

}  // namespace

pypto::expected<void, std::string> Decoder::DecodeLoad(const ir::VarPtr& target, const ir::Call& call) {
  if (call.args().size() != 3 && call.args().size() != 4)
    return Fail("tile.load takes (tensor, offsets, shapes[, valid_shape])");
  auto tensor = Tensor(call.args()[0], "source of tile.load");
  if (!tensor) return Error(tensor.error());
  auto offsets = Offsets(call.args()[1], "load offsets");
  if (!offsets) return Error(offsets.error());
  auto shape = Ints(call.args()[2], "load shapes");
  if (!shape) return Error(shape.error());
  auto tile = ResultTile(target, "tile.load");
  if (!tile) return Error(tile.error());

  Instr instr;
  instr.op = Opcode::Load;
  const bool partial = target->type()->As<ir::TileType>()->has_partial_valid_shape();
  int64_t count = 1;
  for (int64_t dim : *shape) count *= dim;
  if (tile->dtype != (*tensor)->dtype || count != tile->num_elements) {
    return Fail(fmt::format("tile '{}' ({} x {}) does not match the loaded region ({} x {})", target->name_hint(),
                            tile->num_elements, ir::DataTypeName(tile->dtype), count,
                            ir::DataTypeName((*tensor)->dtype)));
  }
  if ((*tensor)->layout != ir::TensorLayout::ND)
    if (auto ok = WholeMxTensor("tile.load", **tensor, *shape, *offsets); !ok) return Fail(ok.error());
  const bool fp4 = tile->dtype == ir::DataType::FP4;
  if (fp4) {
    if (auto ok = PackedFp4Region("tile.load", *shape, *offsets, partial); !ok) return Fail(ok.error());
    count /= 2;
  }
  if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], *shape, instr, partial); !ok) return ok;
  instr.kind = KindOf(tile->dtype);
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
  instr.dst = tile->ref;
  instr.num_elements = count;
  if (auto ok = NarrowTo(target->type(), instr); !ok) return ok;
  values_[target.get()] = *tile;
  Emit(instr);
  return {};
}

// `pl.paged_gather(pool, indices, block_table, ...)`: a load of rows the two tables pick, read when
// it runs (each checked against its table and the pool).
pypto::expected<void, std::string> Decoder::DecodePagedGather(const ir::VarPtr& target, const ir::Call& call) {
  auto pool = Tensor(call.args()[0], "pool of pl.paged_gather");
  if (!pool) return Error(pool.error());
  auto indices = Tensor(call.args()[1], "indices of pl.paged_gather");
  if (!indices) return Error(indices.error());
  auto table = Tensor(call.args()[2], "block table of pl.paged_gather");
  if (!table) return Error(table.error());
  auto tile = ResultTile(target, "pl.paged_gather");
  if (!tile) return Error(tile.error());
  Instr instr;
  instr.op = Opcode::Load;
  const std::vector<Operand> origin((*pool)->shape.size(), Operand::Imm(0));
  std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
  if (auto ok = CheckRegion(**pool, origin, std::make_shared<ir::TupleLiteral>(zeros), (*pool)->shape, instr); !ok)
    return ok;
  instr.kind = KindOf(tile->dtype);
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
  instr.dst = tile->ref;
  instr.num_elements = tile->num_elements;
  instr.paged = {.on = true,
                 .indices = (*indices)->slot,
                 .table = (*table)->slot,
                 .block_size = *ir::FindAttr<int64_t>(call.kwargs(), "block_size"),
                 .col_off = ir::FindAttr<int64_t>(call.kwargs(), "col_off").value_or(0),
                 .rows = tile->rows(),
                 .cols = tile->cols()};
  values_[target.get()] = *tile;
  Emit(instr);
  return {};
}

// `pl.mgather(mem, idx, ...)`: a load of the rows or elements the indices pick, each index read
// when it runs. The indices are a tile, or (a Mat result) a tensor; element mode's Mat scratch
// tensor is the device's staging area, which the simulator does not need.
pypto::expected<void, std::string> Decoder::DecodeMemGather(const ir::VarPtr& target, const ir::Call& call) {
  auto mem = Tensor(call.args()[0], "source of pl.mgather");
  if (!mem) return Error(mem.error());
  auto tile = ResultTile(target, "pl.mgather");
  if (!tile) return Error(tile.error());
  Instr instr;
  instr.op = Opcode::Load;
  const std::vector<Operand> origin((*mem)->shape.size(), Operand::Imm(0));
  std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
  if (auto ok = CheckRegion(**mem, origin, std::make_shared<ir::TupleLiteral>(zeros), (*mem)->shape, instr); !ok)
    return ok;
  instr.kind = KindOf(tile->dtype);
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
  instr.dst = tile->ref;
  instr.num_elements = tile->num_elements;
  Instr::MemGather& gather = instr.mgather;
  gather.on = true;
  gather.rows = ir::FindAttr<std::string>(call.kwargs(), "coalesce").value_or("row") == "row";
  static constexpr std::string_view kOob[] = {"undefined", "clamp", "wrap", "zero"};
  const std::string oob = ir::FindAttr<std::string>(call.kwargs(), "gather_oob").value_or("undefined");
  gather.oob = static_cast<GatherOob>(std::find(std::begin(kOob), std::end(kOob), oob) - std::begin(kOob));
  const ir::ExprPtr& idx = call.args()[1];
  if (idx->type()->As<ir::TensorType>()) {
    auto table = Tensor(idx, "indices of pl.mgather");
    if (!table) return Error(table.error());
    gather.indices_in_tensor = true;
    gather.indices = (*table)->slot;
    gather.index_cols = (*table)->shape.back();
  } else {
    auto indices = Tile(idx, "indices of pl.mgather");
    if (!indices) return Error(indices.error());
    // The a2a3 vector unit takes row indices as a row only; a5 also as a column.
    if (gather.rows && indices->rows() > 1 && soc_.arch == "a2a3")
      return Fail(fmt::format("pl.mgather of rows picked by a column of indices [{}, 1] runs on a5 only; on {} the "
                              "indices must be a row [1, {}]",
                              indices->rows(), soc_.arch, indices->rows()));
    instr.src0 = indices->ref;
    gather.index_cols = indices->cols();
  }
  gather.out_rows = tile->rows();
  gather.out_cols = tile->cols();
  if (auto ok = NarrowTo(target->type(), instr); !ok) return ok;
  values_[target.get()] = *tile;
  Emit(instr);
  return {};
}

pypto::expected<void, std::string> Decoder::DecodeStore(const ir::VarPtr& target, const ir::Call& call) {
  if (call.args().size() < 3) return Fail("tile.store takes (tile, offsets, output_tensor[, shapes])");
  auto tile = Tile(call.args()[0], "value of tile.store");
  if (!tile) return Error(tile.error());
  auto offsets = Offsets(call.args()[1], "store offsets");
  if (!offsets) return Error(offsets.error());
  auto tensor = Tensor(call.args()[2], "destination of tile.store");
  if (!tensor) return Error(tensor.error());
  // An FP32 accumulator may go out to an FP16/BF16 tensor, rounded by the fixpipe.
  const bool narrows = tile->ref.space == ir::MemorySpace::Acc && tile->dtype == ir::DataType::FP32 &&
                       ((*tensor)->dtype == ir::DataType::FP16 || (*tensor)->dtype == ir::DataType::BF16);
  if (tile->dtype != (*tensor)->dtype && !narrows) {
    return Fail(fmt::format("cannot store a {} tile into tensor '{}' of {}", ir::DataTypeName(tile->dtype),
                            (*tensor)->name, ir::DataTypeName((*tensor)->dtype)));
  }
  // The tile's shape is the region's; a rank-deficient tile is padded with leading 1s, and one of
  // higher rank drops its extra leading 1s.
  ir::Shape shape = tile->shape;
  while (shape.size() < offsets->size()) shape.insert(shape.begin(), 1);
  while (shape.size() > offsets->size() && shape.front() == 1) shape.erase(shape.begin());
  // A 2-D tile merging an N-d window's rows (FlattenTileNdTo2D) names the window with shapes=; its
  // elements land in it in row-major order, as those of the N-d tile would.
  auto window = StoredWindow(call, tile->shape, offsets->size());
  if (!window) return Error(window.error());
  if (!window->empty()) shape = *window;
  Instr instr;
  instr.op = Opcode::Store;
  instr.atomic_add = ir::AccumulatesIntoWrittenArg(call);
  // A tile narrower than its shape, or stored in part, is checked where its elements land, at run time.
  const bool partial = call.args()[0]->type()->As<ir::TileType>()->has_partial_valid_shape() ||
                       (call.args().size() > 3 && window->empty());
  if ((*tensor)->layout != ir::TensorLayout::ND)
    return Fail(fmt::format("tile.store into the MX scale tensor '{}' (pl.{}) is not supported by the simulator",
                            (*tensor)->name, ir::TensorLayoutName((*tensor)->layout)));
  const bool fp4 = tile->dtype == ir::DataType::FP4;
  if (fp4)
    if (auto ok = PackedFp4Region("tile.store", shape, *offsets, partial); !ok) return Fail(ok.error());
  if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], shape, instr, partial); !ok) return ok;
  instr.kind = KindOf((*tensor)->dtype);
  instr.narrow_to_half = narrows;
  instr.elem_dtype = (*tensor)->dtype;
  static constexpr ir::DataType kAtomic[] = {ir::DataType::FP32,  ir::DataType::FP16,  ir::DataType::BF16,
                                             ir::DataType::INT32, ir::DataType::INT16, ir::DataType::INT8};
  if (instr.atomic_add && std::find(std::begin(kAtomic), std::end(kAtomic), instr.elem_dtype) == std::end(kAtomic)) {
    return Fail(fmt::format("an atomic-add store into a {} tensor is not supported by the simulator",
                            ir::DataTypeName(instr.elem_dtype)));
  }
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes((*tensor)->dtype));
  instr.src0 = tile->ref;
  instr.num_elements = fp4 ? tile->num_elements / 2 : tile->num_elements;
  if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
  if (window->empty())
    if (auto ok = NarrowToStoredPart(call, tile->shape, instr); !ok) return ok;
  // The result names the tensor that was written.
  if (target) values_[target.get()] = values_.at(call.args()[2]->As<ir::Var>());
  Emit(instr);
  return {};
}

// `pl.mscatter(src, idx, out)`: a store whose region is the whole tensor, each element of src
// going to the flat index idx holds at its position (checked when it runs).
pypto::expected<void, std::string> Decoder::DecodeScatterStore(const ir::VarPtr& target, const ir::Call& call) {
  auto src = Tile(call.args()[0], "source of pl.mscatter");
  if (!src) return Error(src.error());
  auto idx = Tile(call.args()[1], "indices of pl.mscatter");
  if (!idx) return Error(idx.error());
  auto tensor = Tensor(call.args()[2], "output of pl.mscatter");
  if (!tensor) return Error(tensor.error());
  Instr instr;
  instr.op = Opcode::Store;
  instr.scatter = true;
  const std::vector<Operand> origin((*tensor)->shape.size(), Operand::Imm(0));
  std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
  if (auto ok = CheckRegion(**tensor, origin, std::make_shared<ir::TupleLiteral>(zeros), (*tensor)->shape, instr);
      !ok)
    return ok;
  instr.kind = KindOf(src->dtype);
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(src->dtype));
  instr.src0 = src->ref;
  instr.src1 = idx->ref;
  instr.num_elements = src->num_elements;
  if (target) values_[target.get()] = values_.at(call.args()[2]->As<ir::Var>());
  Emit(instr);
  return {};
}

// The N-d window a 2-D tile's store names with shapes= of more dimensions than the tile, whose
// leading ones merge into the tile's rows; empty when shapes= is absent or names a corner instead.
pypto::expected<ir::Shape, std::string> Decoder::StoredWindow(const ir::Call& call, const ir::Shape& tile_shape,
                                                              size_t rank) {
  if (call.args().size() < 4) return ir::Shape{};
  auto shapes = Ints(call.args()[3], "store shapes");
  if (!shapes) return pypto::unexpected(shapes.error());
  if (tile_shape.size() != 2 || shapes->size() <= 2 || shapes->size() != rank) return ir::Shape{};
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shapes->size(); ++d) rows *= (*shapes)[d];
  if (rows != tile_shape[0] || shapes->back() != tile_shape[1]) return ir::Shape{};
  return *shapes;
}

// `pl.store(t, offsets, y, shapes=[r, c])` writes the tile's top-left [r, c] only: a valid region
// of that size (within the tile's own, when it has one).
pypto::expected<void, std::string> Decoder::NarrowToStoredPart(const ir::Call& call, const ir::Shape& tile_shape,
                                                               Instr& instr) {
  if (call.args().size() < 4) return {};
  auto shapes = Ints(call.args()[3], "store shapes");
  if (!shapes) return Error(shapes.error());
  if (*shapes == tile_shape) return {};
  if (shapes->size() < 2 && tile_shape.size() >= 2) return Fail("store shapes must cover the tile's rank");
  const int64_t rows = shapes->size() >= 2 ? (*shapes)[shapes->size() - 2] : 1, cols = shapes->back();
  if (instr.partial && (instr.valid.rows.is_reg() || instr.valid.cols.is_reg()))
    return Fail("storing part of a tile whose valid region is known only at run time is not supported yet");
  if (instr.partial) {
    instr.valid.rows = Operand::Imm(std::min(rows, instr.valid.rows.imm));
    instr.valid.cols = Operand::Imm(std::min(cols, instr.valid.cols.imm));
  } else {
    instr.partial = true;
    instr.valid = ValidRegion{Operand::Imm(rows), Operand::Imm(cols)};
  }
  return {};
}

}  // namespace pypto::sim::decode
