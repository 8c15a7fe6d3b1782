// The Planner's checks of control flow (kernel_planner.h): for and while loops (scf.for, scf.while),
// ifs (scf.if) and their conditions, and the tiles and integer scalars they carry or merge, which
// must stay in one buffer (tile aliases) or be index values.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel_planner.h"
#include "pypto/ir/printer.h"

namespace pypto::backend_ptoas::detail {

// `for i in pl.range(start, stop, step)` becomes scf.for, which takes index bounds and a positive
// step. A pl.unroll loop is refused rather than run as a plain loop: the pipeline's UnrollLoops
// copies its body, so one here comes from IR lowered without that pass.
Status Planner::CheckFor(const ir::ForStmt& loop) {
  const auto& var = *loop.loop_var();
  for (const auto& iter_arg : loop.iter_args()) {
    // An integer scalar is an scf.for iter_arg; a tile stays in its buffer.
    if (IsIndexScalar(*iter_arg.var)) {
      const std::string what = fmt::format("the initial value of '{}'", iter_arg.var->name_hint());
      if (auto ok = CheckIndexExpr(iter_arg.init, what, loop.span()); !ok) return ok;
      scalars_.insert(iter_arg.var.get());
      continue;
    }
    if (iter_arg.var->type()->As<ir::ArrayType>()) {  // an on-core array, updated in place
      if (auto ok = CarryArray(*iter_arg.var, iter_arg.init->As<ir::Var>(), loop.span()); !ok) return ok;
      continue;
    }
    if (!iter_arg.var->type()->As<ir::TileType>()) {
      return Error(loop.span(), fmt::format("backend-ptoas cannot lower the loop over '{}' in kernel '{}': it "
                                            "carries '{}' of type {} from one iteration to the next (carried "
                                            "tiles and integer scalars are emitted)",
                                            var.name_hint(), kernel_.name(), iter_arg.var->name_hint(),
                                            iter_arg.var->type()->str()));
    }
    if (auto ok = CheckTileOperand(iter_arg.init, "the loop's initial value", loop.span()); !ok) return ok;
    if (auto ok = AliasTile(*iter_arg.var, *iter_arg.init->As<ir::Var>(), loop.span()); !ok) return ok;
  }
  // A pl.pipeline loop is a sequential loop whose stages may overlap on the device; as an scf.for
  // it computes the same values without the overlap.
  if (loop.kind() == ir::ForKind::Unroll) {
    return Error(loop.span(), fmt::format("backend-ptoas cannot lower the pl.{} loop over '{}' in kernel '{}' "
                                          "(supported: pl.range, pl.parallel, pl.pipeline)",
                                          ir::ForKindName(loop.kind()), var.name_hint(), kernel_.name()));
  }
  const auto* scalar = var.type()->As<ir::ScalarType>();
  if (!scalar || scalar->dtype() != ir::DataType::INDEX) {
    return Error(loop.span(), fmt::format("the loop variable '{}' must have type INDEX, got {}", var.name_hint(),
                                          var.type()->str()));
  }
  const std::pair<const char*, const ir::ExprPtr*> bounds[] = {
      {"start", &loop.start()}, {"stop", &loop.stop()}, {"step", &loop.step()}};
  for (const auto& [name, bound] : bounds) {
    std::string what = fmt::format("the {} of the loop over '{}'", name, var.name_hint());
    if (auto ok = CheckIndexExpr(*bound, what, loop.span()); !ok) return ok;
  }
  if (auto step = ir::AsConstInt(loop.step()); step && *step <= 0) {
    return Error(loop.span(), fmt::format("the loop over '{}' has step {}; backend-ptoas lowers loops to scf.for, "
                                          "whose step must be positive",
                                          var.name_hint(), *step));
  }
  auto& body = plan_.loop_bodies[&loop];
  if (loop.body()) Flatten(loop.body(), body);
  loops_.push_back(&var);
  for (const auto& stmt : body) {
    if (auto ok = CheckStmt(*stmt); !ok) return ok;
  }
  loops_.pop_back();
  if (loop.iter_args().empty()) return {};
  // Each carried tile is yielded from, and leaves the loop in, the buffer it started in.
  const auto* yield = body.empty() ? nullptr : body.back()->As<ir::YieldStmt>();
  if (!yield || yield->values().size() != loop.iter_args().size())
    return Error(loop.span(), fmt::format("the loop over '{}' does not end by yielding its carried values",
                                          var.name_hint()));
  for (size_t i = 0; i < loop.iter_args().size(); ++i) {
    const ir::Var& carried = *loop.iter_args()[i].var;
    if (IsIndexScalar(carried)) {
      if (auto ok = CheckScalarResult(yield->values()[i], carried, i < loop.return_vars().size()
                                                                       ? loop.return_vars()[i].get()
                                                                       : nullptr,
                                      yield->span());
          !ok)
        return ok;
      continue;
    }
    if (carried.type()->As<ir::ArrayType>()) {
      if (auto ok = CheckArrayYield(yield->values()[i], carried, yield->span()); !ok) return ok;
      if (i < loop.return_vars().size())
        if (auto ok = CarryArray(*loop.return_vars()[i], &carried, loop.span()); !ok) return ok;
      continue;
    }
    if (auto ok = CheckYieldedInPlace(yield->values()[i], carried, yield->span()); !ok) return ok;
    if (i < loop.return_vars().size())
      if (auto ok = AliasTile(*loop.return_vars()[i], carried, loop.span()); !ok) return ok;
  }
  return {};
}

// `while cond:` becomes scf.while. Its carried integer scalars are the scf.while's operands, block
// arguments and results, in `index`; its carried tiles stay in their buffer, as in a for loop.
Status Planner::CheckWhile(const ir::WhileStmt& loop) {
  for (const auto& iter_arg : loop.iter_args()) {
    const ir::Var& var = *iter_arg.var;
    if (var.type()->As<ir::TileType>()) {
      if (auto ok = CheckTileOperand(iter_arg.init, "the loop's initial value", loop.span()); !ok) return ok;
      if (auto ok = AliasTile(var, *iter_arg.init->As<ir::Var>(), loop.span()); !ok) return ok;
      continue;
    }
    const auto* scalar = var.type()->As<ir::ScalarType>();
    if (!scalar || (scalar->dtype() != ir::DataType::INDEX && !IsSignedInteger(scalar->dtype())))
      return Error(loop.span(), fmt::format("backend-ptoas cannot lower the while loop in kernel '{}': it carries "
                                            "'{}' of type {} (carried tiles and integer scalars are emitted)",
                                            kernel_.name(), var.name_hint(), var.type()->str()));
    if (auto ok = CheckIndexExpr(iter_arg.init, fmt::format("the initial value of '{}'", var.name_hint()),
                                 loop.span());
        !ok)
      return ok;
    scalars_.insert(&var);
  }
  if (auto ok = CheckCondition(loop.condition(), loop.span(), "while"); !ok) return ok;
  auto& body = plan_.while_bodies[&loop];
  if (loop.body()) Flatten(loop.body(), body);
  ++while_depth_;
  for (const auto& stmt : body) {
    if (auto ok = CheckStmt(*stmt); !ok) return ok;
  }
  --while_depth_;
  if (loop.iter_args().empty()) return {};
  const auto* yield = body.empty() ? nullptr : body.back()->As<ir::YieldStmt>();
  if (!yield || yield->values().size() != loop.iter_args().size())
    return Error(loop.span(), "the while loop does not end by yielding its carried values");
  for (size_t i = 0; i < loop.iter_args().size(); ++i) {
    const ir::Var& carried = *loop.iter_args()[i].var;
    const ir::Var& result = *loop.return_vars().at(i);
    if (!carried.type()->As<ir::TileType>()) {
      if (auto ok = CheckIndexExpr(yield->values()[i], fmt::format("the next value of '{}'", carried.name_hint()),
                                   yield->span());
          !ok)
        return ok;
      scalars_.insert(&result);
      continue;
    }
    if (auto ok = CheckYieldedInPlace(yield->values()[i], carried, yield->span()); !ok) return ok;
    if (auto ok = AliasTile(result, carried, loop.span()); !ok) return ok;
  }
  return {};
}

// `if cond:` ... `else:` ... as scf.if; tiles the branches yield share the result's buffer.
Status Planner::CheckIf(const ir::IfStmt& branch) {
  if (auto ok = CheckCondition(branch.condition(), branch.span()); !ok) return ok;
  auto& [then_body, else_body] = plan_.branch_bodies[&branch];
  Flatten(branch.then_body(), then_body);
  if (branch.else_body()) Flatten(branch.else_body(), else_body);
  for (const auto* body : {&then_body, &else_body}) {
    for (const auto& stmt : *body) {
      if (auto ok = CheckStmt(*stmt); !ok) return ok;
    }
  }
  const auto& results = branch.return_vars();
  if (results.empty()) return {};
  for (const auto& result : results) {
    if (!result->type()->As<ir::TileType>() && !result->type()->As<ir::ArrayType>() && !IsIndexScalar(*result))
      return Error(branch.span(), fmt::format("backend-ptoas cannot lower this if in kernel '{}': it merges '{}' of "
                                              "type {} (merged tiles and integer scalars are emitted)",
                                              kernel_.name(), result->name_hint(), result->type()->str()));
  }
  const auto* then_yield = then_body.empty() ? nullptr : then_body.back()->As<ir::YieldStmt>();
  const auto* else_yield = else_body.empty() ? nullptr : else_body.back()->As<ir::YieldStmt>();
  if (!then_yield || !else_yield)
    return Error(branch.span(), "an if with results must end both branches with pl.yield_");
  for (size_t i = 0; i < results.size(); ++i) {
    if (IsIndexScalar(*results[i])) {  // an scf.if result
      if (auto ok = CheckScalarResult(then_yield->values()[i], *results[i], nullptr, then_yield->span()); !ok)
        return ok;
      if (auto ok = CheckScalarResult(else_yield->values()[i], *results[i], results[i].get(), else_yield->span());
          !ok)
        return ok;
      continue;
    }
    if (results[i]->type()->As<ir::ArrayType>()) {  // both branches give back one array's storage
      if (auto ok = CarryArray(*results[i], then_yield->values()[i]->As<ir::Var>(), then_yield->span()); !ok)
        return ok;
      if (auto ok = CheckArrayYield(else_yield->values()[i], *results[i], else_yield->span()); !ok) return ok;
      continue;
    }
    const auto* first = then_yield->values()[i]->As<ir::Var>();
    if (auto ok = CheckTileOperand(then_yield->values()[i], "the if's yield", then_yield->span()); !ok) return ok;
    if (auto ok = CheckYieldedInPlace(else_yield->values()[i], *first, else_yield->span()); !ok) return ok;
    if (auto ok = AliasTile(*results[i], *first, branch.span()); !ok) return ok;
  }
  return {};
}

// A condition is a comparison of index values (arith.cmpi) or of floating-point scalars
// (arith.cmpf), a constant, or a boolean scalar parameter (`if is_first:`), whose i1 argument it is.
Status Planner::CheckCondition(const ir::ExprPtr& condition, const ir::Span& span, std::string_view construct) {
  if (condition->Is<ir::ConstBool>() || IsBoolParam(*condition)) return {};
  const auto* binary = condition->As<ir::BinaryExpr>();
  if (!binary || !ir::IsComparison(binary->op()))
    return Error(span, fmt::format("backend-ptoas cannot lower the {} condition `{}` in kernel '{}': it lowers "
                                   "comparisons of integers and of floating-point scalars, and boolean "
                                   "scalar parameters",
                                   construct, ir::PrintExpr(condition), kernel_.name()));
  return CheckComparison(*binary, fmt::format("the {} condition `{}`", construct, ir::PrintExpr(condition)), span);
}

bool Planner::IsBoolParam(const ir::Expr& expr) const {
  const auto* var = expr.As<ir::Var>();
  const auto* scalar = expr.type()->As<ir::ScalarType>();
  return var && scalar && scalar->dtype() == ir::DataType::BOOL &&
         std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                     [&](const ir::VarPtr& param) { return param.get() == var; });
}

// An integer scalar carried by a loop or merged by an if: an scf result of type index.
bool Planner::IsIndexScalarExpr(const ir::Expr& expr) {
  const auto* scalar = expr.type()->As<ir::ScalarType>();
  return scalar && (scalar->dtype() == ir::DataType::INDEX || IsSignedInteger(scalar->dtype()));
}

bool Planner::IsIndexScalar(const ir::Var& var) {
  const auto* scalar = var.type()->As<ir::ScalarType>();
  return scalar && ir::IsInteger(scalar->dtype());
}

// The value yielded for the carried or merged scalar `carried`; `result`, when given, is an index
// value from then on.
Status Planner::CheckScalarResult(const ir::ExprPtr& value, const ir::Var& carried, const ir::Var* result,
                                  const ir::Span& span) {
  if (auto ok = CheckIndexExpr(value, fmt::format("the value yielded for '{}'", carried.name_hint()), span); !ok)
    return ok;
  if (result) scalars_.insert(result);
  return {};
}

// `alias` names `tile`'s buffer from here on; both must be placed alike.
Status Planner::AliasTile(const ir::Var& alias, const ir::Var& tile, const ir::Span& span) {
  if (auto ok = CheckSamePlace(alias, tile, span); !ok) return ok;
  plan_.tile_aliases[&alias] = RootTile(tile);
  tiles_.insert(&alias);
  return {};
}

Status Planner::CheckYieldedInPlace(const ir::ExprPtr& value, const ir::Var& carried, const ir::Span& span) const {
  if (auto ok = CheckTileOperand(value, "pl.yield_", span); !ok) return ok;
  return CheckSamePlace(*value->As<ir::Var>(), carried, span);
}

Status Planner::CheckSamePlace(const ir::Var& a, const ir::Var& b, const ir::Span& span) const {
  const auto* x = a.type()->As<ir::TileType>();
  const auto* y = b.type()->As<ir::TileType>();
  const bool same = x && y && x->memref() && y->memref() && x->memory_space() == y->memory_space() &&
                    x->memref()->byte_offset == y->memref()->byte_offset && x->shape() == y->shape() &&
                    x->dtype() == y->dtype();
  if (same) return {};
  return Error(span, fmt::format("'{}' and '{}' must be one buffer to be carried or merged in place ({} vs {})",
                                 a.name_hint(), b.name_hint(), a.type()->str(), b.type()->str()));
}

const ir::Var* Planner::RootTile(const ir::Var& tile) const {
  auto it = plan_.tile_aliases.find(&tile);
  return it == plan_.tile_aliases.end() ? &tile : it->second;
}

}  // namespace pypto::backend_ptoas::detail
