#include "device_build.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pypto/backend_extern/compile_command.h"
#include "pypto/backend_extern/run_command.h"
#include "pypto/backend_extern/source_paths.h"
#include "pypto/backend_ptoas/kernel_wrapper.h"
#include "pypto/ir/function.h"
#include "pypto/ir/program.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_plan.h"

namespace pypto::ascend {
namespace {

namespace fs = std::filesystem;
using Error = pypto::unexpected<std::string>;

// A shell word that reads back as `word`.
std::string ShellQuoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The last `count` lines of a tool's output: the error is at the end.
std::string Tail(const std::string& output, size_t count = 40) {
  size_t begin = output.size();
  for (size_t lines = 0; begin > 0 && lines <= count;) {
    if (output[--begin] == '\n' && begin + 1 < output.size()) ++lines;
  }
  return begin == 0 ? output : "...\n" + output.substr(begin + 1);
}

std::string WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? std::string() : fmt::format("cannot write {}", path.string());
}

// ptoas's --pto-arch spelling of a target.
std::string_view PtoasArch(std::string_view arch) { return arch == "a2a3" ? "a3" : "a5"; }

class Builder {
 public:
  Builder(const ir::Program& lowered, std::string_view arch, const fs::path& root, const DeviceTools& tools,
          const DeviceBuildOptions& options, DeviceBuildReport& report)
      : lowered_(lowered), arch_(arch), root_(root), tools_(tools), options_(options), report_(report) {}

  pypto::expected<void, std::string> Kernel(const rt::PlanKernel& kernel) {
    const auto function = lowered_.Find(kernel.name);
    if (!function) return Error(fmt::format("the plan's kernel '{}' is not in the program", kernel.name));
    const std::string core = rt::CoreTypeKey(kernel.core_type);
    const fs::path dir = root_ / "kernels" / core;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    if (const auto* source = ir::FunctionAttr<std::string>(*function, ir::kExternalSourceAttr))
      return HandWritten(*function, *source, core, dir);
    return Generated(*function, core, dir);
  }

  void RecordMissing() {
    if (unassembled_ > 0)
      Missing(tools_.ptoas, fmt::format("{} PTO module(s) were not assembled into kernel C++", unassembled_));
    if (uncompiled_ > 0 && !tools_.ccec.found())
      Missing(tools_.ccec, fmt::format("{} kernel(s) were not compiled; each has its .ccec.sh", uncompiled_));
    if (needs_kernel_headers_ > 0) {
      for (const ToolLookup* headers : {&tools_.pto_isa, &tools_.runtime_headers})
        if (!headers->found())
          Missing(*headers, fmt::format("needed to compile {} generated kernel(s)", needs_kernel_headers_));
    }
  }

 private:
  pypto::expected<void, std::string> HandWritten(const ir::Function& function, const std::string& source,
                                                 const std::string& core, const fs::path& dir) {
    auto own_dirs = backend_extern::IncludeDirsOf(function);
    if (!own_dirs) return Error(fmt::format("kernel '{}': {}", function.name(), own_dirs.error()));
    // As the runtime compiles kernels: pto-isa first, then its own headers, then the kernel's.
    std::vector<fs::path> include_dirs = KernelHeaderDirs();
    include_dirs.insert(include_dirs.end(), own_dirs->begin(), own_dirs->end());
    return Compile(function.name(), "hand-written kernel", source, include_dirs, core, dir);
  }

  pypto::expected<void, std::string> Generated(const ir::Function& function, const std::string& core,
                                               const fs::path& dir) {
    const std::string& name = function.name();
    const fs::path module = dir / (name + ".pto");
    if (!fs::exists(module)) return Error(fmt::format("kernel '{}': {} was not written", name, module.string()));
    Written(module);
    if (fs::path generic = dir / (name + ".generic.mlir"); fs::exists(generic)) Written(generic);
    if (!tools_.ptoas.found()) {
      ++unassembled_;
      return {};
    }
    auto assembled = Assemble(name, module, dir / (name + ".ptoas.cpp"));
    if (!assembled) return Error(assembled.error());
    auto wrapper = backend_ptoas::EmitKernelWrapper(function, *assembled);
    if (!wrapper) return Error(fmt::format("kernel '{}': {}", name, wrapper.error()));
    const fs::path source = dir / (name + ".cpp");
    if (auto failed = WriteText(source, *wrapper); !failed.empty()) return Error(failed);
    Written(source);
    if (!tools_.pto_isa.found() || !tools_.runtime_headers.found()) {
      ++needs_kernel_headers_;
      if (auto script = WriteScript(name, core, source, KernelHeaderDirs(), dir); !script) return Error(script.error());
      return {};
    }
    return Compile(name, "kernel", source, KernelHeaderDirs(), core, dir);
  }

  // ptoas: the PTO module to C++ on pto-isa; the text of that C++.
  pypto::expected<std::string, std::string> Assemble(const std::string& name, const fs::path& module,
                                                     const fs::path& output) {
    const std::vector<std::string> argv = {tools_.ptoas.path->string(), module.string(), "-o", output.string(),
                                           "--enable-insert-sync", "--pto-level=level3", "--pto-arch",
                                           std::string(PtoasArch(arch_))};
    if (auto ran = Run(name, argv, options_.ptoas_timeout); !ran) return Error(ran.error());
    std::ifstream in(output, std::ios::binary);
    if (!in) return Error(fmt::format("kernel '{}': ptoas reported success but wrote no {}", name, output.string()));
    Written(output);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Writes the kernel's .ccec.sh and, with ccec at hand, runs that command.
  pypto::expected<void, std::string> Compile(const std::string& name, std::string_view kind, const fs::path& source,
                                             const std::vector<fs::path>& include_dirs, const std::string& core,
                                             const fs::path& dir) {
    auto argv = WriteScript(name, core, source, include_dirs, dir, kind);
    if (!argv) return Error(argv.error());
    if (!tools_.ccec.found()) {
      ++uncompiled_;
      return {};
    }
    (*argv)[0] = tools_.ccec.path->string();
    if (auto ran = Run(name, *argv, options_.ccec_timeout); !ran) return Error(ran.error());
    const fs::path object = dir / (name + ".o");
    if (!fs::exists(object)) return Error(fmt::format("kernel '{}': ccec reported success but wrote no {}", name, object.string()));
    report_.built.push_back(fs::relative(object, root_).string());
    return {};
  }

  // kernels/<core>/<name>.ccec.sh: the command that compiles `source` into <name>.o beside it, for
  // whoever builds the directory on a machine that has ccec.
  pypto::expected<std::vector<std::string>, std::string> WriteScript(const std::string& name, const std::string& core,
                                                                     const fs::path& source,
                                                                     const std::vector<fs::path>& include_dirs,
                                                                     const fs::path& dir,
                                                                     std::string_view kind = "kernel") {
    auto argv = backend_extern::CcecCompileCommand(source, include_dirs, arch_, core, dir / (name + ".o"));
    if (!argv) return Error(fmt::format("kernel '{}': {}", name, argv.error()));
    std::vector<std::string> words;
    for (const auto& arg : *argv) words.push_back(ShellQuoted(arg));
    const fs::path script = dir / (name + ".ccec.sh");
    auto text = fmt::format("#!/bin/sh\n# Compiles {} '{}' for {} ({}).\nexec {}\n", kind, name, arch_, core,
                            fmt::join(words, " "));
    if (auto failed = WriteText(script, text); !failed.empty()) return Error(failed);
    std::error_code ec;
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add, ec);
    Written(script);
    return argv;
  }

  pypto::expected<void, std::string> Run(const std::string& kernel, const std::vector<std::string>& argv,
                                         std::chrono::milliseconds timeout) {
    spdlog::debug("ascend: {}", fmt::join(argv, " "));
    auto ran = backend_extern::RunCommand(argv, timeout);
    if (!ran) return Error(fmt::format("kernel '{}': cannot run {}: {}", kernel, argv[0], ran.error()));
    if (ran->timed_out) {
      return Error(fmt::format("kernel '{}': {} did not finish within {} s and was stopped\ncommand: {}", kernel,
                               fs::path(argv[0]).filename().string(), timeout.count() / 1000, fmt::join(argv, " ")));
    }
    if (ran->exit_code != 0) {
      return Error(fmt::format("kernel '{}': {} failed (exit code {}):\n{}\ncommand: {}", kernel,
                               fs::path(argv[0]).filename().string(), ran->exit_code, Tail(ran->output),
                               fmt::join(argv, " ")));
    }
    return {};
  }

  std::vector<fs::path> KernelHeaderDirs() const {
    std::vector<fs::path> dirs = tools_.pto_isa.include_dirs;
    dirs.insert(dirs.end(), tools_.runtime_headers.include_dirs.begin(), tools_.runtime_headers.include_dirs.end());
    return dirs;
  }

  void Written(const fs::path& path) { report_.written.push_back(fs::relative(path, root_).string()); }

  void Missing(const ToolLookup& tool, const std::string& consequence) {
    report_.missing.push_back(fmt::format("{}: not found ({}); {}", tool.what, tool.hint, consequence));
  }

  const ir::Program& lowered_;
  std::string arch_;
  fs::path root_;
  const DeviceTools& tools_;
  const DeviceBuildOptions& options_;
  DeviceBuildReport& report_;
  size_t unassembled_ = 0;
  size_t uncompiled_ = 0;
  size_t needs_kernel_headers_ = 0;
};

// What the frontend wrote before the plugin ran: the orchestration and the manifest.
void ListOrchestration(const fs::path& root, DeviceBuildReport& report) {
  std::error_code ec;
  if (fs::is_directory(root / "orchestration", ec)) {
    std::vector<std::string> sources;
    for (const auto& entry : fs::directory_iterator(root / "orchestration", ec))
      if (entry.path().extension() == ".cpp") sources.push_back(fs::relative(entry.path(), root).string());
    std::ranges::sort(sources);
    report.written.insert(report.written.end(), sources.begin(), sources.end());
  }
  if (fs::exists(root / "kernel_config.py", ec)) report.written.emplace_back("kernel_config.py");
}

std::string WriteReport(const DeviceBuildReport& report) {
  nlohmann::json json = {{"platform", report.platform}, {"complete", report.complete()},
                         {"written", report.written},   {"built", report.built},
                         {"missing", report.missing},   {"summary", report.Summary()}};
  return WriteText(report.output_dir / kDeviceBuildReportFile, json.dump(2) + "\n");
}

}  // namespace

std::string DeviceBuildReport::Summary() const {
  std::string text = fmt::format("platform '{}': {} holds {} file(s) for the device build", platform,
                                 output_dir.string(), written.size());
  size_t modules = std::ranges::count_if(written, [](const std::string& f) { return f.ends_with(".pto"); });
  text += fmt::format(" (the orchestration C++, kernel_config.py, {} PTO module(s), the kernels' ccec commands)", modules);
  text += built.empty() ? "; no kernel object was built" : fmt::format("; built: {}", fmt::join(built, ", "));
  text += ".";
  for (const auto& line : missing) text += "\n  missing: " + line;
  text += fmt::format("\n  (the full list is in {})", (output_dir / kDeviceBuildReportFile).string());
  return text;
}

pypto::expected<DeviceBuildReport, std::string> BuildForDevice(const ir::Program& lowered, const rt::TaskPlan& plan,
                                                               std::string_view platform, std::string_view arch,
                                                               const fs::path& output_dir, const DeviceTools& tools,
                                                               const DeviceBuildOptions& options) {
  DeviceBuildReport report{.platform = std::string(platform), .output_dir = output_dir};
  ListOrchestration(output_dir, report);
  Builder builder(lowered, arch, output_dir, tools, options, report);
  std::set<std::string> seen;
  for (const auto& kernel : plan.kernels) {
    if (!seen.insert(kernel.name).second) continue;
    if (auto built = builder.Kernel(kernel); !built) return Error(built.error());
  }
  builder.RecordMissing();
  if (auto failed = WriteReport(report); !failed.empty()) return Error(failed);
  return report;
}

}  // namespace pypto::ascend
