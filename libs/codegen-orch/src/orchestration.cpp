// The public entry points of orchestration codegen: GenerateOrchestration, ExpandDeferredPlan and
// RuntimeDataType.
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

namespace pypto::codegen_orch {

using detail::LoopExpander;
using detail::OrchestrationEmitter;
using detail::TensorReads;
using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<ExpandedPlan> ExpandDeferredPlan(const DeferredPlan& deferred, const rt::TaskPlan& plan,
                                            std::span<const rt::ChipTensor> params) {
  if (auto ok = rt::CheckPlanParams(plan, params); !ok) return MakeError(DiagnosticKind::Type, ok.error().message);
  TensorReads reads = deferred.reads;
  reads.tensors = params;
  ExpandedPlan expanded{.views = deferred.views};
  LoopExpander expander(plan, expanded.submits, expanded.views, &reads);
  if (auto ok = expander.Run(deferred.steps); !ok) return pypto::unexpected(ok.error());
  return expanded;
}

ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP32: return PYPTO_RT_FLOAT32;
    case ir::DataType::FP16: return PYPTO_RT_FLOAT16;
    case ir::DataType::BF16: return PYPTO_RT_BFLOAT16;
    case ir::DataType::INT8: return PYPTO_RT_INT8;
    case ir::DataType::INT16: return PYPTO_RT_INT16;
    case ir::DataType::INT32: return PYPTO_RT_INT32;
    case ir::DataType::INT64:
    case ir::DataType::INDEX: return PYPTO_RT_INT64;  // an index is a 64-bit integer, as upstream's
    case ir::DataType::UINT8: return PYPTO_RT_UINT8;
    case ir::DataType::UINT16: return PYPTO_RT_UINT16;
    case ir::DataType::UINT32: return PYPTO_RT_UINT32;
    case ir::DataType::UINT64: return PYPTO_RT_UINT64;
    case ir::DataType::BOOL: return PYPTO_RT_BOOL;
    case ir::DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case ir::DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case ir::DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: break;
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("tensors of dtype {} cannot be passed to the runtime", ir::DataTypeName(dtype)));
}

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered) {
  return OrchestrationEmitter(lowered).Run();
}

}  // namespace pypto::codegen_orch
