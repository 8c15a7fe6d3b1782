#include "pypto/ir/op_registry.h"

#include <fmt/format.h>

namespace pypto::ir {

const OpRegistry& OpRegistry::Get() {
  static const OpRegistry registry;
  return registry;
}

OpRegistry::OpRegistry() { RegisterTileOps(*this); }

void OpRegistry::Register(OpDef def) {
  auto name = def.name;
  ops_.insert_or_assign(std::move(name), std::move(def));
}

const OpDef* OpRegistry::Find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_) names.push_back(name);
  return names;
}

Result<CallPtr> OpRegistry::CreateCall(std::string_view name, std::vector<ExprPtr> args, Call::Kwargs kwargs,
                                       const Span& span) const {
  const OpDef* op = Find(name);
  if (!op) return MakeError(DiagnosticKind::UnknownOperation, fmt::format("unknown operation '{}'", name), span);
  if (args.size() != op->arg_names.size()) {
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes {} arguments ({}), got {}", name, op->arg_names.size(),
                                 fmt::join(op->arg_names, ", "), args.size()),
                     span);
  }
  auto type = op->deduce_type(args, kwargs, span);
  if (!type) return pypto::unexpected(type.error());
  return std::make_shared<Call>(op, std::move(args), std::move(kwargs), *type, span);
}

}  // namespace pypto::ir
