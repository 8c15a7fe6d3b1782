// How a kernel call in an orchestration is launched, written around or on the call: `with
// pl.spmd(core_num=N[, sync_start=True]):` launches it as N blocks, `deps=[...]` / `as tid` (on a
// pl.spmd scope or a pl.submit) order it explicitly. The IR keeps no scope for either: the launch is
// the call's "core_num" (and "sync_start") keywords and its LaunchOrder, which the printer writes
// back and orchestration codegen turns into the submit.
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
// the call launched as `spec` says, in `order`.
ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, ir::LaunchOrder order,
                                       const ir::Span& span);

// `stmt` (one kernel call, assigned or not) with the call launched in `order` (pl.submit).
ir::Result<ir::StmtPtr> LaunchInOrder(const ir::StmtPtr& stmt, ir::LaunchOrder order, const ir::Span& span);

}  // namespace pypto::frontend
