// img2col (LoadData3DParamsV2) with a 3 x 3 filter, which the simulator does not model: the run fails
// at the LoadData (cube_load3d_body.h).
#include <cstdint>
constexpr uint8_t kFilter = 3;
#include "cube_load3d_body.h"
