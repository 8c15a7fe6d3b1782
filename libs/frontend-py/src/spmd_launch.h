// `with pl.spmd(core_num=N):` around one kernel call in an orchestration: the call is launched as N
// blocks. The IR keeps no scope for it; the launch is the call's "core_num" keyword (and "sync_start"
// for `pl.spmd(N, sync_start=True)`), which the printer writes back as the `with` statement and
// orchestration codegen turns into an N-block submit.
#pragma once

#include <cstdint>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/stmt.h"

namespace pypto::frontend {

struct SpmdLaunchSpec {
  int64_t core_num = 1;
  bool sync_start = false;
};

// `body` is the parsed body of the `with`: it must be exactly one statement, an assignment or an
// expression statement whose value is a call to a kernel of the program. Returns that statement with
// the call launched as `spec` says.
ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, const ir::Span& span);

}  // namespace pypto::frontend
