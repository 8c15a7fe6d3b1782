// The default lowering pipeline, readable top to bottom in one function (src/pipeline.cpp).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "pypto/passes/pass_manager.h"

namespace pypto::passes {

PassManager DefaultPipeline(PassManagerOptions options = {});

// Lowers a parsed program for the SoC of `context`: outlined kernels plus an orchestration.
ir::Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const PassContext& context,
                                 PassManagerOptions options = {});

// The passes of the default pipeline named in `names`, in the order given (a pass may repeat). An
// unknown name is an error that lists the known ones.
ir::Result<PassManager> PipelineOf(const std::vector<std::string>& names, PassManagerOptions options = {});

// Makes `options` write the IR into `directory` (created if missing) as `00_<first_name>.py` before
// the first pass and `NN_after_<Pass>.py` after each; what RunConfig(dump_passes=True) produces.
// `program` is the pipeline's input.
void DumpPassesTo(PassManagerOptions& options, const std::filesystem::path& directory, const ir::Program& program,
                  std::string_view first_name = "frontend");

}  // namespace pypto::passes
