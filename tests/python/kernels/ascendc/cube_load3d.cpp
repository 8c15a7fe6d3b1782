// img2col (LoadData3DParamsV2) with a 1 x 1 filter: A into L0A for two matmuls (cube_load3d_body.h).
#include <cstdint>
constexpr uint8_t kFilter = 1;
#include "cube_load3d_body.h"
