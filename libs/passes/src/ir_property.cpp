// The property verifiers: each walks the program and names the first place the property fails.
#include "pypto/passes/ir_property.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "flatten_tile_nd_to_2d.h"

namespace pypto::passes {

using namespace pypto::ir;

std::string_view IRPropertyName(IRProperty property) {
  switch (property) {
    case IRProperty::SSAForm: return "SSAForm";
    case IRProperty::NoNestedCalls: return "NoNestedCalls";
    case IRProperty::NoInCoreScopes: return "NoInCoreScopes";
    case IRProperty::CoreTypesResolved: return "CoreTypesResolved";
    case IRProperty::TileMemoryAllocated: return "TileMemoryAllocated";
    case IRProperty::CallDirectionsDerived: return "CallDirectionsDerived";
    case IRProperty::TileMemoryInferred: return "TileMemoryInferred";
    case IRProperty::NoUnrollLoops: return "NoUnrollLoops";
    case IRProperty::ReturnParamsExplicit: return "ReturnParamsExplicit";
    case IRProperty::RuntimeScopesMaterialized: return "RuntimeScopesMaterialized";
    case IRProperty::StructuredCtrlFlow: return "StructuredCtrlFlow";
    case IRProperty::IterArgCarryClassified: return "IterArgCarryClassified";
    case IRProperty::TileOps2D: return "TileOps2D";
    case IRProperty::kCount: break;
  }
  return "?";
}

std::vector<IRProperty> PropertySet::items() const {
  std::vector<IRProperty> result;
  for (size_t i = 0; i < bits_.size(); ++i)
    if (bits_.test(i)) result.push_back(static_cast<IRProperty>(i));
  return result;
}

std::string PropertySet::str() const {
  std::vector<std::string_view> names;
  for (auto p : items()) names.push_back(IRPropertyName(p));
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

namespace {

// Finds the first statement or call matching a predicate.
class FirstMatch final : public IRVisitor {
 public:
  std::function<bool(const StmtPtr&)> stmt_pred = [](const StmtPtr&) { return false; };
  std::function<bool(const Call&)> call_pred = [](const Call&) { return false; };
  Span found;
  bool matched = false;

  void VisitStmt(const StmtPtr& stmt) override {
    if (matched) return;
    if (stmt_pred(stmt)) {
      matched = true;
      found = stmt->span();
      return;
    }
    IRVisitor::VisitStmt(stmt);
  }

 protected:
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    if (!matched && call_pred(*call)) {
      matched = true;
      found = call->span();
    }
    IRVisitor::VisitCall(call);
  }
};

Result<bool> Violation(IRProperty property, const Function& function, const Span& span, const std::string& what) {
  return MakeError(DiagnosticKind::Internal,
                   fmt::format("property {} does not hold in function '{}': {}", IRPropertyName(property),
                               function.name(), what),
                   span);
}

// Walks a function in program order, recording each definition; the first variable defined twice,
// or read before any definition, is the violation.
class SingleDefinitionChecker final : public IRVisitor {
 public:
  std::optional<std::pair<const Var*, std::string>> violation;

  void Define(const VarPtr& var) {
    if (!var || violation) return;
    if (!defined_.insert(var.get()).second) violation = {var.get(), "is defined twice"};
  }

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override {
    if (!violation && !defined_.contains(var.get())) violation = {var.get(), "is read before it is defined"};
  }
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    IRVisitor::VisitCall(call);
    Define(call->order().task_id);
  }
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    IRVisitor::VisitAssign(stmt);
    Define(stmt->var());
  }
  void VisitFor(const std::shared_ptr<const ForStmt>& stmt) override {
    VisitExpr(stmt->start());
    VisitExpr(stmt->stop());
    VisitExpr(stmt->step());
    for (const auto& iter_arg : stmt->iter_args()) VisitExpr(iter_arg.init);
    Define(stmt->loop_var());
    for (const auto& iter_arg : stmt->iter_args()) Define(iter_arg.var);
    VisitStmt(stmt->body());
    for (const auto& var : stmt->return_vars()) Define(var);
  }
  void VisitWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    for (const auto& iter_arg : stmt->iter_args()) VisitExpr(iter_arg.init);
    for (const auto& iter_arg : stmt->iter_args()) Define(iter_arg.var);
    VisitExpr(stmt->condition());
    VisitStmt(stmt->body());
    for (const auto& var : stmt->return_vars()) Define(var);
  }
  void VisitIf(const std::shared_ptr<const IfStmt>& stmt) override {
    IRVisitor::VisitIf(stmt);
    for (const auto& var : stmt->return_vars()) Define(var);
  }
  void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt) override {
    IRVisitor::VisitInCoreScope(stmt);
    Define(stmt->order().task_id);
  }

 private:
  std::unordered_set<const Var*> defined_;
};

Result<bool> VerifySSAForm(const Program& program) {
  for (const auto& function : program.functions()) {
    SingleDefinitionChecker checker;
    for (const auto& param : function->params()) checker.Define(param);
    checker.VisitStmt(function->body());
    if (checker.violation) {
      const auto& [var, what] = *checker.violation;
      return Violation(IRProperty::SSAForm, *function, var->span(),
                       fmt::format("variable '{}' {}", var->name_hint(), what));
    }
  }
  return true;
}

Result<bool> VerifyNoNestedCalls(const Program& program) {
  for (const auto& function : program.functions()) {
    FirstMatch finder;
    finder.call_pred = [](const Call& call) {
      for (const auto& arg : call.args())
        if (arg->Is<Call>()) return true;
      return false;
    };
    finder.VisitStmt(function->body());
    if (finder.matched)
      return Violation(IRProperty::NoNestedCalls, *function, finder.found, "a call has another call as an argument");
  }
  return true;
}

Result<bool> VerifyNoInCoreScopes(const Program& program) {
  for (const auto& function : program.functions()) {
    FirstMatch finder;
    finder.stmt_pred = [](const StmtPtr& s) { return s->Is<InCoreScopeStmt>(); };
    finder.VisitStmt(function->body());
    if (finder.matched)
      return Violation(IRProperty::NoInCoreScopes, *function, finder.found, "a pl.at scope is not outlined");
  }
  return true;
}

Result<bool> VerifyCoreTypesResolved(const Program& program) {
  for (const auto& function : program.functions())
    if (function->type() == FunctionType::InCore)
      return Violation(IRProperty::CoreTypesResolved, *function, function->span(), "the kernel is still InCore");
  return true;
}

// Tiles inside loops count too, so the walk goes through the whole body.
Result<bool> VerifyTileMemoryAllocated(const Program& program) {
  for (const auto& function : program.functions()) {
    if (!IsKernel(function->type())) continue;
    std::string unplaced;
    FirstMatch finder;
    finder.stmt_pred = [&](const StmtPtr& stmt) {
      // Assignment targets, and the tiles loops and ifs define (iter_args, return vars).
      std::vector<const Var*> defined;
      if (const auto* assign = stmt->As<AssignStmt>()) defined.push_back(assign->var().get());
      if (auto loop = AsLoop(*stmt)) {
        for (const auto& iter_arg : loop->iter_args) defined.push_back(iter_arg.var.get());
        for (const auto& var : loop->return_vars) defined.push_back(var.get());
      }
      if (const auto* branch = stmt->As<IfStmt>())
        for (const auto& var : branch->return_vars()) defined.push_back(var.get());
      for (const auto* var : defined) {
        const auto* tile = var->type()->As<TileType>();
        if (!tile || tile->memref()) continue;
        unplaced = var->name_hint();
        return true;
      }
      return false;
    };
    finder.VisitStmt(function->body());
    if (finder.matched)
      return Violation(IRProperty::TileMemoryAllocated, *function, finder.found,
                       fmt::format("tile '{}' has no address", unplaced));
  }
  return true;
}

Result<bool> VerifyCallDirectionsDerived(const Program& program) {
  for (const auto& function : program.functions()) {
    FirstMatch finder;
    finder.call_pred = [](const Call& call) {
      return !call.is_op_call() && call.arg_directions().size() != call.args().size();
    };
    finder.VisitStmt(function->body());
    if (finder.matched)
      return Violation(IRProperty::CallDirectionsDerived, *function, finder.found,
                       "a call has no direction for each argument");
  }
  return true;
}

// The operand placement InferTileMemorySpace establishes: the cube reads its operands from L0, and
// no kernel keeps a tensor of its own.
Result<bool> VerifyTileMemoryInferred(const Program& program) {
  for (const auto& function : program.functions()) {
    if (!IsKernel(function->type())) continue;
    std::string what;
    FirstMatch finder;
    finder.call_pred = [&](const Call& call) {
      if (!call.is_op_call()) return false;
      if (call.target_name() == "tensor.create") {
        what = "a tensor is created inside the kernel";
        return true;
      }
      for (const auto& [index, buffer] : call.op()->cube_operands) {
        // A call missing the operand (hand-built IR) is left to the pass, which reports its arity.
        if (static_cast<size_t>(index) >= call.args().size()) continue;
        const auto* operand = call.args()[index]->type()->As<TileType>();
        if (!operand || operand->memory_space() == buffer) continue;
        what = fmt::format("{} reads {} where the cube reads {}", call.target_name(), operand->str(),
                           MemorySpaceName(buffer));
        return true;
      }
      return false;
    };
    finder.VisitStmt(function->body());
    if (finder.matched) return Violation(IRProperty::TileMemoryInferred, *function, finder.found, what);
  }
  return true;
}

Result<bool> VerifyNoUnrollLoops(const Program& program) {
  for (const auto& function : program.functions()) {
    FirstMatch finder;
    finder.stmt_pred = [](const StmtPtr& s) {
      const auto* loop = s->As<ForStmt>();
      return loop && loop->kind() == ForKind::Unroll;
    };
    finder.VisitStmt(function->body());
    if (finder.matched)
      return Violation(IRProperty::NoUnrollLoops, *function, finder.found, "a pl.unroll loop is not unrolled");
  }
  return true;
}

// Each returned value of a submitted function is one of its pl.Out / pl.InOut parameters itself,
// and they come in the order of the signature.
Result<bool> VerifyReturnParamsExplicit(const Program& program) {
  for (const auto& function : program.functions()) {
    if (!ReturnsOutputs(*function)) continue;
    std::string what;
    FirstMatch finder;
    finder.stmt_pred = [&](const StmtPtr& stmt) {
      const auto* ret = stmt->As<ReturnStmt>();
      if (!ret) return false;
      std::optional<size_t> previous;
      for (const auto& value : ret->values()) {
        const auto& params = function->params();
        auto it = std::ranges::find_if(params, [&](const VarPtr& param) { return param.get() == value->As<Var>(); });
        const size_t index = static_cast<size_t>(it - params.begin());
        if (it == params.end() || function->param_directions()[index] == ParamDirection::In) {
          what = fmt::format("it returns {}, which is none of its pl.Out / pl.InOut parameters", PrintExpr(value));
          return true;
        }
        if (previous && index <= *previous) {
          what = fmt::format("it returns '{}' out of the parameters' order", (*it)->name_hint());
          return true;
        }
        previous = index;
      }
      return false;
    };
    finder.VisitStmt(function->body());
    if (finder.matched) return Violation(IRProperty::ReturnParamsExplicit, *function, finder.found, what);
  }
  return true;
}

// The orchestration body is an automatic runtime scope (followed by its return), and so is the body
// of each loop outside a manual scope (followed by its yield); a function declared auto_scope=False
// has the scopes its author wrote, which is all it needs.
class RuntimeScopeChecker final : public IRVisitor {
 public:
  Span missing;
  bool found = false;

 protected:
  void VisitFor(const std::shared_ptr<const ForStmt>& loop) override {
    if (!found && manual_depth_ == 0 && !AsAutoRuntimeScope(loop->body())) {
      found = true;
      missing = loop->span();
    }
    IRVisitor::VisitFor(loop);
  }
  void VisitRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& scope) override {
    manual_depth_ += scope->manual() ? 1 : 0;
    IRVisitor::VisitRuntimeScope(scope);
    manual_depth_ -= scope->manual() ? 1 : 0;
  }

 private:
  int manual_depth_ = 0;
};

Result<bool> VerifyRuntimeScopesMaterialized(const Program& program) {
  for (const auto& function : program.functions()) {
    if (function->type() != FunctionType::Orchestration || !AutoScope(*function)) continue;
    if (!AsAutoRuntimeScope(function->body()))
      return Violation(IRProperty::RuntimeScopesMaterialized, *function, function->span(),
                       "the body is not one automatic runtime scope");
    RuntimeScopeChecker checker;
    checker.VisitStmt(function->body());
    if (checker.found)
      return Violation(IRProperty::RuntimeScopesMaterialized, *function, checker.missing,
                       "the loop body is not an automatic runtime scope");
  }
  return true;
}

// No break or continue is left in any function.
Result<bool> VerifyStructuredCtrlFlow(const Program& program) {
  for (const auto& function : program.functions()) {
    FirstMatch finder;
    const char* what = "";
    finder.stmt_pred = [&](const StmtPtr& s) {
      if (!AsJump(*s)) return false;
      what = s->Is<BreakStmt>() ? "a 'break' is left" : "a 'continue' is left";
      return true;
    };
    finder.VisitStmt(function->body());
    if (finder.matched) return Violation(IRProperty::StructuredCtrlFlow, *function, finder.found, what);
  }
  return true;
}

// Whether `kind` is how a value of `type` can be carried by an orchestration loop.
bool CarryFitsType(CarryKind kind, const Type& type) {
  if (IsTaskIdArray(type)) return kind == CarryKind::TaskIdArray;
  if (IsTaskId(type)) return kind == CarryKind::TaskId;
  if (type.As<ScalarType>()) return kind == CarryKind::Scalar;
  if (type.As<TensorType>()) return kind == CarryKind::Alias || kind == CarryKind::Rebind;
  return false;
}

// Every value an orchestration loop carries is stamped with a carry kind its type allows.
Result<bool> VerifyIterArgCarryClassified(const Program& program) {
  for (const auto& function : program.functions()) {
    if (function->type() != FunctionType::Orchestration) continue;
    FirstMatch finder;
    std::string what;
    finder.stmt_pred = [&](const StmtPtr& s) {
      const auto* loop = s->As<ForStmt>();
      if (!loop) return false;
      for (const auto& iter_arg : loop->iter_args()) {
        if (CarryFitsType(iter_arg.carry, *iter_arg.var->type())) continue;
        what = fmt::format("loop '{}' carries '{}' ({}) as {}", loop->loop_var()->name_hint(),
                           iter_arg.var->name_hint(), iter_arg.var->type()->str(), CarryKindName(iter_arg.carry));
        return true;
      }
      return false;
    };
    finder.VisitStmt(function->body());
    if (finder.matched) return Violation(IRProperty::IterArgCarryClassified, *function, finder.found, what);
  }
  return true;
}

// No kernel holds a tile of rank 3 or more that FlattenTileNdTo2D could merge into a 2-D one; a
// kernel with an op that has no 2-D form (a matmul over a batch) keeps its N-d tiles.
Result<bool> VerifyTileOps2D(const Program& program) {
  for (const auto& function : program.functions()) {
    if (!IsKernel(function->type())) continue;
    const Var* tile = FirstNdTile(*function);
    if (!tile || !FlattenKernelTiles(function)) continue;
    return Violation(IRProperty::TileOps2D, *function, tile->span(),
                     fmt::format("tile '{}' {} has rank {}, and the kernel has a 2-D form", tile->name_hint(),
                                 tile->type()->str(), tile->type()->As<TileType>()->shape().size()));
  }
  return true;
}

}  // namespace

std::optional<size_t> ReturnedParam(const Function& function) {
  const ReturnStmt* ret = nullptr;
  for (const auto& stmt : FlattenStmts(function.body()))
    if (const auto* r = stmt->As<ReturnStmt>()) ret = r;
  if (!ret) {
    if (function.return_types().size() == 1) return FirstOutputParam(function.param_directions());
    return std::nullopt;
  }
  if (ret->values().size() != 1) return std::nullopt;
  for (size_t i = 0; i < function.params().size(); ++i)
    if (function.params()[i] == ret->values()[0]) return i;
  return std::nullopt;
}

bool ReturnsOutputs(const Function& function) {
  return IsKernel(function.type()) || function.type() == FunctionType::Group || function.type() == FunctionType::Spmd;
}

const RuntimeScopeStmt* AsAutoRuntimeScope(const StmtPtr& body) {
  auto stmts = FlattenStmts(body);
  if (stmts.size() == 2 && (stmts[1]->Is<YieldStmt>() || stmts[1]->Is<ReturnStmt>())) stmts.pop_back();
  const auto* scope = stmts.size() == 1 ? stmts[0]->As<RuntimeScopeStmt>() : nullptr;
  return scope && !scope->manual() ? scope : nullptr;
}

Result<bool> VerifyProperty(IRProperty property, const Program& program) {
  switch (property) {
    case IRProperty::SSAForm: return VerifySSAForm(program);
    case IRProperty::NoNestedCalls: return VerifyNoNestedCalls(program);
    case IRProperty::NoInCoreScopes: return VerifyNoInCoreScopes(program);
    case IRProperty::CoreTypesResolved: return VerifyCoreTypesResolved(program);
    case IRProperty::TileMemoryAllocated: return VerifyTileMemoryAllocated(program);
    case IRProperty::CallDirectionsDerived: return VerifyCallDirectionsDerived(program);
    case IRProperty::TileMemoryInferred: return VerifyTileMemoryInferred(program);
    case IRProperty::NoUnrollLoops: return VerifyNoUnrollLoops(program);
    case IRProperty::ReturnParamsExplicit: return VerifyReturnParamsExplicit(program);
    case IRProperty::RuntimeScopesMaterialized: return VerifyRuntimeScopesMaterialized(program);
    case IRProperty::StructuredCtrlFlow: return VerifyStructuredCtrlFlow(program);
    case IRProperty::IterArgCarryClassified: return VerifyIterArgCarryClassified(program);
    case IRProperty::TileOps2D: return VerifyTileOps2D(program);
    case IRProperty::kCount: break;
  }
  return MakeError(DiagnosticKind::Internal, "unknown property");
}

}  // namespace pypto::passes
