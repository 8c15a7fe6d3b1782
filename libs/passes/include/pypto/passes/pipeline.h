// The default lowering pipeline, readable top to bottom in one function (src/pipeline.cpp).
#pragma once

#include "pypto/passes/pass_manager.h"

namespace pypto::passes {

PassManager DefaultPipeline(PassManagerOptions options = {});

// Lowers a parsed program for the SoC of `context`: outlined kernels plus an orchestration.
ir::Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const PassContext& context,
                                 PassManagerOptions options = {});

}  // namespace pypto::passes
