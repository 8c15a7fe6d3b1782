// How a tile operation reports a kernel error on the simulator: it throws, and the simulator fails the
// run with "hand-written kernel 'K' (task T, aiv core C): FILE:LINE: OP: what is wrong", naming the
// kernel's own source line (each operation takes its caller's location as a defaulted argument).
#ifndef PYPTO_SIM_PTO_CHECK_H_
#define PYPTO_SIM_PTO_CHECK_H_

#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace pto::sim {

struct Where {
  const char* file;
  int line;
  static Where Here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) { return {file, line}; }
};

[[noreturn]] __attribute__((format(printf, 3, 4))) inline void Fail(const Where& where, const char* op,
                                                                       const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  throw std::runtime_error(std::string(where.file) + ":" + std::to_string(where.line) + ": " + op + ": " + text);
}

}  // namespace pto::sim

#endif  // PYPTO_SIM_PTO_CHECK_H_
