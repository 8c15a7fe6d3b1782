/* The SoC a platform models, as C sees it: what the passes lower for (core counts, buffer capacities).
 * A backend plugin describes each platform's SoC with one (pypto-c/backend_plugin.h), the runtime's
 * registry hands it out by platform name (pypto_rt_platform_soc), and the passes take it
 * (pypto_passes_lower), so that no library but the registry needs to know a platform's name. */
#ifndef PYPTO_C_SOC_H
#define PYPTO_C_SOC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Either `table` names one of libs/ir's SoC tables ("Ascend910B", "Ascend950"; the other fields are
 * then ignored), or `table` is NULL and the fields say it all. */
typedef struct pypto_soc_desc {
  const char* table;
  const char* name;     /* "MyChip" */
  const char* arch;     /* the kernels' target-arch string, e.g. "a2a3" */
  uint32_t aic_cores;   /* cube cores */
  uint32_t aiv_cores;   /* vector cores */
  uint64_t ub_bytes;    /* Vec, usable bytes */
  uint64_t l1_bytes;    /* Mat */
  uint64_t l0a_bytes;   /* Left */
  uint64_t l0b_bytes;   /* Right */
  uint64_t l0c_bytes;   /* Acc */
  uint64_t bias_bytes;  /* Bias */
  uint64_t alignment;   /* allocation alignment in UB, bytes */
} pypto_soc_desc;

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_SOC_H */
