// Fuzzes the printed-program parser (frontend::ParseProgram: what `pypto-opt IN.py` and
// pypto_frontend_parse_program read): any text must give a program or a located diagnostic. An
// exception other than the parser's own diagnostics escaping is a finding, so the C++ API is called
// rather than the C ABI, whose guard would turn it into an unlocated "internal error".
#include <cstddef>
#include <cstdint>
#include <string>

#include "embedded_python.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pypto::fuzz::StartInterpreter();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pypto::frontend::ProgramRequest request{.source = std::string(reinterpret_cast<const char*>(data), size),
                                          .filename = "fuzz.py"};
  auto program = pypto::frontend::ParseProgram(request);
  if (program) (void)pypto::ir::PrintProgram(**program);
  return 0;
}
