#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "build_directory.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/driver/pipeline.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/json.h"

namespace pypto::driver {

namespace {

// The summary of a device build that stopped after the artifacts, from its report (written by the
// ascend plugin); empty for a complete one or a simulator build.
std::string IncompleteDeviceBuild(const std::string& output_dir) {
  std::ifstream in(std::filesystem::path(output_dir) / "device_build.json");
  if (!in) return {};
  auto report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || report.value("complete", true)) return {};
  return report.value("summary", std::string("the device build is incomplete (see device_build.json)"));
}

// The lowered program of a build directory: its `lowered_program.py` parsed, or, where the caller
// holds the program's JSON form (CompiledArtifacts.program_json: a process the compiling one
// started), that form, whose locations are still those of the user's source.
Result<ir::ProgramPtr> LoweredProgramOf(const std::string& output_dir, const std::string& program_json) {
  if (!program_json.empty()) {
    auto program = ir::ProgramFromJson(program_json);
    if (!program) return Fail(std::move(program.error()));
    return std::move(*program);
  }
  const auto path = std::filesystem::path(output_dir) / kLoweredProgramFile;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Fail(FailureKind::InvalidArgument,
                fmt::format("{} is not a pypto build directory: {} is missing", output_dir, path.string()));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto program = frontend::ParseProgram(frontend::ProgramRequest{.source = text, .filename = path.string()});
  if (!program) return Fail(std::move(program.error()));
  return std::move(*program);
}

}  // namespace

Result<CompiledProgramPtr> Load(const std::string& output_dir, const std::string& platform,
                                const std::string& program_json) {
  auto program = LoweredProgramOf(output_dir, program_json);
  if (!program) return pypto::unexpected(program.error());
  auto orchestration = codegen_orch::GenerateOrchestration(**program);
  if (!orchestration) return Fail(std::move(orchestration.error()));
  // Refuses an unknown platform before any run.
  if (auto info = PlatformOf(platform); !info) return pypto::unexpected(info.error());
  auto compiled = std::make_shared<CompiledProgram>();
  compiled->lowered = *program;
  compiled->plan = std::move(orchestration->plan);
  compiled->platform = platform;
  compiled->output_dir = output_dir;
  compiled->orchestration_source = orchestration->cpp_source;
  compiled->deferred = orchestration->deferred;
  compiled->device_build_incomplete = IncompleteDeviceBuild(output_dir);
  return compiled;
}

}  // namespace pypto::driver
