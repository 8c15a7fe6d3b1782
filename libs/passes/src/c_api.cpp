#include "pypto-c/passes.h"

#include <fmt/format.h>

#include "pypto/ir/c_api_bridge.h"
#include "pypto/passes/pipeline.h"

using namespace pypto;

extern "C" {

const char* pypto_passes_version(void) { return PYPTO_VERSION; }

size_t pypto_passes_pipeline_size(void) { return passes::DefaultPipeline().passes().size(); }

const char* pypto_passes_pipeline_pass_name(size_t index) {
  static const passes::PassManager pipeline = passes::DefaultPipeline();
  return index < pipeline.passes().size() ? pipeline.passes()[index].name().c_str() : nullptr;
}

pypto_status pypto_passes_lower(const pypto_ir_program* program, const char* platform, int verify,
                                pypto_ir_program** lowered) {
  return c_api::Guard([&] {
    if (!program || !platform || !lowered)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_passes_lower: null argument");
    const auto* soc = ir::SocForPlatform(platform);
    if (!soc) return c_api::Fail(PYPTO_ERR_NOT_FOUND, fmt::format("unknown platform '{}'", platform));
    auto result = passes::Lower(program->program, passes::PassContext{.soc = soc},
                                passes::PassManagerOptions{.verify = verify != 0});
    if (!result) return c_api::Fail(PYPTO_ERR_COMPILE, result.error().str());
    *lowered = c_api::Wrap(*result);
    return PYPTO_OK;
  });
}

}  // extern "C"
