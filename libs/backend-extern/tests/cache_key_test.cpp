#include "pypto/backend_extern/cache_key.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include "temp_tree.h"

namespace pypto::backend_extern {
namespace {

using testing::TempTree;

std::string Key(const std::filesystem::path& entry, const std::vector<std::filesystem::path>& dirs = {},
                const KeyMetadata& metadata = {}) {
  auto key = CacheKey(entry, dirs, metadata);
  if (!key) throw std::runtime_error(key.error());
  return *key;
}

// The documented record layout, rebuilt independently: label, NUL, u64 LE length, payload.
std::string Record(std::string_view label, std::string_view payload) {
  std::string out(label);
  out.push_back('\0');
  uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i, size >>= 8) out.push_back(static_cast<char>(size & 0xff));
  out.append(payload);
  return out;
}

TEST(CacheKey, HashesLabelledRecordsOfMetadataDirsAndFiles) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include <p.h>\n");
  tree.Write("inc/p.h", "int p;\n");
  std::string stream = Record("metadata-key", "core_type") + Record("metadata-value", "aiv") +
                       Record("include-dir-count", "1") + Record("include-dir", "inc") +
                       Record("file-name", "entry.cpp") + Record("file-content", "#include <p.h>\n") +
                       Record("file-name", "p.h") + Record("file-content", "int p;\n");
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(stream.data(), stream.size()));
  std::string expected;
  for (unsigned char byte : canonical.digest) expected += fmt::format("{:02x}", byte);

  std::string key = Key(tree / "k/entry.cpp", {tree / "inc"}, {{"core_type", "aiv"}});
  EXPECT_EQ(key, expected);
  EXPECT_EQ(key.size(), 32u);
}

TEST(CacheKey, EditingAnIncludedHeaderChangesTheKey) {
  TempTree tree;
  testing::WriteMultiFileKernel(tree);
  auto entry = tree / "my_kernel/aic/entry.cpp";
  std::string before = Key(entry);
  tree.Write("my_kernel/tiling/params.h", "constexpr int kTileRows = 128;\n");
  EXPECT_NE(Key(entry), before);
}

TEST(CacheKey, EditingAnUnrelatedFileKeepsTheKey) {
  TempTree tree;
  testing::WriteMultiFileKernel(tree);
  auto entry = tree / "my_kernel/aic/entry.cpp";
  tree.Write("my_kernel/tiling/unused.h", "int a;\n");
  std::string before = Key(entry);
  tree.Write("my_kernel/tiling/unused.h", "int b;\n");
  tree.Write("my_kernel/aic/notes.txt", "touched\n");
  EXPECT_EQ(Key(entry), before);
}

TEST(CacheKey, MovingTheTreeKeepsTheKey) {
  TempTree first, second;
  testing::WriteMultiFileKernel(first);
  testing::WriteMultiFileKernel(second);
  first.Write("my_kernel/inc/x.h", "");
  second.Write("my_kernel/inc/x.h", "");
  EXPECT_EQ(Key(first / "my_kernel/aic/entry.cpp", {first / "my_kernel/inc"}),
            Key(second / "my_kernel/aic/entry.cpp", {second / "my_kernel/inc/"}));
}

TEST(CacheKey, IncludeDirOrderMatters) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include <cfg.h>\n");
  tree.Write("a/cfg.h", "int rows = 1;\n");
  tree.Write("b/cfg.h", "int rows = 2;\n");
  EXPECT_NE(Key(tree / "k/entry.cpp", {tree / "a", tree / "b"}), Key(tree / "k/entry.cpp", {tree / "b", tree / "a"}));
}

TEST(CacheKey, AngleIncludeFoundThroughIncludeDirsIsCovered) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include <cfg.h>\n");
  tree.Write("inc/cfg.h", "int rows = 1;\n");
  std::string before = Key(tree / "k/entry.cpp", {tree / "inc"});
  tree.Write("inc/cfg.h", "int rows = 2;\n");
  EXPECT_NE(Key(tree / "k/entry.cpp", {tree / "inc"}), before);
}

TEST(CacheKey, MetadataIsPartOfTheKey) {
  TempTree tree;
  auto entry = tree.Write("k.cpp", "");
  EXPECT_NE(Key(entry, {}, {{"core_type", "aic"}}), Key(entry, {}, {{"core_type", "aiv"}}));
  // Length prefixes keep ("ab", "c") apart from ("a", "bc").
  EXPECT_NE(Key(entry, {}, {{"ab", "c"}}), Key(entry, {}, {{"a", "bc"}}));
}

TEST(CacheKey, MissingEntryIsAnError) {
  TempTree tree;
  auto key = CacheKey(tree / "nope.cpp", {}, {});
  ASSERT_FALSE(key);
  EXPECT_EQ(key.error(), "cannot read external kernel source '" + (tree / "nope.cpp").string() + "'");
}

}  // namespace
}  // namespace pypto::backend_extern
