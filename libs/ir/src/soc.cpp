#include "pypto/ir/soc.h"

#include <fmt/format.h>

namespace pypto::ir {

int64_t SocSpec::capacity(MemorySpace space) const {
  switch (space) {
    case MemorySpace::Vec: return ub_bytes;
    case MemorySpace::Mat: return l1_bytes;
    case MemorySpace::Left: return l0a_bytes;
    case MemorySpace::Right: return l0b_bytes;
    case MemorySpace::Acc: return l0c_bytes;
    case MemorySpace::Bias: return bias_bytes;
    case MemorySpace::LeftScale:
    case MemorySpace::RightScale: return scale_bytes;
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
    case MemorySpace::LeftScale: return "L0A scale buffer";
    case MemorySpace::RightScale: return "L0B scale buffer";
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
                            .scale_bytes = 4 * 1024,
                            .alignment = 128,
                            .ub_reserved_bytes = 8 * 1024};
  return spec;
}

const SocSpec* SocNamed(std::string_view name) {
  for (const SocSpec* spec : {&Ascend910B(), &Ascend950()})
    if (spec->name == name) return spec;
  return nullptr;
}

const SocSpec* SocForArch(std::string_view arch) {
  for (const SocSpec* spec : {&Ascend910B(), &Ascend950()})
    if (spec->arch == arch) return spec;
  return nullptr;
}

pypto::expected<SocSpec, std::string> SocFromDesc(const pypto_soc_desc& desc) {
  using Error = pypto::unexpected<std::string>;
  if (desc.table) {
    if (const SocSpec* spec = SocNamed(desc.table)) return *spec;
    return Error(fmt::format("names SoC table '{}', which is not one of libs/ir's (Ascend910B, Ascend950)", desc.table));
  }
  if (!desc.name || !*desc.name || !desc.arch || !*desc.arch)
    return Error("describes its SoC without a table, so it must give the SoC's name and arch");
  if (desc.aic_cores == 0 && desc.aiv_cores == 0) return Error(fmt::format("gives SoC '{}' no cores", desc.name));
  return SocSpec{.name = desc.name,
                 .arch = desc.arch,
                 .aic_cores = static_cast<int>(desc.aic_cores),
                 .aiv_cores = static_cast<int>(desc.aiv_cores),
                 .ub_bytes = static_cast<int64_t>(desc.ub_bytes),
                 .l1_bytes = static_cast<int64_t>(desc.l1_bytes),
                 .l0a_bytes = static_cast<int64_t>(desc.l0a_bytes),
                 .l0b_bytes = static_cast<int64_t>(desc.l0b_bytes),
                 .l0c_bytes = static_cast<int64_t>(desc.l0c_bytes),
                 .bias_bytes = static_cast<int64_t>(desc.bias_bytes),
                 .alignment = static_cast<int64_t>(desc.alignment)};
}

}  // namespace pypto::ir
