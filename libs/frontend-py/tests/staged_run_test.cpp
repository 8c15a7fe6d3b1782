// A run in stages (codegen_orch::RunDeferredPlan): orchestration code that reads what a kernel wrote
// runs the tasks before the read first. Checked here on the plans each stage gets: which submits,
// the intermediates passed as parameters, scopes closed and reopened across the boundaries, and
// dependencies on earlier stages dropped. The numbers a real run computes are checked end to end in
// tests/python/test_orchestration_reads.py.
#include <algorithm>
#include <string>
#include <vector>

#include "orchestration_test_util.h"
#include "pypto/ir/dynamic_extent.h"

namespace pypto::frontend::testing {
namespace {

// One kernel computes how many rows each of four groups has; each group's loop runs that many tasks.
constexpr const char* kRouted =
    "@pl.jit\n"
    "def f(x: pl.Tensor[[32, 64], pl.FP32], counts: pl.Tensor[[4, 8], pl.INT32],\n"
    "      y: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]):\n"
    "    rows = pl.create_tensor([4, 8], dtype=pl.INT32)\n"
    "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"count\"):\n"
    "        c = counts[0:4, :]\n"
    "        rows[0:4, :] = pl.add(c, c)\n"
    "    for e in pl.range(4):\n"
    "        n = pl.read(rows, [e, 0])\n"
    "        for r in pl.range(n):\n"
    "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"copy\"):\n"
    "                y[e * 8 + r : e * 8 + r + 1, :] = x[e * 8 + r : e * 8 + r + 1, :]\n"
    "    return y\n";

// What one stage was given: its submits by kernel name, the parameters, and its scope balance.
struct Stage {
  std::vector<std::string> kernels;
  size_t params = 0;
  int scopes_opened = 0, scopes_closed = 0;
};

TEST(StagedRun, AReadOfAComputedTensorRunsTheTasksBeforeItFirst) {
  auto request = Request(kRouted, {{"x", {32, 64}}, {"counts", {4, 8}}, {"y", {32, 64}}});
  request.tensor_specs["counts"].dtype = ir::DataType::INT32;
  auto generated = GenerateForTest(request);
  ASSERT_TRUE(generated) << generated.error().str();
  const codegen_orch::Orchestration* orchestration = &generated->orchestration;
  ASSERT_NE(orchestration->deferred, nullptr);
  ASSERT_EQ(orchestration->plan.intermediates.size(), 1u);

  std::vector<float> x(32 * 64), y(32 * 64);
  std::vector<int32_t> counts(4 * 8);
  const std::vector<rt::ChipTensor> tensors = {
      rt::MakeExternalTensor(x.data(), std::vector<uint32_t>{32, 64}, PYPTO_RT_FLOAT32),
      rt::MakeExternalTensor(counts.data(), std::vector<uint32_t>{4, 8}, PYPTO_RT_INT32),
      rt::MakeExternalTensor(y.data(), std::vector<uint32_t>{32, 64}, PYPTO_RT_FLOAT32)};
  std::vector<Stage> stages;
  auto run_stage = [&](const rt::TaskPlan& plan, std::span<const rt::ChipTensor> params) -> ir::Result<bool> {
    Stage stage{.params = params.size()};
    for (const auto& submit : plan.submits) {
      stage.kernels.push_back(orchestration->kernels.at(static_cast<size_t>(submit.func_id)).name);
      stage.scopes_opened += submit.scopes_opened;
      stage.scopes_closed += submit.scopes_closed;
      for (uint32_t dep : submit.deps) EXPECT_LT(dep, plan.submits.size());
    }
    if (stages.empty()) {  // what the counting kernel writes: rows of groups 0..3 = 2, 0, 3, 1
      const int32_t rows[4] = {2, 0, 3, 1};
      auto* out = reinterpret_cast<int32_t*>(params[3].buffer_addr);
      for (int g = 0; g < 4; ++g) std::fill_n(out + g * 8, 8, rows[g]);
    }
    stages.push_back(std::move(stage));
    return true;
  };
  auto ran = codegen_orch::RunDeferredPlan(*orchestration->deferred, orchestration->plan, tensors, run_stage);
  ASSERT_TRUE(ran) << ran.error().str();

  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].kernels, std::vector<std::string>{"count"});
  EXPECT_EQ(stages[1].kernels, std::vector<std::string>(6, "copy"));
  for (const Stage& stage : stages) {
    EXPECT_EQ(stage.params, 4u);  // the caller's three tensors, then `rows`
    EXPECT_EQ(stage.scopes_opened, stage.scopes_closed);
  }
}

TEST(StagedRun, APlanWhoseReadsNeedNoTaskRunsAsOneStage) {
  auto request = Request("@pl.jit\n"
                         "def f(x: pl.Tensor[[16, 32], pl.FP32], n: pl.Tensor[[1], pl.INT32],\n"
                         "      y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
                         "    for r in pl.range(pl.read(n, [0])):\n"
                         "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"copy\"):\n"
                         "            y[r : r + 1, :] = x[r : r + 1, :]\n"
                         "    return y\n",
                         {{"x", {16, 32}}, {"n", {1}}, {"y", {16, 32}}});
  request.tensor_specs["n"].dtype = ir::DataType::INT32;
  auto generated = GenerateForTest(request);
  ASSERT_TRUE(generated) << generated.error().str();
  const codegen_orch::Orchestration* orchestration = &generated->orchestration;
  ASSERT_NE(orchestration->deferred, nullptr);

  std::vector<float> x(16 * 32), y(16 * 32);
  int32_t n = 5;
  const std::vector<rt::ChipTensor> tensors = {
      rt::MakeExternalTensor(x.data(), std::vector<uint32_t>{16, 32}, PYPTO_RT_FLOAT32),
      rt::MakeExternalTensor(&n, std::vector<uint32_t>{1}, PYPTO_RT_INT32),
      rt::MakeExternalTensor(y.data(), std::vector<uint32_t>{16, 32}, PYPTO_RT_FLOAT32)};
  std::vector<size_t> submits, params;
  auto ran = codegen_orch::RunDeferredPlan(
      *orchestration->deferred, orchestration->plan, tensors,
      [&](const rt::TaskPlan& plan, std::span<const rt::ChipTensor> passed) -> ir::Result<bool> {
        submits.push_back(plan.submits.size());
        params.push_back(passed.size());
        return true;
      });
  ASSERT_TRUE(ran) << ran.error().str();
  EXPECT_EQ(submits, std::vector<size_t>{5});
  EXPECT_EQ(params, std::vector<size_t>{3});
}

// A program compiled for every extent of M (the JIT passes the axis as -1): the entry reads M off x,
// the C++ from the descriptor, and each run's plan expands as many tasks as that run's x has tiles.
TEST(StagedRun, ADynamicAxisIsReadFromEachRunsTensor) {
  auto request = Request("@pl.jit\n"
                         "def f(x: pl.Tensor[[M, 32], pl.FP32], y: pl.Out[pl.Tensor[[M, 32], pl.FP32]]):\n"
                         "    for r in pl.range(0, M, 16):\n"
                         "        rows = pl.min(16, M - r)\n"
                         "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"copy\"):\n"
                         "            t = pl.load(x, [r, 0], [16, 32], valid_shape=[rows, 32])\n"
                         "            pl.store(t, [r, 0], y)\n"
                         "    return y\n",
                         {{"x", {ir::kDynamicExtent, 32}}, {"y", {ir::kDynamicExtent, 32}}});
  request.constants["M"] = DynamicDim{"M"};
  auto generated = GenerateForTest(request);
  ASSERT_TRUE(generated) << generated.error().str();
  const codegen_orch::Orchestration* orchestration = &generated->orchestration;
  ASSERT_NE(orchestration->deferred, nullptr);
  EXPECT_NE(orchestration->cpp_source.find("int64_t M = (int64_t)ext_x.shapes[0];\n"), std::string::npos)
      << orchestration->cpp_source;
  for (uint32_t rows : {7u, 40u}) {
    std::vector<float> x(rows * 32), y(rows * 32);
    const std::vector<rt::ChipTensor> tensors = {
        rt::MakeExternalTensor(x.data(), std::vector<uint32_t>{rows, 32}, PYPTO_RT_FLOAT32),
        rt::MakeExternalTensor(y.data(), std::vector<uint32_t>{rows, 32}, PYPTO_RT_FLOAT32)};
    size_t submits = 0;
    auto ran = codegen_orch::RunDeferredPlan(
        *orchestration->deferred, orchestration->plan, tensors,
        [&](const rt::TaskPlan& plan, std::span<const rt::ChipTensor>) -> ir::Result<bool> {
          submits += plan.submits.size();
          return true;
        });
    ASSERT_TRUE(ran) << ran.error().str();
    EXPECT_EQ(submits, (rows + 15) / 16);
  }
}

}  // namespace
}  // namespace pypto::frontend::testing
