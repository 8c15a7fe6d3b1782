#include "pypto/runtime/backend_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace pypto::rt {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Canonical(const char* path) { return std::filesystem::weakly_canonical(path).string(); }

TEST(BackendRegistry, LoadFileServesItsPlatforms) {
  BackendRegistry registry;
  auto info = registry.LoadFile(TEST_PLUGIN_GOOD_PATH);
  ASSERT_TRUE(info) << info.error();
  EXPECT_EQ(info->name, "testsim");
  EXPECT_EQ(info->path, Canonical(TEST_PLUGIN_GOOD_PATH));
  EXPECT_EQ(info->platforms, std::vector<std::string>{"testsim"});
  EXPECT_THAT(info->description, HasSubstr("test plugin"));

  auto plugin = registry.ForPlatform("testsim");
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_STREQ((*plugin)->name, "testsim");
  EXPECT_EQ((*plugin)->abi_version, PYPTO_BACKEND_PLUGIN_ABI_VERSION);
  EXPECT_EQ((*plugin)->execute("testsim", nullptr, nullptr, nullptr, 0), PYPTO_OK);
  pypto_backend_session* session = nullptr;
  ASSERT_EQ((*plugin)->open_session("testsim", nullptr, nullptr, &session), PYPTO_OK);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ((*plugin)->run_session(session, nullptr, 0), PYPTO_OK);
  EXPECT_EQ((*plugin)->run_session(session, nullptr, 0), PYPTO_OK);
  ASSERT_NE((*plugin)->run_session_plan, nullptr);
  EXPECT_EQ((*plugin)->run_session_plan(session, nullptr, nullptr, 0), PYPTO_OK);
  (*plugin)->close_session(session);

  // Loading the same file again hands back the same plugin rather than a second copy.
  auto again = registry.LoadFile(TEST_PLUGIN_GOOD_PATH);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->path, info->path);
}

TEST(BackendRegistry, RefusesOtherAbi) {
  BackendRegistry registry;
  auto info = registry.LoadFile(TEST_PLUGIN_BAD_PATH);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error(), "plugin 'badabi' (" + Canonical(TEST_PLUGIN_BAD_PATH) +
                              ") was built for backend ABI 999, this build of pypto needs ABI " +
                              std::to_string(PYPTO_BACKEND_PLUGIN_ABI_VERSION) + "; rebuild the plugin");
  EXPECT_THAT(registry.LoadErrors(), Contains(info.error()));
  // Asking for its platform explains why it is not there.
  auto plugin = registry.ForPlatform("badsim");
  ASSERT_FALSE(plugin);
  EXPECT_THAT(plugin.error(), HasSubstr(info.error()));
}

TEST(BackendRegistry, FindsAndRefusesAPluginOfAnOlderAbi) {
  BackendRegistry registry;
  auto info = registry.LoadFile(TEST_PLUGIN_LEGACY_PATH);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error(), "plugin 'oldsim' (" + Canonical(TEST_PLUGIN_LEGACY_PATH) +
                              ") was built for backend ABI 2, this build of pypto needs ABI " +
                              std::to_string(PYPTO_BACKEND_PLUGIN_ABI_VERSION) + "; rebuild the plugin");
}

// ABI 4 only added run_session_plan at the end: an ABI 3 plugin serves as one without it, whatever
// lies past its struct.
TEST(BackendRegistry, LoadsAnAbi3PluginWithoutRunSessionPlan) {
  BackendRegistry registry;
  auto info = registry.LoadFile(TEST_PLUGIN_V3_PATH);
  ASSERT_TRUE(info) << info.error();
  EXPECT_EQ(info->platforms, std::vector<std::string>{"v3sim"});
  auto plugin = registry.ForPlatform("v3sim");
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_EQ((*plugin)->abi_version, 3u);
  EXPECT_EQ((*plugin)->run_session_plan, nullptr);
  pypto_backend_session* session = nullptr;
  ASSERT_EQ((*plugin)->open_session("v3sim", nullptr, nullptr, &session), PYPTO_OK);
  EXPECT_EQ((*plugin)->run_session(session, nullptr, 0), PYPTO_OK);
  (*plugin)->close_session(session);
}

TEST(BackendRegistry, DescribesItsPlatforms) {
  BackendRegistry registry;
  ASSERT_TRUE(registry.LoadFile(TEST_PLUGIN_GOOD_PATH));
  auto platform = registry.Platform("testsim");
  ASSERT_TRUE(platform) << platform.error();
  EXPECT_EQ(platform->plugin, "testsim");
  EXPECT_TRUE(platform->simulator);
  EXPECT_EQ(platform->soc.name, "Ascend950");
  EXPECT_EQ(platform->soc.aiv_cores, 72);
  EXPECT_EQ(platform->pto_modules, PYPTO_PTO_NONE);
  auto unknown = registry.Platform("foo");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error(), StartsWith("unknown platform 'foo'; available platforms: "));
}

TEST(BackendRegistry, RefusesFileWithoutEntryPoint) {
  BackendRegistry registry;
  auto info = registry.LoadFile("/nonexistent/libpypto_plugin_nothing.so");
  ASSERT_FALSE(info);
  EXPECT_THAT(info.error(), StartsWith("cannot load plugin /nonexistent/libpypto_plugin_nothing.so: "));
}

TEST(BackendRegistry, DiscoversPluginsOnSearchPath) {
  ::setenv("PYPTO_PLUGIN_PATH", "/nonexistent-plugin-dir:" TEST_PLUGIN_DIR, 1);
  BackendRegistry registry;
  const std::vector<std::string> path = registry.SearchPath();
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[0], "/nonexistent-plugin-dir");
  EXPECT_EQ(path[1], std::filesystem::path(TEST_PLUGIN_DIR).lexically_normal().string());

  auto plugin = registry.ForPlatform("testsim");
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_STREQ((*plugin)->name, "testsim");

  std::vector<std::string> names;
  for (const PluginInfo& info : registry.Plugins()) names.push_back(info.name);
  EXPECT_THAT(names, Contains("testsim"));
  EXPECT_THAT(registry.LoadErrors(), Contains(HasSubstr("plugin 'badabi'")));

  auto unknown = registry.ForPlatform("foo");
  ASSERT_FALSE(unknown);
  // Other plugins of the build tree may also be found, so only this much is certain.
  EXPECT_THAT(unknown.error(), StartsWith("unknown platform 'foo'; available platforms: "));
  EXPECT_THAT(unknown.error(), HasSubstr("testsim"));
  EXPECT_THAT(unknown.error(), HasSubstr("(plugins searched in: /nonexistent-plugin-dir, " +
                                         std::filesystem::path(TEST_PLUGIN_DIR).lexically_normal().string()));
  ::unsetenv("PYPTO_PLUGIN_PATH");
}

TEST(BackendRegistry, UnknownPlatformWithNoPlugins) {
  // Only an empty directory on the path, and the build and install directories, which hold no
  // platform of this name.
  ::setenv("PYPTO_PLUGIN_PATH", "/nonexistent-plugin-dir", 1);
  BackendRegistry registry;
  auto unknown = registry.ForPlatform("foo");
  ::unsetenv("PYPTO_PLUGIN_PATH");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error(), StartsWith("unknown platform 'foo'; available platforms: "));
  EXPECT_THAT(unknown.error(), HasSubstr("(plugins searched in: /nonexistent-plugin-dir"));
}

TEST(BackendRegistry, GetIsOneInstance) { EXPECT_EQ(&BackendRegistry::Get(), &BackendRegistry::Get()); }

}  // namespace
}  // namespace pypto::rt
