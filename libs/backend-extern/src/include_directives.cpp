#include "include_directives.h"

#include <cctype>

namespace pypto::backend_extern {
namespace {

void SkipBlanks(std::string_view line, size_t& pos) {
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
}

// Parses one line; returns false for anything that is not a well-formed include.
bool ParseIncludeLine(std::string_view line, IncludeDirective& out) {
  size_t pos = 0;
  SkipBlanks(line, pos);
  if (pos >= line.size() || line[pos] != '#') return false;
  ++pos;
  SkipBlanks(line, pos);
  constexpr std::string_view kKeyword = "include";
  if (line.substr(pos, kKeyword.size()) != kKeyword) return false;
  pos += kKeyword.size();
  SkipBlanks(line, pos);
  if (pos >= line.size() || (line[pos] != '"' && line[pos] != '<')) return false;
  const char close = line[pos] == '"' ? '"' : '>';
  const size_t start = pos + 1;
  const size_t end = line.find(close, start);
  if (end == std::string_view::npos || end == start) return false;
  out.target = std::string(line.substr(start, end - start));
  out.quoted = close == '"';
  return true;
}

}  // namespace

std::vector<IncludeDirective> ScanIncludeDirectives(std::string_view text) {
  std::vector<IncludeDirective> directives;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    IncludeDirective directive;
    if (ParseIncludeLine(text.substr(begin, end - begin), directive)) directives.push_back(std::move(directive));
    begin = end + 1;
  }
  return directives;
}

}  // namespace pypto::backend_extern
