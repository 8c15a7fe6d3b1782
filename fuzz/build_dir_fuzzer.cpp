// Fuzzes what loading a build directory does with the text on disk (`load_compiled`, through
// `pypto.runtime` harnesses and the disk cache): lowered_program.py is parsed back
// (frontend::ParseProgram) and the task plan regenerated from it (codegen_orch::GenerateOrchestration).
// An edited or damaged directory must give a located error, not a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "embedded_python.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/frontend/parser.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pypto::fuzz::StartInterpreter();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pypto::frontend::ProgramRequest request{.source = std::string(reinterpret_cast<const char*>(data), size),
                                          .filename = "build/lowered_program.py"};
  auto program = pypto::frontend::ParseProgram(request);
  if (!program) return 0;
  (void)pypto::codegen_orch::GenerateOrchestration(**program);
  return 0;
}
