// A compiled program: the lowered IR and its task plan, where its artifacts were written, and the
// session of its platform's backend that its runs share.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "pypto-c/backend_plugin.h"
#include "pypto/ir/program.h"
#include "pypto/runtime/task_plan.h"

namespace pypto::codegen_orch {
struct DeferredPlan;
}

namespace pypto::driver {

struct ExpandedPlans;  // run.cpp's

struct CompiledProgram {
  ir::ProgramPtr lowered;
  rt::TaskPlan plan;
  std::string platform;
  std::string output_dir;
  std::string orchestration_source;
  // Orchestration code that reads its tensors: each run expands the plan's submits from them.
  std::shared_ptr<const codegen_orch::DeferredPlan> deferred;
  // On a device platform whose build stopped after the artifacts: what was written and what is missing.
  std::string device_build_incomplete;
  // The program made ready to run on `platform` (backend plugin sessions): opened by the first run,
  // reused by every later one, closed with this object or when the debugging outputs change.
  std::shared_ptr<pypto_backend_session> session;
  // Guards `session`: runs from several threads open it once, then take turns on it (the plugin's).
  std::mutex session_mutex;
  // `deferred`'s plans of earlier runs that depended on the tensors' shapes alone, kept by those shapes
  // (a program compiled for every extent, called again at an extent it has run): made by the first run.
  std::shared_ptr<ExpandedPlans> expanded_plans;
};

using CompiledProgramPtr = std::shared_ptr<CompiledProgram>;

}  // namespace pypto::driver
