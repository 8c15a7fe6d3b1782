// ExpandMixedKernel: decides the core type of each InCore kernel from the ops it runs.
// Vector-only kernels become AIV and cube-only kernels AIC. A kernel that needs both becomes a Group
// of the same name, run as one mixed task, whose AIC and AIV members (`<name>_aic`, `<name>_aiv`)
// hand tiles to each other over cross-core pipes (SplitMixedKernel). An AIV kernel that shares the
// cube's tiles with its peer lane over split pipes is then halved for the two lanes (SplitVectorKernel).
#include <fmt/format.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "mixed_kernel_split.h"
#include "split_vector_kernel.h"
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

// The kernel as its program ends up holding it: one function, or a Group with its two members.
Result<std::vector<FunctionPtr>> ResolveCoreType(const FunctionPtr& function) {
  if (function->type() != FunctionType::InCore) return std::vector<FunctionPtr>{function};
  AffinityCollector collector;
  collector.VisitStmt(function->body());
  if (!collector.first_vector || !collector.first_cube)
    return std::vector<FunctionPtr>{function->WithType(collector.first_cube ? FunctionType::AIC : FunctionType::AIV)};
  auto members = SplitMixedKernel(*function);
  if (!members) return pypto::unexpected(members.error());
  auto group = MakeGroupFunction(function->name(), members->aic, members->aiv, function->span());
  return std::vector<FunctionPtr>{members->aic, members->aiv, group};
}

}  // namespace

Pass ExpandMixedKernel() {
  // A kernel's core type follows from where its tiles live, so placement must be settled first.
  return Pass("ExpandMixedKernel",
              {IRProperty::NoInCoreScopes, IRProperty::TileMemoryInferred, IRProperty::StructuredCtrlFlow},
              {IRProperty::CoreTypesResolved}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                std::vector<FunctionPtr> functions;
                for (const auto& function : program->functions()) {
                  auto resolved = ResolveCoreType(function);
                  if (!resolved) return pypto::unexpected(resolved.error());
                  for (const auto& kernel : *resolved) {
                    auto split = SplitVectorKernel(kernel);
                    if (!split) return pypto::unexpected(split.error());
                    functions.push_back(*split);
                  }
                }
                return std::make_shared<Program>(program->name(), std::move(functions), program->entry_name());
              });
}

}  // namespace pypto::passes
