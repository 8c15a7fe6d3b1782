// pypto-opt: reads a program in its printed form (what the compiler writes as lowered_program.py or
// into passes_dump/) or as JSON (pypto/ir/json.h), runs the default pipeline or named passes on it
// (none with --no-passes), and writes the result printed or as JSON.
// Everything goes through the libraries' C ABI, as any tool embedding them would.
//
//   pypto-opt FILE.py|FILE.json [-p PLATFORM] [--passes A,B | --no-passes] [--verify] [--dump-dir DIR]
//             [--input-format auto|text|json] [--emit text|json] [-o OUT]
//   pypto-opt --list-passes
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "pypto-c/frontend.h"
#include "pypto-c/ir.h"
#include "pypto-c/passes.h"
#include "pypto-c/runtime.h"

namespace {

using ProgramHandle = std::unique_ptr<pypto_ir_program, decltype(&pypto_ir_program_destroy)>;

int Fail(const std::string& message) {
  std::cerr << "pypto-opt: " << message << "\n";
  return 1;
}

int ListPasses() {
  for (size_t i = 0; i < pypto_passes_pipeline_size(); ++i)
    std::cout << pypto_passes_pipeline_pass_name(i) << "\n  requires " << pypto_passes_pipeline_pass_required(i)
              << "\n  produces " << pypto_passes_pipeline_pass_produced(i) << "\n  invalidates "
              << pypto_passes_pipeline_pass_invalidated(i) << "\n";
  return 0;
}

// The whole input: a file, or standard input for "-".
bool ReadInput(const std::string& path, std::string& text) {
  std::ostringstream buffer;
  if (path == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    buffer << in.rdbuf();
  }
  text = buffer.str();
  return true;
}

// Writes to a temporary beside `path` and renames it over, so a failed write leaves what was there.
bool WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") return static_cast<bool>(std::cout << text);
  const std::string temporary = path + ".pypto-opt.tmp";
  std::ofstream out(temporary, std::ios::binary);
  if (out << text && (out.close(), out)) return std::rename(temporary.c_str(), path.c_str()) == 0;
  std::remove(temporary.c_str());
  return false;
}

struct Options {
  std::string input, output = "-", platform = "a2a3sim", passes, dump_dir;
  std::string input_format = "auto", emit = "text";
  bool verify = false, no_passes = false;
};

// Whether the input is JSON: as asked, or by a .json extension when left to "auto".
bool InputIsJson(const Options& options) {
  if (options.input_format != "auto") return options.input_format == "json";
  return std::filesystem::path(options.input).extension() == ".json";
}

// Parses the DSL text or reads the JSON; null (with the message recorded) when rejected.
pypto_ir_program* ReadProgram(const Options& options, const std::string& source) {
  pypto_ir_program* program = nullptr;
  const std::string filename = options.input == "-" ? "<stdin>" : options.input;
  const pypto_status status = InputIsJson(options)
                                  ? pypto_ir_program_from_json(source.c_str(), &program)
                                  : pypto_frontend_parse_program(source.c_str(), filename.c_str(), 0, &program);
  return status == PYPTO_OK ? program : nullptr;
}

// The program printed, or as indented JSON; false (with the message recorded) on failure.
bool Emit(const Options& options, const pypto_ir_program* program, std::string& out) {
  char* text = nullptr;
  const pypto_status status =
      options.emit == "json" ? pypto_ir_program_to_json(program, 2, &text) : pypto_ir_program_print(program, &text);
  if (status != PYPTO_OK) return false;
  out = text;
  pypto_string_free(text);
  if (options.emit == "json") out += "\n";
  return true;
}

int Run(const Options& options) {
  std::string source;
  if (options.input != "-" && !std::filesystem::exists(options.input)) return Fail(options.input + ": no such file");
  if (!ReadInput(options.input, source)) return Fail(options.input + ": cannot read the file");
  ProgramHandle result(ReadProgram(options, source), pypto_ir_program_destroy);
  if (!result) return Fail(pypto_last_error_message());
  if (!options.no_passes) {
    // The plugins say what SoC the platform models; pypto-opt knows no platform itself.
    pypto_soc_desc soc{};
    if (pypto_rt_platform_soc(options.platform.c_str(), &soc) != PYPTO_OK) return Fail(pypto_last_error_message());
    pypto_ir_program* transformed = nullptr;
    if (pypto_passes_run(result.get(), &soc, options.passes.c_str(), options.verify ? 1 : 0,
                         options.dump_dir.empty() ? nullptr : options.dump_dir.c_str(), &transformed) != PYPTO_OK)
      return Fail(pypto_last_error_message());
    result.reset(transformed);
  }
  std::string out;
  if (!Emit(options, result.get(), out)) return Fail(pypto_last_error_message());
  if (!WriteOutput(options.output, out)) return Fail(options.output + ": cannot write the result");
  return 0;
}

// Run() on a thread with a 256 MB stack (reserved, touched only as deep as it goes): the printer
// and the passes recurse once per level of an expression, and the JSON reader admits 12,000 levels,
// more than the main thread's 8 MB hold.
int RunOnLargeStack(const Options& options) {
  struct Job {
    const Options* options;
    int status = 1;
  } job{&options};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{256} << 20);
  pthread_t thread;
  const int started = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        auto* job = static_cast<Job*>(arg);
        job->status = Run(*job->options);
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  if (started != 0) return Run(options);
  pthread_join(thread, nullptr);
  return job.status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run PyPTO compiler passes on a program in its printed (@pl.program) or JSON form."};
  Options options;
  bool list_passes = false;
  app.add_option("input", options.input,
                 "The program: a .py file as lowered_program.py or passes_dump/ hold, a .json file, or -");
  app.add_option("--input-format", options.input_format, "How the input is written (auto: JSON for a .json file)")
      ->check(CLI::IsMember({"auto", "text", "json"}))
      ->capture_default_str();
  app.add_option("--emit", options.emit, "How to write the result: printed (text) or as JSON")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("-o,--output", options.output, "Where to write the result (default: standard output)");
  app.add_option("-p,--platform", options.platform, "The platform whose SoC the passes target")
      ->capture_default_str();
  auto* passes =
      app.add_option("--passes", options.passes, "Comma-separated pass names to run in order (default: the pipeline)");
  auto* no_passes = app.add_flag("--no-passes", options.no_passes, "Run no pass: only convert between forms");
  app.add_flag("--verify", options.verify, "Verify every produced property after each pass");
  app.add_option("--dump-dir", options.dump_dir, "Write the input and the program after each pass into DIR");
  app.add_flag("--list-passes", list_passes, "List the pipeline's passes with their property contracts");
  no_passes->excludes(passes);
  CLI11_PARSE(app, argc, argv);
  if (list_passes) return ListPasses();
  if (options.input.empty()) return Fail("missing the input file (or - for standard input)\n" + app.help());
  return RunOnLargeStack(options);
}
