#include "pypto/backend_extern/source_paths.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace pypto::backend_extern {
namespace {

using testing::TempTree;

TEST(ResolveSource, RelativePathIsTakenFromTheDefiningFilesDirectory) {
  TempTree tree;
  auto kernel = tree.Write("proj/kernels/aic/pa.cpp", "");
  auto resolved = ResolveSource("kernels/aic/pa.cpp", tree / "proj/model.py");
  ASSERT_TRUE(resolved) << resolved.error();
  EXPECT_EQ(*resolved, kernel);
}

TEST(ResolveSource, DotDotSegmentsAreNormalized) {
  TempTree tree;
  auto kernel = tree.Write("shared/k.cpp", "");
  auto resolved = ResolveSource("../shared/k.cpp", tree / "proj/model.py");
  ASSERT_TRUE(resolved) << resolved.error();
  EXPECT_EQ(*resolved, kernel);
}

TEST(ResolveSource, AbsolutePathIsKept) {
  TempTree tree;
  auto kernel = tree.Write("k.cpp", "");
  auto resolved = ResolveSource(kernel, "/elsewhere/model.py");
  ASSERT_TRUE(resolved) << resolved.error();
  EXPECT_EQ(*resolved, kernel);
}

TEST(ResolveSource, MissingFileNamesWrittenAndResolvedPaths) {
  TempTree tree;
  auto resolved = ResolveSource("kernels/missing.cpp", tree / "proj/model.py");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error(), "external kernel source 'kernels/missing.cpp' not found (resolved to '" +
                                  (tree / "proj/kernels/missing.cpp").string() + "')");
}

TEST(ResolveSource, DirectoryIsNotASource) {
  TempTree tree;
  tree.Dir("proj/kernels");
  auto resolved = ResolveSource("kernels", tree / "proj/model.py");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error(),
            "external kernel source 'kernels' not found (resolved to '" + (tree / "proj/kernels").string() + "')");
}

TEST(ResolveIncludeDirs, KeepsOrderAndResolvesEachDirectory) {
  TempTree tree;
  auto b = tree.Dir("proj/b");
  auto a = tree.Dir("proj/a");
  auto abs = tree.Dir("abs");
  auto dirs = ResolveIncludeDirs({"b", abs, "./a/"}, tree / "proj/model.py");
  ASSERT_TRUE(dirs) << dirs.error();
  EXPECT_EQ(*dirs, (std::vector<std::filesystem::path>{b, abs, tree / "proj/a/"}));
}

TEST(ResolveIncludeDirs, MissingDirectoryIsAnError) {
  TempTree tree;
  tree.Dir("proj/a");
  auto dirs = ResolveIncludeDirs({"a", "inc"}, tree / "proj/model.py");
  ASSERT_FALSE(dirs);
  EXPECT_EQ(dirs.error(), "external kernel include directory 'inc' not found (resolved to '" +
                              (tree / "proj/inc").string() + "')");
}

TEST(ResolveIncludeDirs, FileIsNotADirectory) {
  TempTree tree;
  tree.Write("proj/params.h", "");
  auto dirs = ResolveIncludeDirs({"params.h"}, tree / "proj/model.py");
  ASSERT_FALSE(dirs);
  EXPECT_EQ(dirs.error(), "external kernel include directory 'params.h' is not a directory (resolved to '" +
                              (tree / "proj/params.h").string() + "')");
}

TEST(ResolveIncludeDirs, EmptyListIsFine) {
  auto dirs = ResolveIncludeDirs({}, "/x/model.py");
  ASSERT_TRUE(dirs);
  EXPECT_TRUE(dirs->empty());
}

TEST(IncludeDirsFromAttr, AJsonListOfPathsInOrder) {
  auto dirs = IncludeDirsFromAttr(R"(["/a/tiling", "/b/inc"])");
  ASSERT_TRUE(dirs) << dirs.error();
  EXPECT_EQ(*dirs, (std::vector<std::filesystem::path>{"/a/tiling", "/b/inc"}));
  EXPECT_TRUE(IncludeDirsFromAttr("")->empty());
}

TEST(IncludeDirsFromAttr, AnythingButAListOfStringsIsAnError) {
  EXPECT_EQ(IncludeDirsFromAttr("/a/tiling").error(),
            "external_include_dirs must be a JSON list of paths, got '/a/tiling'");
  EXPECT_EQ(IncludeDirsFromAttr("[1]").error(), "external_include_dirs must be a JSON list of paths, got '[1]'");
}

}  // namespace
}  // namespace pypto::backend_extern
