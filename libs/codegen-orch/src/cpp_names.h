// CppNames: the C++ identifiers the orchestration emitter gives intermediates, loop variables and
// scalars, kept apart from the emitter since it is a self-contained naming scheme.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace pypto::codegen_orch::detail {

// C++ names for intermediates: identifiers, unique, and clear of the names the emitter generates.
class CppNames {
 public:
  std::string Take(std::string_view hint);

 private:
  std::set<std::string> taken_;
};

}  // namespace pypto::codegen_orch::detail
