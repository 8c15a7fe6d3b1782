// Source locations carried by every IR node, so diagnostics point at the user's code.
#pragma once

#include <string>

namespace pypto::ir {

struct Span {
  std::string file;  // the user's file (never a generated one)
  int line = 0;      // 1-based; 0 means unknown
  int column = 0;    // 1-based characters

  bool known() const { return line > 0; }
  // "file:line:col", the form compilers and editors understand.
  std::string str() const;
};

}  // namespace pypto::ir
