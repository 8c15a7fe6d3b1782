// The DSL frontend: reads a kernel function's Python source through the embedded interpreter's
// `ast` module and builds IR in C++. Nothing in a kernel body ever runs as Python.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/program.h"

namespace pypto::frontend {

// The concrete shape and dtype a bare `pl.Tensor` parameter takes for one specialisation.
struct TensorSpec {
  ir::Shape shape;
  ir::DataType dtype = ir::DataType::FP32;
};

// A `pl.dynamic("T")` dimension a kernel names in its annotations. Under `@pl.jit` each call is
// specialised on its tensors, so the name takes the extent of the argument dimension it labels.
struct DynamicDim {
  std::string name;
  bool operator==(const DynamicDim&) const = default;
};

// A name bound to None where the program is built (`valid_shape = None` in the function that makes
// it): passed as an optional keyword argument (`valid_shape=valid_shape`), it leaves the argument out.
struct NoneValue {
  bool operator==(const NoneValue&) const = default;
};

// A Python int/float/bool the kernel refers to by a global or closure name; its value is
// substituted at each use, like a literal. A DynVar is a DynamicDim; a dtype (`dt = pl.FP16`, a
// closure variable of a program built per dtype) stands for that dtype wherever one is written,
// a list or tuple of integers (`off = [0, 32]`) for that list literal, and None for `None`.
using Constant =
    std::variant<int64_t, double, bool, DynamicDim, ir::DataType, std::vector<int64_t>, std::string, NoneValue>;

// A `@pl.jit.incore` (or `.inline`) function the entry may call by name. It is parsed at each call
// site against the call's argument types, so a bare `pl.Tensor` parameter takes the caller's shape.
struct SubFunction {
  std::string source;    // dedented, decorators included
  std::string filename;
  int line_offset = 0;
  int column_offset = 0;
  std::string form;  // "incore", "inline" or "extern"
  std::map<std::string, Constant> constants;
  // A @pl.jit.extern stub: its core type ("aic", "aiv", or "mixed": an AIC + AIV group), the source
  // of each core's entry (absolute path by "aic"/"aiv"), its include directories as a JSON list ("" for
  // none), and whether the AIV entry runs on both lanes.
  std::string core_type;
  std::map<std::string, std::string> sources;
  std::string include_dirs_json;
  bool dual_aiv_dispatch = false;
};

struct ParseRequest {
  std::string source;        // the function's source, dedented (decorators included)
  std::string filename;      // the user's file, for diagnostics
  int line_offset = 0;       // added to AST line numbers: the source's first line in the file, minus 1
  int column_offset = 0;     // indentation that dedenting removed
  std::string program_name;  // e.g. "_jit_tile_add"
  std::map<std::string, TensorSpec> tensor_specs;  // by parameter name
  std::map<std::string, Constant> constants;       // module-level and closure scalars
  std::map<std::string, SubFunction> functions;    // kernels the entry calls, by the name it uses
  bool auto_scope = true;  // @pl.jit(auto_scope=False): the entry places its runtime scopes by hand
};

// Parses one `@pl.jit` function into a program: the entry (an Opaque function) and one InCore
// function per specialisation of each `@pl.jit.incore` function it calls. Requires a running
// Python interpreter (the extension module's, or one started by the C ABI).
ir::Result<ir::ProgramPtr> ParseJitFunction(const ParseRequest& request);

// A `@pl.program` class: the DSL text the IR printer writes, or a program written by hand.
// A module-level `@pl.function` (`def k(x: ..., out: ...)`, no `self`) that a `@pl.program` calls.
struct ModuleFunction {
  std::string name;        // what the program calls it (a factory's result may differ from its def)
  std::string source;      // the function's source, dedented (decorators included)
  std::string filename;    // its file, for diagnostics
  int line_offset = 0;     // its first line in that file, minus 1
  int column_offset = 0;   // indentation that dedenting removed
  std::string external_source;  // the path its external_source= evaluated to (absolute); empty: none
};

struct ProgramRequest {
  std::string source;     // the class's source, dedented (decorators included)
  std::string filename;   // the user's file, for diagnostics
  int line_offset = 0;    // added to AST line numbers: the source's first line in the file, minus 1
  int column_offset = 0;  // indentation that dedenting removed
  std::map<std::string, Constant> constants;  // module-level scalars the bodies name
  // Method name -> the external_source path its decorator evaluated to (as written: relative paths
  // are taken from `filename`'s directory). A string-literal external_source needs no entry.
  std::map<std::string, std::string> external_sources;
  // The tensors a run passes to the entry, by parameter name: they specialise an entry whose
  // parameters name `pl.dynamic` dimensions.
  std::optional<std::map<std::string, TensorSpec>> entry_specs;
  // Module-level `@pl.function` functions the class calls by their bare name (`k(x, out)`), each
  // from its own file: they join the program as if they were methods.
  std::vector<ModuleFunction> module_functions;
};

// A program whose entry's parameters name `pl.dynamic` dimensions: it is compiled once per set of
// shapes it runs with (ProgramRequest::entry_specs).
struct DynamicEntry {
  std::string function;
  std::vector<std::string> params;  // every parameter, in order
  std::vector<std::string> dims;    // the dynamic dimensions they name
};

// The program, or (without entry_specs) the dynamic entry that keeps it from being known yet.
struct ParsedProgram {
  ir::ProgramPtr program;
  std::optional<DynamicEntry> dynamic_entry;
};

// Parses a `@pl.program` class into a program named after the class: one function per
// `@pl.function(type=pl.FunctionType.X[, attrs={...}])` method, in order. Types come from the
// annotations (parameters, return types, and assignments, whose annotation may carry the tile's
// pl.MemRef); `self.f(args[, attrs={"arg_directions": [...]}])` calls function `f` of the class. The
// entry is the first Opaque or Orchestration function no other function calls (else the first
// function nobody calls, else the first). Requires a running Python interpreter.
//
// A method whose parameters name `pl.dynamic` dimensions is generic: each call specialises it on the
// shapes of the tensors passed (each dimension takes its own tensor's extent; the name reads as that
// extent where the parameters agree), the first specialisation keeping its name, later ones suffixed
// `_1`, `_2`, ... A generic entry is specialised on `entry_specs`; without them ParseProgramClass
// says which entry and dimensions wait for a run, and ParseProgram fails.
ir::Result<ParsedProgram> ParseProgramClass(const ProgramRequest& request);
ir::Result<ir::ProgramPtr> ParseProgram(const ProgramRequest& request);

}  // namespace pypto::frontend
