#include "op_resolver.h"

#include <fmt/format.h>

namespace pypto::frontend {

ir::Result<const ir::OpDef*> ResolveOp(const std::string& dsl_name, const std::vector<ir::ExprPtr>& args,
                                       const ir::Span& span) {
  const auto& registry = ir::OpRegistry::Get();
  std::string op_name;
  if (dsl_name.starts_with("pl.tile.") || dsl_name.starts_with("pl.tensor.")) {
    op_name = dsl_name.substr(3);
  } else if (dsl_name == "pl.load" || dsl_name == "pl.store") {
    op_name = "tile." + dsl_name.substr(3);
  } else if (dsl_name.starts_with("pl.")) {
    bool on_tensor = !args.empty() && args[0]->type()->As<ir::TensorType>();
    op_name = (on_tensor ? "tensor." : "tile.") + dsl_name.substr(3);
    if (on_tensor && registry.Find("tile." + dsl_name.substr(3)) && !registry.Find(op_name)) {
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' on tensors is not supported yet", dsl_name), span,
                           "load tiles with pl.load inside a pl.at scope and apply the op to them");
    }
  }
  if (const auto* op = registry.Find(op_name)) return op;
  return ir::MakeError(ir::DiagnosticKind::UnknownOperation, fmt::format("unknown operation '{}'", dsl_name), span);
}

}  // namespace pypto::frontend
