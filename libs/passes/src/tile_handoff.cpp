#include "tile_handoff.h"

#include "index_exprs.h"

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

const TileType& TileOf(const Var& var) { return *var.type()->As<TileType>(); }

ExprPtr ZeroOffsets(const Shape& shape, const Span& span) {
  return IndexTuple(std::vector<int64_t>(shape.size(), 0), span);
}

ExprPtr ShapeTuple(const Shape& shape, const Span& span) {
  return IndexTuple(std::vector<int64_t>(shape.begin(), shape.end()), span);
}

Result<StmtPtr> AssignCall(const VarPtr& var, std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs,
                           const Span& span) {
  auto call = OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
  if (!call) return pypto::unexpected(call.error());
  return StmtPtr(std::make_shared<AssignStmt>(var, *call, span));
}

bool SameType(const TypePtr& a, const TypePtr& b) { return a == b || a->str() == b->str(); }

// Whether `stmt` reads a variable that `map` replaces by one of another type.
bool ReadsRetyped(const StmtPtr& stmt, const VarMap& map) {
  struct Finder final : IRVisitor {
    const VarMap& map;
    bool found = false;
    explicit Finder(const VarMap& m) : map(m) {}
    void VisitVar(const std::shared_ptr<const Var>& var) override {
      auto it = map.find(var.get());
      found |= it != map.end() && !SameType(it->second->type(), var->type());
    }
  } finder(map);
  finder.VisitStmt(stmt);
  return finder.found;
}

// The variables a statement defines for the statements after it.
std::vector<VarPtr> DefinedVars(const Stmt& stmt) {
  if (const auto* assign = stmt.As<AssignStmt>()) return {assign->var()};
  if (auto loop = AsLoop(stmt)) return loop->return_vars;
  if (const auto* branch = stmt.As<IfStmt>()) return branch->return_vars();
  return {};
}

// An op call reading a retyped operand, rebuilt so its result type follows the new operand.
Result<StmtPtr> Retype(const StmtPtr& original, VarMap& map) {
  if (!ReadsRetyped(original, map)) return SubstituteInSequence(original, map);
  const StmtPtr stmt = SubstituteInSequence(original, map);
  const auto* assign = stmt->As<AssignStmt>();
  const auto* call = assign ? assign->value()->As<Call>() : nullptr;
  if (!call || !call->is_op_call()) return stmt;
  auto rebuilt = OpRegistry::Get().CreateCall(call->target_name(), call->args(), call->kwargs(), call->span());
  if (!rebuilt) return pypto::unexpected(rebuilt.error());
  if (SameType((*rebuilt)->type(), assign->var()->type())) return stmt;
  auto var = std::make_shared<Var>(assign->var()->name_hint(), (*rebuilt)->type(), assign->var()->span());
  map[assign->var().get()] = var;
  return StmtPtr(std::make_shared<AssignStmt>(var, *rebuilt, assign->span()));
}

}  // namespace

VarPtr HandoffTensorFor(const Var& tile) {
  const TileType& type = TileOf(tile);
  return std::make_shared<Var>(tile.name_hint(), std::make_shared<TensorType>(type.shape(), type.dtype()),
                               tile.span());
}

Result<StmtPtr> CreateHandoffTensor(const VarPtr& tensor, const Span& span) {
  const auto& type = *tensor->type()->As<TensorType>();
  return AssignCall(tensor, "tensor.create", {ShapeTuple(type.shape(), span)}, {{"dtype", OpAttr(type.dtype())}},
                    span);
}

Result<StmtPtr> StoreWholeTile(const VarPtr& tile, const VarPtr& tensor, const Span& span) {
  auto written = std::make_shared<Var>(tensor->name_hint(), tensor->type(), span);
  return AssignCall(written, "tile.store", {tile, ZeroOffsets(TileOf(*tile).shape(), span), tensor}, {}, span);
}

Result<StmtPtr> ReloadWholeTile(const std::string& name, const VarPtr& tensor, const Span& span) {
  const Shape& shape = tensor->type()->As<TensorType>()->shape();
  auto load = OpRegistry::Get().CreateCall("tile.load", {tensor, ZeroOffsets(shape, span), ShapeTuple(shape, span)},
                                           {}, span);
  if (!load) return pypto::unexpected(load.error());
  return StmtPtr(std::make_shared<AssignStmt>(std::make_shared<Var>(name, (*load)->type(), span), *load, span));
}

StmtPtr SubstituteInSequence(const StmtPtr& stmt, VarMap& map) {
  StmtPtr result = SubstituteVars(stmt, map);
  if (result == stmt) return result;
  const auto before = DefinedVars(*stmt), after = DefinedVars(*result);
  for (size_t i = 0; i < before.size() && i < after.size(); ++i)
    if (before[i] != after[i] && !map.contains(before[i].get())) map[before[i].get()] = after[i];
  return result;
}

Result<std::vector<StmtPtr>> SubstituteAndRetype(const std::vector<StmtPtr>& stmts, VarMap& map) {
  std::vector<StmtPtr> result;
  for (const auto& stmt : stmts) {
    auto retyped = Retype(stmt, map);
    if (!retyped) return pypto::unexpected(retyped.error());
    result.push_back(*retyped);
  }
  return result;
}

}  // namespace pypto::passes
