// What the driver writes into a build directory besides the code generators' files.
#pragma once

namespace pypto::driver {

// The lowered program, printed as a `@pl.program` class: what Load parses back, so that a build
// directory runs again without the source (and an edited copy runs as edited).
inline constexpr const char* kLoweredProgramFile = "lowered_program.py";

}  // namespace pypto::driver
