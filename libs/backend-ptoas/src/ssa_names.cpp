#include "ssa_names.h"

#include <fmt/format.h>

#include <cctype>

namespace pypto::backend_ptoas {
namespace {

std::string Sanitize(std::string_view hint) {
  std::string name(hint);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$' && c != '.') c = '_';
  }
  // MLIR suffix ids that start with a digit are numbered values; keep hints out of that space.
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) name.insert(0, 1, '_');
  return name;
}

}  // namespace

std::string SsaNames::Named(std::string_view hint) {
  std::string name = Sanitize(hint);
  if (name.empty() || !taken_.insert(name).second) return Temp();
  return "%" + name;
}

std::string SsaNames::Temp() {
  std::string name;
  do {
    name = std::to_string(next_temp_++);
  } while (!taken_.insert(name).second);
  return "%" + name;
}

void SsaNames::Reserve(std::string name) { taken_.insert(std::move(name)); }

std::string SsaNames::Constant(int64_t value, std::string_view type) {
  auto key = std::make_pair(value, std::string(type));
  if (auto it = constants_.find(key); it != constants_.end()) return it->second;
  // Negative values get an "n" so the name stays a valid identifier.
  std::string hint = value < 0 ? fmt::format("cn{}_{}", -static_cast<uint64_t>(value), type)
                               : fmt::format("c{}_{}", value, type);
  std::string name = Named(hint);
  constants_.emplace(std::move(key), name);
  if (type.starts_with("ui")) {
    std::string signless = fmt::format("i{}", type.substr(2));
    std::string raw = Temp();
    constant_decls_.push_back(fmt::format("{} = arith.constant {} : {}", raw, value, signless));
    constant_decls_.push_back(
        fmt::format("{} = builtin.unrealized_conversion_cast {} : {} to {}", name, raw, signless, type));
  } else {
    constant_decls_.push_back(fmt::format("{} = arith.constant {} : {}", name, value, type));
  }
  return name;
}

std::string SsaNames::FloatConstant(const std::string& literal, std::string_view type) {
  auto key = std::make_pair(literal, std::string(type));
  if (auto it = float_constants_.find(key); it != float_constants_.end()) return it->second;
  std::string hint = float_constants_.empty() ? "cst" : fmt::format("cst_{}", float_constants_.size());
  std::string name = Named(hint);
  float_constants_.emplace(std::move(key), name);
  constant_decls_.push_back(fmt::format("{} = arith.constant {} : {}", name, literal, type));
  return name;
}

}  // namespace pypto::backend_ptoas
