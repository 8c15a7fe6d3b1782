// The driver's C ABI as a C caller uses it: a program compiled from its source text runs on the
// simulator and computes what it should; failures come back through pypto_last_error_message().
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "pypto-c/driver.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kFile = "tile_add.py";

// c = a + b on one 16x64 tile.
constexpr const char* kTileAdd = R"(@pl.program
class TileAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32], c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        tile_a = pl.load(a, [0, 0], [16, 64])
        tile_b = pl.load(b, [0, 0], [16, 64])
        tile_c = pl.add(tile_a, tile_b)
        out = pl.store(tile_c, [0, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32], c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        c = self.add_kernel(a, b, c)
        return c
)";

// A fresh build directory under the test's temporary directory.
std::string BuildDir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("pypto_driver_test_" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  return dir.string();
}

// Runs `program` on a = i, b = 2i and returns c.
std::vector<float> RunTileAdd(pypto_driver_program* program) {
  std::vector<float> a(16 * 64), b(16 * 64), c(16 * 64, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 2.0f * static_cast<float>(i);
  }
  const uint32_t shape[] = {16, 64};
  pypto_chip_tensor args[3];
  float* data[] = {a.data(), b.data(), c.data()};
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(pypto_rt_make_external_tensor(data[i], shape, 2, PYPTO_RT_FLOAT32, &args[i]), PYPTO_OK);
  EXPECT_EQ(pypto_driver_run(program, args, 3), PYPTO_OK) << pypto_last_error_message();
  return c;
}

void ExpectSums(const std::vector<float>& c) {
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], 3.0f * static_cast<float>(i)) << "element " << i;
}

TEST(DriverCApi, CompilesSourceTextAndRunsOnTheSimulator) {
  const std::string dir = BuildDir("tile_add");
  pypto_driver_options options{.platform = "a2a3sim", .output_dir = dir.c_str()};
  pypto_driver_program* program = nullptr;
  ASSERT_EQ(pypto_driver_compile_source(kTileAdd, kFile, &options, &program), PYPTO_OK) << pypto_last_error_message();
  ASSERT_EQ(pypto_driver_param_count(program), 3u);
  EXPECT_STREQ(pypto_driver_param_name(program, 0), "a");
  EXPECT_STREQ(pypto_driver_param_name(program, 2), "c");
  EXPECT_EQ(pypto_driver_param_name(program, 3), nullptr);
  EXPECT_STREQ(pypto_driver_platform(program), "a2a3sim");
  EXPECT_TRUE(fs::exists(fs::path(dir) / "lowered_program.py"));
  ExpectSums(RunTileAdd(program));
  ExpectSums(RunTileAdd(program));  // the second run reuses the session the first opened

  // The build directory runs again without the source.
  pypto_driver_program* loaded = nullptr;
  ASSERT_EQ(pypto_driver_load(dir.c_str(), "a2a3sim", &loaded), PYPTO_OK) << pypto_last_error_message();
  ExpectSums(RunTileAdd(loaded));
  pypto_driver_program_destroy(loaded);
  pypto_driver_program_destroy(program);
}

TEST(DriverCApi, ARunWithTheWrongNumberOfTensorsSaysHowMany) {
  const std::string dir = BuildDir("count");
  pypto_driver_options options{.platform = "a2a3sim", .output_dir = dir.c_str()};
  pypto_driver_program* program = nullptr;
  ASSERT_EQ(pypto_driver_compile_source(kTileAdd, kFile, &options, &program), PYPTO_OK) << pypto_last_error_message();
  EXPECT_EQ(pypto_driver_run(program, nullptr, 0), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_driver_run: the program takes 3 tensors (one per parameter, pypto_driver_param_name names "
               "them), 0 were passed");
  pypto_driver_program_destroy(program);
}

TEST(DriverCApi, ABadSourceIsALocatedParseError) {
  std::string source = kTileAdd;
  source.replace(source.find("pl.add(tile_a, tile_b)"), 22, "pl.add(tile_a, tile_z)");
  const std::string dir = BuildDir("bad");
  pypto_driver_options options{.platform = "a2a3sim", .output_dir = dir.c_str()};
  pypto_driver_program* program = nullptr;
  EXPECT_EQ(pypto_driver_compile_source(source.c_str(), kFile, &options, &program), PYPTO_ERR_PARSE);
  EXPECT_EQ(program, nullptr);
  EXPECT_STREQ(pypto_last_error_message(), "tile_add.py:7:33: error: name 'tile_z' is not defined");
  EXPECT_FALSE(fs::exists(dir));  // nothing is written for a program that does not parse
}

TEST(DriverCApi, AnUnknownPlatformNamesTheKnownOnes) {
  const std::string dir = BuildDir("platform");
  pypto_driver_options options{.platform = "a9sim", .output_dir = dir.c_str()};
  pypto_driver_program* program = nullptr;
  EXPECT_EQ(pypto_driver_compile_source(kTileAdd, kFile, &options, &program), PYPTO_ERR_NOT_FOUND);
  EXPECT_TRUE(std::string(pypto_last_error_message()).starts_with("unknown platform 'a9sim' (expected "))
      << pypto_last_error_message();
}

TEST(DriverCApi, AMissingBuildDirectoryIsNotFound) {
  const std::string dir = BuildDir("missing");
  pypto_driver_program* program = nullptr;
  EXPECT_EQ(pypto_driver_load(dir.c_str(), "a2a3sim", &program), PYPTO_ERR_NOT_FOUND);
  EXPECT_EQ(program, nullptr);
  EXPECT_EQ(std::string(pypto_last_error_message()),
            dir + " is not a pypto build directory: " + dir + "/lowered_program.py is missing");
}

TEST(DriverCApi, PlatformsTableListsTheSimulator) {
  char* table = pypto_driver_platforms_table();
  ASSERT_NE(table, nullptr);
  EXPECT_NE(std::string(table).find("a2a3sim\tsim\tsimulator\t"), std::string::npos) << table;
  pypto_string_free(table);
}

}  // namespace
