// pypto._core: the Python face of the C++ libraries. The Python package keeps only the glue that
// must be Python (reading a function's source, binding arguments, torch tensors); compiling and
// running belong to the driver (libs/driver), which lower/compile/load_compiled/execute wrap.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "comm_mpi.h"
#include "diagnostics.h"
#include "pypto/backend_extern/cache_key.h"
#include "pypto/codegen_orch/kernel_args.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/driver/pipeline.h"
#include "pypto/driver/platforms.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/json.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/pipeline.h"
#include "pypto/runtime/backend_registry.h"
#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/comm_domain.h"

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

// Raises pypto.runtime.DeviceUnavailableError: a run on a device platform this machine cannot do,
// ending a script with the documented exit code (pypto/runtime/device.py).
[[noreturn]] void ThrowDeviceUnavailable(const std::string& message, const char* exit_code_name) {
  py::module_ device = py::module_::import("pypto.runtime.device");
  py::object error = device.attr("DeviceUnavailableError")(message, device.attr(exit_code_name));
  PyErr_SetObject(error.get_type().ptr(), error.ptr());
  throw py::error_already_set();
}

// A failure of the driver, as the Python exception a caller sees: a located pypto error, a ValueError
// (an unknown platform, a directory that is not a build directory), pypto.runtime.DeviceUnavailableError
// with its exit code, or a RuntimeError with the plugin's message.
[[noreturn]] void ThrowFailure(const driver::Failure& failure) {
  const std::string& message = failure.diagnostic.message;
  switch (failure.kind) {
    case driver::FailureKind::Diagnostic: bindings::ThrowDiagnostic(failure.diagnostic);
    case driver::FailureKind::InvalidArgument: throw py::value_error(message);
    case driver::FailureKind::DeviceUnavailable: ThrowDeviceUnavailable(message, "EXIT_NO_DEVICE");
    case driver::FailureKind::DeviceBuildIncomplete: ThrowDeviceUnavailable(message, "EXIT_DEVICE_TOOLCHAIN_MISSING");
    case driver::FailureKind::Runtime: break;
  }
  throw std::runtime_error(message);
}

template <typename T>
T Unwrap(driver::Result<T> result) {
  if (!result) ThrowFailure(result.error());
  return std::move(*result);
}

// Lowers for `platform`; with dump_dir, writes the IR after each pass as NN_after_<Pass>.py.
ProgramView Lower(const ProgramView& program, const std::string& platform, bool verify,
                  const std::optional<std::string>& dump_dir) {
  return {Unwrap(driver::Lower(program.program, platform, verify, dump_dir))};
}

// The driver's warnings as Python UserWarnings; under warnings-as-errors the exception stops the compile.
void WarnInPython(const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

// `task_window` (RunConfig.ring_task_window; 0 for the default), `ring_heap` (RunConfig.ring_heap, bytes
// per ring; empty for the defaults) and `ring_dep_pool` (RunConfig.ring_dep_pool, entries per ring; empty
// for the defaults) are how the runtime runs the plan.
driver::CompiledProgramPtr Compile(const ProgramView& lowered, const std::string& platform, const std::string& output_dir,
                                   int task_window, int dump_args, int chip_swimlane, bool dep_gen,
                                   std::vector<uint64_t> ring_heap, std::vector<uint32_t> ring_dep_pool) {
  return Unwrap(driver::Compile(lowered.program, platform, output_dir,
                                {.task_window = task_window,
                                 .ring_heap = std::move(ring_heap),
                                 .ring_dep_pool = std::move(ring_dep_pool),
                                 .dfx = {.dump_args = dump_args, .chip_swimlane = chip_swimlane, .dep_gen = dep_gen},
                                 .warn = WarnInPython}));
}

// A build directory written by compile, made runnable again (the driver parses its lowered program
// back, with the GIL this call holds).
driver::CompiledProgramPtr LoadCompiled(const std::string& output_dir, const std::string& platform,
                                        const std::string& program_json) {
  return Unwrap(driver::Load(output_dir, platform, program_json));
}

void SetDfx(driver::CompiledProgram& compiled, int dump_args, int chip_swimlane, bool dep_gen) {
  driver::SetDfx(compiled, {.dump_args = dump_args, .chip_swimlane = chip_swimlane, .dep_gen = dep_gen});
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


// tensors: (data_ptr, shape, dtype name) per orchestration parameter, contiguous.
void Execute(driver::CompiledProgram& compiled, const std::string& platform, const std::vector<py::tuple>& tensors) {
  std::vector<rt::ChipTensor> params;
  for (const auto& tensor : tensors) {
    auto dtype = ir::DataTypeFromName(tensor[2].cast<std::string>());
    if (!dtype) throw py::value_error(fmt::format("unknown dtype {}", tensor[2].cast<std::string>()));
    auto code = bindings::Unwrap(codegen_orch::RuntimeDataType(*dtype));
    auto shape = tensor[1].cast<std::vector<uint32_t>>();
    params.push_back(rt::MakeExternalTensor(reinterpret_cast<void*>(tensor[0].cast<uintptr_t>()), shape, code));
  }
  driver::Result<bool> ran;
  {
    py::gil_scoped_release release;  // kernels run on this thread and the simulator's
    ran = driver::Run(compiled, platform, params);
  }
  if (ran) return;
  // Ctrl-C stopped the run (run_interrupt.h): Python's handler, which saw the signal too, raises
  // KeyboardInterrupt, and it says what was running.
  if (ran.error().kind == driver::FailureKind::Runtime && PyErr_CheckSignals() != 0) {
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
      PyErr_SetString(PyExc_KeyboardInterrupt, ran.error().diagnostic.message.c_str());
    throw py::error_already_set();
  }
  ThrowFailure(ran.error());
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

  // The driver's compiled program; its platform session closes when the last reference goes.
  py::class_<driver::CompiledProgram, driver::CompiledProgramPtr>(m, "CompiledArtifacts")
      .def_readonly("platform", &driver::CompiledProgram::platform)
      .def_readonly("output_dir", &driver::CompiledProgram::output_dir)
      .def_readonly("orchestration_source", &driver::CompiledProgram::orchestration_source)
      .def_property_readonly("program", [](const driver::CompiledProgram& c) { return ProgramView{c.lowered}; })
      .def_property_readonly("program_json",
                             [](const driver::CompiledProgram& c) { return ir::ProgramToJson(*c.lowered); })
      .def_property_readonly("param_names", [](const driver::CompiledProgram& c) {
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
  // pypto-run --explain-abi asks the driver; every compiled program then prints its args[] tables.
  m.def("abi_explanations_requested", &driver::AbiExplanationsRequested);
  m.def("set_log_level", &SetLogLevel, py::arg("threshold"));
  m.def("plugin_search_path", [] { return rt::BackendRegistry::Get().SearchPath(); });
}
