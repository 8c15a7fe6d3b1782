#include "comm_spelling.h"

#include <map>
#include <string_view>

namespace pypto::frontend {

std::optional<std::string> CommOpSpelling(const std::string& dsl_name) {
  static const std::map<std::string, std::string, std::less<>> kSpellings = {
      {"pld.rank", "rank"},
      {"pld.system.rank", "rank"},
      {"pld.nranks", "nranks"},
      {"pld.system.nranks", "nranks"},
      {"pld.system.notify", "notify"},
      {"pld.notify", "notify"},
      {"pld.system.wait", "wait"},
      {"pld.wait", "wait"},
      {"pld.tensor.barrier", "barrier"},
      {"pld.barrier", "barrier"},
      {"pld.tile.remote_load", "remote_load"},
      {"pld.remote_load", "remote_load"},
      {"pld.tile.remote_store", "remote_store"},
      {"pld.tensor.remote_store", "remote_store"},  // in a kernel its value is on-core: the tile form
      {"pld.remote_store", "remote_store"},
  };
  auto it = kSpellings.find(dsl_name);
  if (it == kSpellings.end()) return std::nullopt;
  return "pl.comm." + it->second;
}

bool IsGetCommCtx(const std::string& dsl_name) {
  return dsl_name == "pld.get_comm_ctx" || dsl_name == "pld.system.get_comm_ctx";
}

std::optional<bool> IsPutOrGet(const std::string& dsl_name) {
  if (dsl_name == "pld.tensor.put" || dsl_name == "pld.put") return true;
  if (dsl_name == "pld.tensor.get" || dsl_name == "pld.get") return false;
  return std::nullopt;
}

std::optional<std::string> CommEnumMember(const std::string& dotted) {
  for (std::string_view prefix : {"pld.NotifyOp.", "pld.WaitCmp."})
    if (dotted.starts_with(prefix)) return dotted.substr(prefix.size());
  return std::nullopt;
}

}  // namespace pypto::frontend
