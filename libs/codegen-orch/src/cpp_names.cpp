// CppNames::Take: sanitising a name hint into a unique C++ identifier clear of generated names.
#include "cpp_names.h"

#include <fmt/format.h>

#include <cctype>

namespace pypto::codegen_orch::detail {

std::string CppNames::Take(std::string_view hint) {
  static const std::set<std::string_view> kReserved = {
      "alignas", "auto",     "bool",   "break",  "case",     "char",      "class",  "const",    "continue",
      "default", "delete",   "do",     "double", "else",     "enum",      "extern", "false",    "float",
      "for",     "goto",     "if",     "inline", "int",      "long",      "new",    "operator", "private",
      "public",  "return",   "short",  "signed", "sizeof",   "static",    "struct", "switch",   "template",
      "this",    "true",     "typedef", "union", "unsigned", "using",     "void",   "volatile", "while",
      "orch_args", "alloc_tensors", "to_u64", "DataType", "ChipTensor", "CoreTaskArgs", "TensorCreateInfo",
      "TaskOutputTensors"};
  std::string name(hint);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  const bool generated_prefix = name.starts_with("ext_") || name.starts_with("params_t") ||
                                name.starts_with("alloc_") || name.starts_with("__");
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || kReserved.contains(name) ||
      generated_prefix)
    name.insert(0, "t_");
  // The intermediate's TensorCreateInfo and shape array are named after it, so those must be free too.
  auto free = [&](const std::string& candidate) {
    return !taken_.contains(candidate) && !taken_.contains(candidate + "_ci") &&
           !taken_.contains(candidate + "_ci_shapes");
  };
  std::string unique = name;
  for (int n = 1; !free(unique); ++n) unique = fmt::format("{}_{}", name, n);
  taken_.insert({unique, unique + "_ci", unique + "_ci_shapes"});
  return unique;
}

}  // namespace pypto::codegen_orch::detail
