// NormalizeReturnOrder: a function the orchestration calls (a kernel, or a Group of kernels) returns
// what it wrote into its output parameters, and the caller's result names the tensor it passed for
// that parameter. Outlining already writes `return out` with the parameter itself, but a program
// written by hand may return an alias of it: the result of a store into it
// (`r = pl.store(t, [0, 0], out); return r`), or in a Group the result of a member call that
// returns it (`r = self.k_aiv(a, out); return r`). This pass replaces each returned value by the
// parameter it stands for, so codegen-orch reads which parameter a call returns from the IR instead
// of tracing it (property ReturnParamsExplicit).
#include <fmt/format.h>

#include <optional>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

const ReturnStmt* FindReturn(const Function& function) {
  const ReturnStmt* found = nullptr;
  for (const auto& stmt : FlattenStmts(function.body()))
    if (const auto* ret = stmt->As<ReturnStmt>()) found = ret;
  return found;
}

std::optional<size_t> ParamIndex(const Function& function, const Var* var) {
  for (size_t i = 0; i < function.params().size(); ++i)
    if (function.params()[i].get() == var) return i;
  return std::nullopt;
}

// Which parameter each returned value of a function stands for. A value is traced back through the
// statements of the body that rebind a written tensor: an op writing one of its arguments (its
// result is that argument's buffer) and a call of another function of the program (its result is
// the argument passed for the parameter that function returns).
class ReturnTracer {
 public:
  explicit ReturnTracer(const Program& program) : program_(program) {}

  // One entry per returned value; nullopt where the value is no output parameter.
  std::vector<std::optional<size_t>> Trace(const Function& function) {
    std::vector<std::optional<size_t>> result;
    const ReturnStmt* ret = FindReturn(function);
    if (!ret) return result;
    std::unordered_map<const Var*, const Var*> alias_of;
    for (const auto& stmt : FlattenStmts(function.body()))
      if (const auto* assign = stmt->As<AssignStmt>())
        if (const Var* dest = WrittenBy(*assign, function)) alias_of[assign->var().get()] = dest;
    for (const auto& value : ret->values()) {
      const Var* var = value->As<Var>();
      for (auto it = var ? alias_of.find(var) : alias_of.end(); it != alias_of.end(); it = alias_of.find(var))
        var = it->second;
      std::optional<size_t> param = var ? ParamIndex(function, var) : std::nullopt;
      if (param && function.param_directions()[*param] == ParamDirection::In) param.reset();
      result.push_back(param);
    }
    return result;
  }

  // The single parameter a function returns (a body-less declaration: its first output parameter).
  std::optional<size_t> SingleReturned(const Function& function) {
    if (auto it = single_.find(&function); it != single_.end()) return it->second;
    single_[&function] = std::nullopt;  // a call cycle traces to nothing
    std::optional<size_t> param;
    if (!FindReturn(function)) {
      if (function.return_types().size() == 1) param = FirstOutputParam(function.param_directions());
    } else if (auto traced = Trace(function); traced.size() == 1) {
      param = traced[0];
    }
    return single_[&function] = param;
  }

 private:
  // The tensor whose buffer `assign` rebinds: the argument an op writes, or the argument a called
  // function returns.
  const Var* WrittenBy(const AssignStmt& assign, const Function& function) {
    const auto* call = assign.value()->As<Call>();
    if (!call) return nullptr;
    if (call->is_op_call())
      return call->op()->writes_arg ? call->args()[*call->op()->writes_arg]->As<Var>() : nullptr;
    auto callee = program_.Find(call->callee());
    if (!callee || callee.get() == &function) return nullptr;
    auto returned = SingleReturned(*callee);
    return returned && *returned < call->args().size() ? call->args()[*returned]->As<Var>() : nullptr;
  }

  const Program& program_;
  std::unordered_map<const Function*, std::optional<size_t>> single_;
};

class ReturnRewriter final : public IRMutator {
 public:
  explicit ReturnRewriter(std::vector<ExprPtr> values) : values_(std::move(values)) {}

 protected:
  StmtPtr MutateReturn(const std::shared_ptr<const ReturnStmt>& stmt) override {
    return std::make_shared<ReturnStmt>(values_, stmt->span());
  }

 private:
  std::vector<ExprPtr> values_;
};

Result<FunctionPtr> Normalize(const FunctionPtr& function, ReturnTracer& tracer) {
  if (!ReturnsOutputs(*function)) return function;
  const ReturnStmt* ret = FindReturn(*function);
  if (!ret) return function;
  const auto traced = tracer.Trace(*function);
  std::vector<ExprPtr> values;
  std::optional<size_t> previous;
  for (size_t i = 0; i < traced.size(); ++i) {
    if (!traced[i])
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' returns a value that is none of its pl.Out / pl.InOut parameters", function->name()),
                       ret->span(),
                       "a kernel returns the output tensors it writes: return the parameter (or the result of the "
                       "store into it)");
    if (previous && *traced[i] <= *previous)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' returns its output parameters out of their order in the signature",
                                   function->name()),
                       ret->span(), "return the pl.Out / pl.InOut parameters in the order they are declared");
    previous = traced[i];
    values.push_back(function->params()[*traced[i]]);
  }
  bool same = true;
  for (size_t i = 0; i < values.size(); ++i) same &= values[i] == ret->values()[i];
  if (same) return function;
  ReturnRewriter rewriter(std::move(values));
  return function->WithBody(rewriter.MutateStmt(function->body()));
}

}  // namespace

Pass NormalizeReturnOrder() {
  return Pass("NormalizeReturnOrder", {IRProperty::NoInCoreScopes}, {IRProperty::ReturnParamsExplicit}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                ReturnTracer tracer(*program);
                return RewriteEachFunction(
                    program, [&](const FunctionPtr& function) { return Normalize(function, tracer); });
              });
}

}  // namespace pypto::passes
