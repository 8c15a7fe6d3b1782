// The files a kernel is compiled from: its entry source and everything it #includes, found the way
// the compiler would find them, so a cache key can cover them all.
#pragma once

#include <filesystem>
#include <vector>

namespace pypto::backend_extern {

// The entry first, then each included file in depth-first order of appearance, each once.
// `#include "x"` is looked up next to the including file, then in `include_dirs` in order;
// `#include <x>` only in `include_dirs`. Includes found nowhere (system or runtime headers that
// live outside the given directories) are skipped. A missing or unreadable entry yields an empty list.
std::vector<std::filesystem::path> CollectIncludeClosure(const std::filesystem::path& entry,
                                                         const std::vector<std::filesystem::path>& include_dirs);

}  // namespace pypto::backend_extern
