// The compile and run pipeline, from a parsed program to outputs: lower for a platform, generate the
// orchestration and the kernels' modules into a build directory, have the platform's plugin prepare
// it, and run it with tensors. The Python extension and the C ABI (pypto-c/driver.h) both call this.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pypto/driver/compiled_program.h"
#include "pypto/driver/failure.h"
#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/backend_registry.h"

namespace pypto::driver {

// What the plugins say `platform` is (the registry is the one list of platforms); an unknown one is
// InvalidArgument naming the known platforms.
Result<rt::PlatformInfo> PlatformOf(const std::string& platform);

// Lowers `program` for `platform`'s SoC; with `dump_dir`, writes the IR after each pass there as
// NN_after_<Pass>.py.
Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const std::string& platform, bool verify,
                             const std::optional<std::string>& dump_dir);

// A warning for the user (a kernel with no .pto on a simulator, an intermediate nothing writes). It may
// throw to stop the compile (Python's warnings-as-errors); the driver then writes nothing more.
using WarningSink = std::function<void(const std::string&)>;

// The debugging outputs a run records into <build dir>/dfx_outputs (RunConfig.enable_dump_args,
// enable_chip_swimlane, enable_dep_gen).
struct DfxSwitches {
  int dump_args = 0;
  int chip_swimlane = 0;
  bool dep_gen = false;
};

struct CompileOptions {
  int task_window = 0;                  // RunConfig.ring_task_window; 0 for the default
  std::vector<uint64_t> ring_heap;      // bytes per ring; empty for the defaults
  std::vector<uint32_t> ring_dep_pool;  // entries per ring; empty for the defaults
  DfxSwitches dfx;
  WarningSink warn;                     // unset: warnings go to the log
};

// Writes `lowered`'s build directory for `platform` into `output_dir` (orchestration, kernel modules,
// lowered_program.py) and has the platform's plugin prepare it. A device build that stopped after
// the artifacts (a tool is missing) is a compiled program all the same; running it says what is missing.
Result<CompiledProgramPtr> Compile(const ir::ProgramPtr& lowered, const std::string& platform,
                                   const std::string& output_dir, CompileOptions options);

// A build directory written by Compile, made runnable again: its lowered program is parsed back (or,
// with `program_json`, read from that JSON form, whose locations are the user's source) and its task
// plan regenerated; nothing in the directory is written. Parsing needs the Python interpreter: call
// it holding the GIL.
Result<CompiledProgramPtr> Load(const std::string& output_dir, const std::string& platform,
                                const std::string& program_json = "");

// Switches the debugging outputs of later runs; an open session, made for the old ones, is closed.
void SetDfx(CompiledProgram& compiled, DfxSwitches dfx);

// Runs `compiled` on `platform` with one tensor per orchestration parameter, in order. The compiled
// platform runs on the program's session; another one runs one-shot. Thread-safe; call it without
// the GIL (kernels do not need it).
Result<bool> Run(CompiledProgram& compiled, const std::string& platform, std::span<const rt::ChipTensor> params);

}  // namespace pypto::driver
