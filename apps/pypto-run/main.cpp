// pypto-run: runs a PyPTO kernel script with an embedded Python interpreter, exactly as
// `python FILE.py args...` would, with the project's environment and pypto package in place.
//
//   pypto-run FILE.py [-p PLATFORM] [script args...]
//   pypto-run -p PLATFORM FILE.py [script args...]
//   pypto-run --explain-abi FILE.py ...   (prints each hand-written kernel's args[] table)
//   pypto-run --list-platforms
#include <Python.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "pypto/driver/platforms.h"

namespace {

namespace fs = std::filesystem;

// One line per known platform, as the driver lists them from the plugins' descriptions: name, plugin,
// kind, SoC, the plugin's description and file; plugins that failed to load are warnings on stderr.
int ListPlatforms() {
  std::cout << pypto::driver::PlatformsTable();
  std::cerr << pypto::driver::PluginLoadWarnings();
  return 0;
}

// The platform a script asks for with -p/--platform, so RunConfig() follows it too.
std::string PlatformInScriptArgs(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if ((arg == "-p" || arg == "--platform") && i + 1 < args.size()) return args[i + 1];
    if (arg.starts_with("--platform=")) return arg.substr(11);
    if (arg.starts_with("-p") && arg.size() > 2 && arg[2] != '-') return arg.substr(2);
  }
  return "";
}

// The interpreter of the project's environment: the active venv, else the one the build used.
std::string PythonExecutable() {
  if (const char* venv = std::getenv("VIRTUAL_ENV")) return (fs::path(venv) / "bin" / "python").string();
  return PYPTO_PYTHON_EXECUTABLE;
}

// A pypto-run from the build tree imports the build tree's pypto package.
void AddBuildTreePackage() {
  std::error_code error;
  auto self = fs::canonical("/proc/self/exe", error);
  auto build_root = fs::weakly_canonical(PYPTO_BUILD_ROOT, error);
  if (self.string().rfind(build_root.string() + "/", 0) != 0) return;
  std::string path = PYPTO_BUILD_PYTHON_DIR;
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing) path += std::string(":") + existing;
  setenv("PYTHONPATH", path.c_str(), 1);
}

int RunScript(const std::vector<std::string>& argv) {
  if (!fs::exists(argv[0])) {
    std::cerr << "pypto-run: " << argv[0] << ": no such file\n";
    return 2;
  }
  AddBuildTreePackage();
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  auto check = [&](PyStatus status) {
    if (PyStatus_Exception(status)) {
      PyConfig_Clear(&config);
      Py_ExitStatusException(status);
    }
  };
  // The venv's interpreter path makes Python find pyvenv.cfg and that environment's site-packages.
  check(PyConfig_SetBytesString(&config, &config.program_name, PythonExecutable().c_str()));
  check(PyConfig_SetBytesString(&config, &config.run_filename, argv[0].c_str()));
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  config.parse_argv = 0;
  check(PyConfig_SetBytesArgv(&config, static_cast<Py_ssize_t>(args.size()), args.data()));
  check(Py_InitializeFromConfig(&config));
  PyConfig_Clear(&config);
  return Py_RunMain();  // runs the file as __main__, prints tracebacks, returns the exit code
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run a PyPTO kernel script (as `python FILE.py` would) with the pypto toolchain.\n"
               "Usage: pypto-run [-p PLATFORM] [--explain-abi] FILE.py [script args...] | pypto-run --list-platforms"};
  bool list_platforms = false;
  bool explain_abi = false;
  std::string platform;
  app.add_flag("--list-platforms", list_platforms, "List the platforms the installed backend plugins serve");
  app.add_flag("--explain-abi", explain_abi,
               "Print the args[] table of each hand-written kernel (stderr) as its program is compiled");
  app.add_option("-p,--platform", platform, "Default platform for RunConfig() (--list-platforms shows them)");
  app.prefix_command();  // everything from FILE.py on belongs to the script
  CLI11_PARSE(app, argc, argv);

  if (list_platforms) return ListPlatforms();
  std::vector<std::string> script = app.remaining();
  if (script.empty()) {
    std::cerr << "pypto-run: missing FILE.py\n" << app.help();
    return 2;
  }
  std::vector<std::string> script_args(script.begin() + 1, script.end());
  if (std::string from_script = PlatformInScriptArgs(script_args); !from_script.empty()) platform = from_script;
  if (!platform.empty()) setenv("PYPTO_PLATFORM", platform.c_str(), 1);
  if (explain_abi) pypto::driver::RequestAbiExplanations();
  return RunScript(script);
}
