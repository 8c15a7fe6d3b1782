// The default pipeline, in order. Later passes rely on what earlier ones produce; the property
// contract of each pass (passes.h) states exactly what.
#include "pypto/passes/pipeline.h"

#include "pypto/passes/passes.h"

namespace pypto::passes {

PassManager DefaultPipeline(PassManagerOptions options) {
  PassManager pipeline(std::move(options));
  pipeline.Add(FlattenCallExpr())       // nested calls -> temporaries (three-address form)
      .Add(SplitMixedScopes())          // mixed cube+vector pl.at regions -> cube part + vector part
      .Add(OutlineIncoreScopes())       // pl.at regions -> InCore kernels + orchestration
      .Add(InferTileMemorySpace())      // matmul operands -> Mat + moves into Left/Right
      .Add(ExpandMixedKernel())         // InCore -> AIV / AIC
      .Add(AllocateMemoryAddr())        // tiles -> addresses in UB/L1/L0*
      .Add(DeriveCallDirections());     // kernel call sites -> per-argument directions
  return pipeline;
}

ir::Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const PassContext& context,
                                 PassManagerOptions options) {
  return DefaultPipeline(std::move(options)).Run(program, context);
}

}  // namespace pypto::passes
