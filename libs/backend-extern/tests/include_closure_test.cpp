#include "pypto/backend_extern/include_closure.h"

#include <gtest/gtest.h>

#include "temp_tree.h"

namespace pypto::backend_extern {
namespace {

using Paths = std::vector<std::filesystem::path>;
using testing::TempTree;

TEST(CollectIncludeClosure, FollowsRelativeQuotedIncludesAcrossDirectories) {
  TempTree tree;
  testing::WriteMultiFileKernel(tree);
  // <pto/pto-inst.hpp> and "tensor.h" are runtime headers outside the given dirs: skipped.
  EXPECT_EQ(CollectIncludeClosure(tree / "my_kernel/aic/entry.cpp", {}),
            (Paths{tree / "my_kernel/aic/entry.cpp", tree / "my_kernel/kernel/impl.cce",
                   tree / "my_kernel/tiling/params.h"}));
}

TEST(CollectIncludeClosure, AngleIncludeIsFoundOnlyThroughIncludeDirs) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include <common.h>\n");
  tree.Write("k/common.h", "// next to the entry, but <> never looks there\n");
  tree.Write("inc/common.h", "// found through -I\n");
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {}), (Paths{tree / "k/entry.cpp"}));
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {tree / "inc"}),
            (Paths{tree / "k/entry.cpp", tree / "inc/common.h"}));
}

TEST(CollectIncludeClosure, QuotedIncludePrefersTheIncludersDirectory) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include \"cfg.h\"\n");
  tree.Write("k/cfg.h", "");
  tree.Write("inc/cfg.h", "");
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {tree / "inc"}),
            (Paths{tree / "k/entry.cpp", tree / "k/cfg.h"}));
}

TEST(CollectIncludeClosure, IncludeDirsAreSearchedInOrder) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include <cfg.h>\n");
  tree.Write("first/cfg.h", "");
  tree.Write("second/cfg.h", "");
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {tree / "first", tree / "second"}),
            (Paths{tree / "k/entry.cpp", tree / "first/cfg.h"}));
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {tree / "second", tree / "first"}),
            (Paths{tree / "k/entry.cpp", tree / "second/cfg.h"}));
}

TEST(CollectIncludeClosure, CyclesAndRepeatsAreVisitedOnce) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include \"a.h\"\n#include \"b.h\"\n#include \"a.h\"\n");
  tree.Write("k/a.h", "#pragma once\n#include \"b.h\"\n");
  tree.Write("k/b.h", "#pragma once\n#include \"a.h\"\n#include \"entry.cpp\"\n");
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {}),
            (Paths{tree / "k/entry.cpp", tree / "k/a.h", tree / "k/b.h"}));
}

TEST(CollectIncludeClosure, MacroAndMalformedIncludesAreIgnored) {
  TempTree tree;
  tree.Write("k/entry.cpp", "#include KERNEL_HEADER\n#include \"\"\n#include \"unterminated.h\n#define X \"a.h\"\n");
  tree.Write("k/a.h", "");
  tree.Write("k/unterminated.h", "");
  EXPECT_EQ(CollectIncludeClosure(tree / "k/entry.cpp", {}), (Paths{tree / "k/entry.cpp"}));
}

TEST(CollectIncludeClosure, MissingEntryGivesEmptyList) {
  TempTree tree;
  EXPECT_TRUE(CollectIncludeClosure(tree / "nope.cpp", {}).empty());
}

}  // namespace
}  // namespace pypto::backend_extern
