// The runtime's debugging options for a build directory's runs.
#pragma once

#include <filesystem>
#include <string>

#include "pypto/driver/pipeline.h"
#include "pypto/runtime/dfx_options.h"

namespace pypto::driver {

// The outputs go into <build dir>/dfx_outputs.
inline rt::DfxOptions DfxFor(const std::string& output_dir, const DfxSwitches& dfx) {
  return {.dump_args = dfx.dump_args,
          .chip_swimlane = dfx.chip_swimlane,
          .dep_gen = dfx.dep_gen,
          .output_dir = (std::filesystem::path(output_dir) / "dfx_outputs").string()};
}

}  // namespace pypto::driver
