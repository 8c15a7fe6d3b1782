// The debugging outputs of a run, as one TaskObserver: the args dump, the swimlane and the dependency
// graph, each present only when asked for. Whoever runs a plan makes one when DfxOptions::enabled(),
// gives the runtime its observer and dep_graph(), starts it with each run and writes it after.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pypto/runtime/args_dump.h"
#include "pypto/runtime/dep_graph.h"
#include "pypto/runtime/dfx_options.h"
#include "pypto/runtime/swimlane.h"

namespace pypto::rt {

class DfxRecorder final : public TaskObserver {
 public:
  // `kernel_names` is indexed by func_id.
  DfxRecorder(DfxOptions options, std::vector<std::string> kernel_names, int aic_cores, int aiv_cores);

  void BeforeDispatch(const ObservedTask& task) override;
  void AfterCompletion(const ObservedTask& task) override;

  void BeginRun();
  // Writes into options.output_dir: args_dump/{args_dump.json,args.bin}, the swimlane files and deps.json.
  pypto::expected<void, std::string> Write() const;

  const ArgsDumpRecorder* args_dump() const { return args_dump_.get(); }
  const SwimlaneRecorder* swimlane() const { return swimlane_.get(); }
  // For RuntimeOptions::dep_graph; null unless DfxOptions::dep_gen.
  DepGraph* dep_graph() const { return dep_graph_.get(); }

 private:
  const DfxOptions options_;
  std::unique_ptr<ArgsDumpRecorder> args_dump_;
  std::unique_ptr<SwimlaneRecorder> swimlane_;
  std::unique_ptr<DepGraph> dep_graph_;
};

}  // namespace pypto::rt
