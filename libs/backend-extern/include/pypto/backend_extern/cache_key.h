// A content key for a compiled external kernel: equal keys mean the compiler would see the same input.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::backend_extern {

using KeyMetadata = std::vector<std::pair<std::string, std::string>>;

// 32 lowercase hex digits of XXH3-128 over labelled, length-prefixed records: each metadata item,
// the include directories (by base name, in order), then for each file of the include closure its
// base name and its bytes. No absolute path goes in, so moving a checkout keeps the key, while
// editing any file of the closure changes it. Fails when the entry cannot be read.
pypto::expected<std::string, std::string> CacheKey(const std::filesystem::path& entry,
                                                   const std::vector<std::filesystem::path>& include_dirs,
                                                   const KeyMetadata& metadata = {});

}  // namespace pypto::backend_extern
