// The default pipeline, in order. Later passes rely on what earlier ones produce; the property
// contract of each pass (passes.h) states exactly what.
#include "pypto/passes/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {

PassManager DefaultPipeline(PassManagerOptions options) {
  PassManager pipeline(std::move(options));
  pipeline.Add(UnrollLoops())           // pl.unroll loops -> one copy of the body per iteration
      // After UnrollLoops: no jump leaves a pl.unroll body (the frontend refuses one), so the copies
      // hold whole pl.range loops, each made structured here like any other.
      .Add(CtrlFlowTransform())         // break / continue -> ifs and a carried break flag
      .Add(FuseCreateAssembleToSlice()) // a fresh tensor copied whole into a window -> that window
      .Add(FlattenCallExpr())           // nested calls -> temporaries (three-address form)
      .Add(SplitMixedScopes())          // mixed cube+vector pl.at regions -> cube part + vector part
      .Add(OutlineIncoreScopes())       // pl.at regions -> InCore kernels + orchestration
      .Add(FlattenTileNdTo2D())         // kernel tiles of rank 3+ -> [rows, cols] (PTO tiles are 2-D)
      .Add(LegalizeTileCast())          // casts the vector core lacks -> chains of native casts
      .Add(InferTileMemorySpace())      // matmul operands -> Mat + moves into Left/Right
      .Add(AutoTileMatmulL0())          // matmuls beyond L0 -> loops over L0-sized blocks
      .Add(ExpandMixedKernel())         // InCore -> AIV / AIC
      .Add(NormalizeReturnOrder())      // kernel returns -> the output parameters themselves
      .Add(TransposeScratchTiles())     // transposes -> their scratch tile as a tile.create
      .Add(ScatterMaskBlend())          // mask scatters -> a scatter into zeros + a select with the destination
      .Add(AllocateMemoryAddr())        // tiles -> addresses in UB/L1/L0*
      .Add(DeriveCallDirections())      // kernel call sites -> per-argument directions
      .Add(MaterializeRuntimeScopes())  // orchestration body and loop bodies -> runtime scopes
      .Add(ClassifyIterArgCarry());     // orchestration loop carries -> alias, rebind, scalar, TaskId
  return pipeline;
}

ir::Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const PassContext& context,
                                 PassManagerOptions options) {
  return DefaultPipeline(std::move(options)).Run(program, context);
}

ir::Result<PassManager> PipelineOf(const std::vector<std::string>& names, PassManagerOptions options) {
  const PassManager all = DefaultPipeline();
  const auto& known = all.passes();
  PassManager pipeline(std::move(options));
  for (const auto& name : names) {
    auto it = std::ranges::find_if(known, [&](const Pass& pass) { return pass.name() == name; });
    if (it == known.end()) {
      std::vector<std::string_view> known_names;
      for (const auto& pass : known) known_names.push_back(pass.name());
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("unknown pass '{}'; the passes are {}", name, fmt::join(known_names, ", ")));
    }
    pipeline.Add(*it);
  }
  return pipeline;
}

void DumpPassesTo(PassManagerOptions& options, const std::filesystem::path& directory, const ir::Program& program,
                  std::string_view first_name) {
  std::filesystem::create_directories(directory);
  std::ofstream(directory / fmt::format("00_{}.py", first_name)) << ir::PrintProgram(program);
  options.after_pass = [directory](int slot, const std::string& name, const ir::Program& after) {
    std::ofstream(directory / fmt::format("{:02}_after_{}.py", slot, name)) << ir::PrintProgram(after);
  };
}

}  // namespace pypto::passes
