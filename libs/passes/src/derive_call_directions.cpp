// DeriveCallDirections: every call to a kernel gets one ArgDirection per argument, which the
// orchestration codegen turns into add_input / add_output / add_inout / add_scalar and the runtime
// into dependencies. Tensor parameters take their direction from the callee's ParamDirection;
// scalar parameters (`pl.Scalar[...]`) are passed by value and take Scalar. A caller's own In
// parameter that it passes to a kernel writing it is promoted to Out / InOut; on the program's entry
// the promotion is recorded (kDeclaredInAttrPrefix), since there the declared In is what a device
// runtime acts on.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "pypto/ir/functor.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

ArgDirection ToArgDirection(ParamDirection direction, const TypePtr& type) {
  if (!type->As<TensorType>()) return ArgDirection::Scalar;
  switch (direction) {
    case ParamDirection::In: return ArgDirection::Input;
    case ParamDirection::Out: return ArgDirection::OutputExisting;  // the caller passes the buffer
    case ParamDirection::InOut: return ArgDirection::InOut;
  }
  return ArgDirection::Input;
}

class DirectionWriter final : public IRMutator {
 public:
  explicit DirectionWriter(const Program& program) : program_(program) {}

  // The first call whose arguments do not fit its callee.
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    auto mutated = As<Call>(IRMutator::MutateCall(call));
    if (mutated->is_op_call()) return mutated;
    auto callee = program_.Find(mutated->callee());
    if (!callee) return mutated;
    const auto& params = callee->params();
    const auto& args = mutated->args();
    if (args.size() != params.size()) {
      Fail(fmt::format("the call to '{}' passes {} arguments, but it takes {}", callee->name(), args.size(),
                       params.size()),
           mutated->span());
      return mutated;
    }
    std::vector<ArgDirection> directions;
    for (size_t i = 0; i < params.size(); ++i) {
      const bool param_is_tensor = params[i]->type()->As<TensorType>() != nullptr;
      const bool arg_is_tensor = args[i]->type()->As<TensorType>() != nullptr;
      if (param_is_tensor != arg_is_tensor && (param_is_tensor || params[i]->type()->As<ScalarType>())) {
        Fail(fmt::format("argument {} of the call to '{}' is {}, but parameter '{}' is {}", i, callee->name(),
                         args[i]->type()->str(), params[i]->name_hint(), params[i]->type()->str()),
             args[i]->span().known() ? args[i]->span() : mutated->span());
        return mutated;
      }
      directions.push_back(ToArgDirection(callee->param_directions()[i], params[i]->type()));
    }
    return std::make_shared<Call>(mutated->callee(), mutated->args(), mutated->type(), mutated->span(),
                                  std::move(directions), mutated->kwargs(), mutated->order(), mutated->core_num());
  }

 private:
  void Fail(std::string message, const Span& span) {
    if (!error_) error_ = Diagnostic{DiagnosticKind::Type, std::move(message), span, {}};
  }

  const Program& program_;
  std::optional<Diagnostic> error_;
};

// A parameter the caller declared In (a plain `pl.Tensor`) that it passes to a kernel writing it
// becomes Out, or InOut where the kernel reads it too, as upstream promotes it: the caller's tensor
// is written, so its own callers must treat it as an output and the kernels writing it are ordered.
// The program's entry keeps a record of each such parameter and the first kernel writing it: a
// device runtime copies back only what the entry declared Out / InOut (seed 001).
FunctionPtr PromoteWrittenParams(const FunctionPtr& function, const Program& program) {
  std::map<const Var*, size_t> param_index;
  for (size_t i = 0; i < function->params().size(); ++i) param_index[function->params()[i].get()] = i;
  struct Calls final : IRVisitor {
    std::vector<const Call*> found;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      if (!call->is_op_call()) found.push_back(call.get());
      IRVisitor::VisitCall(call);
    }
  } calls;
  calls.VisitStmt(function->body());
  auto directions = function->param_directions();
  auto attrs = function->attrs();
  const bool is_entry = function->name() == program.entry_name();
  for (const Call* call : calls.found) {
    auto callee = program.Find(call->callee());
    if (!callee) continue;
    for (size_t i = 0; i < call->args().size() && i < callee->params().size(); ++i) {
      const auto* var = call->args()[i]->As<Var>();
      auto at = var ? param_index.find(var) : param_index.end();
      if (at == param_index.end()) continue;
      const ParamDirection declared = function->param_directions()[at->second];
      ParamDirection& mine = directions[at->second];
      const ParamDirection theirs = callee->param_directions()[i];
      if (theirs == ParamDirection::InOut) mine = ParamDirection::InOut;
      else if (theirs == ParamDirection::Out && mine == ParamDirection::In) mine = ParamDirection::Out;
      if (is_entry && declared == ParamDirection::In && theirs != ParamDirection::In)
        attrs.try_emplace(DeclaredInAttr(var->name_hint()), callee->name());
    }
  }
  if (directions == function->param_directions()) return function;
  return std::make_shared<Function>(function->name(), function->params(), std::move(directions),
                                    function->return_types(), function->body(), function->type(), std::move(attrs),
                                    function->span());
}

}  // namespace

Pass DeriveCallDirections() {
  // SSAForm: a buffer's lineage follows each variable back to its one definition.
  return Pass("DeriveCallDirections", {IRProperty::SSAForm, IRProperty::NoInCoreScopes},
              {IRProperty::CallDirectionsDerived}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  DirectionWriter writer(*program);
                  auto body = writer.MutateStmt(function->body());
                  if (writer.error()) return pypto::unexpected(*writer.error());
                  return PromoteWrittenParams(body == function->body() ? function : function->WithBody(body),
                                              *program);
                });
              });
}

}  // namespace pypto::passes
