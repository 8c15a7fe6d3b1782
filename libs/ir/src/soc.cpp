#include "pypto/ir/soc.h"

namespace pypto::ir {

int64_t SocSpec::capacity(MemorySpace space) const {
  switch (space) {
    case MemorySpace::Vec: return ub_bytes;
    case MemorySpace::Mat: return l1_bytes;
    case MemorySpace::Left: return l0a_bytes;
    case MemorySpace::Right: return l0b_bytes;
    case MemorySpace::Acc: return l0c_bytes;
    case MemorySpace::Bias: return bias_bytes;
    case MemorySpace::DDR:
    case MemorySpace::ScalarLocal: return 0;
  }
  return 0;
}

std::string_view HardwareBufferName(MemorySpace space) {
  switch (space) {
    case MemorySpace::DDR: return "GM";
    case MemorySpace::Vec: return "UB";
    case MemorySpace::Mat: return "L1";
    case MemorySpace::Left: return "L0A";
    case MemorySpace::Right: return "L0B";
    case MemorySpace::Acc: return "L0C";
    case MemorySpace::Bias: return "BT";
    case MemorySpace::ScalarLocal: return "scalar buffer";
  }
  return "?";
}

// Usable UB is below the physical size: the top 8 KB is avoided on both SoCs, as upstream does.
const SocSpec& Ascend910B() {
  static const SocSpec spec{.name = "Ascend910B",
                            .arch = "a2a3",
                            .aic_cores = 24,
                            .aiv_cores = 48,
                            .ub_bytes = 184 * 1024,
                            .l1_bytes = 512 * 1024,
                            .l0a_bytes = 64 * 1024,
                            .l0b_bytes = 64 * 1024,
                            .l0c_bytes = 128 * 1024,
                            .bias_bytes = 1024,
                            .alignment = 128,
                            .ub_reserved_bytes = 8 * 1024};
  return spec;
}

const SocSpec& Ascend950() {
  static const SocSpec spec{.name = "Ascend950",
                            .arch = "a5",
                            .aic_cores = 36,
                            .aiv_cores = 72,
                            .ub_bytes = 240 * 1024,
                            .l1_bytes = 512 * 1024,
                            .l0a_bytes = 64 * 1024,
                            .l0b_bytes = 64 * 1024,
                            .l0c_bytes = 256 * 1024,
                            .bias_bytes = 4 * 1024,
                            .alignment = 128,
                            .ub_reserved_bytes = 8 * 1024};
  return spec;
}

const SocSpec* SocNamed(std::string_view name) {
  for (const SocSpec* spec : {&Ascend910B(), &Ascend950()})
    if (spec->name == name) return spec;
  return nullptr;
}

const SocSpec* SocForPlatform(std::string_view platform) {
  if (platform == "a2a3" || platform == "a2a3sim") return &Ascend910B();
  if (platform == "a5" || platform == "a5sim") return &Ascend950();
  return nullptr;
}

}  // namespace pypto::ir
