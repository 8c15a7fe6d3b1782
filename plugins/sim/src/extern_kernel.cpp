#include "extern_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <map>
#include <mutex>

#include "pypto/backend_extern/cache_key.h"
#include "pypto/backend_extern/compile_command.h"
#include "pypto/backend_extern/source_paths.h"
#include "pypto/backend_extern/run_command.h"
#include "pypto/runtime/dtype_code.h"
#include "../extern_include/pypto_sim_core.h"
#include "extern_guard.h"

namespace pypto::sim {
namespace {

using Error = pypto::unexpected<std::string>;
namespace fs = std::filesystem;

constexpr const char* kEntrySymbol = "kernel_entry";
// Compiled into every kernel's object (extern_guard.h); its name is in the cache key, so that an
// object built before it was is not reused.
constexpr const char* kExitGuardSource = "pypto_sim_exit_guard.cpp";
using Entry = void(int64_t*);

// Tensors take the first args[] slots in signature order; scalars follow, also in order.
pypto::expected<void, std::string> DescribeParams(const ir::Function& function, DecodedKernel& kernel) {
  for (const auto& var : function.params()) {
    if (const auto* tensor = var->type()->As<ir::TensorType>()) {
      const auto rt_dtype = rt::RuntimeDtypeCode(tensor->dtype());
      if (!rt_dtype)
        return Error(fmt::format("kernel '{}': tensor parameter '{}' has dtype {}, which the runtime lacks",
                                 function.name(), var->name_hint(), ir::DataTypeName(tensor->dtype())));
      kernel.params.push_back(KernelParam{.name = var->name_hint(), .slot = kernel.tensor_count++, .is_tensor = true,
                                          .dtype = tensor->dtype(), .rt_dtype = *rt_dtype,
                                          .shape = tensor->shape()});
    } else if (const auto* scalar = var->type()->As<ir::ScalarType>()) {
      kernel.params.push_back(KernelParam{.name = var->name_hint(), .is_tensor = false, .dtype = scalar->dtype()});
    } else {
      return Error(fmt::format("kernel '{}': parameter '{}' has type {}; kernels take tensors and scalars",
                               function.name(), var->name_hint(), var->type()->str()));
    }
  }
  for (auto& param : kernel.params)
    if (!param.is_tensor) param.slot = kernel.tensor_count + kernel.scalar_count++;
  return {};
}

fs::path CacheDir() { return fs::temp_directory_path() / fmt::format("pypto-sim-extern-{}", getuid()); }

// What this process has built or loaded, by content key, so that a session opened after prepare
// reuses the object prepare built. Libraries stay loaded for the life of the process: a kernel's code
// must outlive every session that may still call it.
struct Registry {
  std::mutex mu;
  std::map<std::string, fs::path> objects;
  std::map<fs::path, std::shared_ptr<boost::dll::shared_library>> libraries;
};
Registry& TheRegistry() {
  static auto* registry = new Registry();
  return *registry;
}

// Compiles into a private name first and renames, so that another process never loads half a file.
pypto::expected<void, std::string> Compile(const fs::path& source, const std::vector<fs::path>& include_dirs,
                                           rt::CoreType core_type, std::string_view arch, const fs::path& object) {
  auto device_macros = backend_extern::DeviceMacroFlags(arch, rt::CoreTypeKey(core_type));
  if (!device_macros) return Error(device_macros.error());
  std::error_code ec;
  fs::create_directories(object.parent_path(), ec);
  if (ec) return Error(fmt::format("cannot create {}: {}", object.parent_path().string(), ec.message()));
  const fs::path partial = object.string() + fmt::format(".{}.tmp", getpid());
  auto argv = backend_extern::HostCompileCommand(source, include_dirs, {ExternIncludeDir()}, partial);
  // pto-isa's core macro, as upstream's simulator defines it for every kernel it builds...
  argv.emplace_back(core_type == rt::CoreType::AIC ? "-D__DAV_CUBE__" : "-D__DAV_VEC__");
  // ...and the ones CCEC predefines for the device core, which hand-written kernels test
  // (`#ifdef __DAV_C220_VEC__`): without them such a body would compile to nothing here.
  argv.insert(argv.end(), device_macros->begin(), device_macros->end());
  // A kernel's exit, quick_exit, _Exit and _exit reach the simulator's hook instead of ending the
  // process (extern_include/pypto_sim_exit_guard.cpp, extern_guard.h).
  argv.push_back((ExternIncludeDir() / kExitGuardSource).string());
  argv.emplace_back("-Wl,--wrap=exit,--wrap=quick_exit,--wrap=_Exit,--wrap=_exit");
  spdlog::debug("sim: compiling {}: {}", source.string(), fmt::join(argv, " "));
  auto ran = backend_extern::RunCommand(argv);
  if (!ran) return Error(fmt::format("cannot run the host compiler for {}: {}", source.string(), ran.error()));
  if (ran->exit_code != 0) {
    fs::remove(partial, ec);
    return Error(fmt::format("compiling {} failed (exit code {}):\n{}\ncommand: {}", source.string(), ran->exit_code,
                             ran->output, fmt::join(argv, " ")));
  }
  fs::rename(partial, object, ec);
  if (ec) return Error(fmt::format("cannot move {} to {}: {}", partial.string(), object.string(), ec.message()));
  return {};
}

pypto::expected<Entry*, std::string> LoadEntry(Registry& registry, const fs::path& object, const fs::path& source) {
  auto& library = registry.libraries[object];
  if (!library) {
    try {
      library = std::make_shared<boost::dll::shared_library>(
          object.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      registry.libraries.erase(object);
      return Error(fmt::format("cannot load the kernel built from {} ({}): {}", source.string(), object.string(),
                               e.what()));
    }
  }
  if (!library->has(kEntrySymbol))
    return Error(fmt::format("{} defines no `extern \"C\" void {}(__gm__ int64_t* args)`", source.string(),
                             kEntrySymbol));
  return &library->get<Entry>(kEntrySymbol);
}

}  // namespace

bool IsExternalKernel(const ir::Function& function) {
  return ir::FunctionAttr<std::string>(function, ir::kExternalSourceAttr) != nullptr;
}

fs::path ExternIncludeDir() {
  if (const char* dir = std::getenv("PYPTO_SIM_EXTERN_INCLUDE"); dir && *dir) return dir;
  std::error_code ec;
  const fs::path installed = fs::path(boost::dll::this_line_location().string()).parent_path() / "extern_include";
  if (fs::is_directory(installed, ec)) return installed;
  return PYPTO_SIM_EXTERN_INCLUDE_DIR;
}

pypto::expected<DecodedKernel, std::string> LoadExternalKernel(const ir::Function& function, int32_t func_id,
                                                               rt::CoreType core_type, std::string_view arch,
                                                               const fs::path& build_dir) {
  DecodedKernel kernel{.name = function.name(), .func_id = func_id, .core_type = core_type};
  if (auto described = DescribeParams(function, kernel); !described) return Error(described.error());
  const fs::path source = *ir::FunctionAttr<std::string>(function, ir::kExternalSourceAttr);
  if (!fs::is_regular_file(source))
    return Error(fmt::format("kernel '{}': external source {} does not exist", function.name(), source.string()));

  auto include_dirs = backend_extern::IncludeDirsOf(function);
  if (!include_dirs) return Error(fmt::format("kernel '{}': {}", function.name(), include_dirs.error()));
  std::vector<fs::path> search = *include_dirs;  // the kernel's directories, then the runtime's
  search.push_back(ExternIncludeDir());
  const std::string core = rt::CoreTypeKey(core_type);
  // The compiler and its flags are part of the key: an object built with other macros (__CPU_SIM)
  // is another kernel.
  const auto compiler = backend_extern::HostCompileCommand({}, {}, {}, {});
  auto key = backend_extern::CacheKey(source, search,
                                      {{"target", "sim"},
                                       {"core_type", core},
                                       {"arch", std::string(arch)},
                                       {"exit_guard", kExitGuardSource},
                                       {"compiler", fmt::format("{}", fmt::join(compiler, " "))}});
  if (!key) return Error(fmt::format("kernel '{}': {}", function.name(), key.error()));

  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mu);
  fs::path& object = registry.objects[*key];
  if (object.empty() || !fs::exists(object)) {
    const fs::path candidate =
        (build_dir.empty() ? CacheDir() : build_dir) / fmt::format("{}_{}_{}.so", source.stem().string(), core, *key);
    if (!fs::exists(candidate)) {
      if (auto built = Compile(source, *include_dirs, core_type, arch, candidate); !built) {
        registry.objects.erase(*key);
        return Error(fmt::format("kernel '{}': {}", function.name(), built.error()));
      }
    }
    object = candidate;
  }
  auto entry = LoadEntry(registry, object, source);
  if (!entry) return Error(fmt::format("kernel '{}': {}", function.name(), entry.error()));
  kernel.external_entry = *entry;
  if (auto& library = registry.libraries.at(object); library->has(kExitHookSymbol))
    library->get<ExitHook>(kExitHookSymbol) = KernelExitHook;
  // A kernel library that needs the core it runs on (AscendC's kernel_operator.h) asks by this hook.
  if (auto& library = registry.libraries.at(object); library->has(PYPTO_SIM_BIND_CORE_SYMBOL))
    kernel.external_bind = &library->get<void(const PyptoSimCore*)>(PYPTO_SIM_BIND_CORE_SYMBOL);
  const bool* dual = ir::FunctionAttr<bool>(function, ir::kDualAivDispatchAttr);
  kernel.dual_lanes = dual && *dual;
  kernel.external_library = registry.libraries.at(object);
  return kernel;
}

}  // namespace pypto::sim
