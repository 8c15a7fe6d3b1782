// FunctionParser: expressions: names, constants, operators and comparisons, and the dynamic dimensions
// of a specialised function.
#include "function_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <variant>

#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<ir::ExprPtr> FunctionParser::ParseExpr(py::handle node) {
  std::string type = NodeType(node);
  ir::Span span = map_.SpanOf(node);
  if (type == "Name") {
    std::string name = node.attr("id").cast<std::string>();
    auto it = env_.find(name);
    if (it != env_.end() && written_through_.contains(it->second.get()))
      return StaleSliceRead(*it->second, span);
    if (it != env_.end()) {
      if (auto known = program_.known_ints.find(it->second->id()); known != program_.known_ints.end())
        return ir::ExprPtr(std::make_shared<ir::ConstInt>(
            known->second, it->second->type()->As<ir::ScalarType>()->dtype(), span));
      return ir::ExprPtr(it->second);
    }
    auto constant = source_.constants->find(name);
    if (constant != source_.constants->end()) {
      if (const auto* dim = std::get_if<DynamicDim>(&constant->second)) return DynamicExtent(*dim, span);
      if (std::holds_alternative<std::vector<int64_t>>(constant->second))
        return MakeError(DiagnosticKind::Type, fmt::format("the list '{}' is not a value here", name), span,
                         "a constant list stands for a list literal: offsets, shapes, valid_shape=...");
      if (const auto* dtype = std::get_if<ir::DataType>(&constant->second))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' is the dtype pl.{}, not a value", name, ir::DataTypeName(*dtype)), span,
                         "a dtype names the element type of an op's result, e.g. pl.cast(t, target_type=dt)");
      if (const auto* text = std::get_if<std::string>(&constant->second))
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is the string \"{}\", not a value", name, *text),
                         span, "a string names an op's attribute, e.g. pl.tile.gemv(a, b, acc_phase=phase)");
      if (std::holds_alternative<NoneValue>(constant->second))
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is None, not a value", name), span,
                         "None leaves out an optional keyword argument, e.g. pl.tile.tri(0, [16, 16], "
                         "valid_shape=vs) with vs = None");
      return ConstantExpr(constant->second, span);
    }
    if (auto why = unavailable_.find(name); why != unavailable_.end()) {
      auto diagnostic = why->second;
      diagnostic.span = span;
      return pypto::unexpected(diagnostic);
    }
    undefined_name_ = name;
    return MakeError(DiagnosticKind::UndefinedName, fmt::format("name '{}' is not defined", name), span);
  }
  if (type == "Constant") return ParseConstant(node);
  if (type == "List" || type == "Tuple") {
    std::vector<ir::ExprPtr> elements;
    for (auto element : node.attr("elts")) {
      auto expr = ParseExpr(element);
      if (!expr) return pypto::unexpected(expr.error());
      elements.push_back(*expr);
    }
    return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(std::move(elements), span));
  }
  if (type == "Call") return ParseCall(node);
  // `x.shape` of a tensor or tile: its extents, constants once the function is specialised.
  if (const ir::ShapedType* shaped = ShapeOf(node)) {
    std::vector<ir::ExprPtr> extents;
    const std::string owner = node.attr("value").attr("id").cast<std::string>();
    for (size_t d = 0; d < shaped->shape().size(); ++d) {
      auto extent = AxisExtent(owner, *shaped, d, span);
      if (!extent) return extent;
      extents.push_back(*extent);
    }
    return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(std::move(extents), span));
  }
  if (type == "Subscript" && ShapeOf(node.attr("value"))) return ParseShapeExtent(node);
  // `M.hidden_size` with `M` a config object of the module: the number it holds, as for a name.
  if (type == "Attribute") {
    const std::string dotted = DottedName(node);
    auto constant = source_.constants->find(dotted);
    const bool shadowed = env_.contains(dotted.substr(0, dotted.find('.')));
    if (!shadowed && constant != source_.constants->end() &&
        (std::holds_alternative<int64_t>(constant->second) || std::holds_alternative<double>(constant->second) ||
         std::holds_alternative<bool>(constant->second)))
      return ConstantExpr(constant->second, span);
  }
  // pl.AUTO: "let the compiler choose" (reserve_buffer's base), upstream's -1.
  if (type == "Attribute" && DottedName(node) == "pl.AUTO" && !env_.contains("pl"))
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(-1, ir::DataType::INDEX, span));
  if (type == "Subscript" && IsArray(node.attr("value"))) return ParseArrayLoad(node);
  if (type == "Subscript" && (IsNode(node.attr("value"), "List") || IsNode(node.attr("value"), "Tuple")))
    return ParseListElement(node);
  if (type == "Subscript") return ParseSliceLoad(node);
  if (type == "BinOp") return ParseBinOp(node);
  if (type == "Compare") return ParseCompare(node);
  if (type == "UnaryOp") return ParseUnaryOp(node);
  if (type == "BoolOp")
    return MakeError(DiagnosticKind::Syntax, "'and' and 'or' are supported in the condition of an if only", span,
                     "branch on the condition: `if a and b:` runs its body when both hold");
  return MakeError(DiagnosticKind::Syntax, fmt::format("'{}' expressions are not supported in kernels yet", type),
                   span);
}

// ---- dynamic dimensions ----------------------------------------------------------------------
// Under @pl.jit every call is specialised on its tensors' shapes, so a `pl.dynamic` dimension is a
// number by the time the body is parsed: the extent of the parameter dimension it labels.

ir::Result<ir::ExprPtr> FunctionParser::DynamicExtent(const DynamicDim& dim, const ir::Span& span) const {
  auto bound = dynamic_.find(dim.name);
  if (bound == dynamic_.end())
    return MakeError(DiagnosticKind::UndefinedName,
                     fmt::format("the dynamic dimension '{}' is not bound to any parameter", dim.name), span,
                     fmt::format("annotate a tensor parameter with it (pl.Tensor[[{}, ...], ...]) or call "
                                 "t.bind_dynamic(axis, {})",
                                 dim.name, dim.name));
  if (!bound->second.conflict.empty())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the dynamic dimension '{}' has no single extent here: it is {} for parameter "
                                 "'{}' but {}",
                                 dim.name, bound->second.extent, bound->second.param, bound->second.conflict),
                     span, "read the extent of one tensor with pl.tensor.dim(t, axis)");
  if (bound->second.extent == ir::kDynamicExtent) {
    if (bound->second.var) return ir::ExprPtr(bound->second.var);
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the dynamic dimension '{}' needs a static extent here", dim.name), span,
                     "only a @pl.jit entry reads a dimension passed unbound");
  }
  return ir::ExprPtr(std::make_shared<ir::ConstInt>(bound->second.extent, ir::DataType::INDEX, span));
}

namespace {

// Each axis a dimension passed unbound labels, as the extent of that parameter's variable: whatever
// name the tensor is read under later (an inline helper's parameter, the value it returns, a rebinding),
// `pl.tensor.dim` and `x.shape` read the variable (ProgramContext::run_time_shapes, keyed by the tensor).
void RecordUnboundAxes(const DynamicBinding& binding, const std::unordered_map<std::string, ir::VarPtr>& env,
                       std::unordered_map<uint64_t, std::vector<ir::ExprPtr>>& run_time_shapes) {
  for (const auto& [param, axis] : binding.axes) {
    auto tensor = env.find(param);
    const auto* type = tensor != env.end() ? tensor->second->type()->As<ir::TensorType>() : nullptr;
    if (!type || axis < 0 || axis >= static_cast<int64_t>(type->shape().size())) continue;
    auto& extents = run_time_shapes[tensor->second->id()];
    if (extents.empty())
      for (int64_t dim : type->shape())
        extents.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, binding.var->span()));
    extents[axis] = binding.var;
  }
}

}  // namespace

// A @pl.jit entry compiled for every extent: each dimension passed unbound is an INDEX variable the
// entry defines first, `M = tensor.extent(x, axis=0)`, x being the first parameter it labels.
ir::Result<std::vector<ir::StmtPtr>> FunctionParser::DefineUnboundExtents(const ir::Span& span) {
  std::vector<ir::StmtPtr> stmts;
  for (auto& [name, binding] : dynamic_) {
    if (binding.extent != ir::kDynamicExtent || binding.var) continue;
    auto call = ir::OpRegistry::Get().CreateCall("tensor.extent", {env_.at(binding.param)},
                                                 {{"axis", ir::OpAttr(binding.axis)}}, span);
    if (!call) return pypto::unexpected(call.error());
    binding.var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX), span);
    stmts.push_back(std::make_shared<ir::AssignStmt>(binding.var, *call, span));
    RecordUnboundAxes(binding, env_, program_.run_time_shapes);
  }
  return stmts;
}

// Axis `axis` of the tensor named `tensor` (`x.shape[0]`, `pl.tensor.dim(x, 0)`): a constant, or for
// an axis passed unbound the variable of the dimension labelling it, where an entry parameter has it.
ir::Result<ir::ExprPtr> FunctionParser::AxisExtent(const std::string& tensor, const ir::ShapedType& type,
                                                   size_t axis, const ir::Span& span) const {
  const int64_t extent = type.shape()[axis];
  if (extent != ir::kDynamicExtent) return ir::ExprPtr(std::make_shared<ir::ConstInt>(extent, ir::DataType::INDEX, span));
  auto named = env_.find(tensor);
  for (const auto& [name, binding] : dynamic_) {
    if (!binding.var) continue;
    for (const auto& [param, param_axis] : binding.axes) {
      auto param_var = env_.find(param);
      if (param == tensor && param_axis == static_cast<int64_t>(axis) && named != env_.end() &&
          param_var->second == named->second && named->second->type()->As<ir::TensorType>() == &type)
        return ir::ExprPtr(binding.var);
    }
  }
  // A tensor shaped at run time, under whatever name it is read: the extent it was shaped with.
  auto shaped = named != env_.end() ? program_.run_time_shapes.find(named->second->id())
                                    : program_.run_time_shapes.end();
  if (shaped != program_.run_time_shapes.end() && axis < shaped->second.size() && shaped->second[axis] &&
      !ir::AsConstInt(shaped->second[axis]))
    return shaped->second[axis];
  if (auto extent = KernelExtentParam(tensor, axis)) return ir::ExprPtr(extent);
  return MakeError(DiagnosticKind::Type,
                   fmt::format("axis {} of '{}' needs a static extent here", axis, tensor), span,
                   "read the extent of an entry parameter, or of a pl.dynamic dimension by its name");
}

// In a @pl.jit.incore kernel, axis `axis` of its parameter `tensor`, unbound (a program compiled for
// every extent): an INDEX parameter the kernel takes after its own, which each call passes
// (ExtentArgs), as the kernels upstream's PTO codegen writes take one per dynamic dimension. Null for
// anything else (a tensor the kernel made, or one rebound since).
ir::VarPtr FunctionParser::KernelExtentParam(const std::string& tensor, size_t axis) const {
  auto named = env_.find(tensor);
  if (named == env_.end()) return nullptr;
  auto param = std::ranges::find(kernel_params_, named->second);
  if (param == kernel_params_.end()) return nullptr;
  const auto index = static_cast<size_t>(param - kernel_params_.begin());
  for (const auto& extent : extent_params_)
    if (extent.param == index && extent.axis == axis) return extent.var;
  auto var = std::make_shared<ir::Var>(fmt::format("{}_extent{}", tensor, axis),
                                       std::make_shared<ir::ScalarType>(ir::DataType::INDEX), (*param)->span());
  extent_params_.push_back(ExtentParam{.param = index, .axis = axis, .var = var});
  return var;
}

// The extents a call of `kernel` passes after its arguments (KernelExtentParam): of each argument's
// axis, a constant or the caller's run-time extent of it.
ir::Result<bool> FunctionParser::ExtentArgs(const ir::Function& kernel, const std::vector<std::string>& names,
                                            std::vector<ir::ExprPtr>& args, const ir::Span& span) const {
  auto extents = program_.kernel_extent_params.find(kernel.name());
  if (extents == program_.kernel_extent_params.end()) return true;
  const size_t own = args.size();
  for (const auto& [param, axis] : extents->second) {
    const auto* type = param < own ? args[param]->type()->As<ir::TensorType>() : nullptr;
    const auto* var = param < own ? args[param]->As<ir::Var>() : nullptr;
    auto named = std::ranges::find_if(env_, [&](const auto& entry) { return entry.second.get() == var; });
    if (!type || !var || named == env_.end())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}() reads the extent of axis {} of '{}', which is known only when the program "
                                   "runs; pass a tensor the caller names",
                                   kernel.name(), axis, param < names.size() ? names[param] : "?"),
                       span);
    auto extent = AxisExtent(named->first, *type, axis, span);
    if (!extent) return pypto::unexpected(extent.error());
    args.push_back(*extent);
  }
  return true;
}

// `x.bind_dynamic(axis, T)`: declares axis `axis` of tensor x dynamic. It produces no IR; it binds
// T to that extent, or checks it against the extent T already has.
ir::Result<ir::StmtPtr> FunctionParser::ParseBindDynamic(py::handle call) {
  const ir::Span span = map_.SpanOf(call);
  py::handle receiver = call.attr("func").attr("value");
  auto tensor = ParseExpr(receiver);
  if (!tensor) return pypto::unexpected(tensor.error());
  const auto* type = (*tensor)->type()->As<ir::TensorType>();
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("bind_dynamic is a method of tensors, not of {}", (*tensor)->type()->str()),
                     map_.SpanOf(receiver));
  py::list args = call.attr("args");
  if (py::len(args) != 2 || py::len(call.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, "bind_dynamic takes two arguments: (axis, pl.dynamic dimension)", span);
  auto axis = ParseExpr(args[0]);
  if (!axis) return pypto::unexpected(axis.error());
  auto index = ir::AsConstInt(*axis);
  const int64_t rank = static_cast<int64_t>(type->shape().size());
  if (!index || *index < -rank || *index >= rank)
    return MakeError(DiagnosticKind::Type, fmt::format("bind_dynamic axis must be an integer in [{}, {})", -rank, rank),
                     map_.SpanOf(args[0]));
  const int64_t extent = type->shape()[static_cast<size_t>(*index < 0 ? *index + rank : *index)];
  // A module-level name, or an attribute of a config object (`D.block_table_flat`), keyed as the JIT keys it.
  const std::string dim_name = DottedName(args[1]);
  auto constant = source_.constants->find(dim_name);
  const auto* dim = constant == source_.constants->end() ? nullptr : std::get_if<DynamicDim>(&constant->second);
  if (!dim)
    return MakeError(DiagnosticKind::Type, "the second argument of bind_dynamic is a pl.dynamic dimension",
                     map_.SpanOf(args[1]), "declare it at module level: T = pl.dynamic(\"T\")");
  if (extent == ir::kDynamicExtent) {
    // The axis the annotation already labels with this dimension: nothing to bind.
    auto bound = dynamic_.find(dim->name);
    const std::pair<std::string, int64_t> labelled{DottedName(receiver), *index < 0 ? *index + rank : *index};
    if (bound != dynamic_.end() && bound->second.var &&
        std::find(bound->second.axes.begin(), bound->second.axes.end(), labelled) != bound->second.axes.end())
      return ir::StmtPtr{};
    return MakeError(DiagnosticKind::Type, "bind_dynamic of an axis passed unbound needs a static extent", span);
  }
  const std::string owner = DottedName(receiver);
  auto [it, fresh] = dynamic_.emplace(dim->name, DynamicBinding{extent, owner});
  if (!fresh && it->second.extent != extent)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("axis {} of '{}' is {}, but the dynamic dimension '{}' is {} (from parameter '{}')",
                                 *index, owner, extent, dim->name, it->second.extent, it->second.param),
                     span, "tensors that share a pl.dynamic dimension must agree on its extent");
  return ir::StmtPtr{};
}

// `pl.tensor.dim(t, axis)`: the extent of a tensor axis, a compile-time integer here, except for a
// tensor allocated at the bound of a run-time shape, whose run-time extent it reads.
ir::Result<ir::ExprPtr> FunctionParser::ParseTensorDim(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  py::list args = node.attr("args");
  if (py::len(args) != 2 || py::len(node.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.tensor.dim takes two arguments: (tensor, axis)", span);
  auto tensor = ParseExpr(args[0]);
  if (!tensor) return pypto::unexpected(tensor.error());
  // An orchestration slice (held as the tile a kernel loads) is a window of a tensor: its extents.
  const ir::ShapedType* type = (*tensor)->type()->As<ir::TensorType>();
  if (!type && kernel_depth_ == 0) type = (*tensor)->type()->As<ir::TileType>();
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("pl.tensor.dim reads the extent of a tensor, got {}", (*tensor)->type()->str()),
                     map_.SpanOf(args[0]));
  auto axis = ParseExpr(args[1]);
  if (!axis) return pypto::unexpected(axis.error());
  auto index = ir::AsConstInt(*axis);
  const int64_t rank = static_cast<int64_t>(type->shape().size());
  if (!index || *index < -rank || *index >= rank)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("pl.tensor.dim axis must be an integer in [{}, {}) for {}", -rank, rank,
                                 type->str()),
                     map_.SpanOf(args[1]));
  const auto axis_index = static_cast<size_t>(*index < 0 ? *index + rank : *index);
  if (const auto* var = (*tensor)->As<ir::Var>()) {
    auto run_time = program_.run_time_shapes.find(var->id());
    if (run_time != program_.run_time_shapes.end()) return run_time->second[axis_index];
  }
  return AxisExtent(IsNode(args[0], "Name") ? args[0].attr("id").cast<std::string>() : ir::PrintExpr(*tensor), *type,
                    axis_index, span);
}

ir::ExprPtr FunctionParser::ConstantExpr(const Constant& value, const ir::Span& span) {
  if (const auto* b = std::get_if<bool>(&value)) return std::make_shared<ir::ConstBool>(*b, span);
  if (const auto* i = std::get_if<int64_t>(&value))
    return std::make_shared<ir::ConstInt>(*i, ir::DataType::INDEX, span);
  return std::make_shared<ir::ConstFloat>(std::get<double>(value), ir::DataType::FP32, span);
}

ir::Result<ir::ExprPtr> FunctionParser::ParseBinOp(py::handle node) {
  static const std::map<std::string, ir::BinaryOp> kOps = {
      {"Add", ir::BinaryOp::Add},           {"Sub", ir::BinaryOp::Sub},      {"Mult", ir::BinaryOp::Mul},
      {"FloorDiv", ir::BinaryOp::FloorDiv}, {"Mod", ir::BinaryOp::FloorMod}, {"Div", ir::BinaryOp::FloatDiv},
      {"LShift", ir::BinaryOp::Shl},        {"RShift", ir::BinaryOp::Shr}};
  std::string op = NodeType(node.attr("op"));
  auto it = kOps.find(op);
  if (it == kOps.end())
    return MakeError(DiagnosticKind::Syntax, fmt::format("the '{}' operator is not supported on scalars yet", op),
                     map_.SpanOf(node));
  auto lhs = ParseExpr(node.attr("left"));
  if (!lhs) return lhs;
  auto rhs = ParseExpr(node.attr("right"));
  if (!rhs) return rhs;
  return ir::MakeBinary(it->second, *lhs, *rhs, map_.SpanOf(node));
}

// `a < b` and the other comparisons, one at a time.
ir::Result<ir::ExprPtr> FunctionParser::ParseCompare(py::handle node) {
  static const std::map<std::string, ir::BinaryOp> kOps = {
      {"Eq", ir::BinaryOp::Eq}, {"NotEq", ir::BinaryOp::Ne}, {"Lt", ir::BinaryOp::Lt},
      {"LtE", ir::BinaryOp::Le}, {"Gt", ir::BinaryOp::Gt}, {"GtE", ir::BinaryOp::Ge}};
  py::list ops = node.attr("ops");
  if (py::len(ops) != 1)
    return MakeError(DiagnosticKind::Syntax, "chained comparisons are not supported; compare two values at a time",
                     map_.SpanOf(node));
  auto it = kOps.find(NodeType(ops[0]));
  if (it == kOps.end())
    return MakeError(DiagnosticKind::Syntax, fmt::format("the '{}' comparison is not supported", NodeType(ops[0])),
                     map_.SpanOf(node));
  auto lhs = ParseExpr(node.attr("left"));
  if (!lhs) return lhs;
  auto rhs = ParseExpr(py::list(node.attr("comparators"))[0]);
  if (!rhs) return rhs;
  if (auto known = CompareConstants(it->second, **lhs, **rhs))
    return ir::ExprPtr(std::make_shared<ir::ConstBool>(*known, map_.SpanOf(node)));
  return ir::MakeBinary(it->second, *lhs, *rhs, map_.SpanOf(node));
}

// Two compile-time numbers compare at compile time, so an `if` on module constants keeps only the
// branch it takes (the other may not even type-check, e.g. a slice of width zero).
std::optional<bool> FunctionParser::CompareConstants(ir::BinaryOp op, const ir::Expr& lhs, const ir::Expr& rhs) {
  const auto *li = lhs.As<ir::ConstInt>(), *ri = rhs.As<ir::ConstInt>();
  const auto *lf = lhs.As<ir::ConstFloat>(), *rf = rhs.As<ir::ConstFloat>();
  if (!(li || lf) || !(ri || rf)) return std::nullopt;
  if (li && ri) return ir::EvaluateComparison(op, li->value(), ri->value());
  return ir::EvaluateComparison(op, li ? static_cast<double>(li->value()) : lf->value(),
                                ri ? static_cast<double>(ri->value()) : rf->value());
}

// The builtins printed IR uses: min(a, b) / max(a, b) on scalars, and float("inf") / float("nan").
std::optional<ir::Result<ir::ExprPtr>> FunctionParser::ParseBuiltinCall(const std::string& name, py::handle node) {
  if (name != "min" && name != "max" && name != "float") return std::nullopt;
  if (env_.contains(name) || source_.constants->contains(name)) return std::nullopt;
  py::list args = node.attr("args");
  const ir::Span span = map_.SpanOf(node);
  if (py::len(node.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{}() takes no keyword arguments here", name), span);
  if (name == "float") {
    if (py::len(args) != 1 || !IsNode(args[0], "Constant"))
      return MakeError(DiagnosticKind::Syntax, "float() takes one literal, e.g. float(\"inf\")", span);
    try {
      double value = py::module_::import("builtins").attr("float")(args[0].attr("value")).cast<double>();
      return ir::ExprPtr(std::make_shared<ir::ConstFloat>(value, ir::DataType::FP32, span));
    } catch (py::error_already_set&) {
      return MakeError(DiagnosticKind::Type, "float() of a literal that is not a number", span);
    }
  }
  if (py::len(args) != 2)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{}() takes two scalars here", name), span);
  auto lhs = ParseExpr(args[0]);
  if (!lhs) return lhs;
  auto rhs = ParseExpr(args[1]);
  if (!rhs) return rhs;
  return ir::MakeBinary(name == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max, *lhs, *rhs, span);
}

// Only negation, which folds into constants and otherwise becomes `0 - x`.
ir::Result<ir::ExprPtr> FunctionParser::ParseUnaryOp(py::handle node) {
  if (NodeType(node.attr("op")) != "USub")
    return MakeError(DiagnosticKind::Syntax, "only unary minus is supported on scalars", map_.SpanOf(node));
  auto operand = ParseExpr(node.attr("operand"));
  if (!operand) return operand;
  ir::Span span = map_.SpanOf(node);
  if (const auto* f = (*operand)->As<ir::ConstFloat>())
    return ir::ExprPtr(std::make_shared<ir::ConstFloat>(-f->value(), ir::DataType::FP32, span));
  return ir::MakeBinary(ir::BinaryOp::Sub, std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span), *operand,
                        span);
}

ir::Result<ir::ExprPtr> FunctionParser::ParseConstant(py::handle node) {
  py::handle value = node.attr("value");
  ir::Span span = map_.SpanOf(node);
  if (py::isinstance<py::bool_>(value)) return ir::ExprPtr(std::make_shared<ir::ConstBool>(value.cast<bool>(), span));
  if (py::isinstance<py::int_>(value))
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(value.cast<int64_t>(), ir::DataType::INDEX, span));
  if (py::isinstance<py::float_>(value))
    return ir::ExprPtr(std::make_shared<ir::ConstFloat>(value.cast<double>(), ir::DataType::FP32, span));
  // `prev = None` in orchestration code: a TaskId naming no task (pl.system.task_invalid()), which
  // a `deps=[prev]` before the first launch waits for as nothing.
  if (value.is_none() && kernel_depth_ == 0) {
    auto invalid = ir::OpRegistry::Get().CreateCall("system.task_invalid", {}, {}, span);
    if (!invalid) return pypto::unexpected(invalid.error());
    return ir::ExprPtr(*invalid);
  }
  return MakeError(DiagnosticKind::Type, "only int, float and bool constants are supported", span);
}

// `pl.const(0, pl.INT32)`: a number of the dtype named.
ir::Result<ir::ExprPtr> FunctionParser::ParseTypedConstant(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  py::list args = node.attr("args");
  const auto dtype = py::len(args) == 2 ? DtypeOf(args[1], source_.constants) : std::nullopt;
  auto value = py::len(args) == 2 ? ParseExpr(args[0]) : ir::Result<ir::ExprPtr>(ir::ExprPtr{});
  if (!value) return pypto::unexpected(value.error());
  if (!dtype || !*value)
    return MakeError(DiagnosticKind::Syntax, "pl.const takes a number and a dtype: pl.const(0, pl.INT32)", span);
  const ir::DataType type = *dtype;
  if (const auto* i = (*value)->As<ir::ConstInt>(); i && ir::IsInteger(type))
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(i->value(), type, span));
  if (const auto* i = (*value)->As<ir::ConstInt>(); i && ir::IsFloat(type))
    return ir::ExprPtr(std::make_shared<ir::ConstFloat>(static_cast<double>(i->value()), type, span));
  if (const auto* f = (*value)->As<ir::ConstFloat>(); f && ir::IsFloat(type))
    return ir::ExprPtr(std::make_shared<ir::ConstFloat>(f->value(), type, span));
  return MakeError(DiagnosticKind::Type, "pl.const takes a number literal of its dtype's kind", span);
}

}  // namespace pypto::frontend
