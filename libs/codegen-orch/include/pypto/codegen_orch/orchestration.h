// Orchestration codegen: turns the lowered orchestration function into (1) C++ on the runtime's
// orchestration API, (2) the same program as an executable task plan, and (3) the kernel_config.py
// manifest. All three come from one walk, so they cannot disagree.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/program.h"
#include "pypto/runtime/task_plan.h"

namespace pypto::codegen_orch {

struct KernelEntry {
  int32_t func_id = 0;
  std::string name;
  std::string core_type;  // "aic" | "aiv"
  std::vector<std::string> signature;  // IN / OUT / INOUT per tensor argument, in payload order
  std::string external_source;         // a hand-written kernel's source (absolute), else empty
  std::string external_include_dirs;   // its include directories as a JSON list, else empty
};

// The task plan of orchestration code that reads its input tensors (pl.tensor.read as a loop bound,
// a branch condition or a kernel's scalar argument): its submits depend on the values passed, so each
// run expands it (RunDeferredPlan). It points into the lowered program, which must outlive it.
struct DeferredPlan;

struct Orchestration {
  std::string function_name;  // the orchestration function, e.g. "tile_add"
  std::string cpp_source;     // orchestration/<function_name>.cpp
  rt::TaskPlan plan;          // without submits when `deferred` is set
  std::shared_ptr<const DeferredPlan> deferred;
  std::vector<KernelEntry> kernels;     // func_ids dense from 0, in first-call order
  std::vector<std::string> signature;   // directions of the orchestration's tensor parameters
};

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered);

// Runs one stage of a deferred plan: a complete plan and the tensors of its parameters.
using RunStage = std::function<ir::Result<bool>(const rt::TaskPlan& stage, std::span<const rt::ChipTensor> params)>;

// Expands a deferred plan for one run and runs it through `run_stage`. A plan whose orchestration only
// reads the caller's tensors before kernels write them is one stage: the expansion, with `plan`'s
// parameters and intermediates. When orchestration code reads a tensor that tasks before the read
// write (`n = pl.read(counts, [e, 0])` after the kernel computing `counts`), the run goes in stages:
// the tasks expanded so far run to completion, the read sees what they wrote, and the expansion goes
// on. Every stage's plan then takes the intermediates, allocated here for the whole run, as
// parameters after the caller's; scopes open across a stage boundary are closed at its end and
// reopened at the next stage's start.
//
// `info`, where given, says what the run was: see DeferredRun.
struct DeferredRun {
  // The run succeeded in one stage over the caller's tensors, and its expansion read no element of
  // any tensor: its one stage's plan depends on the tensors only through their shapes (the extents of
  // a program compiled for every extent), so a caller may keep it and run it again for tensors of the
  // same shapes and dtypes without expanding (the driver does).
  bool shapes_only = false;
};
ir::Result<bool> RunDeferredPlan(const DeferredPlan& deferred, const rt::TaskPlan& plan,
                                 std::span<const rt::ChipTensor> params, const RunStage& run_stage,
                                 DeferredRun* info = nullptr);

// The manifest the runtime reads; `root` makes the source paths absolute.
std::string KernelConfigPy(const Orchestration& orchestration, const std::filesystem::path& root,
                           const std::string& kernel_source_suffix);

// Writes orchestration/<name>.cpp and kernel_config.py under `root` (created if needed).
ir::Result<bool> WriteOrchestration(const Orchestration& orchestration, const std::filesystem::path& root,
                                    const std::string& kernel_source_suffix = ".pto");

// IR dtype -> runtime dtype code (pypto_rt_dtype), or an error for types the runtime lacks.
ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype);

}  // namespace pypto::codegen_orch
