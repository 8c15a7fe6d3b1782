// FunctionParser: DSL spellings rewritten into the call they stand for: pl.assemble, a tensor's
// pl.slice / pl.create_tensor inside a kernel, pl.read / pl.write with one index, atomic=, the
// gather and scatter argument forms, and the tile forms of unified ops given whole tensors.
#include "function_parser.h"

#include <fmt/format.h>

#include <algorithm>

#include "index_op_forms.h"
#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// `target = pl.assemble(target, source, offset)` inside a kernel writes the tile `source` into the
// tensor `target` at `offset`: the store `pl.store(source, offset, target)`, whose value is the
// tensor. The call is rewritten as that store, keeping the user's argument nodes, so its checks
// point at the user's arguments (their messages name pl.store).
ir::Result<ir::ExprPtr> FunctionParser::ParseAssemble(py::handle node) {
  const std::string name = DottedName(node.attr("func"));
  const ir::Span span = map_.SpanOf(node.attr("func"));
  if (kernel_depth_ == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' outside a kernel (a tensor-to-tensor copy in orchestration) is not supported "
                                 "yet",
                                 name),
                     span, "assemble inside a pl.at scope, where it stores a tile into the tensor");
  std::vector<py::object> args(3);
  py::list store_keywords;
  py::module_ ast = py::module_::import("ast");
  const char* const kNames[] = {"target", "source", "offset"};
  py::list positional = node.attr("args");
  if (py::len(positional) > 3)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes at most 3 arguments, got {}", name, py::len(positional)), span);
  for (size_t i = 0; i < py::len(positional); ++i) args[i] = positional[i];
  for (auto keyword : node.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key == "atomic") {
      auto atomic = AtomicKeyword(name, keyword.attr("value"));
      if (!atomic) return pypto::unexpected(atomic.error());
      if (*atomic) store_keywords.append(ast.attr("keyword")("atomic", **atomic));
      continue;
    }
    auto slot = std::find(std::begin(kNames), std::end(kNames), key);
    if (slot == std::end(kNames))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' has no argument '{}' (arguments: target, source, offset, atomic)", name, key),
                       map_.SpanOf(keyword.attr("value")));
    args[slot - std::begin(kNames)] = keyword.attr("value");
  }
  for (size_t i = 0; i < 3; ++i)
    if (!args[i]) return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' needs {}", name, kNames[i]), span);
  auto target = ParseExpr(args[0]);
  if (!target) return pypto::unexpected(target.error());
  if ((*target)->type()->As<ir::TileType>()) return ParseTileAssemble(name, *target, args, store_keywords, span);
  return ParseCall(RewrittenCall(node, "pl.store", {args[1], args[2], args[0]}, store_keywords));
}

// `target = pl.assemble(target, source, offset)` with a tile target writes the tile `source` into a
// window of it, in place (tile.assemble); a whole tensor given as the source is loaded first.
ir::Result<ir::ExprPtr> FunctionParser::ParseTileAssemble(const std::string& name, const ir::ExprPtr& target,
                                                          const std::vector<py::object>& args,
                                                          const py::list& store_keywords, const ir::Span& span) {
  if (py::len(store_keywords) > 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' into a tile cannot be atomic; an atomic add writes a tensor", name), span);
  if (const auto* slice = target->As<ir::Var>(); slice && orchestration_slices_.contains(slice)) {
    const auto* tensor = orchestration_slices_.at(slice)->As<ir::Call>()->args()[0]->As<ir::Var>();
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' into '{}', a slice orchestration code took, would write only this kernel's "
                                 "copy of it, never '{}'",
                                 name, slice->name_hint(), tensor ? tensor->name_hint() : "its tensor"),
                     span,
                     fmt::format("assign the window instead ({}[...] = tile), which writes the tensor",
                                 slice->name_hint()));
  }
  auto source = ParseExpr(args[1]);
  if (!source) return pypto::unexpected(source.error());
  if ((*source)->type()->As<ir::TensorType>()) {  // a whole tensor written into the tile is loaded first
    source = LoadWhole(*source, map_.SpanOf(args[1]));
    if (!source) return pypto::unexpected(source.error());
  }
  if (auto moved = MovedToVecForAssemble(*source, target, span); !moved) return moved;
  else source = *moved;
  auto offset = ParseExpr(args[2]);
  if (!offset) return pypto::unexpected(offset.error());
  auto call = ir::OpRegistry::Get().CreateCall("tile.assemble", {target, *source, *offset}, {}, span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

// A matmul result (Acc) written into a vector tile: upstream's tensor-level assemble takes any
// tile, so the result is moved into the vector buffer first (on a2a3 the mixed-kernel expansion
// turns that move into the cube-to-vector handoff).
ir::Result<ir::ExprPtr> FunctionParser::MovedToVecForAssemble(const ir::ExprPtr& source, const ir::ExprPtr& target,
                                                              const ir::Span& span) {
  const auto* from = source->type()->As<ir::TileType>();
  const auto* into = target->type()->As<ir::TileType>();
  if (!from || !into || from->memory_space() != ir::MemorySpace::Acc || into->memory_space() != ir::MemorySpace::Vec)
    return source;
  auto move = ir::OpRegistry::Get().CreateCall("tile.move", {source},
                                               {{"target_memory", ir::OpAttr(ir::MemorySpace::Vec)}}, span);
  if (!move) return pypto::unexpected(move.error());
  auto moved = std::make_shared<ir::Var>("assembled_acc", (*move)->type(), span);
  prelude_.push_back(std::make_shared<ir::AssignStmt>(moved, *move, span));
  return ir::ExprPtr(moved);
}

bool FunctionParser::HasKeyword(py::handle call, const std::string& key) {
  for (auto keyword : call.attr("keywords"))
    if (!keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == key) return true;
  return false;
}

// `pl.slice(tensor, shape, offset, valid_shape=...)` inside a kernel reads that region into a tile:
// the load `pl.load(tensor, offset, shape, valid_shape=...)`, written with the user's argument nodes
// so its checks point at them. Nothing (nullopt) when the first argument is a tile: that is
// tile.slice.
ir::Result<std::optional<py::object>> FunctionParser::SliceOfTensorAsLoad(py::handle node) {
  const std::string name = DottedName(node.attr("func"));
  py::list positional = node.attr("args");
  if (py::len(positional) == 0) return std::optional<py::object>();
  auto source = ParseExpr(positional[0]);
  if (!source) return pypto::unexpected(source.error());
  if (!(*source)->type()->As<ir::TensorType>()) return std::optional<py::object>();
  const char* const kNames[] = {"x", "shape", "offset"};
  std::vector<py::object> args(3);
  if (py::len(positional) > 3)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes at most 3 positional arguments, got {}", name, py::len(positional)),
                     map_.SpanOf(node.attr("func")));
  for (size_t i = 0; i < py::len(positional); ++i) args[i] = positional[i];
  py::list load_keywords;
  for (auto keyword : node.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key == "valid_shape") {
      load_keywords.append(keyword);
      continue;
    }
    auto slot = std::find(std::begin(kNames), std::end(kNames), key);
    if (slot == std::end(kNames))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' of a tensor inside a kernel has no argument '{}' (arguments: x, shape, "
                                   "offset, valid_shape)",
                                   name, key),
                       map_.SpanOf(keyword.attr("value")));
    args[slot - std::begin(kNames)] = keyword.attr("value");
  }
  for (size_t i = 1; i < 3; ++i)
    if (!args[i])
      return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' needs {}", name, kNames[i]),
                       map_.SpanOf(node.attr("func")));
  return std::optional<py::object>(RewrittenCall(node, "pl.load", {args[0], args[2], args[1]}, load_keywords));
}

// `pl.slice(h_tile, shape, offset)` inside a kernel, of a slice `h_tile` taken in orchestration code:
// the load of that window of h itself (ReadThroughRegion), as the subscript `h_tile[...]` is, not a
// tile.slice of the whole slice loaded into UB. Nothing for any other source, or with keywords
// (valid_shape=): that stays a tile.slice.
std::optional<ir::Result<ir::ExprPtr>> FunctionParser::SliceOfSliceAsLoad(py::handle node) {
  py::list positional = node.attr("args");
  if (kernel_depth_ == 0 || py::len(positional) != 3 || py::len(node.attr("keywords")) != 0) return std::nullopt;
  const ir::Var* slice = OrchestrationSliceNamed(positional[0]);
  if (!slice || written_through_.contains(slice)) return std::nullopt;  // a stale read is refused as it is
  auto shape = ParseArgValue(positional[1]);
  if (!shape) return pypto::unexpected(shape.error());
  auto offsets = ParseArgValue(positional[2]);
  if (!offsets) return pypto::unexpected(offsets.error());
  const auto* shape_expr = std::get_if<ir::ExprPtr>(&*shape);
  const auto* offsets_expr = std::get_if<ir::ExprPtr>(&*offsets);
  const auto* extents = shape_expr ? (*shape_expr)->As<ir::TupleLiteral>() : nullptr;
  const auto* starts = offsets_expr ? (*offsets_expr)->As<ir::TupleLiteral>() : nullptr;
  if (!extents || !starts) return std::nullopt;
  Region window{.source = env_.at(positional[0].attr("id").cast<std::string>()),
                .offsets = starts->elements()};
  for (const auto& extent : extents->elements()) {
    auto constant = ir::AsConstInt(extent);
    if (!constant) return std::nullopt;  // the tile.slice reports it
    window.shape.push_back(*constant);
  }
  const ir::Span span = map_.SpanOf(node);
  auto region = ReadThroughRegion(window, span);
  if (!region) return std::nullopt;
  if (!*region) return pypto::unexpected(region->error());
  auto load = ir::OpRegistry::Get().CreateCall(
      "tile.load", {(*region)->source, Tuple((*region)->offsets, span), *shape_expr}, {}, span);
  if (!load) return pypto::unexpected(load.error());
  return ir::ExprPtr(*load);
}

// pl.read / pl.write in any of their spellings.
bool FunctionParser::IsElementAccess(std::string_view name) {
  for (std::string_view prefix : {"pl.", "pl.tensor.", "pl.tile."})
    if (name.starts_with(prefix) && (name.substr(prefix.size()) == "read" || name.substr(prefix.size()) == "write"))
      return true;
  return false;
}

bool FunctionParser::IsElementWrite(py::handle node) {
  if (!IsNode(node, "Call")) return false;
  const std::string name = DottedName(node.attr("func"));
  return IsElementAccess(name) && name.ends_with(".write");
}

// `pl.create_tensor(shape, dtype=...)` inside a kernel: a kernel computes on tiles, so the tensor is
// a Vec tile of that shape, as upstream's tensor-to-tile conversion makes it: pl.create_tile, or
// pl.full(shape, dtype=..., value=v) with init_value=v. manual_dep, an opt-out of the runtime's
// tracking of tensors between tasks, means nothing for a tile and is dropped.
py::object FunctionParser::CreatedTensorAsTile(py::handle call) {
  py::module_ ast = py::module_::import("ast");
  py::list keywords;
  py::object init;
  for (auto keyword : call.attr("keywords")) {
    const py::object arg = keyword.attr("arg");
    const std::string key = arg.is_none() ? "" : arg.cast<std::string>();
    if (key == "init_value") {
      init = py::reinterpret_borrow<py::object>(keyword.attr("value"));
    } else if (key != "manual_dep") {
      keywords.append(keyword);
    }
  }
  std::vector<py::object> args;
  for (auto arg : call.attr("args")) args.push_back(py::reinterpret_borrow<py::object>(arg));
  if (!init) return RewrittenCall(call, "pl.create_tile", args, keywords);
  py::object value = ast.attr("keyword")("value", init);
  ast.attr("copy_location")(value, init);
  keywords.append(value);
  return RewrittenCall(call, "pl.full", args, keywords);
}

// `pl.read(t, i)` / `pl.write(t, i, v)`: one index not in a list, as upstream accepts for a 1-D
// tensor.
bool FunctionParser::HasBareIndex(py::handle call) {
  py::list args = call.attr("args");
  return py::len(args) >= 2 && !IsNode(args[1], "List") && !IsNode(args[1], "Tuple");
}

// The same call with its second argument `i` written `[i]`.
py::object FunctionParser::WithIndexList(py::handle call) {
  py::module_ ast = py::module_::import("ast");
  py::list args = call.attr("args");
  py::list elements;
  elements.append(args[1]);
  py::object indices = ast.attr("List")(elements, ast.attr("Load")());
  ast.attr("copy_location")(indices, args[1]);
  py::list new_args;
  for (size_t i = 0; i < py::len(args); ++i) new_args.append(i == 1 ? indices : py::object(args[i]));
  py::object rewritten = ast.attr("Call")(call.attr("func"), new_args, call.attr("keywords"));
  ast.attr("copy_location")(rewritten, call);
  return rewritten;
}

// The store keyword value for `atomic=`: "add" for pl.AtomicType.Add, none for pl.AtomicType.None_
// or None (a plain store).
ir::Result<std::optional<py::object>> FunctionParser::AtomicKeyword(const std::string& name, py::handle value) {
  std::string kind = DottedName(value);
  if (kind.starts_with("pld.AtomicType.")) kind = "pl." + kind.substr(4);  // the distributed DSL's spelling
  if (kind == "pl.AtomicType.Add") {
    py::object text = py::module_::import("ast").attr("Constant")("add");
    py::module_::import("ast").attr("copy_location")(text, value);
    return std::optional<py::object>(text);
  }
  if (kind == "pl.AtomicType.None_" || (IsNode(value, "Constant") && value.attr("value").is_none()))
    return std::optional<py::object>();
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' atomic= takes pl.AtomicType.Add or pl.AtomicType.None_", name),
                   map_.SpanOf(value));
}

// The gathers and scatters by index written in one of upstream's argument forms, as the one call
// that form is (index_op_forms.h); nullopt for every other call. Inside a kernel, pl.gather and
// pl.tensor.gather with kvalue= are the compare form and without mask_pattern= the index form
// (torch.gather), pl.scatter / pl.tensor.scatter either form of Tensor.scatter_, and
// pl.paged_gather the tile op (its tensors are read where they are, not loaded); scatter_update
// takes its dim first or last in any spelling.
std::optional<ir::Result<py::object>> FunctionParser::IndexOpForm(const std::string& name, py::handle node) {
  const bool kernel = kernel_depth_ > 0;
  if (kernel && IsCompareGather(node)) return GatherCompare(node, map_);
  if (kernel && (name == "pl.gather" || name == "pl.tensor.gather") && !HasKeyword(node, "mask_pattern"))
    return GatherAlongDim(node, map_);
  if (kernel && (name == "pl.scatter" || name == "pl.tensor.scatter")) return ScatterForm(node, map_);
  if (kernel && (name == "pl.paged_gather" || name == "pl.tensor.paged_gather")) {
    std::vector<py::object> args;
    for (auto arg : node.attr("args")) args.push_back(py::reinterpret_borrow<py::object>(arg));
    return RewrittenCall(node, "pl.tile.paged_gather", args, py::list(node.attr("keywords")));
  }
  if (name == "pl.scatter_update" || name == "pl.tensor.scatter_update" || name == "pl.tile.scatter_update") {
    auto form = ScatterUpdateForm(node, map_);
    if (form && form->is_none()) return std::nullopt;
    return form;
  }
  return std::nullopt;
}

// Inside a kernel, `pl.tensor.X` of an op that only tiles have (pl.tensor.sort32, pl.tensor.ci) is
// the unified `pl.X`: whole tensors given to it are loaded as tiles, as upstream's tensor-to-tile
// conversion turns tensor.X into tile.X.
std::string FunctionParser::KernelSpelling(const std::string& name) {
  constexpr std::string_view kTensor = "pl.tensor.";
  if (!name.starts_with(kTensor)) return name;
  const std::string base = name.substr(kTensor.size());
  if (ir::OpRegistry::Get().Find("tensor." + base)) return name;
  return "pl." + base;
}

// `pl.mul(t, col)` of a [M, N] tile and a [M, 1] column: upstream's tensor-to-tile conversion makes
// it the row broadcast `pl.row_expand_mul(t, col)` (add, sub, mul and div). A column on the left
// of add or mul is swapped to the right; of sub or div it would change the result, so it is refused.
ir::Result<std::optional<std::string>> FunctionParser::RowBroadcastForm(
    const std::string& form, const std::vector<ir::ExprPtr>& operands,
    std::vector<std::pair<ArgValue, py::handle>>& positional, const ir::Span& span) const {
  static const std::set<std::string, std::less<>> kBroadcasting = {"pl.add", "pl.sub", "pl.mul", "pl.div"};
  if (!kBroadcasting.contains(form) || operands.size() != 2 || positional.size() != 2) return std::nullopt;
  const auto* lhs = operands[0]->type()->As<ir::TileType>();
  const auto* rhs = operands[1]->type()->As<ir::TileType>();
  if (!lhs || !rhs || lhs->shape().size() != 2 || rhs->shape().size() != 2) return std::nullopt;
  const auto is_column_of = [](const ir::TileType& column, const ir::TileType& matrix) {
    return column.shape()[1] == 1 && matrix.shape()[1] != 1 && column.shape()[0] == matrix.shape()[0];
  };
  const std::string expanded = "pl.row_expand_" + form.substr(3);
  if (is_column_of(*rhs, *lhs)) return expanded;
  if (!is_column_of(*lhs, *rhs)) return std::nullopt;
  if (form == "pl.sub" || form == "pl.div")
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{}: a [{}, 1] column on the left of a [{}, {}] tile has no row-broadcast form",
                                 form, lhs->shape()[0], rhs->shape()[0], rhs->shape()[1]),
                     span, "broadcast the column to the tile's shape first, with pl.row_expand(tile, column)");
  std::swap(positional[0], positional[1]);
  return expanded;
}

// Inside a kernel, a unified op given a whole tensor works on it as a tile: `pl.add(x, x)` loads
// x first, as upstream's tensor-to-tile conversion does (the tensor must fit the buffer).
bool FunctionParser::IsUnifiedCompute(const std::string& name) {
  static const std::set<std::string, std::less<>> kNotCompute = {
      "pl.load", "pl.store", "pl.create_tile", "pl.create_tensor", "pl.full", "pl.move", "pl.reshape", "pl.read",
      "pl.write", "pl.mscatter", "pl.mgather"};
  return name.starts_with("pl.") && !name.starts_with("pl.tile.") && !name.starts_with("pl.tensor.") &&
         !name.starts_with("pl.system.") && !name.starts_with("pl.prefetch.") && !name.starts_with("pl.comm.") &&
         !kNotCompute.contains(name);
}

ir::Result<ir::ExprPtr> FunctionParser::LoadWhole(const ir::ExprPtr& tensor, const ir::Span& span) {
  std::vector<ir::ExprPtr> offsets, shape;
  for (int64_t dim : tensor->type()->As<ir::TensorType>()->shape()) {
    offsets.push_back(std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span));
    shape.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
  }
  auto call = ir::OpRegistry::Get().CreateCall("tile.load", {tensor, Tuple(offsets, span), Tuple(shape, span)}, {},
                                               span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

}  // namespace pypto::frontend
