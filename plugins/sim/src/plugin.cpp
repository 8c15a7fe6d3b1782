// The plugin's C entry point: decodes the plan's kernels from the lowered program and runs the plan
// on the runtime with the simulator as its CoreExecutor. Nothing here throws across the C ABI.
//
// A Session is everything a run needs that does not depend on the tensors: the decoded kernels, the
// executor with its simulated cores (arenas allocated on first use, then kept and scrubbed between
// runs) and a runtime (its worker threads kept). open_session builds one per compiled program, and
// each run_session only checks the tensors, submits the plan and waits. The runtime of a session
// dispatches CallerFirst: a run without parallelism (one task, a chain) executes on the calling
// thread, with no thread hand-off; wider runs wake the workers, which are started once, on first need.
// execute is the one-shot path of ABI 1: a session with an Eager runtime, built and torn down per call.
// run_session_plan (ABI 4) runs a plan other than the session's on it: a plan expanded at each run
// (one compile for every extent) has the program's kernels but tasks of its own, so only the tasks
// are checked against the decoded kernels, and each run starts as fresh cores would.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pypto-c/backend_plugin.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/soc.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/dfx_recorder.h"
#include "pypto/runtime/log_destination.h"
#include "pypto/runtime/run_interrupt.h"
#include "pypto/runtime/task_plan.h"
#include "extern_kernel.h"
#include "mixed_race.h"
#include "sim_executor.h"
#include "sim_kernel.h"
#include "tile_ops.h"

namespace pypto::sim {
namespace {

using Error = pypto::unexpected<std::string>;

// Each simulator stands for a device platform: without the ascend plugin, a run there points here.
const pypto_platform_desc kPlatforms[] = {
    {.name = "a2a3sim",
     .kind = PYPTO_PLATFORM_SIMULATOR,
     .simulates = "a2a3",
     .soc = {.table = "Ascend910B"},
     .pto_modules = PYPTO_PTO_OPTIONAL,
     .toolchain = "c++ (hand-written kernels only)"},
    {.name = "a5sim",
     .kind = PYPTO_PLATFORM_SIMULATOR,
     .simulates = "a5",
     .soc = {.table = "Ascend950"},
     .pto_modules = PYPTO_PTO_OPTIONAL,
     .toolchain = "c++ (hand-written kernels only)"},
};

// The tensor of a plan operand (for a view, the tensor it views: same name and dtype), or null when
// the reference is out of range.
const rt::PlanTensor* PlanTensorOf(const rt::TaskPlan& plan, rt::PlanTensorRef ref) {
  const auto buffer = rt::BufferRefOf(plan, ref);
  if (!buffer) return nullptr;
  return &(buffer->kind == rt::PlanTensorRef::Kind::Param ? plan.params : plan.intermediates)[buffer->index];
}

// One kernel of submit #s must run on its own core type and take what the submit passes: the same
// number of tensors and scalars, and tensors of its dtypes (so no scalar is read as a descriptor).
// Allocates nothing unless it fails: a plan expanded at each run is checked at each run.
pypto::expected<void, std::string> CheckSubmitArgs(const rt::TaskPlan& plan, const rt::PlanSubmit& submit, size_t s,
                                                   rt::CoreType core_type, const DecodedKernel& kernel) {
  if (core_type != kernel.core_type) {
    return Error(fmt::format("submit #{} runs kernel '{}' on an {} core, but it is an {} kernel", s, kernel.name,
                             rt::CoreTypeName(core_type), rt::CoreTypeName(kernel.core_type)));
  }
  const auto is_scalar = [](const rt::PlanTaskArg& arg) { return arg.direction == rt::ArgDirection::Scalar; };
  const size_t scalars = static_cast<size_t>(std::ranges::count_if(submit.args, is_scalar));
  const size_t tensors = submit.args.size() - scalars;
  if (tensors != kernel.tensor_count || scalars != kernel.scalar_count) {
    return Error(fmt::format("submit #{} passes {} tensors and {} scalars to kernel '{}', which takes {} and {}", s,
                             tensors, scalars, kernel.name, kernel.tensor_count, kernel.scalar_count));
  }
  // The kernel's tensor parameters and the submit's tensor arguments, in step.
  auto arg = submit.args.begin();
  size_t t = 0;
  for (const auto& param : kernel.params) {
    if (!param.is_tensor) continue;
    while (is_scalar(*arg)) ++arg;
    const rt::PlanTensor* tensor = PlanTensorOf(plan, (arg++)->tensor);
    if (!tensor) return Error(fmt::format("submit #{} argument {} refers to a tensor the plan does not have", s, t));
    if (tensor->dtype != param.rt_dtype) {
      return Error(fmt::format("submit #{} passes '{}' (runtime dtype {}) as parameter '{}' of kernel '{}', "
                               "which is {}",
                               s, tensor->name, tensor->dtype, param.name, kernel.name, ir::DataTypeName(param.dtype)));
    }
    ++t;
  }
  return {};
}

// Every kernel of every submit (each member of a mixed one) is a kernel of the plan and suits it.
pypto::expected<void, std::string> CheckSubmits(const rt::TaskPlan& plan, const std::vector<DecodedKernel>& kernels) {
  std::vector<const DecodedKernel*> by_id;
  for (const auto& kernel : kernels) {
    if (static_cast<size_t>(kernel.func_id) >= by_id.size()) by_id.resize(static_cast<size_t>(kernel.func_id) + 1);
    by_id[static_cast<size_t>(kernel.func_id)] = &kernel;
  }
  const auto check = [&](const rt::PlanSubmit& submit, size_t s, int32_t func_id,
                         rt::CoreType core_type) -> pypto::expected<void, std::string> {
    const DecodedKernel* kernel = func_id >= 0 && static_cast<size_t>(func_id) < by_id.size() ? by_id[func_id] : nullptr;
    if (!kernel) return Error(fmt::format("submit #{} names func_id {}, which is not a kernel of the plan", s, func_id));
    return CheckSubmitArgs(plan, submit, s, core_type, *kernel);
  };
  for (size_t s = 0; s < plan.submits.size(); ++s) {
    const auto& submit = plan.submits[s];
    if (submit.dummy) continue;
    if (!submit.mixed) {  // the common case, without SubmitKernels' list
      if (auto ok = check(submit, s, submit.func_id, submit.core_type); !ok) return ok;
      continue;
    }
    for (const auto& [func_id, core_type] : rt::SubmitKernels(submit))
      if (auto ok = check(submit, s, func_id, core_type); !ok) return ok;
  }
  return {};
}

// Decodes the plan's kernels (or, without a plan, every vector kernel of the program). Hand-written
// kernels are compiled and loaded instead, into `extern_dir` (empty: a per-user cache directory).
pypto::expected<std::vector<DecodedKernel>, std::string> DecodeAll(const ir::Program& program,
                                                                   const rt::TaskPlan* plan,
                                                                   const ir::SocSpec& soc,
                                                                   const std::filesystem::path& extern_dir = {}) {
  std::vector<DecodedKernel> kernels;
  if (!plan) {
    for (const auto& function : program.functions()) {
      if (!ir::IsKernel(function->type()) || function->type() == ir::FunctionType::AIC || IsExternalKernel(*function))
        continue;
      auto kernel = DecodeKernel(*function, -1, rt::CoreType::AIV, soc);
      if (!kernel) return Error(kernel.error());
      kernels.push_back(std::move(*kernel));
    }
    return kernels;
  }
  std::vector<bool> seen;
  for (size_t i = 0; i < plan->kernels.size(); ++i) {
    const auto& entry = plan->kernels[i];
    if (entry.func_id < 0) return Error(fmt::format("plan kernel '{}' has func_id {}", entry.name, entry.func_id));
    if (static_cast<size_t>(entry.func_id) >= seen.size()) seen.resize(static_cast<size_t>(entry.func_id) + 1);
    if (seen[entry.func_id]) return Error(fmt::format("plan has two kernels with func_id {}", entry.func_id));
    seen[entry.func_id] = true;
    const auto function = program.Find(entry.name);
    if (!function) {
      return Error(fmt::format("kernel '{}' (func_id {}) of the plan is not a function of program '{}'", entry.name,
                               entry.func_id, program.name()));
    }
    auto kernel = IsExternalKernel(*function)
                      ? LoadExternalKernel(*function, entry.func_id, entry.core_type, soc.arch, extern_dir)
                      : DecodeKernel(*function, entry.func_id, entry.core_type, soc);
    if (!kernel) return Error(kernel.error());
    kernels.push_back(std::move(*kernel));
  }
  if (auto ok = CheckSubmits(*plan, kernels); !ok) return Error(ok.error());
  NoteMixedTasks(*plan, kernels);
  return kernels;
}

// The SoC of one of this plugin's platforms, as kPlatforms describes it.
pypto::expected<const ir::SocSpec*, pypto_status> Soc(const char* platform) {
  for (const pypto_platform_desc& desc : kPlatforms)
    if (platform && std::string_view(platform) == desc.name) return ir::SocNamed(desc.soc.table);
  return pypto::unexpected(c_api::Fail(
      PYPTO_ERR_NOT_FOUND,
      fmt::format("sim: unknown platform '{}' (this plugin serves a2a3sim and a5sim)", platform ? platform : "")));
}

std::string FileName(const std::string& kernel) {
  std::string name = kernel.empty() ? "kernel" : kernel;
  for (char& c : name)
    if (c == '/' || c == '\\' || c == '\0') c = '_';
  if (name == "." || name == "..") name = "_" + name;
  return name + ".txt";
}

pypto_status Prepare(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                     const char* output_dir) {
  return c_api::Guard([&]() -> pypto_status {
    rt::FollowProcessLogPath();
    if (!lowered || !lowered->program || !output_dir) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim prepare: null program or output directory");
    }
    auto soc = Soc(platform);
    if (!soc) return soc.error();
    const std::filesystem::path dir = std::filesystem::path(output_dir) / "sim";
    auto kernels = DecodeAll(*lowered->program, plan ? &plan->plan : nullptr, **soc, dir / "extern");
    if (!kernels) return c_api::Fail(PYPTO_ERR_COMPILE, fmt::format("sim: {}", kernels.error()));

    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return c_api::Fail(PYPTO_ERR_RUNTIME, fmt::format("sim: cannot create {}: {}", dir.string(), ec.message()));
    for (const auto& kernel : *kernels) {
      const auto path = dir / FileName(kernel.name);
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << FormatListing(kernel, **soc);
      out.close();
      if (!out) return c_api::Fail(PYPTO_ERR_RUNTIME, fmt::format("sim: cannot write {}", path.string()));
    }
    spdlog::debug("sim: wrote {} kernel listings to {}", kernels->size(), dir.string());
    return PYPTO_OK;
  });
}

// The plan's kernel names, indexed by func_id, for the debugging outputs.
std::vector<std::string> KernelNames(const rt::TaskPlan& plan) {
  std::vector<std::string> names;
  for (const auto& kernel : plan.kernels) {
    if (kernel.func_id < 0) continue;
    if (static_cast<size_t>(kernel.func_id) >= names.size()) names.resize(static_cast<size_t>(kernel.func_id) + 1);
    names[kernel.func_id] = kernel.name;
  }
  return names;
}

// The recorder of the plan's debugging outputs, or null when it asks for none (then the runtime has
// no observer and pays nothing).
std::unique_ptr<rt::DfxRecorder> MakeDfxRecorder(const rt::TaskPlan& plan, const ir::SocSpec& soc) {
  if (!plan.dfx.enabled()) return nullptr;
  return std::make_unique<rt::DfxRecorder>(plan.dfx, KernelNames(plan), soc.aic_cores, soc.aiv_cores);
}

// A plan made ready to run on one platform. Runs are serialized.
class Session {
 public:
  // With `owned`, the session keeps its own copy of the plan; otherwise it refers to `plan`, which
  // must outlive it (the one-shot execute).
  Session(const ir::SocSpec& soc, std::string platform, const rt::TaskPlan& plan, bool owned,
          std::vector<DecodedKernel> kernels, rt::Dispatch dispatch)
      : platform_(std::move(platform)),
        owned_plan_(owned ? std::optional<rt::TaskPlan>(plan) : std::nullopt),
        plan_(owned ? *owned_plan_ : plan),
        kernel_count_(kernels.size()),
        executor_(soc, std::move(kernels), soc.aic_cores, soc.aiv_cores),
        dfx_(MakeDfxRecorder(plan, soc)),
        runtime_({.aic_cores = soc.aic_cores,
                  .aiv_cores = soc.aiv_cores,
                  .dispatch = dispatch,
                  .task_window = rt::TaskWindowFor(plan),
                  .ring_heap = rt::RingHeapFor(plan),
                  .ring_dep_pool = rt::RingDepPoolFor(plan),
                  .observer = dfx_.get(),
                  .dep_graph = dfx_ ? dfx_->dep_graph() : nullptr,
                  .scheduler_timeout_ms = rt::SchedulerTimeoutMs()},
                 executor_) {}

  // Runs the plan the session was opened for.
  pypto_status Run(std::span<const rt::ChipTensor> params) {
    rt::FollowProcessLogPath();
    std::lock_guard lock(mu_);
    if (!notes_own_plan_) NoteMixedTasksOf(plan_);
    notes_own_plan_ = true;
    return RunLocked(plan_, params);
  }

  // Runs `plan`, another plan of the session's program with the same kernels and run options.
  pypto_status RunOther(const rt::TaskPlan& plan, std::span<const rt::ChipTensor> params) {
    rt::FollowProcessLogPath();
    std::lock_guard lock(mu_);
    if (auto fits = Fits(plan); !fits)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, fmt::format("sim run_session_plan: {}", fits.error()));
    if (auto ok = CheckSubmits(plan, executor_.kernels()); !ok)
      return c_api::Fail(PYPTO_ERR_COMPILE, fmt::format("sim: {}", ok.error()));
    NoteMixedTasksOf(plan);
    notes_own_plan_ = false;
    return RunLocked(plan, params);
  }

 private:
  // What a plan must share with the session's own to run on it: the decoded kernels, and what the
  // runtime and the debugging recorder were built for.
  pypto::expected<void, std::string> Fits(const rt::TaskPlan& plan) const {
    const auto same_kernel = [](const rt::PlanKernel& a, const rt::PlanKernel& b) {
      return a.func_id == b.func_id && a.core_type == b.core_type && a.name == b.name;
    };
    const auto what = [&](std::string_view field) {
      return Error(fmt::format("plan '{}' differs from the plan the session was opened for in its {}; open a "
                               "session for it",
                               plan.orchestration_name, field));
    };
    if (!std::ranges::equal(plan.kernels, plan_.kernels, same_kernel)) return what("kernels");
    if (plan.task_window != plan_.task_window) return what("task window");
    if (plan.ring_heap != plan_.ring_heap) return what("heap rings");
    if (plan.ring_dep_pool != plan_.ring_dep_pool) return what("dependency pools");
    const rt::DfxOptions &dfx = plan.dfx, &own = plan_.dfx;
    if (dfx.dump_args != own.dump_args || dfx.chip_swimlane != own.chip_swimlane || dfx.dep_gen != own.dep_gen ||
        dfx.output_dir != own.output_dir)
      return what("debugging outputs");
    return {};
  }

  // The kernels' notes of mixed tasks (which race checks apply) as `plan` has them, the last plan's
  // cleared.
  void NoteMixedTasksOf(const rt::TaskPlan& plan) {
    for (DecodedKernel& kernel : executor_.kernels()) {
      kernel.mixed_members = 0;
      kernel.mixed_stores.clear();
    }
    NoteMixedTasks(plan, executor_.kernels());
  }

  pypto_status RunLocked(const rt::TaskPlan& plan, std::span<const rt::ChipTensor> params) {
    spdlog::debug("sim: running '{}' on {} ({} kernels, {} tasks, tile ops on {})", plan.orchestration_name,
                  platform_, kernel_count_, plan.submits.size(), TileOpsTarget());
    if (used_) {
      // Start as a fresh runtime and fresh cores would: task ids from 0, no error, zeroed buffers.
      runtime_.Reset();
      executor_.ScrubMemory();
    }
    used_ = true;
    if (dfx_) dfx_->BeginRun();
    // Ctrl-C stops the run, even in a kernel that never returns (run_interrupt.h).
    const rt::InterruptibleRun interruptible;
    auto result = rt::RunPlan(plan, params, runtime_);
    // Written for a failed run too: what ran before the failure is what one wants to look at.
    if (dfx_) {
      if (auto written = dfx_->Write(); !written)
        return c_api::Fail(PYPTO_ERR_RUNTIME, fmt::format("sim: debugging outputs: {}", written.error()));
      spdlog::debug("sim: debugging outputs written to {}", plan.dfx.output_dir);
    }
    if (!result) return c_api::Fail(PYPTO_ERR_RUNTIME, fmt::format("sim: {}", result.error().str()));
    return PYPTO_OK;
  }

  std::mutex mu_;
  const std::string platform_;
  const std::optional<rt::TaskPlan> owned_plan_;
  const rt::TaskPlan& plan_;
  const size_t kernel_count_;
  bool used_ = false;
  bool notes_own_plan_ = true;  // the kernels' mixed-task notes are plan_'s (DecodeAll made them so)
  SimExecutor executor_;  // before runtime_, which runs kernels on it until it is destroyed
  const std::unique_ptr<rt::DfxRecorder> dfx_;  // before runtime_, which reports tasks to it
  rt::Runtime runtime_;
};

// Checks the arguments and decodes the plan's kernels: what execute did before running anything, with
// its statuses and messages (`what` names the entry in the null-argument message).
pypto::expected<std::unique_ptr<Session>, pypto_status> OpenSession(const char* platform,
                                                                     const pypto_ir_program* lowered,
                                                                     const pypto_rt_plan* plan, bool owned,
                                                                     rt::Dispatch dispatch, const char* what) {
  if (!lowered || !lowered->program || !plan) {
    return pypto::unexpected(
        c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, fmt::format("sim {}: null program or plan", what)));
  }
  auto soc = Soc(platform);
  if (!soc) return pypto::unexpected(soc.error());
  auto kernels = DecodeAll(*lowered->program, &plan->plan, **soc);
  if (!kernels) return pypto::unexpected(c_api::Fail(PYPTO_ERR_COMPILE, fmt::format("sim: {}", kernels.error())));
  return std::make_unique<Session>(**soc, platform, plan->plan, owned, std::move(*kernels), dispatch);
}

pypto_status Execute(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                     const pypto_chip_tensor* params, size_t num_params) {
  return c_api::Guard([&]() -> pypto_status {
    if (!lowered || !lowered->program || !plan) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim execute: null program or plan");
    }
    if (!params && num_params > 0) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim execute: null params");
    auto session = OpenSession(platform, lowered, plan, /*owned=*/false, rt::Dispatch::Eager, "execute");
    if (!session) return session.error();
    return (*session)->Run(std::span<const rt::ChipTensor>(params, num_params));
  });
}

}  // namespace
}  // namespace pypto::sim

// The C handle of a session.
struct pypto_backend_session {
  std::unique_ptr<pypto::sim::Session> session;
};

namespace pypto::sim {
namespace {

pypto_status OpenSessionEntry(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                              pypto_backend_session** out) {
  return c_api::Guard([&]() -> pypto_status {
    if (!out) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim open_session: null session pointer");
    *out = nullptr;
    auto session = OpenSession(platform, lowered, plan, /*owned=*/true, rt::Dispatch::CallerFirst, "open_session");
    if (!session) return session.error();
    *out = new pypto_backend_session{std::move(*session)};
    return PYPTO_OK;
  });
}

pypto_status RunSessionEntry(pypto_backend_session* session, const pypto_chip_tensor* params, size_t num_params) {
  return c_api::Guard([&]() -> pypto_status {
    if (!session || !session->session) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim run_session: null session");
    if (!params && num_params > 0) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim run_session: null params");
    return session->session->Run(std::span<const rt::ChipTensor>(params, num_params));
  });
}

pypto_status RunSessionPlanEntry(pypto_backend_session* session, const pypto_rt_plan* plan,
                                 const pypto_chip_tensor* params, size_t num_params) {
  return c_api::Guard([&]() -> pypto_status {
    if (!session || !session->session)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim run_session_plan: null session");
    if (!plan) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim run_session_plan: null plan");
    if (!params && num_params > 0) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "sim run_session_plan: null params");
    return session->session->RunOther(plan->plan, std::span<const rt::ChipTensor>(params, num_params));
  });
}

// Not guarded: it cannot fail, and must leave the thread's last error message alone. Nothing is left to
// wait for: a run returns only once its tasks are done.
void CloseSessionEntry(pypto_backend_session* session) { delete session; }

const pypto_backend_plugin kPlugin{
    .abi_version = PYPTO_BACKEND_PLUGIN_ABI_VERSION,
    .name = "sim",
    .description = "CPU simulator: decoded kernels on per-core arenas, vectorized tile ops (a2a3sim, a5sim)",
    .platforms = kPlatforms,
    .num_platforms = std::size(kPlatforms),
    .prepare = Prepare,
    .execute = Execute,
    .open_session = OpenSessionEntry,
    .run_session = RunSessionEntry,
    .close_session = CloseSessionEntry,
    .run_session_plan = RunSessionPlanEntry,
};

}  // namespace
}  // namespace pypto::sim

extern "C" __attribute__((visibility("default"))) const pypto_backend_plugin* pypto_backend_plugin_v4(void) {
  return &pypto::sim::kPlugin;
}
