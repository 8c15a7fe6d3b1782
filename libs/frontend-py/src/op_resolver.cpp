#include "op_resolver.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace pypto::frontend {
namespace {

// Alternative spellings of the same op.
std::string Canonical(const std::string& name) {
  static const std::map<std::string, std::string, std::less<>> kAliases = {
      {"create_tile", "create"}, {"create_tensor", "create"}};
  auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}

// Ops with a scalar-operand form `<op>s` chosen when the right operand is a scalar.
const std::set<std::string, std::less<>> kScalarForms = {"add", "sub", "mul", "div", "maximum", "minimum"};

// Tile ops whose first operand is a global tensor rather than a tile.
const std::set<std::string, std::less<>> kTensorSourced = {"load"};

bool IsScalar(const ir::ExprPtr& expr) { return expr && expr->type()->As<ir::ScalarType>(); }
bool IsTensor(const ir::ExprPtr& expr) { return expr && expr->type()->As<ir::TensorType>(); }

}  // namespace

std::optional<ir::BinaryOp> ScalarArithmetic(const std::string& dsl_name) {
  static const std::map<std::string, ir::BinaryOp, std::less<>> kOps = {
      {"pl.add", ir::BinaryOp::Add}, {"pl.sub", ir::BinaryOp::Sub}, {"pl.mul", ir::BinaryOp::Mul},
      {"pl.div", ir::BinaryOp::FloatDiv}, {"pl.max", ir::BinaryOp::Max}, {"pl.min", ir::BinaryOp::Min}};
  auto it = kOps.find(dsl_name);
  if (it == kOps.end()) return std::nullopt;
  return it->second;
}

ir::Result<const ir::OpDef*> ResolveOp(const std::string& dsl_name, const std::vector<ir::ExprPtr>& operands,
                                       CallContext context, const ir::Span& span) {
  const auto& registry = ir::OpRegistry::Get();
  std::string op_name;
  if (dsl_name.starts_with("pl.tile.")) {
    op_name = "tile." + Canonical(dsl_name.substr(8));
  } else if (dsl_name.starts_with("pl.tensor.")) {
    op_name = "tensor." + Canonical(dsl_name.substr(10));
  } else if (dsl_name == "pl.create_tile") {
    op_name = "tile.create";
  } else if (dsl_name == "pl.create_tensor") {
    op_name = "tensor.create";
  } else if (dsl_name.starts_with("pl.")) {
    std::string base = dsl_name.substr(3);
    const ir::ExprPtr first = operands.empty() ? nullptr : operands[0];
    const bool on_tensor = first ? IsTensor(first) && !kTensorSourced.contains(base)
                                 : context == CallContext::Orchestration;
    if (operands.size() > 1 && IsScalar(operands[1]) && kScalarForms.contains(base)) base += "s";
    op_name = (on_tensor ? "tensor." : "tile.") + base;
    if (on_tensor && !registry.Find(op_name) && registry.Find("tile." + base)) {
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' on tensors is not supported yet", dsl_name), span,
                           "load tiles with pl.load inside a pl.at scope and apply the op to them");
    }
  }
  if (const auto* op = registry.Find(op_name)) return op;
  return ir::MakeError(ir::DiagnosticKind::UnknownOperation, fmt::format("unknown operation '{}'", dsl_name), span);
}

}  // namespace pypto::frontend
