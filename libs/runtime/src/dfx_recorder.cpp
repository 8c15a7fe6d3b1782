#include "pypto/runtime/dfx_recorder.h"

namespace pypto::rt {

DfxRecorder::DfxRecorder(DfxOptions options, std::vector<std::string> kernel_names, int aic_cores, int aiv_cores)
    : options_(std::move(options)) {
  if (options_.dump_args > 0)
    args_dump_ = std::make_unique<ArgsDumpRecorder>(static_cast<ArgsDumpLevel>(options_.dump_args), kernel_names);
  if (options_.chip_swimlane > 0)
    swimlane_ = std::make_unique<SwimlaneRecorder>(options_.chip_swimlane, kernel_names, aic_cores, aiv_cores);
  if (options_.dep_gen) dep_graph_ = std::make_unique<DepGraph>();
}

void DfxRecorder::BeforeDispatch(const ObservedTask& task) {
  if (args_dump_) args_dump_->BeforeDispatch(task);
  if (swimlane_) swimlane_->BeforeDispatch(task);
}

void DfxRecorder::AfterCompletion(const ObservedTask& task) {
  if (args_dump_) args_dump_->AfterCompletion(task);
  if (swimlane_) swimlane_->AfterCompletion(task);
}

void DfxRecorder::BeginRun() {
  if (args_dump_) args_dump_->Clear();
  if (swimlane_) swimlane_->Clear();
  if (dep_graph_) dep_graph_->Clear();
}

pypto::expected<void, std::string> DfxRecorder::Write() const {
  const std::filesystem::path dir = options_.output_dir;
  if (args_dump_)
    if (auto ok = args_dump_->Write(dir / "args_dump"); !ok) return ok;
  if (swimlane_)
    if (auto ok = swimlane_->Write(dir); !ok) return ok;
  if (dep_graph_)
    if (auto ok = dep_graph_->Write(dir / "deps.json"); !ok) return ok;
  return {};
}

}  // namespace pypto::rt
