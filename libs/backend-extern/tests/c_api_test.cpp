#include "pypto-c/backend_extern.h"

#include <gtest/gtest.h>

#include <string>

#include "pypto/backend_extern/cache_key.h"
#include "temp_tree.h"

namespace {

using pypto::backend_extern::testing::TempTree;

// Takes ownership of a string returned by the C ABI.
std::string Take(char* text) {
  std::string copy = text ? text : "";
  pypto_string_free(text);
  return copy;
}

TEST(ExternCApi, Version) { EXPECT_STREQ(pypto_extern_version(), PYPTO_VERSION); }

TEST(ExternCApi, CacheKeyMatchesTheCppApi) {
  TempTree tree;
  pypto::backend_extern::testing::WriteMultiFileKernel(tree);
  auto inc = tree.Dir("my_kernel/inc");
  std::string entry = (tree / "my_kernel/aic/entry.cpp").string();
  std::string dir = inc.string();
  const char* dirs[] = {dir.c_str()};
  char* hex = nullptr;
  ASSERT_EQ(pypto_extern_cache_key(entry.c_str(), dirs, 1, &hex), PYPTO_OK) << pypto_last_error_message();
  EXPECT_EQ(Take(hex), *pypto::backend_extern::CacheKey(entry, {inc}));
}

TEST(ExternCApi, CacheKeyOfMissingEntryIsNotFound) {
  char* hex = nullptr;
  EXPECT_EQ(pypto_extern_cache_key("/no/such/entry.cpp", nullptr, 0, &hex), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(), "cannot read external kernel source '/no/such/entry.cpp'");
  EXPECT_EQ(hex, nullptr);
}

TEST(ExternCApi, NullArgumentsAreRejected) {
  char* out = nullptr;
  EXPECT_EQ(pypto_extern_cache_key(nullptr, nullptr, 0, &out), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_extern_cache_key: null argument");
  EXPECT_EQ(pypto_extern_cache_key("e.cpp", nullptr, 2, &out), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pypto_extern_resolve_source("k.cpp", nullptr, &out), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_extern_resolve_source: null argument");
}

TEST(ExternCApi, ResolveSource) {
  TempTree tree;
  auto kernel = tree.Write("proj/kernels/k.cpp", "");
  std::string model = (tree / "proj/model.py").string();
  char* out = nullptr;
  ASSERT_EQ(pypto_extern_resolve_source("kernels/k.cpp", model.c_str(), &out), PYPTO_OK)
      << pypto_last_error_message();
  EXPECT_EQ(Take(out), kernel.string());
  EXPECT_STREQ(pypto_last_error_message(), "");
}

TEST(ExternCApi, ResolveMissingSourceIsNotFound) {
  TempTree tree;
  std::string model = (tree / "model.py").string();
  char* out = nullptr;
  EXPECT_EQ(pypto_extern_resolve_source("gone.cpp", model.c_str(), &out), PYPTO_ERR_NOT_FOUND);
  EXPECT_EQ(std::string(pypto_last_error_message()),
            "external kernel source 'gone.cpp' not found (resolved to '" + (tree / "gone.cpp").string() + "')");
}

}  // namespace
