// The SSA value names of one func.func, and its de-duplicated constants.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pypto::backend_ptoas {

class SsaNames {
 public:
  // "%<hint>" with anything outside [A-Za-z0-9_$.] replaced by '_', or a numbered temporary when
  // that name is taken. Readable names make the .pto and ptoas's diagnostics easy to follow.
  std::string Named(std::string_view hint);
  // "%0", "%1", ... skipping names already taken.
  std::string Temp();
  // Claims a name (without '%') so nothing else gets it.
  void Reserve(std::string name);

  // The name of `value : type` ("%c32_index", "%cn1_i64"); each (value, type) is declared once.
  // arith.constant takes signless integers only, so an unsigned one ("ui8") is declared signless
  // and cast, as upstream does.
  std::string Constant(int64_t value, std::string_view type);
  // The name of a floating-point constant ("%cst", "%cst_1", ...), given its MLIR literal.
  std::string FloatConstant(const std::string& literal, std::string_view type);
  // `%c32_index = arith.constant 32 : index`, in first-use order.
  const std::vector<std::string>& constant_decls() const { return constant_decls_; }

 private:
  std::set<std::string, std::less<>> taken_;
  uint64_t next_temp_ = 0;
  std::map<std::pair<int64_t, std::string>, std::string> constants_;
  std::map<std::pair<std::string, std::string>, std::string> float_constants_;
  std::vector<std::string> constant_decls_;
};

}  // namespace pypto::backend_ptoas
