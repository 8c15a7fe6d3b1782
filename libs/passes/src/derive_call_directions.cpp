// DeriveCallDirections: every call to a kernel gets one ArgDirection per argument, which the
// orchestration codegen turns into add_input / add_output / add_inout and the runtime into
// dependencies.
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

 protected:
  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    auto mutated = As<Call>(IRMutator::MutateCall(call));
    if (mutated->is_op_call()) return mutated;
    auto callee = program_.Find(mutated->callee());
    if (!callee) return mutated;
    std::vector<ArgDirection> directions;
    for (size_t i = 0; i < callee->params().size(); ++i)
      directions.push_back(ToArgDirection(callee->param_directions()[i], callee->params()[i]->type()));
    return std::make_shared<Call>(mutated->callee(), mutated->args(), mutated->type(), mutated->span(),
                                  std::move(directions));
  }

 private:
  const Program& program_;
};

}  // namespace

Pass DeriveCallDirections() {
  return Pass("DeriveCallDirections", {IRProperty::NoInCoreScopes}, {IRProperty::CallDirectionsDerived}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                std::vector<FunctionPtr> functions;
                for (const auto& function : program->functions()) {
                  DirectionWriter writer(*program);
                  auto body = writer.MutateStmt(function->body());
                  functions.push_back(body == function->body() ? function : function->WithBody(body));
                }
                return std::make_shared<Program>(program->name(), functions, program->entry_name());
              });
}

}  // namespace pypto::passes
