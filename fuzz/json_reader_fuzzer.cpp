// Fuzzes the JSON form of programs (ir::ProgramFromJson, behind pypto_ir_program_from_json and
// `pypto-opt IN.json`): any bytes must give a program or a diagnostic naming the JSON path, never a
// crash, an escaped exception or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pypto/ir/json.h"
#include "pypto/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = pypto::ir::ProgramFromJson(text);
  if (!program) return 0;
  // What was accepted is a program every consumer may walk: print it and write it back.
  (void)pypto::ir::PrintProgram(**program);
  (void)pypto::ir::ProgramToJson(**program);
  return 0;
}
