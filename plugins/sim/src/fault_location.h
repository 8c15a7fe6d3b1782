// Where in a hand-written kernel's source a fault happened: the instruction address the signal
// handler saw, mapped to file, line and function through the kernel library's debug information (the
// host build compiles kernels with -g). A crash report that names the line saves the author the
// debugger session a device would have cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pypto::sim {

// The faulting instruction's address in the signal's context, or 0 where this target does not say.
uintptr_t InstructionAddressOf(const void* signal_context);

// "FILE:LINE, in FUNCTION" for an address inside a loaded library built with debug information
// (binutils' addr2line reads it); nullopt when the address, the library or its line table is unknown.
std::optional<std::string> SourceLocationOf(uintptr_t instruction);

}  // namespace pypto::sim
