// Where the device toolchain is on this machine: the PTO assembler, Ascend's kernel compiler and the
// headers device kernels compile against. Each is found through a documented variable or PATH; a
// lookup that fails says where it looked and how to point at the tool.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pypto::ascend {

struct ToolLookup {
  std::string what;                              // "ptoas", "ccec", ...
  std::optional<std::filesystem::path> path;     // the executable or directory, when found
  std::vector<std::filesystem::path> include_dirs;  // for header sets: the -I directories, in order
  std::string hint;                              // where it was looked for and how to point at it

  bool found() const { return path.has_value(); }
};

struct DeviceTools {
  ToolLookup ptoas;            // $PTOAS, $PTOAS_ROOT/ptoas, $PTOAS_ROOT/bin/ptoas, PATH
  ToolLookup ccec;             // $ASCEND_HOME_PATH/bin/ccec, PATH
  ToolLookup pto_isa;          // $PTO_ISA_ROOT/include (pto/pto-inst.hpp)
  ToolLookup runtime_headers;  // $SIMPLER_ROOT: tensor.h and intrinsic.h, as the runtime builds kernels
};

// Looks everything up now, from the environment; `arch` ("a2a3" or "a5") picks the runtime's headers.
DeviceTools FindDeviceTools(std::string_view arch);

}  // namespace pypto::ascend
