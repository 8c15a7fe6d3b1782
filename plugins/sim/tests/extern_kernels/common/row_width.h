// Shared by the block-fill test kernel through a relative include, as multi-file kernels do.
#pragma once

#include <cstdint>

static constexpr int32_t kRowWidth = 8;
