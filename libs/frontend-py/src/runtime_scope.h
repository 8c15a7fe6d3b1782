// Runtime scopes in orchestration code: `with pl.manual_scope():`, `with pl.scope(mode=pl.ScopeMode.MANUAL):`
// and `with pl.scope():` (AUTO). A manual scope turns off the dependencies the runtime derives from
// tensors for the launches inside it, so they wait only for the TaskIds their deps= name. As upstream
// rules: orchestration code only, and nothing nests in a manual scope.
#pragma once

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

// Whether `context`, the expression of a `with`, opens a runtime scope.
bool IsRuntimeScope(py::handle context);

// Where a runtime scope is being opened.
struct RuntimeScopePlace {
  bool in_kernel = false;        // inside a pl.at / pl.spmd scope, or the body of a kernel function
  bool in_manual_scope = false;  // inside a manual runtime scope
};

// The scope `context` opens: true for a manual one. Refuses arguments other than pl.scope's mode=,
// an `as` target, and the places a runtime scope may not be opened.
ir::Result<bool> ReadRuntimeScope(py::handle context, py::handle target, const RuntimeScopePlace& place,
                                  const SourceMap& map);

}  // namespace pypto::frontend
