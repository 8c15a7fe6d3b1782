// The public entry points of orchestration codegen: GenerateOrchestration, ExpandDeferredPlan and
// RuntimeDataType (RunDeferredPlan is staged_run.cpp's).
//
// GenerateOrchestration walks the lowered orchestration once, producing the C++ source and the task
// plan together.
//
// `x = pl.create_tensor(...)` at the top of the body makes plan intermediates (one alloc_tensors at
// scope entry in the C++), and each kernel call becomes one submit whose tensors come first and whose
// scalars follow, encoded as 64-bit patterns (add_scalar). Orchestration loops become C++ `for`
// loops and ifs C++ `if`s; scalar definitions (`k0 = kb * 64`) become C++ variables. The walk also
// records the body as steps (submits, scalar definitions, loops, ifs), which the plan runs unrolled at
// compile time: loop bounds and if conditions must be known then, and each submit in a loop carries
// that iteration's scalar values.
//
// The pieces live in their own files: the plan steps (plan_steps.h), the loop expansion
// (loop_expander.h), orchestration scalars (orchestration_scalars.h), C++ names (cpp_names.h) and the
// emitter (orchestration_emitter.h, its members in orchestration_emitter.cpp and emit_*.cpp).
#include "pypto/codegen_orch/orchestration.h"

#include <fmt/format.h>

#include "loop_expander.h"
#include "orchestration_emitter.h"
#include "pypto/runtime/dtype_code.h"

namespace pypto::codegen_orch {

using detail::LoopExpander;
using detail::OrchestrationEmitter;
using detail::TensorReads;
using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// The caller's tensors as they are passed, before any task runs.
class PassedTensors final : public detail::TensorSource {
 public:
  explicit PassedTensors(std::span<const rt::ChipTensor> params) : params_(params) {}

  ir::Result<rt::ChipTensor> Buffer(rt::PlanTensorRef ref, const std::string& name, const ir::Span& span) override {
    if (ref.kind == rt::PlanTensorRef::Kind::Param && ref.index < params_.size()) return params_[ref.index];
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("orchestration code reads '{}', which a task computes: the plan is expanded here "
                                 "before any task runs",
                                 name),
                     span);
  }

  ir::Result<bool> RunPending(const std::string& name, const ir::Span& span) override {
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("orchestration code reads '{}' after a kernel writes it; the plan is expanded here "
                                 "before any task runs",
                                 name),
                     span);
  }

 private:
  std::span<const rt::ChipTensor> params_;
};

}  // namespace

ir::Result<ExpandedPlan> ExpandDeferredPlan(const DeferredPlan& deferred, const rt::TaskPlan& plan,
                                            std::span<const rt::ChipTensor> params) {
  if (auto ok = rt::CheckPlanParams(plan, params); !ok) return MakeError(DiagnosticKind::Type, ok.error().message);
  PassedTensors passed(params);
  TensorReads reads{.refs = deferred.reads.refs, .source = &passed};
  ExpandedPlan expanded{.views = deferred.views};
  LoopExpander expander(plan, expanded.submits, expanded.views, &reads);
  if (auto ok = expander.Run(deferred.steps); !ok) return pypto::unexpected(ok.error());
  return expanded;
}

ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype) {
  if (auto code = rt::RuntimeDtypeCode(dtype)) return *code;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("tensors of dtype {} cannot be passed to the runtime", ir::DataTypeName(dtype)));
}

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered) {
  return OrchestrationEmitter(lowered).Run();
}

}  // namespace pypto::codegen_orch
