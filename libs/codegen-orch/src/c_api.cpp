#include "pypto-c/codegen_orch.h"

#include "pypto/codegen_orch/orchestration.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/runtime/c_api_bridge.h"

using namespace pypto;

extern "C" {

const char* pypto_codegen_orch_version(void) { return PYPTO_VERSION; }

pypto_status pypto_codegen_orch_generate(const pypto_ir_program* lowered, const char* output_dir, char** cpp_source,
                                         pypto_rt_plan** plan) {
  return c_api::Guard([&] {
    if (!lowered) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_codegen_orch_generate: null program");
    auto orchestration = codegen_orch::GenerateOrchestration(*lowered->program);
    if (!orchestration) return c_api::Fail(PYPTO_ERR_COMPILE, orchestration.error().str());
    if (output_dir) {
      auto written = codegen_orch::WriteOrchestration(*orchestration, output_dir);
      if (!written) return c_api::Fail(PYPTO_ERR_COMPILE, written.error().str());
    }
    if (cpp_source) *cpp_source = c_api::CopyString(orchestration->cpp_source);
    if (plan) *plan = new pypto_rt_plan{std::move(orchestration->plan)};
    return PYPTO_OK;
  });
}

size_t pypto_codegen_orch_plan_submit_count(const pypto_rt_plan* plan) { return plan ? plan->plan.submits.size() : 0; }

void pypto_codegen_orch_plan_destroy(pypto_rt_plan* plan) { delete plan; }

}  // extern "C"
