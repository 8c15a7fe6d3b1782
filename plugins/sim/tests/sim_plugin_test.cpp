// End-to-end tests through the plugin's C entry: hand-lowered kernels, task plans, real numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <unistd.h>

#include "sim_test_util.h"

namespace simtest {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kTileBytes = 16 * 16 * 4;

std::vector<float> Iota(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// a, b -> c = op(a, b) over [16, 16], the result reusing a's place (in-place reuse).
ir::FunctionPtr BinaryKernel(const std::string& name, const std::string& op, ir::DataType dtype = ir::DataType::FP32,
                             bool eval_store = false) {
  KernelBuilder k(name);
  auto a = k.Tensor("a", {16, 16}, dtype);
  auto b = k.Tensor("b", {16, 16}, dtype);
  auto c = k.Tensor("c", {16, 16}, dtype, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto tb = k.Load("tb", b, {0, 0}, {16, 16}, kTileBytes);
  auto tc = k.Op(op, "tc", ta, tb, 0);
  k.Store(tc, {0, 0}, c, eval_store);
  return k.Build();
}

std::vector<rt::PlanTensor> ThreeParams(uint8_t dtype = PYPTO_RT_FLOAT32) {
  return {{"a", dtype, {16, 16}}, {"b", dtype, {16, 16}}, {"c", dtype, {16, 16}}};
}

const std::vector<rt::ArgDirection> kInInOut = {rt::ArgDirection::Input, rt::ArgDirection::Input,
                                                rt::ArgDirection::OutputExisting};

TEST(SimPlugin, DescribesItself) {
  const auto* plugin = Plugin();
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->abi_version, PYPTO_BACKEND_PLUGIN_ABI_VERSION);
  EXPECT_STREQ(plugin->name, "sim");
  ASSERT_NE(plugin->platforms, nullptr);
  ASSERT_EQ(plugin->num_platforms, 2u);
  EXPECT_STREQ(plugin->platforms[0].name, "a2a3sim");
  EXPECT_STREQ(plugin->platforms[0].simulates, "a2a3");
  EXPECT_STREQ(plugin->platforms[0].soc.table, "Ascend910B");
  EXPECT_STREQ(plugin->platforms[1].name, "a5sim");
  EXPECT_STREQ(plugin->platforms[1].soc.table, "Ascend950");
  for (size_t i = 0; i < plugin->num_platforms; ++i) {
    EXPECT_EQ(plugin->platforms[i].kind, static_cast<uint32_t>(PYPTO_PLATFORM_SIMULATOR));
    EXPECT_EQ(plugin->platforms[i].pto_modules, static_cast<uint32_t>(PYPTO_PTO_OPTIONAL));
  }
}

TEST(SimPlugin, AddsTwoTiles) {
  auto program = MakeProgram({BinaryKernel("add_kernel", "tile.add")});
  auto plan = SingleTaskPlan("add_kernel", ThreeParams(), kInInOut);
  auto a = Iota(256, 1.0f, 0.5f), b = Iota(256, -3.0f, 0.25f);
  std::vector<float> c(256, -1.0f);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
}

TEST(SimPlugin, RunsOnA5) {
  auto program = MakeProgram({BinaryKernel("add_kernel", "tile.add", ir::DataType::FP32, /*eval_store=*/true)});
  auto plan = SingleTaskPlan("add_kernel", ThreeParams(), kInInOut);
  auto a = Iota(256, 2.0f, 1.0f), b = Iota(256, 0.0f, -1.0f);
  std::vector<float> c(256, 0.0f);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})}, "a5sim");
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (float v : c) ASSERT_EQ(v, 2.0f);
}

struct FloatCase {
  const char* op;
  std::function<float(float, float)> reference;
};

class SimFloatOps : public ::testing::TestWithParam<FloatCase> {};

TEST_P(SimFloatOps, MatchesScalarReference) {
  const auto& param = GetParam();
  auto program = MakeProgram({BinaryKernel("k", param.op)});
  auto plan = SingleTaskPlan("k", ThreeParams(), kInInOut);
  auto a = Iota(256, -50.0f, 0.37f), b = Iota(256, 0.5f, 0.11f);
  std::vector<float> c(256, 0.0f);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], param.reference(a[i], b[i])) << param.op << " at " << i;
}

INSTANTIATE_TEST_SUITE_P(Ops, SimFloatOps,
                         ::testing::Values(FloatCase{"tile.add", std::plus<float>()},
                                           FloatCase{"tile.sub", std::minus<float>()},
                                           FloatCase{"tile.mul", std::multiplies<float>()},
                                           FloatCase{"tile.div", std::divides<float>()}),
                         [](const auto& info) { return std::string(info.param.op + 5); });

struct IntCase {
  const char* op;
  std::function<int32_t(int32_t, int32_t)> reference;
};

class SimIntOps : public ::testing::TestWithParam<IntCase> {};

TEST_P(SimIntOps, MatchesScalarReference) {
  const auto& param = GetParam();
  auto program = MakeProgram({BinaryKernel("k", param.op, ir::DataType::INT32)});
  auto plan = SingleTaskPlan("k", ThreeParams(PYPTO_RT_INT32), kInInOut);
  std::vector<int32_t> a(256), b(256), c(256, 0);
  for (int i = 0; i < 256; ++i) {
    a[i] = (i * 7919) % 2001 - 1000;
    b[i] = (i % 2 ? 1 : -1) * (1 + (i * 31) % 97);
  }
  auto result = Execute(*program, plan,
                        {Dense(a, {16, 16}, PYPTO_RT_INT32), Dense(b, {16, 16}, PYPTO_RT_INT32),
                         Dense(c, {16, 16}, PYPTO_RT_INT32)});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], param.reference(a[i], b[i])) << param.op << " at " << i;
}

INSTANTIATE_TEST_SUITE_P(Ops, SimIntOps,
                         ::testing::Values(IntCase{"tile.add", std::plus<int32_t>()},
                                           IntCase{"tile.sub", std::minus<int32_t>()},
                                           IntCase{"tile.mul", std::multiplies<int32_t>()},
                                           IntCase{"tile.div", std::divides<int32_t>()}),
                         [](const auto& info) { return std::string(info.param.op + 5); });

TEST(SimPlugin, IntegerDivisionByZeroIsAnError) {
  auto program = MakeProgram({BinaryKernel("idiv", "tile.div", ir::DataType::INT32)});
  auto plan = SingleTaskPlan("idiv", ThreeParams(PYPTO_RT_INT32), kInInOut);
  std::vector<int32_t> a(256, 5), b(256, 1), c(256, 0);
  b[77] = 0;
  auto result = Execute(*program, plan,
                        {Dense(a, {16, 16}, PYPTO_RT_INT32), Dense(b, {16, 16}, PYPTO_RT_INT32),
                         Dense(c, {16, 16}, PYPTO_RT_INT32)});
  EXPECT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_THAT(result.message, AllOf(HasSubstr("idiv"), HasSubstr("division by zero"), HasSubstr("tile.div")));
}

// c[8:24, 16:32] = a[16:32, 0:16] + b[0:16, 16:32]
TEST(SimPlugin, LoadsAndStoresAtOffsets) {
  KernelBuilder k("offsets");
  auto a = k.Tensor("a", {32, 16});
  auto b = k.Tensor("b", {16, 32});
  auto c = k.Tensor("c", {32, 48}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {16, 0}, {16, 16}, 4096);
  auto tb = k.Load("tb", b, {0, 16}, {16, 16}, 0);
  auto tc = k.Op("tile.add", "tc", ta, tb, 4096);
  k.Store(tc, {8, 16}, c);
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("offsets", {{"a", PYPTO_RT_FLOAT32, {32, 16}}, {"b", PYPTO_RT_FLOAT32, {16, 32}},
                                         {"c", PYPTO_RT_FLOAT32, {32, 48}}},
                             kInInOut);
  auto av = Iota(32 * 16, 0.0f, 1.0f), bv = Iota(16 * 32, 1000.0f, 1.0f);
  std::vector<float> cv(32 * 48, -7.0f);
  auto result = Execute(*program, plan, {Dense(av, {32, 16}), Dense(bv, {16, 32}), Dense(cv, {32, 48})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (int r = 0; r < 32; ++r) {
    for (int col = 0; col < 48; ++col) {
      const bool inside = r >= 8 && r < 24 && col >= 16 && col < 32;
      const float expected = inside ? av[(r - 8 + 16) * 16 + (col - 16)] + bv[(r - 8) * 32 + col] : -7.0f;
      ASSERT_EQ(cv[r * 48 + col], expected) << "c[" << r << "][" << col << "]";
    }
  }
}

// a: a row-strided window of a wider buffer; b: a transposed (column-strided) view; c: a window.
TEST(SimPlugin, HonoursStartOffsetAndStrides) {
  auto program = MakeProgram({BinaryKernel("strided", "tile.sub")});
  auto plan = SingleTaskPlan("strided", ThreeParams(), kInInOut);
  auto abuf = Iota(20 * 40, 0.0f, 1.0f);
  auto bbuf = Iota(16 * 16, 0.0f, 0.5f);
  std::vector<float> cbuf(18 * 24, 99.0f);
  const uint64_t a_start = 3 * 40 + 5, c_start = 1 * 24 + 2;
  auto a = View(abuf.data(), abuf.size() * 4, {16, 16}, {40, 1}, a_start);
  auto b = View(bbuf.data(), bbuf.size() * 4, {16, 16}, {1, 16}, 0);
  auto c = View(cbuf.data(), cbuf.size() * 4, {16, 16}, {24, 1}, c_start);
  auto result = Execute(*program, plan, {a, b, c});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (int r = 0; r < 18; ++r) {
    for (int col = 0; col < 24; ++col) {
      const int64_t flat = r * 24 + col - static_cast<int64_t>(c_start);
      const int i = static_cast<int>(flat / 24), j = static_cast<int>(flat % 24);
      const bool inside = flat >= 0 && i < 16 && j < 16;
      const float expected = inside ? abuf[a_start + i * 40 + j] - bbuf[j * 16 + i] : 99.0f;
      ASSERT_EQ(cbuf[r * 24 + col], expected) << "c buffer [" << r << "][" << col << "]";
    }
  }
}

TEST(SimPlugin, ChainsKernelsThroughAnIntermediate) {
  // tmp = a + b (runtime-allocated), then c = tmp * a.
  auto add = BinaryKernel("k_add", "tile.add");
  auto mul = BinaryKernel("k_mul", "tile.mul");
  auto program = MakeProgram({add, mul});
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.params = ThreeParams();
  plan.plan.intermediates = {{"tmp", PYPTO_RT_FLOAT32, {16, 16}}};
  plan.plan.kernels = {{.func_id = 0, .name = "k_add"}, {.func_id = 1, .name = "k_mul"}};
  using D = rt::ArgDirection;
  using K = rt::PlanTensorRef::Kind;
  plan.plan.submits = {
      {.func_id = 0, .args = {Arg(D::Input, 0), Arg(D::Input, 1), Arg(D::Output, 0, K::Intermediate)}},
      {.func_id = 1, .args = {Arg(D::Input, 0, K::Intermediate), Arg(D::Input, 0), Arg(D::OutputExisting, 2)}},
  };
  auto a = Iota(256, 1.0f, 0.25f), b = Iota(256, 3.0f, -0.5f);
  std::vector<float> c(256, 0.0f);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], (a[i] + b[i]) * a[i]) << "at " << i;
}

TEST(SimPlugin, RunsManyTasksAcrossCores) {
  constexpr int kTasks = 64;
  auto program = MakeProgram({BinaryKernel("k", "tile.mul")});
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.kernels = {{.func_id = 0, .name = "k"}};
  std::vector<std::vector<float>> data(2 * kTasks + 1);
  std::vector<pypto_chip_tensor> params;
  data[0] = Iota(256, 1.0f, 1.0f);
  plan.plan.params.push_back({"x", PYPTO_RT_FLOAT32, {16, 16}});
  params.push_back(Dense(data[0], {16, 16}));
  for (int t = 0; t < kTasks; ++t) {
    data[1 + 2 * t] = std::vector<float>(256, static_cast<float>(t));
    data[2 + 2 * t] = std::vector<float>(256, -1.0f);
    plan.plan.params.push_back({"s" + std::to_string(t), PYPTO_RT_FLOAT32, {16, 16}});
    plan.plan.params.push_back({"o" + std::to_string(t), PYPTO_RT_FLOAT32, {16, 16}});
    params.push_back(Dense(data[1 + 2 * t], {16, 16}));
    params.push_back(Dense(data[2 + 2 * t], {16, 16}));
    plan.plan.submits.push_back({.func_id = 0,
                                 .args = {Arg(rt::ArgDirection::Input, 0),
                                          Arg(rt::ArgDirection::Input, static_cast<uint32_t>(1 + 2 * t)),
                                          Arg(rt::ArgDirection::OutputExisting, static_cast<uint32_t>(2 + 2 * t))}});
  }
  auto result = Execute(*program, plan, params);
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (int t = 0; t < kTasks; ++t)
    for (int i = 0; i < 256; ++i) ASSERT_EQ(data[2 + 2 * t][i], data[0][i] * static_cast<float>(t)) << "task " << t;
}

TEST(SimPlugin, UnsupportedOpIsAClearError) {
  static const ir::OpDef exp_op{.name = "test.opaque", .description = "an op no backend runs", .params = {ir::Arg("x")}};
  KernelBuilder k("exp_kernel");
  auto a = k.Tensor("a", {16, 16});
  auto c = k.Tensor("c", {16, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto te = k.Custom(&exp_op, "te", {ta}, KernelBuilder::TileAt({16, 16}, ir::DataType::FP32, 1024));
  const int exp_line = k.line();
  k.Store(te, {0, 0}, c);
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("exp_kernel", {{"a", PYPTO_RT_FLOAT32, {16, 16}}, {"c", PYPTO_RT_FLOAT32, {16, 16}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  std::vector<float> av(256, 1.0f), cv(256, 0.0f);
  auto result = Execute(*program, plan, {Dense(av, {16, 16}), Dense(cv, {16, 16})});
  EXPECT_EQ(result.status, PYPTO_ERR_COMPILE);
  EXPECT_THAT(result.message, AllOf(HasSubstr("exp_kernel"), HasSubstr("'test.opaque'"), HasSubstr("not support"),
                                    HasSubstr("kernels.py:" + std::to_string(exp_line) + ":5")));
  for (float v : cv) ASSERT_EQ(v, 0.0f);  // nothing ran
}

// UINT32 arithmetic has no widening to INT32 that keeps its order (max, min, division).
TEST(SimPlugin, UnsupportedDtypeIsAClearError) {
  auto program = MakeProgram({BinaryKernel("u32_div", "tile.div", ir::DataType::UINT32)});
  auto plan = SingleTaskPlan("u32_div", ThreeParams(PYPTO_RT_UINT32), kInInOut);
  std::vector<uint32_t> a(256), b(256, 1), c(256);
  auto result = Execute(*program, plan,
                        {Dense(a, {16, 16}, PYPTO_RT_UINT32), Dense(b, {16, 16}, PYPTO_RT_UINT32),
                         Dense(c, {16, 16}, PYPTO_RT_UINT32)});
  EXPECT_EQ(result.status, PYPTO_ERR_COMPILE);
  EXPECT_THAT(result.message, AllOf(HasSubstr("u32_div"), HasSubstr("tile.div"), HasSubstr("UINT32"),
                                    HasSubstr("not supported yet")));
}

// Where the bits do not depend on signedness a UINT32 tile computes as INT32: sums wrap modulo 2^32.
TEST(SimPlugin, Uint32AddWrapsAround) {
  auto program = MakeProgram({BinaryKernel("u32_add", "tile.add", ir::DataType::UINT32)});
  auto plan = SingleTaskPlan("u32_add", ThreeParams(PYPTO_RT_UINT32), kInInOut);
  std::vector<uint32_t> a(256), b(256), c(256, 0);
  for (uint32_t i = 0; i < 256; ++i) {
    a[i] = 0xFFFFFF00u + i;
    b[i] = 3 * i;
  }
  auto result = Execute(*program, plan,
                        {Dense(a, {16, 16}, PYPTO_RT_UINT32), Dense(b, {16, 16}, PYPTO_RT_UINT32),
                         Dense(c, {16, 16}, PYPTO_RT_UINT32)});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
  EXPECT_EQ(c[255], 764u);  // 0xFFFFFFFF + 765 wraps
}

// FP16 tiles add in FP32 and round the sum once, to nearest even: 1 + 2^-11 and 0x3C01 + 2^-11 are
// ties between neighbouring FP16 values.
TEST(SimPlugin, HalfAddRoundsEachSumToNearestEven) {
  auto program = MakeProgram({BinaryKernel("half_add", "tile.add", ir::DataType::FP16)});
  auto plan = SingleTaskPlan("half_add", ThreeParams(PYPTO_RT_FLOAT16), kInInOut);
  std::vector<uint16_t> a(256, 0x3E00), b(256, 0x4080), c(256, 0);  // 1.5 + 2.25
  a[1] = 0x3C00, b[1] = 0x1000;  // 1 + 2^-11 -> 1
  a[2] = 0x3C01, b[2] = 0x1000;  // (1 + 2^-10) + 2^-11 -> 1 + 2^-9
  auto result = Execute(*program, plan,
                        {Dense(a, {16, 16}, PYPTO_RT_FLOAT16), Dense(b, {16, 16}, PYPTO_RT_FLOAT16),
                         Dense(c, {16, 16}, PYPTO_RT_FLOAT16)});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  EXPECT_EQ(c[0], 0x4380);  // 3.75
  EXPECT_EQ(c[1], 0x3C00);
  EXPECT_EQ(c[2], 0x3C02);
  EXPECT_EQ(c[255], 0x4380);
}

TEST(SimPlugin, OutOfBoundsGlobalReadIsAnError) {
  auto program = MakeProgram({BinaryKernel("oob_read", "tile.add")});
  auto plan = SingleTaskPlan("oob_read", ThreeParams(), kInInOut);
  auto a = Iota(256, 0.0f, 1.0f), b = Iota(256, 0.0f, 1.0f);
  std::vector<float> c(256, 0.0f);
  // The view claims 16x16 elements but its buffer is one element short.
  auto a_desc = View(a.data(), 255 * 4, {16, 16}, {16, 1}, 0);
  auto result = Execute(*program, plan, {a_desc, Dense(b, {16, 16}), Dense(c, {16, 16})});
  EXPECT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_THAT(result.message, AllOf(HasSubstr("oob_read"), HasSubstr("instruction #0"), HasSubstr("tile.load"),
                                    HasSubstr("out-of-bounds global read"), HasSubstr("bytes [0, 1024)"),
                                    HasSubstr("holds 1020 bytes"), HasSubstr("'a'")));
}

TEST(SimPlugin, OutOfBoundsGlobalWriteIsAnError) {
  auto program = MakeProgram({BinaryKernel("oob_write", "tile.add")});
  auto plan = SingleTaskPlan("oob_write", ThreeParams(), kInInOut);
  auto a = Iota(256, 0.0f, 1.0f), b = Iota(256, 0.0f, 1.0f);
  std::vector<float> c(16 * 20, 5.0f);
  // Rows of 20 elements, starting 4 in: the last row runs past the buffer's end.
  auto c_desc = View(c.data(), c.size() * 4, {16, 16}, {20, 1}, 8);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(b, {16, 16}), c_desc});
  EXPECT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_THAT(result.message, AllOf(HasSubstr("oob_write"), HasSubstr("instruction #3"), HasSubstr("tile.store"),
                                    HasSubstr("out-of-bounds global write"), HasSubstr("'c'")));
  for (float v : c) ASSERT_EQ(v, 5.0f);  // nothing was written
}

TEST(SimPlugin, SubmitThatMismatchesTheKernelIsRejected) {
  auto program = MakeProgram({BinaryKernel("k", "tile.add")});
  auto plan = SingleTaskPlan("k", {{"a", PYPTO_RT_FLOAT32, {16, 16}}, {"c", PYPTO_RT_FLOAT32, {16, 16}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  std::vector<float> a(256), c(256);
  auto result = Execute(*program, plan, {Dense(a, {16, 16}), Dense(c, {16, 16})});
  EXPECT_NE(result.status, PYPTO_OK);
  EXPECT_THAT(result.message, AllOf(HasSubstr("kernel 'k'"), HasSubstr("2 tensors")));
}

TEST(SimPlugin, MissingKernelAndUnknownPlatformAreErrors) {
  auto program = MakeProgram({BinaryKernel("k", "tile.add")});
  auto plan = SingleTaskPlan("not_there", ThreeParams(), kInInOut);
  std::vector<float> a(256), b(256), c(256);
  std::vector<pypto_chip_tensor> params = {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})};
  auto result = Execute(*program, plan, params);
  EXPECT_NE(result.status, PYPTO_OK);
  EXPECT_THAT(result.message, HasSubstr("'not_there'"));

  auto good_plan = SingleTaskPlan("k", ThreeParams(), kInInOut);
  result = Execute(*program, good_plan, params, "a2a3");
  EXPECT_EQ(result.status, PYPTO_ERR_NOT_FOUND);
  EXPECT_THAT(result.message, HasSubstr("a2a3sim"));
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SimPlugin, PrepareWritesAListingPerKernel) {
  auto program = MakeProgram({BinaryKernel("add_kernel", "tile.add"), BinaryKernel("div_kernel", "tile.div")});
  pypto_rt_plan plan;
  plan.plan.params = ThreeParams();
  plan.plan.kernels = {{.func_id = 0, .name = "add_kernel"}, {.func_id = 1, .name = "div_kernel"}};
  const auto dir = std::filesystem::temp_directory_path() / ("pypto_sim_prepare_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto* plugin = Plugin();
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(plugin->prepare("a2a3sim", program.get(), &plan, dir.c_str()), PYPTO_OK) << pypto_last_error_message();
  const std::string add = ReadFile(dir / "sim" / "add_kernel.txt");
  EXPECT_THAT(add, AllOf(HasSubstr("kernel add_kernel (func_id 0"), HasSubstr("Ascend910B"),
                         HasSubstr("args[0] a: tensor FP32 [16, 16]"), HasSubstr("args[2] c: tensor FP32 [16, 16]"),
                         HasSubstr("load"), HasSubstr("add"), HasSubstr("store"), HasSubstr("Vec[0x00400, +1024]"),
                         HasSubstr("args[0][0:16, 0:16]"), HasSubstr("kernels.py:"),
                         HasSubstr("code (4 instructions)"), HasSubstr("Vec: 2048 of 188416 bytes used")));
  EXPECT_THAT(ReadFile(dir / "sim" / "div_kernel.txt"), HasSubstr("div"));

  // A kernel that cannot be decoded fails prepare too.
  static const ir::OpDef exp_op{.name = "test.opaque", .params = {ir::Arg("x")}};
  KernelBuilder k("bad");
  auto a = k.Tensor("a", {16, 16});
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  k.Custom(&exp_op, "te", {ta}, KernelBuilder::TileAt({16, 16}, ir::DataType::FP32, 1024));
  auto bad_program = MakeProgram({k.Build()});
  pypto_rt_plan bad_plan;
  bad_plan.plan.kernels = {{.func_id = 0, .name = "bad"}};
  EXPECT_EQ(plugin->prepare("a2a3sim", bad_program.get(), &bad_plan, dir.c_str()), PYPTO_ERR_COMPILE);
  EXPECT_THAT(std::string(pypto_last_error_message()), HasSubstr("test.opaque"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace simtest
