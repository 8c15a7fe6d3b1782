#include "pypto/ir/stmt.h"

namespace pypto::ir {

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::Sequential: return "range";
    case ForKind::Parallel: return "parallel";
    case ForKind::Unroll: return "unroll";
    case ForKind::Pipeline: return "pipeline";
  }
  return "range";
}

}  // namespace pypto::ir
