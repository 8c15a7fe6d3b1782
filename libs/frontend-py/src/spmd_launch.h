// How a kernel call in an orchestration is launched, written around or on the call: `with
// pl.spmd(core_num=N[, sync_start=True]):` launches it as N blocks, `deps=[...]` / `as tid` (on a
// pl.spmd scope or a pl.submit) order it explicitly. The IR keeps no scope for either: the launch is
// the call's core_num expression, its "sync_start" keyword and its LaunchOrder, which the printer
// writes back and orchestration codegen turns into the submit.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/stmt.h"

namespace pypto::frontend {

struct SpmdLaunchSpec {
  ir::ExprPtr core_num;  // an integer orchestration scalar expression
  bool sync_start = false;
};

// The block count of a pl.spmd launch, `count` as parsed from `core_num`: an integer orchestration
// scalar expression (literals, scalars, casts and arithmetic), evaluated each time the launch is
// submitted, where 0 blocks launch nothing. A constant one (a literal, or what `n - shift` folds to
// when both are known) must not be negative.
ir::Result<ir::ExprPtr> CheckBlockCount(const ir::ExprPtr& count, const ir::Span& span);

// `body` is the parsed body of the `with`: it must be exactly one statement, an assignment or an
// expression statement whose value is a call to a kernel of the program. Returns that statement with
// the call launched as `spec` says, in `order`.
ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, ir::LaunchOrder order,
                                       const ir::Span& span);

// `stmt` (one kernel call, assigned or not) with the call launched in `order` (pl.submit).
// `dumped`: the positions of the arguments `dumps=` marks for the args dump (ir/submit_dumps.h).
ir::Result<ir::StmtPtr> LaunchInOrder(const ir::StmtPtr& stmt, ir::LaunchOrder order, const ir::Span& span,
                                      const std::vector<size_t>& dumped = {});

}  // namespace pypto::frontend
