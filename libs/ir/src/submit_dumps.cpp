#include "pypto/ir/submit_dumps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <string>

namespace pypto::ir {

std::vector<size_t> DumpedArgs(const Call& call) {
  std::vector<size_t> positions;
  for (const auto& [key, value] : call.kwargs()) {
    const auto* text = key == kDumpsKwarg ? std::get_if<std::string>(&value) : nullptr;
    if (!text) continue;
    for (size_t start = 0; start < text->size();) {
      size_t end = std::min(text->find(',', start), text->size());
      size_t position = 0;
      std::from_chars(text->data() + start, text->data() + end, position);
      positions.push_back(position);
      start = end + 1;
    }
  }
  return positions;
}

Call::Kwargs WithDumpedArgs(Call::Kwargs kwargs, const std::vector<size_t>& positions) {
  if (positions.empty()) return kwargs;
  std::erase_if(kwargs, [](const auto& entry) { return entry.first == kDumpsKwarg; });
  kwargs.emplace_back(kDumpsKwarg, fmt::format("{}", fmt::join(positions, ",")));
  return kwargs;
}

}  // namespace pypto::ir
