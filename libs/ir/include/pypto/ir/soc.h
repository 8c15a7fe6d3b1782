// Hardware description of the supported SoCs: core counts and on-chip buffer capacities.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pypto-c/soc.h"
#include "pypto/ir/type.h"
#include "pypto/support/expected.h"

namespace pypto::ir {

struct SocSpec {
  std::string name;       // "Ascend910B"
  std::string arch;       // "a2a3": the target-arch string of kernels
  int aic_cores = 0;      // cube cores
  int aiv_cores = 0;      // vector cores
  int64_t ub_bytes = 0;   // Vec, usable bytes
  int64_t l1_bytes = 0;   // Mat
  int64_t l0a_bytes = 0;  // Left
  int64_t l0b_bytes = 0;  // Right
  int64_t l0c_bytes = 0;  // Acc
  int64_t bias_bytes = 0;
  int64_t scale_bytes = 0;  // LeftScale and RightScale, each (MX block scales; none before A5)
  int64_t alignment = 0;  // allocation alignment in UB, bytes
  // The top of the physical UB (above ub_bytes) that generated kernels leave alone, as upstream's
  // allocator does; a hand-written kernel may use it (AscendC's TPipe hands out all 192 KiB on A2/A3).
  int64_t ub_reserved_bytes = 0;

  // Capacity of one on-chip buffer; 0 for DDR (unbounded here).
  int64_t capacity(MemorySpace space) const;
};

// The hardware buffer behind a memory space, as Ascend documentation names it: Vec is "UB", Mat "L1",
// Left/Right "L0A"/"L0B", Acc "L0C", Bias "BT"; DDR is "GM".
std::string_view HardwareBufferName(MemorySpace space);

const SocSpec& Ascend910B();
const SocSpec& Ascend950();

// The table of that name ("Ascend910B", "Ascend950"), else null: what a backend plugin's platform
// description names for its SoC.
const SocSpec* SocNamed(std::string_view name);

// The table whose kernels' target arch is `arch` ("a2a3" -> Ascend910B, "a5" -> Ascend950), else null.
const SocSpec* SocForArch(std::string_view arch);

// The SoC a C description names (a table) or spells out, or what is wrong with it ("names SoC table
// 'X', which is not one of ..."). Platform names are the backend registry's business, not ir's.
pypto::expected<SocSpec, std::string> SocFromDesc(const pypto_soc_desc& desc);

}  // namespace pypto::ir
