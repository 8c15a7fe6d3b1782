// FunctionParser: assignment statements (`x = v`, `x: T = v`, `M, N = t.shape`), the types
// annotations give them, and the scalar values they record for folding sizes.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm_spelling.h"
#include "index_op_forms.h"
#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// `var = value` for a scalar: an integer constant is read as that constant from then on, and any
// integer value is remembered for folding slice sizes (each assignment makes a new Var, so the
// value is the only one `var` ever holds).
void FunctionParser::RecordScalar(const ir::VarPtr& var, const ir::ExprPtr& value) {
  const auto* scalar = var->type()->As<ir::ScalarType>();
  if (!scalar) return;
  if (auto known = ir::AsConstInt(value)) program_.known_ints[var->id()] = *known;
  if (ir::IsInteger(scalar->dtype())) program_.scalar_values[var->id()] = value;
}

ir::ExprPtr FunctionParser::ScalarValue(const ir::Var& var) const {
  auto it = program_.scalar_values.find(var.id());
  return it == program_.scalar_values.end() ? nullptr : it->second;
}

// `pl.write(dst, [i, j], v)` as a statement. Into a tensor it is a store (an EvalStmt: the
// tensor keeps its name); into a tile the tile's name then holds the written tile, which the
// enclosing loops and ifs carry like any reassigned name.
ir::Result<ir::StmtPtr> FunctionParser::ParseElementWrite(py::handle stmt, py::handle call) {
  auto value = ParseExpr(call);
  if (!value) return pypto::unexpected(value.error());
  const ir::Span span = map_.SpanOf(stmt);
  const auto* write = (*value)->As<ir::Call>();
  const auto* dst = write && write->is_op_call() && write->op()->name == "tile.write"
                        ? write->args()[0]->As<ir::Var>()
                        : nullptr;
  if (!dst) return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, span));
  auto var = std::make_shared<ir::Var>(dst->name_hint(), (*value)->type(), span);
  env_[dst->name_hint()] = var;
  return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *value, span));
}

bool FunctionParser::StoresInto(const ir::Expr& value, const std::string& name) const {
  const auto* call = value.As<ir::Call>();
  if (!call || !call->is_op_call() || !call->op()->writes_arg) return false;
  auto bound = env_.find(name);
  return bound != env_.end() && call->args()[*call->op()->writes_arg].get() == bound->second.get();
}

ir::Result<ir::StmtPtr> FunctionParser::ParseAssign(py::handle stmt, bool annotated) {
  py::handle target = annotated ? stmt.attr("target") : py::handle(py::list(stmt.attr("targets"))[0]);
  if (!annotated && py::len(stmt.attr("targets")) != 1)
    return MakeError(DiagnosticKind::Syntax, "chained assignment is not supported", map_.SpanOf(stmt));
  if (IsNode(target, "Subscript") && !annotated && IsArray(target.attr("value")))
    return ParseArrayStore(stmt, target);
  if (IsNode(target, "Subscript") && !annotated)
    return kernel_depth_ == 0 ? ParseOrchestrationSliceAssign(stmt, target) : ParseSliceAssign(stmt, target);
  if (!annotated && IsSubmit(stmt.attr("value"))) {
    std::vector<py::handle> targets;
    if (IsNode(target, "Tuple"))
      for (auto element : target.attr("elts")) targets.push_back(element);
    else
      targets.push_back(target);
    return ParseSubmit(stmt, stmt.attr("value"), std::move(targets));
  }
  if (!annotated && IsInlineCall(stmt.attr("value"))) return BindInlineResult(target, stmt.attr("value"));
  if (!annotated && IsNode(target, "Tuple") && IsCompareGather(stmt.attr("value")))
    return BindInlineResult(target, stmt.attr("value"));
  if (!annotated && IsNode(target, "Tuple") && IsNode(stmt.attr("value"), "Call"))
    return ParseMultiResultCall(stmt, target);
  if (!annotated && IsNode(target, "Tuple") && ShapeOf(stmt.attr("value"))) return ParseShapeUnpack(stmt, target);
  if (!IsNode(target, "Name"))
    return MakeError(DiagnosticKind::Syntax, "only assignment to a plain name or a tensor slice is supported yet",
                     map_.SpanOf(target));
  if (stmt.attr("value").is_none())
    return MakeError(DiagnosticKind::Syntax, "an annotation without a value declares nothing", map_.SpanOf(stmt));
  if (auto shaped = ParseRunTimeShapedTensor(target, stmt); !shaped)
    return pypto::unexpected(shaped.error());
  else if (*shaped)
    return *shaped;
  // `t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(id=0)`: a pop takes the shape and
  // dtype of the tile it receives from the annotation when it does not spell them.
  declared_tile_ = nullptr;
  if (annotated)
    if (auto declared = ResolveType(stmt.attr("annotation"), map_, source_.constants, &expr_resolver_))
      if ((*declared)->As<ir::TileType>()) declared_tile_ = *declared;
  auto value = ParseExpr(stmt.attr("value"));
  declared_tile_ = nullptr;
  if (!value) return pypto::unexpected(value.error());
  std::string name = target.attr("id").cast<std::string>();
  // `ctx = pld.get_comm_ctx(window)`: the name stands for the window (ParseCommCtx); no statement.
  if (IsNode(stmt.attr("value"), "Call") && IsGetCommCtx(DottedName(stmt.attr("value").attr("func"))))
    if (auto window = std::dynamic_pointer_cast<const ir::Var>(*value)) {
      env_[name] = window;
      unavailable_.erase(name);
      assigned_types_[name] = window->type();
      return ir::StmtPtr{};
    }
  // `out = pl.store(t, offs, out)` / `out = pl.assemble(out, t, offs)`: the store writes `out` in
  // place, so `out` keeps naming the same tensor; no new value (and no loop carry) is made.
  if (StoresInto(**value, name)) return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, map_.SpanOf(stmt)));
  WarnOnMisboundResult(**value, name, map_.SpanOf(stmt));
  if (annotated) {
    auto typed = LiteralAsDeclared(*value, stmt.attr("annotation"));
    if (!typed) return pypto::unexpected(typed.error());
    value = *typed;
  }
  ir::TypePtr declared_type;
  const Constants constants = annotated ? AnnotationConstants() : Constants{};
  if (annotated && source_.signature) {
    // In a @pl.program the annotation is the variable's type (the printer writes every one, with
    // the tile's memref once memory is allocated); the value must agree with it.
    auto declared = ResolveType(stmt.attr("annotation"), map_, &constants, &expr_resolver_);
    if (!declared) return pypto::unexpected(declared.error());
    // A load of an N-d window into its row-merged 2-D tile (FlattenTileNdTo2D's output) is typed
    // by its annotation: the op deduces the window's own shape.
    if (const auto* load = (*value)->As<ir::Call>();
        load && load->target_name() == "tile.load" && TileRowMergedFrom(*declared, (*value)->type()))
      *value = ir::ExprPtr(std::make_shared<ir::Call>(load->op(), load->args(), load->kwargs(), *declared,
                                                      load->span()));
    const bool computed_tile = TileStandsForTensor(*declared, (*value)->type()) ||
                               TileTakesValueSpace(stmt.attr("annotation"), *declared, (*value)->type());
    if (!computed_tile && !Assignable(*declared, (*value)->type()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' is declared {} but the value assigned is {}", name, (*declared)->str(),
                                   (*value)->type()->str()),
                       map_.SpanOf(stmt.attr("annotation")));
    declared_type = computed_tile ? (*value)->type() : WithValidShapeOf(*declared, (*value)->type());
  } else if (annotated) {
    // `w: pl.Tensor[[M, N], dt] = pl.slice(t, [M, N], offs)` in orchestration: the slice is a window of
    // the tensor (a view where a kernel takes it), held as the tile a kernel would load; the
    // annotation describes that window.
    ir::TypePtr checked = (*value)->type();
    const auto* window = checked->As<ir::TileType>();
    if (window && kernel_depth_ == 0 && IsNode(stmt.attr("annotation"), "Subscript") &&
        DottedName(stmt.attr("annotation").attr("value")) == "pl.Tensor")
      checked = std::make_shared<ir::TensorType>(window->shape(), window->dtype());
    if (auto ok = CheckDeclaredType(stmt.attr("annotation"), name, checked, map_, &constants); !ok)
      return pypto::unexpected(ok.error());
  }
  return BindAssigned(target, stmt, declared_type ? declared_type : (*value)->type(), *value);
}

// `name = value` (`target` the name): a new variable of `type`, bound in the environment with what
// later statements look up about it, and its AssignStmt.
ir::StmtPtr FunctionParser::BindAssigned(py::handle target, py::handle stmt, const ir::TypePtr& type,
                                         const ir::ExprPtr& value) {
  const std::string name = target.attr("id").cast<std::string>();
  auto var = std::make_shared<ir::Var>(name, type, map_.SpanOf(target));
  RecordReturnedArg(*var, *value);
  env_[name] = var;
  unavailable_.erase(name);
  assigned_types_[name] = var->type();
  RecordUpstreamTensor(name, py::hasattr(stmt, "value") ? py::handle(stmt.attr("value")) : py::none());
  RecordScalar(var, value);
  RecordOrchestrationSlice(*var, value);
  if (IsCreation(*value)) placeholders_.insert(var->id());
  return std::make_shared<ir::AssignStmt>(var, value, map_.SpanOf(stmt));
}

// `M, N = x.shape`: one assignment per name, `M = x.shape[0]`, ... (a constant each).
ir::Result<ir::StmtPtr> FunctionParser::ParseShapeUnpack(py::handle stmt, py::handle target) {
  py::module_ ast = py::module_::import("ast");
  py::list names = target.attr("elts");
  const size_t rank = ShapeOf(stmt.attr("value"))->shape().size();
  if (py::len(names) != rank)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} names unpack a {}-d shape", py::len(names), rank), map_.SpanOf(target));
  std::vector<ir::StmtPtr> assigns;
  for (size_t i = 0; i < rank; ++i) {
    py::object index = ast.attr("Constant")(i);
    ast.attr("copy_location")(index, stmt.attr("value"));
    py::object extent = ast.attr("Subscript")(stmt.attr("value"), index, ast.attr("Load")());
    ast.attr("copy_location")(extent, stmt.attr("value"));
    py::list targets;
    targets.append(names[i]);
    py::object assign = ast.attr("Assign")(targets, extent);
    ast.attr("copy_location")(assign, stmt);
    synthetic_nodes_.push_back(assign);
    auto parsed = ParseAssign(assign, /*annotated=*/false);
    if (!parsed) return parsed;
    Append(assigns, *parsed);
  }
  return Seq(std::move(assigns), map_.SpanOf(stmt));
}

// A tile annotation that spells no valid region (`t: pl.Tile[[m, n], dt] = pl.load(...,
// valid_shape=v)`) keeps the region of the value: the annotation states the tile's extents, and
// the load still fills only part of it.
ir::TypePtr FunctionParser::WithValidShapeOf(const ir::TypePtr& declared, const ir::TypePtr& value) {
  const auto* tile = declared->As<ir::TileType>();
  const auto* value_tile = value->As<ir::TileType>();
  if (!tile || !value_tile || tile->has_partial_valid_shape() || !value_tile->has_partial_valid_shape())
    return declared;
  return std::make_shared<ir::TileType>(tile->shape(), tile->dtype(), tile->memory_space(), tile->memref(),
                                        value_tile->valid_shape());
}

// What a variable annotation may name: the constants, and the integer variables whose value is
// known at compile time (`d = pl.tensor.dim(q, 1)` makes `pl.Tensor[[16, d], pl.FP32]` a shape).
Constants FunctionParser::AnnotationConstants() const {
  Constants constants = *source_.constants;
  for (const auto& [name, var] : env_)
    if (auto known = program_.known_ints.find(var->id()); known != program_.known_ints.end())
      constants[name] = known->second;
  return constants;
}

// `n: pl.Scalar[pl.INT64] = 0`: an integer literal takes the integer dtype its annotation declares
// (an unannotated one is INDEX); anything else is returned as it is, for the type check.
ir::Result<ir::ExprPtr> FunctionParser::LiteralAsDeclared(const ir::ExprPtr& value, py::handle annotation) {
  if (!IsNode(annotation, "Subscript") || DottedName(annotation.attr("value")) != "pl.Scalar") return value;
  auto declared = ResolveType(annotation, map_, source_.constants);
  const auto* scalar = declared ? (*declared)->As<ir::ScalarType>() : nullptr;
  if (!scalar || !ir::IsInteger(scalar->dtype())) return value;
  const auto* literal = value->As<ir::ConstInt>();
  if (!literal) return IntegerAsDeclared(value, scalar->dtype());
  if (scalar->dtype() == ir::DataType::INDEX) return value;
  const int64_t v = literal->value();
  const auto [lowest, highest] = ir::IntegerRange(scalar->dtype());
  if (v < lowest || v > highest)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} does not fit in pl.{}", v, ir::DataTypeName(scalar->dtype())),
                     value->span());
  return ir::ExprPtr(std::make_shared<ir::ConstInt>(v, scalar->dtype(), value->span()));
}

// `n: pl.Scalar[pl.INT64] = (seq + block - 1) // block` with `seq` an INT32 element: an integer
// value of another integer dtype is converted to the declared one, as the annotation asks.
ir::Result<ir::ExprPtr> FunctionParser::IntegerAsDeclared(const ir::ExprPtr& value, ir::DataType dtype) {
  const auto* actual = value->type()->As<ir::ScalarType>();
  if (!actual || !ir::IsInteger(actual->dtype()) || actual->dtype() == dtype ||
      actual->dtype() == ir::DataType::INDEX || dtype == ir::DataType::INDEX)
    return value;
  auto cast = ir::OpRegistry::Get().CreateCall("scalar.cast", {value}, {{"target_type", ir::OpAttr(dtype)}},
                                               value->span());
  if (!cast) return pypto::unexpected(cast.error());
  return ir::ExprPtr(*cast);
}

}  // namespace pypto::frontend
