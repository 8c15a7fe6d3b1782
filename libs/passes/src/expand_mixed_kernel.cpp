// ExpandMixedKernel: decides the core type of each InCore kernel from the ops it runs.
// Vector-only kernels become AIV and cube-only kernels AIC; a kernel that needs both would be
// split into an AIC + AIV group with cross-core pipes, which is not implemented yet.
#include <fmt/format.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

class AffinityCollector final : public IRVisitor {
 public:
  const Call* first_vector = nullptr;
  const Call* first_cube = nullptr;

 protected:
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    const CoreAffinity affinity = CallAffinity(*call);
    if (affinity == CoreAffinity::Vector && !first_vector) first_vector = call.get();
    if (affinity == CoreAffinity::Cube && !first_cube) first_cube = call.get();
    IRVisitor::VisitCall(call);
  }
};

Result<FunctionPtr> ResolveCoreType(const FunctionPtr& function) {
  if (function->type() != FunctionType::InCore) return function;
  AffinityCollector collector;
  collector.VisitStmt(function->body());
  if (collector.first_vector && collector.first_cube) {
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("kernel '{}' mixes cube ('{}') and vector ('{}') operations; splitting mixed "
                                 "kernels into AIC + AIV is not supported yet",
                                 function->name(), collector.first_cube->target_name(),
                                 collector.first_vector->target_name()),
                     collector.first_cube->span());
  }
  return function->WithType(collector.first_cube ? FunctionType::AIC : FunctionType::AIV);
}

}  // namespace

Pass ExpandMixedKernel() {
  // A kernel's core type follows from where its tiles live, so placement must be settled first.
  return Pass("ExpandMixedKernel", {IRProperty::NoInCoreScopes, IRProperty::TileMemoryInferred},
              {IRProperty::CoreTypesResolved}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, ResolveCoreType);
              });
}

}  // namespace pypto::passes
