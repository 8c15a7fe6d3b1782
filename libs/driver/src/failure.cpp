#include "pypto/driver/failure.h"

namespace pypto::driver {

std::string Failure::str() const {
  if (kind == FailureKind::Diagnostic) return diagnostic.str();
  return diagnostic.message;
}

}  // namespace pypto::driver
