// `with pl.spmd(core_num=N):` around one kernel call in an orchestration: the call is launched as N
// blocks. The IR keeps no scope for it; the launch is the call's "core_num" keyword, which the printer
// writes back as the `with` statement and orchestration codegen turns into an N-block submit.
#pragma once

#include <cstdint>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/stmt.h"

namespace pypto::frontend {

// `body` is the parsed body of the `with`: it must be exactly one statement, an assignment or an
// expression statement whose value is a call to a kernel of the program. Returns that statement with
// the call launched on `core_num` blocks.
ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, int64_t core_num, const ir::Span& span);

}  // namespace pypto::frontend
