#include "kernel_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <fmt/ranges.h>

#include "mlir_types.h"
#include "pypto/ir/dynamic_extent.h"
#include "source_loc.h"

namespace pypto::backend_ptoas {

KernelEmitter::KernelEmitter(const ir::Function& kernel, const KernelPlan& plan, const ModuleOptions& options)
    : kernel_(kernel), plan_(plan), options_(options) {}

std::string KernelEmitter::Emit() {
  BindNames();
  // Constants are requested while the other sections print and are declared first, in first-use order.
  EmitTensorViews();
  EmitIndexCasts();
  EmitPipeSetup();
  EmitTileAllocs();
  EmitLocalArrays();
  for (const auto& stmt : plan_.stmts) LowerStmt(*stmt);

  std::string out = Signature();
  for (const auto& decl : names_.constant_decls()) out += fmt::format("    {}\n", decl);
  for (const auto& line : prologue_) out += line;
  for (const auto& line : body_) out += line;
  out += "    return\n  }\n";
  return out;
}

void KernelEmitter::BindNames() {
  // %argN follow the module's argument order; reserving them keeps a value named "arg0" apart.
  size_t index = 0;
  for (const auto* params : {&plan_.tensor_params, &plan_.scalar_params}) {
    for (const auto& param : *params) {
      std::string name = fmt::format("arg{}", index++);
      names_.Reserve(name);
      values_[param.get()] = "%" + name;
    }
  }
  // Each window a comm op reaches peers through gets its CommContext next (comm_ops.cpp).
  for (const auto& param : plan_.tensor_params) {
    if (!plan_.comm_windows.contains(param.get())) continue;
    std::string name = fmt::format("arg{}", index++);
    names_.Reserve(name);
    comm_contexts_[param.get()] = "%" + name;
  }
  // Then one index per dynamic axis of a tensor parameter, its extent when the kernel runs (as
  // upstream's PTO codegen appends one per dynamic dimension); kernel_entry reads it off the tensor.
  for (const auto& param : plan_.tensor_params) {
    const auto& shape = param->type()->As<ir::TensorType>()->shape();
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (shape[axis] != ir::kDynamicExtent) continue;
      std::string name = fmt::format("arg{}", index++);
      names_.Reserve(name);
      extent_args_[{param.get(), axis}] = "%" + name;
    }
  }
  // The launch identity follows, as i32 arguments (see LaunchIdentity), then the GM slot buffer of
  // the cross-core pipes (cross_core_pipes.h).
  auto launch_arg = [&] {
    std::string name = fmt::format("arg{}", index++);
    names_.Reserve(name);
    return "%" + name;
  };
  if (plan_.sdma_workspace) sdma_workspace_arg_ = launch_arg();  // before the launch identity, as upstream
  if (plan_.launch.block) {
    block_idx_arg_ = launch_arg();
    block_num_arg_ = launch_arg();
  }
  if (plan_.launch.subblock) subblock_idx_arg_ = launch_arg();
  if (plan_.pipes.gm_slot_buffer) gm_slot_buffer_arg_ = launch_arg();
  for (const auto& param : plan_.index_scalars) {
    if (param->type()->As<ir::ScalarType>()->dtype() == ir::DataType::INDEX) {
      indices_[param.get()] = values_.at(param.get());
    }
  }
  for (const auto* assign : plan_.tile_defs) {
    const ir::Var* tile = assign->var().get();
    values_[tile] = names_.Named(tile->name_hint());
    if (plan_.row_views.contains(tile)) row_views_[tile] = names_.Named(tile->name_hint() + "_row");
    if (plan_.transposed_mats.contains(tile)) transposed_views_[tile] = names_.Named(tile->name_hint() + "_t");
  }
  for (const auto& [alias, tile] : plan_.tile_aliases) {
    values_[alias] = values_.at(tile);
    if (auto view = row_views_.find(tile); view != row_views_.end()) row_views_[alias] = view->second;
  }
  for (const auto& tensor : plan_.viewed_tensors) views_[tensor.get()] = names_.Named(tensor->name_hint() + "_view");
  // Every array variable is the storage of the array.create it derives from.
  for (const auto* assign : plan_.local_arrays) values_[assign->var().get()] = names_.Named(assign->var()->name_hint());
  for (const auto& [array, root] : plan_.array_roots) values_[array] = values_.at(root);
}

std::string KernelEmitter::Signature() const {
  std::vector<std::string> args;
  for (const auto& param : plan_.tensor_params) {
    const auto* tensor = param->type()->As<ir::TensorType>();
    if (plan_.ffts_workspaces.contains(param.get())) {
      args.push_back(fmt::format("{}: {}", values_.at(param.get()), FftsWorkspaceType(*tensor)));
      continue;
    }
    args.push_back(fmt::format("{}: {}", values_.at(param.get()), PtrType(ElementOf(tensor->dtype()))));
  }
  for (const auto& param : plan_.scalar_params) {
    const auto* scalar = param->type()->As<ir::ScalarType>();
    args.push_back(fmt::format("{}: {}", values_.at(param.get()), ElementOf(scalar->dtype())));
  }
  for (const auto& param : plan_.tensor_params)
    if (auto it = comm_contexts_.find(param.get()); it != comm_contexts_.end())
      args.push_back(fmt::format("{}: {}", it->second, PtrType("i64")));
  for (const auto& param : plan_.tensor_params) {
    const auto& shape = param->type()->As<ir::TensorType>()->shape();
    for (size_t axis = 0; axis < shape.size(); ++axis)
      if (auto it = extent_args_.find({param.get(), axis}); it != extent_args_.end())
        args.push_back(fmt::format("{}: index", it->second));
  }
  if (!sdma_workspace_arg_.empty()) args.push_back(fmt::format("{}: {}", sdma_workspace_arg_, PtrType("i8")));
  for (const auto* arg : {&block_idx_arg_, &block_num_arg_, &subblock_idx_arg_})
    if (!arg->empty()) args.push_back(fmt::format("{}: i32", *arg));
  if (!gm_slot_buffer_arg_.empty()) args.push_back(fmt::format("{}: {}", gm_slot_buffer_arg_, PtrType("f32")));
  const char* kind = kernel_.type() == ir::FunctionType::AIC ? "cube" : "vector";
  return fmt::format("  func.func @{}({}) attributes {{pto.kernel_kind = #pto.kernel_kind<{}>}} {{\n", kernel_.name(),
                     fmt::join(args, ", "), kind);
}

void KernelEmitter::EmitTensorViews() {
  for (const auto& param : plan_.tensor_params) EmitDenseStrides(*param);
  for (const auto& param : plan_.viewed_tensors) {
    const auto* tensor = param->type()->As<ir::TensorType>();
    TypedValue pointer{values_.at(param.get()), PtrType(ElementOf(tensor->dtype()))};
    Add(prologue_, TensorView(*param, pointer, views_.at(param.get())), param->span());
  }
}

// Stride d of a dense row-major tensor is stride d + 1 times extent d + 1. Where a dynamic axis
// enters that product the stride is a run-time value, the extent's index argument (kernel_entry
// passes it from the task's tensor), multiplied by the rest: one arith.muli per such stride, emitted
// here, before the views and offsets that read it. A dynamic outermost axis is in no stride.
void KernelEmitter::EmitDenseStrides(const ir::Var& param) {
  const auto& shape = param.type()->As<ir::TensorType>()->shape();
  std::vector<DenseStride> strides(shape.size());
  for (size_t d = shape.size(); d-- > 1;) {
    const DenseStride& inner = strides[d];
    DenseStride& stride = strides[d - 1];
    if (shape[d] != ir::kDynamicExtent) {
      stride.constant = inner.constant * shape[d];
      stride.run_time = inner.run_time;
      if (!inner.run_time.empty() && shape[d] != 1) {
        stride.constant = 1;
        stride.run_time = Multiply(inner, shape[d], param);
      }
      continue;
    }
    const std::string& extent = extent_args_.at({&param, d});
    stride.run_time = inner.run_time.empty() && inner.constant == 1 ? extent : Multiply(inner, extent, param);
  }
  dense_strides_[&param] = std::move(strides);
}

// `%<param>_stride = arith.muli <stride>, <factor> : index`, the product as one run-time value.
std::string KernelEmitter::Multiply(const DenseStride& stride, const std::variant<int64_t, std::string>& factor,
                                    const ir::Var& param) {
  const std::string lhs = stride.run_time.empty() ? IndexConstant(stride.constant).value : stride.run_time;
  const std::string rhs = std::holds_alternative<int64_t>(factor) ? IndexConstant(std::get<int64_t>(factor)).value
                                                                  : std::get<std::string>(factor);
  std::string result = names_.Named(param.name_hint() + "_stride");
  Add(prologue_, fmt::format("{} = arith.muli {}, {} : index", result, lhs, rhs), param.span());
  return result;
}

// The strides of tensor parameter `param` as index operands (EmitDenseStrides computed them).
std::vector<TypedValue> KernelEmitter::DenseStrides(const ir::Var& param) {
  std::vector<TypedValue> operands;
  for (const DenseStride& stride : dense_strides_.at(&param))
    operands.push_back(stride.run_time.empty() ? IndexConstant(stride.constant) : TypedValue{stride.run_time, "index"});
  return operands;
}

// The view of tensor parameter `param` at `pointer`: its own memory, or a peer's copy of it (comm_ops.cpp).
// Its shape holds the run-time extent of each dynamic axis; its strides are the dense row-major ones
// (computed from those extents where they depend on them), but for a [M, 1] column vector, which
// ptoas reads column-major (DN): stepping to its one column passes over its M rows, so its strides
// are (1, M). A [.., M, 1] tensor of higher rank has the row-major strides as upstream declares them.
PtoOp KernelEmitter::TensorView(const ir::Var& param, const TypedValue& pointer, const std::string& name) {
  const auto* tensor = param.type()->As<ir::TensorType>();
  const auto& shape = tensor->shape();
  const bool column = IsColumnVectorTensor(*tensor);
  std::vector<TypedValue> dims;
  for (size_t axis = 0; axis < shape.size(); ++axis)
    dims.push_back(shape[axis] == ir::kDynamicExtent ? TypedValue{extent_args_.at({&param, axis}), "index"}
                                                     : IndexConstant(shape[axis]));
  std::vector<TypedValue> steps =
      column && shape.size() == 2 ? std::vector<TypedValue>{IndexConstant(1), dims[0]} : DenseStrides(param);
  const std::string element = ElementOf(tensor->dtype());
  return {.name = "pto.make_tensor_view",
          .result = TypedValue{name, TensorViewType(shape.size(), element)},
          .groups = {{OperandSyntax::Leading, "", {pointer}},
                     {OperandSyntax::List, "shape", dims},
                     {OperandSyntax::List, "strides", steps}},
          .attrs = {{"layout", tensor->layout() != ir::TensorLayout::ND ? std::string(MxLayoutAttr(tensor->layout()))
                               : column                                ? "#pto.layout<dn>"
                                                                       : "#pto.layout<nd>"}}};
}

void KernelEmitter::EmitIndexCasts() {
  // Index arithmetic runs in `index`; a narrower parameter is widened once, where it dominates every use.
  for (const auto& param : plan_.index_scalars) {
    auto dtype = param->type()->As<ir::ScalarType>()->dtype();
    if (dtype == ir::DataType::INDEX) continue;
    std::string name = names_.Named(param->name_hint() + "_idx");
    indices_[param.get()] = name;
    Add(prologue_,
        fmt::format("{} = arith.index_cast {} : {} to index", name, values_.at(param.get()), ElementOf(dtype)),
        param->span());
  }
}

namespace {

// Whether a tile's valid region has an extent known only when the body runs.
bool HasComputedExtent(const ir::TileType& tile) {
  return std::any_of(tile.valid_shape().begin(), tile.valid_shape().end(),
                     [](const ir::ExprPtr& extent) { return !ir::AsConstInt(extent).has_value(); });
}

}  // namespace

void KernelEmitter::EmitTileAllocs() {
  // One alloc_tile per tile variable at the address memory allocation chose; variables that share
  // a buffer get the same address, which is how ptoas (with no planner of its own here) sees reuse.
  // A column vector that a row-major op touches also gets its [1, N] row view, at the same address.
  for (const auto* assign : plan_.tile_defs) {
    const ir::Var& var = *assign->var();
    const auto* tile = var.type()->As<ir::TileType>();
    TileExtent extent = TileRowsCols(*tile);
    TypedValue addr{names_.Constant(AllocOffset(var), "i64"), "i64"};
    TypedValue rows = IndexConstant(extent.rows);
    TypedValue cols = IndexConstant(extent.cols);
    const auto* call = assign->value()->As<ir::Call>();
    const ir::Span& span = OpSpan(assign->span(), call->span());
    auto alias = plan_.tile_aliases.find(&var);
    if (plan_.acc_views.contains(alias == plan_.tile_aliases.end() ? &var : alias->second)) continue;  // LowerAccView
    if (HasComputedExtent(*tile)) {
      deferred_allocs_.insert(&var);
      continue;
    }
    auto [valid_rows, valid_cols] = ValidOperands(*tile, span);
    if (plan_.transposed_rights.contains(&var)) std::swap(valid_rows, valid_cols);  // typed [K, N]
    Add(prologue_, AllocTile({values_.at(&var), TileOperandType(var)}, addr, valid_rows, valid_cols), span);
    if (auto it = row_views_.find(&var); it != row_views_.end()) {
      Add(prologue_, AllocTile({it->second, RowViewType(var)}, addr, IndexConstant(1), rows), span);
    }
    if (auto it = transposed_views_.find(&var); it != transposed_views_.end()) {
      Add(prologue_, AllocTile({it->second, TransposedViewType(var)}, addr, valid_cols, valid_rows), span);
    }
  }
}

void KernelEmitter::Add(std::vector<std::string>& section, const std::string& text, const ir::Span& span) const {
  std::string loc = options_.source_locations ? LocSuffix(span) : "";
  section.push_back(fmt::format("{:{}}{}{}\n", "", 4 + 2 * depth_, text, loc));
}

void KernelEmitter::Add(std::vector<std::string>& section, const PtoOp& op, const ir::Span& span) const {
  Add(section, options_.generic_form ? GenericForm(op) : CustomForm(op), span);
}

void KernelEmitter::AddStructural(const std::string& text) {
  body_.push_back(fmt::format("{:{}}{}\n", "", 4 + 2 * depth_, text));
}

PtoOp KernelEmitter::AllocTile(const TypedValue& tile, const TypedValue& addr, const TypedValue& valid_rows,
                               const TypedValue& valid_cols) {
  return {.name = "pto.alloc_tile",
          .result = tile,
          .groups = {{OperandSyntax::Keyword, "addr", {addr}},
                     {OperandSyntax::Keyword, "valid_row", {valid_rows}},
                     {OperandSyntax::Keyword, "valid_col", {valid_cols}}}};
}

std::pair<TypedValue, TypedValue> KernelEmitter::ValidOperands(const ir::TileType& tile, const ir::Span& span) {
  const TileExtent extent = TileRowsCols(tile);
  if (!tile.has_partial_valid_shape()) return {IndexConstant(extent.rows), IndexConstant(extent.cols)};
  const auto& valid = tile.valid_shape();
  auto operand = [&](const ir::ExprPtr& expr) { return TypedValue{IndexValue(expr, span), "index"}; };
  if (valid.size() == 1) return {IndexConstant(1), operand(valid[0])};
  return {operand(valid[0]), operand(valid[1])};
}

void KernelEmitter::EmitDeferredAlloc(const ir::AssignStmt& assign) {
  const ir::Var& var = *assign.var();
  const auto* tile = var.type()->As<ir::TileType>();
  const ir::Span& span = OpSpan(assign.span(), assign.value()->As<ir::Call>()->span());
  auto [valid_rows, valid_cols] = ValidOperands(*tile, span);
  if (plan_.transposed_rights.contains(&var)) std::swap(valid_rows, valid_cols);
  TypedValue addr{names_.Constant(AllocOffset(var), "i64"), "i64"};
  Add(body_, AllocTile({values_.at(&var), TileOperandType(var)}, addr, valid_rows, valid_cols), span);
  if (auto it = transposed_views_.find(&var); it != transposed_views_.end())
    Add(body_, AllocTile({it->second, TransposedViewType(var)}, addr, valid_cols, valid_rows), span);
}

TypedValue KernelEmitter::IndexConstant(int64_t value) { return {names_.Constant(value, "index"), "index"}; }

// A tile's own bytes, or, for a tile.transpose_view, its source's, which it reads.
int64_t KernelEmitter::AllocOffset(const ir::Var& tile) const {
  auto view = plan_.zn_views.find(&tile);
  const ir::Var& owner = view == plan_.zn_views.end() ? tile : *view->second;
  const auto band = plan_.band_views.find(&tile);
  return owner.type()->As<ir::TileType>()->memref()->byte_offset + (band == plan_.band_views.end() ? 0 : band->second);
}

std::string KernelEmitter::TileOperandType(const ir::Var& tile) const {
  auto alias = plan_.tile_aliases.find(&tile);
  const ir::Var& root = alias == plan_.tile_aliases.end() ? tile : *alias->second;
  if (auto view = plan_.zn_views.find(&root); view != plan_.zn_views.end()) return TransposedViewType(*view->second);
  const auto* type = tile.type()->As<ir::TileType>();
  if (plan_.transposed_rights.contains(&tile)) {
    const TileExtent extent = TileRowsCols(*type);
    return TileBufType(type->memory_space(), ElementOf(type->dtype()), {extent.cols, extent.rows});
  }
  if (auto mx = plan_.mx_scale_mats.find(&tile); mx != plan_.mx_scale_mats.end())
    return TileBufType(type->memory_space(), ElementOf(type->dtype()), TileRowsCols(*type), MxScaleLayout(mx->second), 0);
  auto pad = plan_.pad_codes.find(&tile);
  return AccBandType(root, TileBufType(*type, ElementOf(type->dtype()), pad == plan_.pad_codes.end() ? 0 : pad->second));
}

std::string KernelEmitter::TransposedViewType(const ir::Var& tile) const {
  const auto* type = tile.type()->As<ir::TileType>();
  const TileExtent extent = TileRowsCols(*type);
  return TileBufType(type->memory_space(), ElementOf(type->dtype()), {extent.cols, extent.rows},
                     TileLayout{"row_major", "col_major", 512}, 0);
}

TypedValue KernelEmitter::TransposedView(const ir::Var& tile) const {
  auto alias = plan_.tile_aliases.find(&tile);
  const ir::Var& root = alias == plan_.tile_aliases.end() ? tile : *alias->second;
  std::string type = TransposedViewType(root);
  // A view of a pipe slot is a pto.treshape, whose result types its valid extents statically.
  if (plan_.pipes.slot_tiles.contains(&root)) {
    const TileExtent extent = TileRowsCols(*root.type()->As<ir::TileType>());
    type.replace(type.find("v_row=?, v_col=?"), std::string_view("v_row=?, v_col=?").size(),
                 fmt::format("v_row={}, v_col={}", extent.cols, extent.rows));
  }
  auto view = transposed_views_.find(&root);
  return {view == transposed_views_.end() ? "" : view->second, type};
}

// The plan has already rejected element types without a spelling.
std::string KernelEmitter::ElementOf(ir::DataType dtype) const { return MlirElementType(dtype).value_or("?"); }

}  // namespace pypto::backend_ptoas
