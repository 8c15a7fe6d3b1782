#include "pypto/ir/op_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace pypto::ir {

OpParam Arg(std::string name) { return OpParam{std::move(name), false, OpAttrKind::Int, true}; }
OpParam OptionalArg(std::string name) { return OpParam{std::move(name), false, OpAttrKind::Int, false}; }
OpParam Attr(std::string name, OpAttrKind kind) { return OpParam{std::move(name), true, kind, true}; }
OpParam OptionalAttr(std::string name, OpAttrKind kind) { return OpParam{std::move(name), true, kind, false}; }
OpParam EnumAttr(std::string name, const char* enum_type, bool required) {
  return OpParam{std::move(name), true, OpAttrKind::String, required, enum_type};
}

std::vector<std::string> OpDef::arg_names() const {
  std::vector<std::string> names;
  for (const auto& param : params)
    if (!param.is_attr) names.push_back(param.name);
  return names;
}

size_t OpDef::min_args() const {
  return static_cast<size_t>(
      std::count_if(params.begin(), params.end(), [](const OpParam& p) { return !p.is_attr && p.required; }));
}

size_t OpDef::max_args() const {
  return static_cast<size_t>(std::count_if(params.begin(), params.end(), [](const OpParam& p) { return !p.is_attr; }));
}

const OpParam* OpDef::FindAttrParam(std::string_view attr) const {
  for (const auto& param : params)
    if (param.is_attr && param.name == attr) return &param;
  return nullptr;
}

namespace {

// Cube cores own L1 (Mat), L0A/L0B (Left/Right), L0C (Acc) and the bias table; vector cores own UB.
std::optional<CoreAffinity> SpaceAffinity(const TypePtr& type) {
  const auto* tile = type ? type->As<TileType>() : nullptr;
  if (!tile) return std::nullopt;
  switch (tile->memory_space()) {
    case MemorySpace::Vec: return CoreAffinity::Vector;
    case MemorySpace::Mat:
    case MemorySpace::Left:
    case MemorySpace::Right:
    case MemorySpace::Acc:
    case MemorySpace::Bias:
    case MemorySpace::LeftScale:
    case MemorySpace::RightScale: return CoreAffinity::Cube;
    default: return std::nullopt;
  }
}

}  // namespace

bool AccumulatesIntoWrittenArg(const Call& call) {
  return call.is_op_call() && call.op()->accumulates && call.op()->accumulates(call.kwargs());
}

CoreAffinity CallAffinity(const Call& call) {
  if (!call.is_op_call()) return CoreAffinity::Shared;
  if (call.op()->affinity_from_attrs)
    if (auto pinned = call.op()->affinity_from_attrs(call.kwargs())) return *pinned;
  if (call.op()->affinity != CoreAffinity::FromMemorySpaces) return call.op()->affinity;
  bool vector = false;
  auto note = [&](const TypePtr& type) {
    auto affinity = SpaceAffinity(type);
    if (affinity == CoreAffinity::Cube) return true;
    vector = vector || affinity == CoreAffinity::Vector;
    return false;
  };
  if (note(call.type())) return CoreAffinity::Cube;
  for (const auto& arg : call.args())
    if (note(arg->type())) return CoreAffinity::Cube;
  return vector ? CoreAffinity::Vector : CoreAffinity::Shared;
}

const OpRegistry& OpRegistry::Get() {
  static const OpRegistry registry;
  return registry;
}

OpRegistry::OpRegistry() {
  RegisterTileMemoryOps(*this);
  RegisterTileElementwiseOps(*this);
  RegisterTileBitwiseOps(*this);
  RegisterTileCompareOps(*this);
  RegisterTilePartialOps(*this);
  RegisterTileReductionOps(*this);
  RegisterTileMatmulOps(*this);
  RegisterTileMxOps(*this);
  RegisterTileSortOps(*this);
  RegisterTileIndexOps(*this);
  RegisterTileGatherOps(*this);
  RegisterTileRandomOps(*this);
  RegisterTileTriangleOps(*this);
  RegisterTileSpmdOps(*this);
  RegisterTileValidShapeOps(*this);
  RegisterTileWindowOps(*this);
  RegisterSystemOps(*this);
  RegisterSystemSyncOps(*this);
  RegisterTensorOps(*this);
  RegisterElementOps(*this);
  RegisterScalarOps(*this);
  RegisterTaskOps(*this);
  RegisterCrossCoreOps(*this);
  RegisterArrayOps(*this);
  RegisterPrefetchOps(*this);
  RegisterCommOps(*this);
}

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

Result<bool> CheckArity(const OpDef& op, size_t arg_count, const Span& span) {
  if (arg_count >= op.min_args() && arg_count <= op.max_args()) return true;
  const std::string count =
      op.min_args() == op.max_args() ? std::to_string(op.min_args()) : fmt::format("{} to {}", op.min_args(), op.max_args());
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' takes {} arguments ({}), got {}", op.name, count, fmt::join(op.arg_names(), ", "),
                               arg_count),
                   span);
}

Result<bool> CheckArity(const Call& call) {
  if (!call.is_op_call()) return true;
  return CheckArity(*call.op(), call.args().size(), call.span());
}

Result<CallPtr> OpRegistry::CreateCall(std::string_view name, std::vector<ExprPtr> args, Call::Kwargs kwargs,
                                       const Span& span) const {
  const OpDef* op = Find(name);
  if (!op) return MakeError(DiagnosticKind::UnknownOperation, fmt::format("unknown operation '{}'", name), span);
  if (auto arity = CheckArity(*op, args.size(), span); !arity) return pypto::unexpected(arity.error());
  for (const auto& [key, value] : kwargs) {
    const OpParam* param = op->FindAttrParam(key);
    if (!param) return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' has no attribute '{}'", name, key), span);
    if (KindOf(value) != param->attr_kind) {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' attribute '{}' must be a {}, got {}", name, key,
                                   OpAttrKindName(param->attr_kind), OpAttrText(value)),
                       span);
    }
  }
  for (const auto& param : op->params) {
    if (!param.is_attr || !param.required) continue;
    bool given = std::any_of(kwargs.begin(), kwargs.end(), [&](const auto& kv) { return kv.first == param.name; });
    if (!given) {
      return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' is missing attribute '{}'", name, param.name),
                       span);
    }
  }
  auto type = op->deduce_type(args, kwargs, span);
  if (!type) return pypto::unexpected(type.error());
  return std::make_shared<Call>(op, std::move(args), std::move(kwargs), *type, span);
}

}  // namespace pypto::ir
