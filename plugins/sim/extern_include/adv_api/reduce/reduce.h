// CANN 9's advanced-API header of the shaped reductions ReduceSum/ReduceMax/ReduceMin<T,
// Pattern::Reduce::AR | RA> (ascendc/reduce_pattern.h).
#ifndef PYPTO_SIM_ADV_API_REDUCE_REDUCE_H_
#define PYPTO_SIM_ADV_API_REDUCE_REDUCE_H_

#include "ascendc/reduce_pattern.h"

#endif  // PYPTO_SIM_ADV_API_REDUCE_REDUCE_H_
