// CANN 9's header of AscendC::Std's algorithms, Std::min and Std::max (ascendc/scalar_utils.h).
#ifndef PYPTO_SIM_UTILS_STD_ALGORITHM_H_
#define PYPTO_SIM_UTILS_STD_ALGORITHM_H_

#include "ascendc/scalar_utils.h"

#endif  // PYPTO_SIM_UTILS_STD_ALGORITHM_H_
