#include "pypto-c/passes.h"

#include <fmt/format.h>

#include <cctype>
#include <ranges>
#include <string>
#include <vector>

#include "pypto/ir/c_api_bridge.h"
#include "pypto/passes/pipeline.h"

using namespace pypto;

namespace {

const passes::PassManager& Pipeline() {
  static const passes::PassManager pipeline = passes::DefaultPipeline();
  return pipeline;
}

// Each pass's contract printed once, so the C strings live as long as the library.
struct ContractStrings {
  std::string required, produced, invalidated;
};

const ContractStrings* Contract(size_t index) {
  static const std::vector<ContractStrings> contracts = [] {
    std::vector<ContractStrings> all;
    for (const auto& pass : Pipeline().passes())
      all.push_back({pass.required().str(), pass.produced().str(), pass.invalidated().str()});
    return all;
  }();
  return index < contracts.size() ? &contracts[index] : nullptr;
}

std::vector<std::string> SplitNames(std::string_view names) {
  std::vector<std::string> result;
  for (auto part : names | std::views::split(',')) {
    std::string name(part.begin(), part.end());
    std::erase_if(name, [](unsigned char c) { return std::isspace(c); });
    if (!name.empty()) result.push_back(std::move(name));
  }
  return result;
}

}  // namespace

extern "C" {

const char* pypto_passes_version(void) { return PYPTO_VERSION; }

size_t pypto_passes_pipeline_size(void) { return Pipeline().passes().size(); }

const char* pypto_passes_pipeline_pass_name(size_t index) {
  return index < Pipeline().passes().size() ? Pipeline().passes()[index].name().c_str() : nullptr;
}

const char* pypto_passes_pipeline_pass_required(size_t index) {
  return Contract(index) ? Contract(index)->required.c_str() : nullptr;
}

const char* pypto_passes_pipeline_pass_produced(size_t index) {
  return Contract(index) ? Contract(index)->produced.c_str() : nullptr;
}

const char* pypto_passes_pipeline_pass_invalidated(size_t index) {
  return Contract(index) ? Contract(index)->invalidated.c_str() : nullptr;
}

pypto_status pypto_passes_lower(const pypto_ir_program* program, const pypto_soc_desc* soc_desc, int verify,
                                pypto_ir_program** lowered) {
  return c_api::Guard([&] {
    if (!program || !soc_desc || !lowered)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_passes_lower: null argument");
    auto soc = ir::SocFromDesc(*soc_desc);
    if (!soc) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_passes_lower: the SoC description " + soc.error());
    auto result = passes::Lower(program->program, passes::PassContext{.soc = &*soc},
                                passes::PassManagerOptions{.verify = verify != 0});
    if (!result) return c_api::Fail(PYPTO_ERR_COMPILE, result.error().str());
    *lowered = c_api::Wrap(*result);
    return PYPTO_OK;
  });
}

pypto_status pypto_passes_run(const pypto_ir_program* program, const pypto_soc_desc* soc_desc, const char* pass_names,
                              int verify, const char* dump_dir, pypto_ir_program** result) {
  return c_api::Guard([&] {
    if (!program || !soc_desc || !result)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_passes_run: null argument");
    auto soc = ir::SocFromDesc(*soc_desc);
    if (!soc) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_passes_run: the SoC description " + soc.error());
    passes::PassManagerOptions options{.verify = verify != 0};
    if (dump_dir) passes::DumpPassesTo(options, dump_dir, *program->program, "input");
    auto names = SplitNames(pass_names ? pass_names : "");
    auto pipeline = names.empty() ? ir::Result<passes::PassManager>(passes::DefaultPipeline(std::move(options)))
                                  : passes::PipelineOf(names, std::move(options));
    if (!pipeline) return c_api::Fail(PYPTO_ERR_NOT_FOUND, pipeline.error().message);
    auto lowered = pipeline->Run(program->program, passes::PassContext{.soc = &*soc});
    if (!lowered) return c_api::Fail(PYPTO_ERR_COMPILE, lowered.error().str());
    *result = c_api::Wrap(*lowered);
    return PYPTO_OK;
  });
}

}  // extern "C"
