// CANN 9's advanced-API header of BroadCast<T, dim, axis> (ascendc/broadcast.h).
#ifndef PYPTO_SIM_ADV_API_PAD_BROADCAST_H_
#define PYPTO_SIM_ADV_API_PAD_BROADCAST_H_

#include "ascendc/broadcast.h"

#endif  // PYPTO_SIM_ADV_API_PAD_BROADCAST_H_
