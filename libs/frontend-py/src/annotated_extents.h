// The integers a tensor annotation writes per axis (type_resolver.cpp), for the inline calls that
// compile a helper's body with them (parse_inline_calls.cpp). Its own header so that the parser's
// files that include type_resolver.h need not be rebuilt for it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "type_resolver.h"

namespace pypto::frontend {

// For each axis of a `pl.Tensor[[...], dtype]` annotation (under pl.Out / pl.InOut or not), the integer
// written there (a literal, a constant or arithmetic of them), or nullopt (a `pl.dynamic` dimension);
// empty for any other annotation.
std::vector<std::optional<int64_t>> AnnotatedExtents(py::handle annotation, const SourceMap& map,
                                                     const Constants* constants);

}  // namespace pypto::frontend
