// Finding the #include directives of a source file without running a preprocessor.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pypto::backend_extern {

struct IncludeDirective {
  std::string target;  // the text between the delimiters
  bool quoted = false;  // "x" (searched next to the includer first) rather than <x>
  bool operator==(const IncludeDirective&) const = default;
};

// Every line of the form `#include "x"` or `#include <x>` (spaces allowed around `#`), in order.
// Conditional compilation is not evaluated: a header behind an #if still counts, which can only
// make a cache key more conservative. Macro includes (`#include MACRO`) are not followed.
std::vector<IncludeDirective> ScanIncludeDirectives(std::string_view text);

}  // namespace pypto::backend_extern
