#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "dfx.h"
#include "plugin_for.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/driver/pipeline.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/runtime/c_api_bridge.h"

namespace pypto::driver {

// The plans of a deferred program's recent runs whose expansion depended on the tensors' shapes alone
// (codegen_orch::DeferredRun), by those shapes and dtypes: a call at an extent the program has run at
// runs the kept plan rather than expanding the orchestration again. A few, the newest first.
struct ExpandedPlans {
  static constexpr size_t kKept = 8;
  using Key = std::vector<uint32_t>;  // per tensor: dtype, ndims, the shape

  static Key KeyOf(std::span<const rt::ChipTensor> params) {
    Key key;
    key.reserve(params.size() * 4);
    for (const rt::ChipTensor& tensor : params) {
      key.push_back(tensor.dtype);
      key.push_back(tensor.ndims);
      key.insert(key.end(), tensor.shapes, tensor.shapes + std::min<uint32_t>(tensor.ndims, PYPTO_MAX_TENSOR_DIMS));
    }
    return key;
  }

  std::shared_ptr<const pypto_rt_plan> Find(const Key& key) {
    std::lock_guard lock(mutex);
    auto it = std::ranges::find(plans, key, &Entry::first);
    return it == plans.end() ? nullptr : it->second;
  }

  void Keep(Key key, std::shared_ptr<const pypto_rt_plan> plan) {
    std::lock_guard lock(mutex);
    if (std::ranges::find(plans, key, &Entry::first) != plans.end()) return;
    plans.emplace_front(std::move(key), std::move(plan));
    if (plans.size() > kKept) plans.pop_back();
  }

 private:
  using Entry = std::pair<Key, std::shared_ptr<const pypto_rt_plan>>;
  std::mutex mutex;
  std::deque<Entry> plans;
};

namespace {

using SessionHandle = std::shared_ptr<pypto_backend_session>;

// The plugin's error for a failed run.
pypto::unexpected<Failure> RunFailure(const CompiledProgram& compiled, pypto_status status) {
  if (status != PYPTO_ERR_UNAVAILABLE) return Fail(FailureKind::Runtime, pypto_last_error_message());
  if (compiled.device_build_incomplete.empty()) return Fail(FailureKind::DeviceUnavailable, pypto_last_error_message());
  return Fail(FailureKind::DeviceBuildIncomplete,
              fmt::format("{}\nNothing ran: the device build is incomplete.\n{}", pypto_last_error_message(),
                          compiled.device_build_incomplete));
}

// The session of `compiled` on its platform, opened on first use; null when the plugin has no sessions.
Result<SessionHandle> SessionOf(CompiledProgram& compiled, const pypto_backend_plugin& plugin) {
  if (!plugin.open_session) return nullptr;
  std::lock_guard lock(compiled.session_mutex);
  if (compiled.session) return compiled.session;
  pypto_ir_program program_handle{compiled.lowered};
  pypto_rt_plan plan_handle{compiled.plan};
  pypto_backend_session* session = nullptr;
  // Fails where execute would have failed before running anything, with the same message.
  if (plugin.open_session(compiled.platform.c_str(), &program_handle, &plan_handle, &session) != PYPTO_OK)
    return Fail(FailureKind::Runtime, pypto_last_error_message());
  compiled.session = SessionHandle(session, [close = plugin.close_session](pypto_backend_session* s) { close(s); });
  return compiled.session;
}

// Runs one stage of a deferred plan: on the program's session where the plugin runs other plans on one
// (run_session_plan), so that the kernels are prepared once for every run; else on a session of its
// own, or one-shot where the plugin has no sessions.
pypto_status RunStageOn(const CompiledProgram& compiled, const pypto_backend_plugin& plugin,
                        const std::string& platform, pypto_backend_session* program_session,
                        const rt::TaskPlan& stage, std::span<const rt::ChipTensor> params) {
  pypto_ir_program program_handle{compiled.lowered};
  pypto_rt_plan plan_handle{stage};
  if (program_session) return plugin.run_session_plan(program_session, &plan_handle, params.data(), params.size());
  if (!plugin.open_session || !plugin.run_session)
    return plugin.execute(platform.c_str(), &program_handle, &plan_handle, params.data(), params.size());
  pypto_backend_session* session = nullptr;
  if (pypto_status status = plugin.open_session(platform.c_str(), &program_handle, &plan_handle, &session);
      status != PYPTO_OK)
    return status;
  pypto_status status = plugin.run_session(session, params.data(), params.size());
  plugin.close_session(session);
  return status;
}

// The kept plans of `compiled`, made on first use.
std::shared_ptr<ExpandedPlans> ExpandedPlansOf(CompiledProgram& compiled) {
  std::lock_guard lock(compiled.session_mutex);
  if (!compiled.expanded_plans) compiled.expanded_plans = std::make_shared<ExpandedPlans>();
  return compiled.expanded_plans;
}

// A run of a deferred plan: expanded from the tensors passed, in stages where orchestration code reads
// what kernels computed (codegen_orch::RunDeferredPlan).
// On the compiled platform, every stage of every run goes to the program's session, opened for the
// plan without tasks (its kernels and run options are every stage's). A run whose plan depended on the
// shapes alone keeps it there for the next run of those shapes, which then expands nothing.
Result<bool> RunDeferred(CompiledProgram& compiled, const pypto_backend_plugin& plugin, const std::string& platform,
                         std::span<const rt::ChipTensor> params) {
  SessionHandle session;
  std::shared_ptr<ExpandedPlans> kept;
  ExpandedPlans::Key key;
  if (platform == compiled.platform && plugin.run_session_plan) {
    auto opened = SessionOf(compiled, plugin);
    if (!opened) return pypto::unexpected(opened.error());
    session = *opened;  // kept open for this run
    kept = ExpandedPlansOf(compiled);
    key = ExpandedPlans::KeyOf(params);
    if (auto plan = kept->Find(key)) {
      pypto_status status = plugin.run_session_plan(session.get(), plan.get(), params.data(), params.size());
      if (status != PYPTO_OK) return RunFailure(compiled, status);
      return true;
    }
  }
  std::optional<pypto_status> failed;
  std::shared_ptr<pypto_rt_plan> first_stage;  // to keep, should the run prove to depend on shapes alone
  auto run_stage = [&](const rt::TaskPlan& stage, std::span<const rt::ChipTensor> tensors) -> ir::Result<bool> {
    if (kept && !first_stage) first_stage = std::make_shared<pypto_rt_plan>(pypto_rt_plan{stage});
    pypto_status status = RunStageOn(compiled, plugin, platform, session.get(), stage, tensors);
    if (status == PYPTO_OK) return true;
    failed = status;
    return ir::MakeError(ir::DiagnosticKind::Internal, pypto_last_error_message());
  };
  codegen_orch::DeferredRun info;
  auto ran = codegen_orch::RunDeferredPlan(*compiled.deferred, compiled.plan, params, run_stage, &info);
  if (ran && info.shapes_only && first_stage) kept->Keep(std::move(key), std::move(first_stage));
  if (failed && (*failed == PYPTO_ERR_UNAVAILABLE || ran)) return RunFailure(compiled, *failed);
  // The plugin's message, and which read of the orchestration the failed stage was run for.
  if (failed) return Fail(FailureKind::Runtime, ran.error().message);
  if (!ran) return Fail(std::move(ran.error()));
  return true;
}

}  // namespace

void SetDfx(CompiledProgram& compiled, DfxSwitches dfx) {
  const rt::DfxOptions options = DfxFor(compiled.output_dir, dfx);
  std::lock_guard lock(compiled.session_mutex);
  const rt::DfxOptions& now = compiled.plan.dfx;
  if (options.dump_args == now.dump_args && options.chip_swimlane == now.chip_swimlane && options.dep_gen == now.dep_gen)
    return;
  compiled.plan.dfx = options;
  compiled.session.reset();
  compiled.expanded_plans.reset();  // their plans carry the old options
}

Result<bool> Run(CompiledProgram& compiled, const std::string& platform, std::span<const rt::ChipTensor> params) {
  auto plugin = PluginFor(platform);
  if (!plugin) return pypto::unexpected(plugin.error());
  // The tasks depend on what the tensors hold: this run's plan, run on sessions made for it.
  if (compiled.deferred) return RunDeferred(compiled, **plugin, platform, params);
  // The compiled platform runs on the program's session: set up once, so that a call costs little
  // more than its kernels. Another platform (the program was not prepared for it) runs one-shot.
  SessionHandle session;
  if (platform == compiled.platform) {
    auto opened = SessionOf(compiled, **plugin);
    if (!opened) return pypto::unexpected(opened.error());
    session = *opened;
  }
  pypto_status status;
  if (session) {
    // `session` keeps it open for this call. Runs of one session from several threads take turns.
    status = (*plugin)->run_session(session.get(), params.data(), params.size());
  } else {
    pypto_ir_program program_handle{compiled.lowered};
    pypto_rt_plan plan_handle{compiled.plan};
    status = (*plugin)->execute(platform.c_str(), &program_handle, &plan_handle, params.data(), params.size());
  }
  if (status != PYPTO_OK) return RunFailure(compiled, status);
  return true;
}

}  // namespace pypto::driver
