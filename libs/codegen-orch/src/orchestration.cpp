// The public entry points of orchestration codegen: GenerateOrchestration and RuntimeDataType
// (RunDeferredPlan is staged_run.cpp's).
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

#include "orchestration_emitter.h"
#include "pypto/runtime/dtype_code.h"

namespace pypto::codegen_orch {

using detail::OrchestrationEmitter;
using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype) {
  if (auto code = rt::RuntimeDtypeCode(dtype)) return *code;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("tensors of dtype {} cannot be passed to the runtime", ir::DataTypeName(dtype)));
}

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered) {
  return OrchestrationEmitter(lowered).Run();
}

}  // namespace pypto::codegen_orch
