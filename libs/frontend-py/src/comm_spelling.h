// The DSL spellings of the communication ops of distributed chip kernels (`import
// pypto.language.distributed as pld`): upstream reaches each op through several modules
// (`pld.rank`, `pld.system.rank`), all of which name one `comm.*` op of the IR.
#pragma once

#include <optional>
#include <string>

namespace pypto::frontend {

// `pld.system.notify` -> `pl.comm.notify` (the printed spelling, which ResolveOp maps to the IR's
// `comm.notify`); nullopt for a name that is no pld comm op.
std::optional<std::string> CommOpSpelling(const std::string& dsl_name);

// `pld.get_comm_ctx(window)` / `pld.system.get_comm_ctx(window)`: the context is the window itself.
bool IsGetCommCtx(const std::string& dsl_name);

// `pld.tensor.put` / `pld.put`: true; `pld.tensor.get` / `pld.get`: false; nullopt otherwise.
std::optional<bool> IsPutOrGet(const std::string& dsl_name);

// `pld.NotifyOp.AtomicAdd` / `pld.WaitCmp.Ge`: the member's name, the string attribute of the op;
// nullopt for any other name.
std::optional<std::string> CommEnumMember(const std::string& dotted);

}  // namespace pypto::frontend
