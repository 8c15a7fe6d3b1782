// The device compiler's keywords and AscendC's spellings of GM addresses, as no-ops on the host.
#ifndef PYPTO_SIM_ASCENDC_KEYWORDS_H_
#define PYPTO_SIM_ASCENDC_KEYWORDS_H_

#include <cstdint>

#include "pto/address_spaces.h"  // __gm__, __ubuf__, __aicore__, __global__

#ifndef __inline__
#define __inline__ inline
#endif
// A function for both the host and the core (CANN's __host_aicore__); here everything is host code.
#ifndef __host_aicore__
#define __host_aicore__
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif

#endif  // PYPTO_SIM_ASCENDC_KEYWORDS_H_
