// pypto._core: the Python face of the C++ libraries. The Python package keeps only the glue that
// must be Python (reading a function's source, torch tensors); everything else happens here.
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "comm_mpi.h"
#include "diagnostics.h"
#include "pypto/backend_extern/cache_key.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/codegen_orch/kernel_args.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/json.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/pipeline.h"
#include "pypto/runtime/backend_registry.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/comm_domain.h"
#include "pypto/runtime/plan_checks.h"

namespace py = pybind11;
using namespace pypto;

namespace {

struct FunctionView {
  ir::FunctionPtr function;
};

struct ProgramView {
  ir::ProgramPtr program;
};

// Upstream's key of Program.functions: the function's global name.
struct GlobalVarView {
  std::string name;
};

// A plugin session (backend plugin ABI 2), closed with the plugin's close_session when the last
// reference goes.
using SessionHandle = std::shared_ptr<pypto_backend_session>;

// A compiled program: the lowered IR and its task plan, plus where the artifacts were written.
struct Compiled {
  ir::ProgramPtr lowered;
  rt::TaskPlan plan;
  std::string platform;
  std::string output_dir;
  std::string orchestration_source;
  // Orchestration code that reads its tensors: each run expands the plan's submits from them.
  std::shared_ptr<const codegen_orch::DeferredPlan> deferred;
  // On a device platform whose build stopped after the artifacts: what was written and what is missing.
  std::string device_build_incomplete;
  // The program made ready to run on `platform`: opened by the first execute, reused by every later
  // one, closed with the artifacts (the Python CompiledArtifacts object, which CompiledProgram holds).
  SessionHandle session;
};

// "a, b, c or d".
std::string OneOf(const std::vector<std::string>& names) {
  if (names.size() <= 1) return names.empty() ? "no platform (no backend plugin is installed)" : names[0];
  return fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

// What `platform` is, as the plugins describe it (the registry is the one list of platforms).
rt::PlatformInfo PlatformOf(const std::string& platform) {
  auto& registry = rt::BackendRegistry::Get();
  auto info = registry.Platform(platform);
  if (info) return std::move(*info);
  std::vector<std::string> known;
  for (const auto& each : registry.Platforms()) known.push_back(each.name);
  throw py::value_error(fmt::format("unknown platform '{}' (expected {})", platform, OneOf(known)));
}

// The SoC the passes lower for on `platform`.
ir::SocSpec SocOf(const std::string& platform) { return PlatformOf(platform).soc; }

std::map<std::string, frontend::Constant> ToConstants(const py::dict& constants) {
  std::map<std::string, frontend::Constant> result;
  for (auto [key, value] : constants) {
    // bool before int: Python's bool is an int.
    frontend::Constant constant;
    const std::string type_name = py::type::of(value).attr("__name__").cast<std::string>();
    if (value.is_none()) {
      constant = frontend::NoneValue{};
    } else if (type_name == "DynVar") {
      constant = frontend::DynamicDim{value.attr("name").cast<std::string>()};
    } else if (type_name == "DataType") {
      auto dtype = ir::DataTypeFromName(value.attr("name").cast<std::string>());
      if (!dtype) continue;
      constant = *dtype;
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      std::vector<int64_t> list;
      for (auto element : value) {
        if (!py::isinstance<py::int_>(element) || py::isinstance<py::bool_>(element)) break;
        list.push_back(element.cast<int64_t>());
      }
      if (list.size() != py::len(value)) continue;  // only lists of integers stand for literals
      constant = std::move(list);
    }
    else if (py::isinstance<py::str>(value)) constant = value.cast<std::string>();
    else if (py::isinstance<py::bool_>(value)) constant = value.cast<bool>();
    else if (py::isinstance<py::int_>(value)) constant = value.cast<int64_t>();
    else constant = value.cast<double>();
    result[key.cast<std::string>()] = constant;
  }
  return result;
}

// `specs` (parameter name -> (shape, dtype name)) -> the frontend's tensor specs.
std::map<std::string, frontend::TensorSpec> ToTensorSpecs(const py::dict& specs) {
  std::map<std::string, frontend::TensorSpec> result;
  for (auto [key, value] : specs) {
    auto pair = value.cast<py::tuple>();
    auto dtype = ir::DataTypeFromName(pair[1].cast<std::string>());
    if (!dtype) throw py::value_error(fmt::format("unknown dtype {}", pair[1].cast<std::string>()));
    result[key.cast<std::string>()] = frontend::TensorSpec{pair[0].cast<ir::Shape>(), *dtype};
  }
  return result;
}

// `functions` maps the names the entry calls to dicts with the source fields of pypto.jit's _Source
// plus `form` and `constants`.
ProgramView ParseJit(const std::string& source, const std::string& filename, int line_offset, int column_offset,
                     const std::string& program_name, const py::dict& specs, const py::dict& constants,
                     const py::dict& functions, bool auto_scope) {
  frontend::ParseRequest request{.source = source,
                                 .filename = filename,
                                 .line_offset = line_offset,
                                 .column_offset = column_offset,
                                 .program_name = program_name,
                                 .auto_scope = auto_scope};
  request.tensor_specs = ToTensorSpecs(specs);
  request.constants = ToConstants(constants);
  for (auto [key, value] : functions) {
    auto fields = value.cast<py::dict>();
    request.functions[key.cast<std::string>()] = frontend::SubFunction{
        .source = fields["source"].cast<std::string>(),
        .filename = fields["filename"].cast<std::string>(),
        .line_offset = fields["line_offset"].cast<int>(),
        .column_offset = fields["column_offset"].cast<int>(),
        .form = fields["form"].cast<std::string>(),
        .constants = ToConstants(fields["constants"].cast<py::dict>())};
    if (fields.contains("extern")) {
      auto decl = fields["extern"].cast<py::dict>();
      auto& sub = request.functions[key.cast<std::string>()];
      sub.core_type = decl["core_type"].cast<std::string>();
      sub.sources = decl["sources"].cast<std::map<std::string, std::string>>();
      sub.include_dirs_json = decl["include_dirs"].cast<std::string>();
      sub.dual_aiv_dispatch = decl["dual_aiv_dispatch"].cast<bool>();
    }
  }
  return {bindings::Unwrap(frontend::ParseJitFunction(request))};
}

// A `@pl.program` class's source (dedented, decorators included) -> its program.
// A `@pl.program` class's source (dedented, decorators included) -> its program; or, when its entry
// names pl.dynamic dimensions and no `entry_specs` are given, a dict saying so ({"function": entry,
// "params": [...], "dims": [...]}).
py::object ParseProgramSource(const std::string& source, const std::string& filename, int line_offset,
                              int column_offset, const py::dict& constants,
                              const std::map<std::string, std::string>& external_sources,
                              const std::optional<py::dict>& entry_specs, const py::list& module_functions) {
  frontend::ProgramRequest request{.source = source,
                                   .filename = filename,
                                   .line_offset = line_offset,
                                   .column_offset = column_offset,
                                   .constants = ToConstants(constants),
                                   .external_sources = external_sources};
  if (entry_specs) request.entry_specs = ToTensorSpecs(*entry_specs);
  // (name, source, filename, line_offset, column_offset, external_source or "") per function.
  for (py::handle item : module_functions) {
    auto fields = item.cast<std::tuple<std::string, std::string, std::string, int, int, std::string>>();
    request.module_functions.push_back({.name = std::get<0>(fields),
                                        .source = std::get<1>(fields),
                                        .filename = std::get<2>(fields),
                                        .line_offset = std::get<3>(fields),
                                        .column_offset = std::get<4>(fields),
                                        .external_source = std::get<5>(fields)});
  }
  auto parsed = bindings::Unwrap(frontend::ParseProgramClass(request));
  if (parsed.program) return py::cast(ProgramView{parsed.program});
  py::dict entry;
  entry["function"] = parsed.dynamic_entry->function;
  entry["params"] = parsed.dynamic_entry->params;
  entry["dims"] = parsed.dynamic_entry->dims;
  return entry;
}

// Lowers for `platform`; with dump_dir, writes the IR after each pass as NN_after_<Pass>.py.
ProgramView Lower(const ProgramView& program, const std::string& platform, bool verify,
                  const std::optional<std::string>& dump_dir) {
  passes::PassManagerOptions options{.verify = verify};
  if (dump_dir) passes::DumpPassesTo(options, *dump_dir, *program.program);
  const ir::SocSpec soc = SocOf(platform);
  return {bindings::Unwrap(passes::Lower(program.program, passes::PassContext{.soc = &soc}, options))};
}

// Raises pypto.runtime.DeviceUnavailableError: a run on a device platform this machine cannot do,
// ending a script with the documented exit code (pypto/runtime/device.py).
[[noreturn]] void ThrowDeviceUnavailable(const std::string& message, const char* exit_code_name) {
  py::module_ device = py::module_::import("pypto.runtime.device");
  py::object error = device.attr("DeviceUnavailableError")(message, device.attr(exit_code_name));
  PyErr_SetObject(error.get_type().ptr(), error.ptr());
  throw py::error_already_set();
}

// Why a device platform that a simulator names cannot run: no installed plugin serves it.
std::string NoDeviceBackend(const rt::PlatformInfo& device, const std::string& registry_error) {
  const std::string& sim = device.simulated_by;
  if (device.soc.name.starts_with("Ascend"))
    return fmt::format("platform '{}' runs on an Ascend NPU, and no device backend (the ascend plugin) is installed: "
                       "{}. Run on the simulator instead: -p {} (RunConfig(platform=\"{}\"))",
                       device.name, registry_error, sim, sim);
  return fmt::format("platform '{}' runs on a {} device, and no backend plugin serving it is installed: {}. Run on the "
                     "simulator instead: -p {} (RunConfig(platform=\"{}\"))",
                     device.name, device.soc.name, registry_error, sim, sim);
}

// The plugin serving `platform`. A device platform that only a simulator names (its plugin is not
// installed) is a DeviceUnavailableError pointing at the simulator.
const pypto_backend_plugin& PluginFor(const std::string& platform) {
  auto plugin = rt::BackendRegistry::Get().ForPlatform(platform);
  if (plugin) return **plugin;
  if (const rt::PlatformInfo info = PlatformOf(platform); !info.served())
    ThrowDeviceUnavailable(NoDeviceBackend(info, plugin.error()), "EXIT_NO_DEVICE");
  throw std::runtime_error(plugin.error());
}

// kernels/<aic|aiv>/<kernel>.pto: the PTO-ISA module of each kernel, what ptoas assembles (for a
// member of a mixed kernel whose members pass tiles through cross-core pipes, the module of both
// members, written under each member's name), and next to it <kernel>.generic.mlir, the same
// module with its pto ops in MLIR's generic form, which any MLIR tool parses (`mlir-opt
// --allow-unregistered-dialect`) without ptoas. The simulator runs the IR itself, so there a kernel
// the emitter cannot express yet is a warning; for a device it is an error. The platform's description says which (pto_modules), or that no module is written.
void WriteKernelModules(const ir::Program& lowered, const codegen_orch::Orchestration& orchestration,
                        const std::string& platform, const std::filesystem::path& root) {
  const rt::PlatformInfo info = PlatformOf(platform);
  if (info.pto_modules == PYPTO_PTO_NONE) return;
  for (const auto& kernel : orchestration.kernels) {
    if (!kernel.external_source.empty()) continue;  // hand-written: the manifest names its source
    const ir::Function& function = *lowered.Find(kernel.name);
    const std::string& arch = info.soc.arch;
    auto module = backend_ptoas::EmitKernelModule(lowered, function, arch);
    if (!module && info.pto_modules == PYPTO_PTO_OPTIONAL) {
      auto message = fmt::format("no .pto written for kernel '{}': {}", kernel.name, module.error());
      if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
      continue;
    }
    if (!module) throw std::runtime_error(module.error());
    // Planning does not depend on the form: a kernel with a .pto has a generic module too.
    auto generic = backend_ptoas::EmitKernelModule(lowered, function, arch, {.generic_form = true});
    if (!generic) throw std::runtime_error(generic.error());
    auto dir = root / "kernels" / kernel.core_type;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / (kernel.name + ".pto")) << *module;
    std::ofstream(dir / (kernel.name + ".generic.mlir")) << *generic;
  }
}

// The lowered program, printed as a `@pl.program` class: what `load_compiled` parses back, so that a
// build directory runs again without the source (and an edited copy runs as edited).
constexpr const char* kLoweredProgramFile = "lowered_program.py";

// The debugging outputs a run records (RunConfig.enable_dump_args / enable_chip_swimlane /
// enable_dep_gen), into <build dir>/dfx_outputs.
rt::DfxOptions DfxFor(const std::string& output_dir, int dump_args, int chip_swimlane, bool dep_gen) {
  return {.dump_args = dump_args,
          .chip_swimlane = chip_swimlane,
          .dep_gen = dep_gen,
          .output_dir = (std::filesystem::path(output_dir) / "dfx_outputs").string()};
}

// Switches a compiled program's debugging outputs; an open session, made for the old ones, is closed.
void SetDfx(Compiled& compiled, int dump_args, int chip_swimlane, bool dep_gen) {
  const rt::DfxOptions dfx = DfxFor(compiled.output_dir, dump_args, chip_swimlane, dep_gen);
  const rt::DfxOptions& now = compiled.plan.dfx;
  if (dfx.dump_args == now.dump_args && dfx.chip_swimlane == now.chip_swimlane && dfx.dep_gen == now.dep_gen) return;
  compiled.plan.dfx = dfx;
  compiled.session.reset();
}

// A kernel reading an intermediate that nothing writes reads undefined memory on the device (seed
// 001: bytes a kernel never wrote are undefined), while the simulator's buffers start zeroed; say so
// where the program was compiled, naming the tensor and its first reader.
void WarnOnUnwrittenIntermediates(const rt::TaskPlan& plan) {
  for (const auto& read : rt::FindUnwrittenIntermediateReads(plan)) {
    auto message = fmt::format(
        "kernel '{}' takes the intermediate tensor '{}' as an input, but no task of the program writes it: "
        "on the device whatever the kernel reads of it is what its memory held before (the simulator reads "
        "zeros); write it first, or create it with pl.create_tensor(..., init_value=0)",
        read.kernel, read.tensor);
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
  }
}

// `task_window` (RunConfig.ring_task_window; 0 for the default), `ring_heap` (RunConfig.ring_heap, bytes
// per ring; empty for the defaults) and `ring_dep_pool` (RunConfig.ring_dep_pool, entries per ring; empty
// for the defaults) are how the runtime runs the plan.
Compiled Compile(const ProgramView& lowered, const std::string& platform, const std::string& output_dir,
                 int task_window, int dump_args, int chip_swimlane, bool dep_gen, std::vector<uint64_t> ring_heap,
                 std::vector<uint32_t> ring_dep_pool) {
  auto orchestration = bindings::Unwrap(codegen_orch::GenerateOrchestration(*lowered.program));
  WarnOnUnwrittenIntermediates(orchestration.plan);
  orchestration.plan.task_window = task_window;
  orchestration.plan.ring_heap = std::move(ring_heap);
  orchestration.plan.ring_dep_pool = std::move(ring_dep_pool);
  orchestration.plan.dfx = DfxFor(output_dir, dump_args, chip_swimlane, dep_gen);
  std::filesystem::create_directories(output_dir);
  bindings::Unwrap(codegen_orch::WriteOrchestration(orchestration, output_dir));
  WriteKernelModules(*lowered.program, orchestration, platform, output_dir);
  std::ofstream(std::filesystem::path(output_dir) / kLoweredProgramFile) << ir::PrintProgram(*lowered.program);
  Compiled compiled{lowered.program, std::move(orchestration.plan), platform, output_dir, orchestration.cpp_source,
                    orchestration.deferred};
  const auto& plugin = PluginFor(platform);
  pypto_ir_program program_handle{compiled.lowered};
  pypto_rt_plan plan_handle{compiled.plan};
  const pypto_status status = plugin.prepare(platform.c_str(), &program_handle, &plan_handle, output_dir.c_str());
  // A device build that stopped after the artifacts (a tool is missing) is a compiled program all the
  // same, as upstream's is without ptoas; running it says what is missing.
  if (status == PYPTO_ERR_UNAVAILABLE) compiled.device_build_incomplete = pypto_last_error_message();
  else if (status != PYPTO_OK) throw std::runtime_error(pypto_last_error_message());
  return compiled;
}

// The summary of a device build that stopped after the artifacts, from its report (written by the
// ascend plugin); empty for a complete one or a simulator build.
std::string IncompleteDeviceBuild(const std::string& output_dir) {
  std::ifstream in(std::filesystem::path(output_dir) / "device_build.json");
  if (!in) return {};
  auto report = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || report.value("complete", true)) return {};
  return report.value("summary", std::string("the device build is incomplete (see device_build.json)"));
}

// A build directory written by Compile, made runnable again: its lowered program is parsed back and
// its task plan regenerated; nothing in the directory is written.
// The lowered program of a build directory: its `lowered_program.py` parsed, or, where the caller
// holds the program's JSON form (CompiledArtifacts.program_json: a process the compiling one
// started), that form, whose locations are still those of the user's source.
ir::ProgramPtr LoweredProgramOf(const std::string& output_dir, const std::string& program_json) {
  if (!program_json.empty()) return bindings::Unwrap(ir::ProgramFromJson(program_json));
  const auto path = std::filesystem::path(output_dir) / kLoweredProgramFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw py::value_error(fmt::format("{} is not a pypto build directory: {} is missing", output_dir, path.string()));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  frontend::ProgramRequest request{.source = text, .filename = path.string()};
  return bindings::Unwrap(frontend::ParseProgram(request));
}

Compiled LoadCompiled(const std::string& output_dir, const std::string& platform, const std::string& program_json) {
  auto program = LoweredProgramOf(output_dir, program_json);
  auto orchestration = bindings::Unwrap(codegen_orch::GenerateOrchestration(*program));
  PlatformOf(platform);  // refuses an unknown platform before any run
  Compiled compiled{program, std::move(orchestration.plan), platform, output_dir, orchestration.cpp_source,
                    orchestration.deferred};
  compiled.device_build_incomplete = IncompleteDeviceBuild(output_dir);
  return compiled;
}

// The session of `compiled` on its platform, opened on first use. Called with the GIL held, which is
// what keeps two Python threads from opening one each. Null when the plugin has no sessions.
SessionHandle SessionOf(Compiled& compiled, const pypto_backend_plugin& plugin) {
  if (!plugin.open_session) return nullptr;
  if (compiled.session) return compiled.session;
  pypto_ir_program program_handle{compiled.lowered};
  pypto_rt_plan plan_handle{compiled.plan};
  pypto_backend_session* session = nullptr;
  // Fails where execute would have failed before running anything, with the same message.
  if (plugin.open_session(compiled.platform.c_str(), &program_handle, &plan_handle, &session) != PYPTO_OK)
    throw std::runtime_error(pypto_last_error_message());
  compiled.session = SessionHandle(session, [close = plugin.close_session](pypto_backend_session* s) { close(s); });
  return compiled.session;
}

const ir::ShapedType* AsShaped(const ir::Type& type) {
  if (const auto* tensor = type.As<ir::TensorType>()) return tensor;
  return type.As<ir::TileType>();
}

// One dict per parameter: name, kind ("tensor" | "scalar" | "tile"), dtype, shape and direction.
py::list ParamsOf(const FunctionView& view) {
  const auto& function = *view.function;
  py::list result;
  for (size_t i = 0; i < function.params().size(); ++i) {
    const auto& param = function.params()[i];
    py::dict entry;
    entry["name"] = param->name_hint();
    entry["direction"] = std::string(ir::ParamDirectionName(function.param_directions()[i]));
    // An entry parameter declared a plain pl.Tensor that a kernel writes (DeriveCallDirections):
    // the kernel writing it, and where the parameter is declared.
    if (auto declared = function.attrs().find(ir::DeclaredInAttr(param->name_hint()));
        declared != function.attrs().end() && std::holds_alternative<std::string>(declared->second)) {
      entry["declared_in_written_by"] = std::get<std::string>(declared->second);
      entry["span"] = param->span().str();
    }
    const auto& type = *param->type();
    if (const auto* scalar = type.As<ir::ScalarType>()) {
      entry["kind"] = "scalar";
      entry["dtype"] = std::string(ir::DataTypeName(scalar->dtype()));
    } else if (const auto* shaped = AsShaped(type)) {
      entry["kind"] = type.As<ir::TensorType>() ? "tensor" : "tile";
      entry["dtype"] = std::string(ir::DataTypeName(shaped->dtype()));
      entry["shape"] = shaped->shape();
    } else {
      entry["kind"] = type.str();
    }
    result.append(entry);
  }
  return result;
}

// The plugin's error for a failed run, as the Python exception a caller sees.
[[noreturn]] void ThrowRunFailure(const Compiled& compiled, pypto_status status) {
  if (status == PYPTO_ERR_UNAVAILABLE) {
    if (compiled.device_build_incomplete.empty()) ThrowDeviceUnavailable(pypto_last_error_message(), "EXIT_NO_DEVICE");
    ThrowDeviceUnavailable(fmt::format("{}\nNothing ran: the device build is incomplete.\n{}", pypto_last_error_message(),
                                       compiled.device_build_incomplete),
                           "EXIT_DEVICE_TOOLCHAIN_MISSING");
  }
  // Ctrl-C stopped the run (run_interrupt.h): Python's handler, which saw the signal too, raises
  // KeyboardInterrupt, and it says what was running.
  std::string message = pypto_last_error_message();
  if (PyErr_CheckSignals() != 0) {
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) PyErr_SetString(PyExc_KeyboardInterrupt, message.c_str());
    throw py::error_already_set();
  }
  throw std::runtime_error(message);
}

// Runs one stage of a deferred plan on a session of its own (the plan differs from run to run), or
// one-shot where the plugin has no sessions. The caller holds the GIL; kernels run without it.
pypto_status RunStageOn(const Compiled& compiled, const pypto_backend_plugin& plugin, const std::string& platform,
                        const rt::TaskPlan& stage, std::span<const rt::ChipTensor> params) {
  pypto_ir_program program_handle{compiled.lowered};
  pypto_rt_plan plan_handle{stage};
  py::gil_scoped_release release;
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

// A run of a deferred plan: expanded from the tensors passed, in stages where orchestration code reads
// what kernels computed (codegen_orch::RunDeferredPlan).
void ExecuteDeferred(const Compiled& compiled, const std::string& platform, std::span<const rt::ChipTensor> params) {
  const auto& plugin = PluginFor(platform);
  std::optional<pypto_status> failed;
  auto run_stage = [&](const rt::TaskPlan& stage, std::span<const rt::ChipTensor> tensors) -> ir::Result<bool> {
    pypto_status status = RunStageOn(compiled, plugin, platform, stage, tensors);
    if (status == PYPTO_OK) return true;
    failed = status;
    return ir::MakeError(ir::DiagnosticKind::Internal, pypto_last_error_message());
  };
  auto ran = codegen_orch::RunDeferredPlan(*compiled.deferred, compiled.plan, params, run_stage);
  if (failed && (*failed == PYPTO_ERR_UNAVAILABLE || ran)) ThrowRunFailure(compiled, *failed);
  // The plugin's message, and which read of the orchestration the failed stage was run for.
  if (failed) throw std::runtime_error(ran.error().message);
  bindings::Unwrap(std::move(ran));
}

// tensors: (data_ptr, shape, dtype name) per orchestration parameter, contiguous.
void Execute(Compiled& compiled, const std::string& platform, const std::vector<py::tuple>& tensors) {
  std::vector<rt::ChipTensor> params;
  for (const auto& tensor : tensors) {
    auto dtype = ir::DataTypeFromName(tensor[2].cast<std::string>());
    if (!dtype) throw py::value_error(fmt::format("unknown dtype {}", tensor[2].cast<std::string>()));
    auto code = bindings::Unwrap(codegen_orch::RuntimeDataType(*dtype));
    auto shape = tensor[1].cast<std::vector<uint32_t>>();
    params.push_back(rt::MakeExternalTensor(reinterpret_cast<void*>(tensor[0].cast<uintptr_t>()), shape, code));
  }
  // The tasks depend on what the tensors hold: this run's plan, run on sessions made for it.
  if (compiled.deferred) return ExecuteDeferred(compiled, platform, params);
  const auto& plugin = PluginFor(platform);
  pypto_status status;
  // The compiled platform runs on the program's session: set up once, so that a call costs little
  // more than its kernels. Another platform (the program was not prepared for it) runs one-shot.
  if (SessionHandle session = platform == compiled.platform ? SessionOf(compiled, plugin) : nullptr) {
    // `session` keeps it open for this call. Runs of one session from several threads take turns.
    py::gil_scoped_release release;  // kernels run on this thread and the simulator's
    status = plugin.run_session(session.get(), params.data(), params.size());
  } else {
    pypto_ir_program program_handle{compiled.lowered};
    pypto_rt_plan plan_handle{compiled.plan};
    py::gil_scoped_release release;  // kernels run on the simulator's threads
    status = plugin.execute(platform.c_str(), &program_handle, &plan_handle, params.data(), params.size());
  }
  if (status != PYPTO_OK) ThrowRunFailure(compiled, status);
}

// `threshold` on Python's logging scale (10 debug, 20 info, 30 warning, 40 error, above: off).
void SetLogLevel(int threshold) {
  auto level = threshold < 20   ? spdlog::level::debug
               : threshold < 30 ? spdlog::level::info
               : threshold < 40 ? spdlog::level::warn
               : threshold < 50 ? spdlog::level::err
                                : spdlog::level::off;
  spdlog::set_level(level);
}

const char* PtoModulesName(pypto_pto_modules modules) {
  switch (modules) {
    case PYPTO_PTO_OPTIONAL: return "optional";
    case PYPTO_PTO_REQUIRED: return "required";
    case PYPTO_PTO_NONE: return "none";
  }
  return "?";
}

py::dict PlatformDict(const rt::PlatformInfo& info) {
  py::dict entry;
  entry["platform"] = info.name;
  entry["plugin"] = info.plugin;
  entry["description"] = info.plugin_description;
  entry["path"] = info.plugin_path;
  entry["kind"] = info.simulator ? "simulator" : "device";
  entry["simulates"] = info.simulates;
  entry["simulated_by"] = info.simulated_by;
  entry["soc"] = info.soc.name;
  entry["arch"] = info.soc.arch;
  entry["pto_modules"] = PtoModulesName(info.pto_modules);
  entry["toolchain"] = info.toolchain;
  return entry;
}

// The platforms the installed plugins serve, in the order the plugins were found.
py::list ListPlatforms() {
  py::list result;
  auto& registry = rt::BackendRegistry::Get();
  for (const auto& plugin : registry.Plugins())
    for (const auto& platform : plugin.platforms)
      if (auto info = registry.Platform(platform); info && info->plugin_path == plugin.path)
        result.append(PlatformDict(*info));
  return result;
}

// Every known platform (a device platform a simulator stands for is known even when no plugin
// serves it: its "plugin" is then empty), each simulator followed by its device.
py::list KnownPlatforms() {
  py::list result;
  for (const auto& info : rt::BackendRegistry::Get().Platforms()) result.append(PlatformDict(info));
  return result;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "C++ core of the pypto toolchain";
  m.def("version", [] { return std::string(PYPTO_VERSION); });

  py::class_<GlobalVarView>(m, "GlobalVar")
      .def(py::init<std::string>(), py::arg("name"))
      .def_readonly("name", &GlobalVarView::name)
      .def("__hash__", [](const GlobalVarView& g) { return py::hash(py::str(g.name)); })
      .def("__eq__", [](const GlobalVarView& a, const GlobalVarView& b) { return a.name == b.name; })
      .def("__repr__", [](const GlobalVarView& g) { return fmt::format("GlobalVar({})", g.name); });

  py::class_<FunctionView>(m, "Function")
      .def_property_readonly("name", [](const FunctionView& f) { return f.function->name(); })
      .def_property_readonly("function_type",
                             [](const FunctionView& f) { return std::string(ir::FunctionTypeName(f.function->type())); })
      // Upstream's spelling: the pl.FunctionType member.
      .def_property_readonly("func_type",
                             [](const FunctionView& f) {
                               return py::module_::import("pypto.language.enums")
                                   .attr("FunctionType")
                                   .attr(py::str(std::string(ir::FunctionTypeName(f.function->type()))));
                             })
      .def_property_readonly("params", &ParamsOf)
      .def_property_readonly("return_types",
                             [](const FunctionView& f) {
                               std::vector<std::string> types;
                               for (const auto& type : f.function->return_types()) types.push_back(type->str());
                               return types;
                             })
      .def("__str__", [](const FunctionView& f) { return ir::PrintFunction(*f.function); })
      // Upstream's spelling of the printer; our printer has one (full) form, so `concise` is accepted
      // and changes nothing.
      .def("as_python", [](const FunctionView& f, bool /*concise*/) { return ir::PrintFunction(*f.function); },
           py::arg("concise") = false)
      .def("__repr__", [](const FunctionView& f) {
        return fmt::format("<pypto Function {} ({})>", f.function->name(), ir::FunctionTypeName(f.function->type()));
      });

  py::class_<ProgramView>(m, "Program")
      .def_property_readonly("name", [](const ProgramView& p) { return p.program->name(); })
      .def_property_readonly("entry_name", [](const ProgramView& p) { return p.program->entry_name(); })
      // As upstream's: a dict from GlobalVar (the name) to Function, in definition order.
      .def_property_readonly("functions",
                             [](const ProgramView& p) {
                               py::dict functions;
                               for (const auto& f : p.program->functions())
                                 functions[py::cast(GlobalVarView{f->name()})] = py::cast(FunctionView{f});
                               return functions;
                             })
      .def("__str__", [](const ProgramView& p) { return ir::PrintProgram(*p.program); })
      .def("as_python", [](const ProgramView& p, bool /*concise*/) { return ir::PrintProgram(*p.program); },
           py::arg("concise") = false)
      .def("__repr__", [](const ProgramView& p) {
        return fmt::format("<pypto Program {} with {} functions>", p.program->name(), p.program->functions().size());
      });

  py::class_<Compiled>(m, "CompiledArtifacts")
      .def_readonly("platform", &Compiled::platform)
      .def_readonly("output_dir", &Compiled::output_dir)
      .def_readonly("orchestration_source", &Compiled::orchestration_source)
      .def_property_readonly("program", [](const Compiled& c) { return ProgramView{c.lowered}; })
      .def_property_readonly("program_json", [](const Compiled& c) { return ir::ProgramToJson(*c.lowered); })
      .def_property_readonly("param_names", [](const Compiled& c) {
        std::vector<std::string> names;
        for (const auto& p : c.plan.params) names.push_back(p.name);
        return names;
      });

  m.def("parse_jit", &ParseJit, py::arg("source"), py::arg("filename"), py::arg("line_offset"),
        py::arg("column_offset"), py::arg("program_name"), py::arg("specs"), py::arg("constants") = py::dict(),
        py::arg("functions") = py::dict(), py::arg("auto_scope") = true);
  m.def("parse_program", &ParseProgramSource, py::arg("source"), py::arg("filename"), py::arg("line_offset"),
        py::arg("column_offset"), py::arg("constants") = py::dict(),
        py::arg("external_sources") = std::map<std::string, std::string>{},
        py::arg("entry_specs") = py::none(), py::arg("module_functions") = py::list());
  m.def("lower", &Lower, py::arg("program"), py::arg("platform"), py::arg("verify") = false,
        py::arg("dump_dir") = py::none());
  m.def("compile", &Compile, py::arg("lowered"), py::arg("platform"), py::arg("output_dir"),
        py::arg("task_window") = 0, py::arg("dump_args") = 0, py::arg("chip_swimlane") = 0,
        py::arg("dep_gen") = false, py::arg("ring_heap") = std::vector<uint64_t>{},
        py::arg("ring_dep_pool") = std::vector<uint32_t>{});
  m.def("set_dfx", &SetDfx, py::arg("compiled"), py::arg("dump_args"), py::arg("chip_swimlane"),
        py::arg("dep_gen") = false);
  m.def("load_compiled", &LoadCompiled, py::arg("output_dir"), py::arg("platform"), py::arg("program_json") = "");
  m.def("execute", &Execute, py::arg("compiled"), py::arg("platform"), py::arg("tensors"));
  // The ranks' windows of a distributed run (pypto/ir/distributed_compiled_program.py), registered for
  // its length so that the simulator's comm ops find a peer's window.
  m.def(
      "register_comm_domain",
      [](const std::vector<uintptr_t>& windows, uint64_t window_bytes) {
        return rt::RegisterCommDomain(rt::CommDomain{windows, window_bytes});
      },
      py::arg("windows"), py::arg("window_bytes"));
  m.def("unregister_comm_domain", &rt::UnregisterCommDomain, py::arg("handle"));
  bindings::BindCommMpi(m);
  m.def("list_platforms", &ListPlatforms);
  m.def("platforms", &KnownPlatforms);
  m.def("pipeline_passes", [] {
    const passes::PassManager pipeline = passes::DefaultPipeline();  // outlives the loop over its passes
    std::vector<std::string> names;
    for (const auto& pass : pipeline.passes()) names.push_back(pass.name());
    return names;
  });
  m.def(
      "extern_cache_key",
      [](const std::string& source, const std::vector<std::string>& include_dirs, const std::string& core) {
        std::vector<std::filesystem::path> dirs(include_dirs.begin(), include_dirs.end());
        auto key = backend_extern::CacheKey(source, dirs, {{"core_type", core}});
        if (!key) throw py::value_error(key.error());
        return *key;
      },
      py::arg("source"), py::arg("include_dirs"), py::arg("core_type"));
  m.def("explain_extern_args", [](const ProgramView& p) { return codegen_orch::ExplainExternArgs(*p.program); },
        py::arg("program"));
  m.def("set_log_level", &SetLogLevel, py::arg("threshold"));
  m.def("plugin_search_path", [] { return rt::BackendRegistry::Get().SearchPath(); });
}
