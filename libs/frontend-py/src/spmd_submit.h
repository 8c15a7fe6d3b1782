// `pl.spmd_submit(kernel, *args, core_num=N, sync_start=, deps=[...], predicate=(t[i] > 0))`: a
// kernel launch on N blocks written as one call, rewritten before parsing into the forms the parser
// already knows:
//
//   outs, tid = pl.spmd_submit(k, x, core_num=N, deps=d)
//     ->  with pl.spmd(core_num=N, deps=d) as tid:
//             outs = k(x)
//
// A dispatch predicate (upstream requires one comparison of a tensor element with an integer) makes
// the launch conditional; the TaskId still completes when it is skipped (as upstream's retired task
// settles its consumers), so it is a dependency-only task then:
//
//   p = pl.tensor.read(t, [i]);  if p > 0: <the launch>  else: tid = pl.system.task_dummy(deps=d)
#pragma once

#include <string>
#include <vector>

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

// Whether a pl.spmd(...) call has a dispatch predicate.
bool HasPredicate(py::handle spmd_call);

// `with pl.spmd(..., predicate=(t[i] > 0)) as tid: body` as the read and the if it stands for;
// `predicate_name` names the element read.
ir::Result<py::list> RewritePredicatedSpmd(py::handle with_stmt, const std::string& predicate_name,
                                           const SourceMap& map);

// The statements `stmt` (an assignment to `targets`, the last of them the TaskId, or a bare
// expression) stands for, with `call` the pl.spmd_submit call; `predicate_name` names the element a
// predicate reads. Positions are those of `stmt`.
ir::Result<py::list> RewriteSpmdSubmit(py::handle stmt, py::handle call, const std::vector<py::handle>& targets,
                                       const std::string& predicate_name, const SourceMap& map);

}  // namespace pypto::frontend
