// PTO-dialect MLIR for the `ptoas` assembler: one module per lowered kernel.
#pragma once

#include <string>
#include <string_view>

#include "pypto/support/expected.h"

namespace pypto::ir {
class Function;
class Program;
}  // namespace pypto::ir

namespace pypto::backend_ptoas {

struct ModuleOptions {
  // Suffix each operation with loc("file.py":line:col) so ptoas diagnostics name the user's line.
  bool source_locations = true;
  // Print every pto op in MLIR's generic form (`"pto.tload"(%v, %t) : (P, T) -> ()`) instead of
  // the custom syntax ptoas's parsers read. Any MLIR tool parses that form with the PTO dialect
  // unregistered (`mlir-opt --allow-unregistered-dialect`), which checks a module's structure (SSA
  // names defined before use, types, regions) without ptoas; ptoas itself reads the custom form.
  bool generic_form = false;
};

// "a2a3" (Ascend 910B) and "a5" (Ascend 950) are the pto.target_arch values ptoas accepts.
bool IsTargetArch(std::string_view arch);

// The module text for one AIV or AIC kernel whose tiles already have memory addresses. Supported
// today: tensor and scalar parameters, and a body of tile ops (loads into Vec or Mat, stores from
// Vec or Acc, creation, fills, moves between buffers, reshapes, element-wise ops with tiles or
// scalars, casts, row/column reductions and broadcasts, matmul; libs/backend-ptoas/README.md has
// the table) ending in a return, possibly inside pl.range / pl.parallel loops (scf.for). Loop
// bounds and load/store offsets may be integer expressions (+ - * // % min max) of constants,
// enclosing loop variables and signed integer scalar parameters; window shapes stay constant. The
// ops must all run on the kernel's core type (vector for AIV, cube for AIC). Anything else is an
// error naming the construct and its source location; nothing is skipped silently.
pypto::expected<std::string, std::string> EmitModule(const ir::Function& kernel, std::string_view arch,
                                                     const ModuleOptions& options = {});

// Whether a kernel pushes, pops or frees tiles of a cross-core pipe.
bool UsesCrossCorePipes(const ir::Function& kernel);

// The module of a mixed kernel `group` whose AIC and AIV members hand tiles to each other through
// cross-core pipes: both functions, the AIC member's first, since each imports the slot buffer the
// other reserves by its symbol. Each member's pipe setup (pto.reserve_buffer at a base past its
// tiles, pto.import_reserved_buffer, pto.aic/aiv_initialize_pipe) opens its body; on a2a3 each also
// takes the GM slot buffer as its last argument (`!pto.ptr<f32>`). libs/backend-ptoas/README.md,
// "Cross-core pipes", has the details.
pypto::expected<std::string, std::string> EmitGroupModule(std::string_view group, const ir::Function& aic,
                                                          const ir::Function& aiv, std::string_view arch,
                                                          const ModuleOptions& options = {});

// The module written for `kernel` of the lowered `program`: its group's (EmitGroupModule) when it is a
// member of a Group whose members use cross-core pipes, else its own (EmitModule).
pypto::expected<std::string, std::string> EmitKernelModule(const ir::Program& program, const ir::Function& kernel,
                                                           std::string_view arch, const ModuleOptions& options = {});

}  // namespace pypto::backend_ptoas
