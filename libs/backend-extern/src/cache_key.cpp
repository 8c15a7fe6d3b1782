#include "pypto/backend_extern/cache_key.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <array>
#include <memory>

#include "file_text.h"
#include "pypto/backend_extern/include_closure.h"

namespace pypto::backend_extern {
namespace fs = std::filesystem;
namespace {

// A streaming XXH3-128 whose input is a sequence of records. Each record is its label, a NUL, the
// payload length as 8 little-endian bytes and the payload, so no two record sequences can produce
// the same byte stream (a name cannot run into the content that follows it).
class RecordHasher {
 public:
  RecordHasher() : state_(XXH3_createState(), &XXH3_freeState) { XXH3_128bits_reset(state_.get()); }

  void Record(std::string_view label, std::string_view payload) {
    Update(label);
    Update(std::string_view("\0", 1));
    std::array<char, 8> length{};
    uint64_t size = payload.size();
    for (auto& byte : length) {
      byte = static_cast<char>(size & 0xff);
      size >>= 8;
    }
    Update(std::string_view(length.data(), length.size()));
    Update(payload);
  }

  std::string Hex() const {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_.get()));
    std::string hex;
    for (unsigned char byte : canonical.digest) hex += fmt::format("{:02x}", byte);
    return hex;
  }

 private:
  void Update(std::string_view bytes) { XXH3_128bits_update(state_.get(), bytes.data(), bytes.size()); }

  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state_;
};

// "inc/" and "inc" name the same directory; both hash as "inc".
std::string DirBaseName(const fs::path& dir) {
  fs::path normal = dir.lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  return normal.filename().string();
}

}  // namespace

pypto::expected<std::string, std::string> CacheKey(const fs::path& entry, const std::vector<fs::path>& include_dirs,
                                                   const KeyMetadata& metadata) {
  auto closure = CollectIncludeClosure(entry, include_dirs);
  if (closure.empty()) {
    return pypto::unexpected(fmt::format("cannot read external kernel source '{}'", entry.string()));
  }
  RecordHasher hasher;
  for (const auto& [key, value] : metadata) {
    hasher.Record("metadata-key", key);
    hasher.Record("metadata-value", value);
  }
  // The search order decides which header wins, so it is part of the key; base names keep it
  // independent of where the tree lives.
  hasher.Record("include-dir-count", std::to_string(include_dirs.size()));
  for (const auto& dir : include_dirs) hasher.Record("include-dir", DirBaseName(dir));
  for (const auto& file : closure) {
    auto bytes = ReadFileBytes(file);
    if (!bytes) return pypto::unexpected(fmt::format("cannot read '{}' while hashing", file.string()));
    hasher.Record("file-name", file.filename().string());
    hasher.Record("file-content", *bytes);
  }
  return hasher.Hex();
}

}  // namespace pypto::backend_extern
