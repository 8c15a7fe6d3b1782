// C++ spellings of element types in kernel source, as pto-isa and the runtime headers name them.
#pragma once

#include <string>

#include "pypto/ir/dtype.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas {

// "float", "half", "bfloat16_t", "int32_t", ...; an error for types kernels cannot take.
pypto::expected<std::string, std::string> CElementType(ir::DataType dtype);

}  // namespace pypto::backend_ptoas
