// MLIR source locations taken from IR spans.
#pragma once

#include <string>

#include "pypto/ir/span.h"

namespace pypto::backend_ptoas {

// ` loc("file.py":line:col)`, or "" when the span is unknown: a made-up location would send the
// user to the wrong line, while no location makes ptoas fall back to the .pto line.
std::string LocSuffix(const ir::Span& span);

// The span to report for an op: the call's own when it lies on the statement's line (it has the
// exact column), otherwise the statement's, because passes that rebuild a call often stamp it
// with a coarser span (the function's) while keeping the statement's.
const ir::Span& OpSpan(const ir::Span& stmt, const ir::Span& call);

}  // namespace pypto::backend_ptoas
