// Ifs in orchestration code on orchestration scalars (a scalar parameter, loop variables, values
// computed from them): source -> printed IR, the C++ the orchestration becomes (a real if/else,
// scalar results declared before it), the task plan's choice of branch, and the conditions the plan
// cannot evaluate, with their positions.
#include <string>
#include <vector>

#include "orchestration_test_util.h"

namespace pypto::frontend::testing {
namespace {

// `f(x, n: INT32 scalar, y)` with n fixed at `n` (a Python number passed to the @pl.jit function).
ParseRequest ScalarRequest(const std::string& body, int64_t n) {
  auto request = Request("@pl.jit\n"
                         "def f(x: pl.Tensor[[16, 32], pl.FP32], n: pl.Scalar[pl.INT32], "
                         "y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n" +
                             body,
                         {{"x", {16, 32}}, {"y", {16, 32}}});
  request.constants["n"] = n;
  return request;
}

// The orchestration of the lowered program (which these plans do not point into), or the rendered
// diagnostic.
ir::Result<codegen_orch::Orchestration> Generate(const ParseRequest& request) {
  auto generated = GenerateForTest(request);
  if (!generated) return pypto::unexpected(generated.error());
  return std::move(generated->orchestration);
}

// The kernel each submit of the plan runs, by name, with its scalar arguments.
std::vector<std::string> Submits(const codegen_orch::Orchestration& orchestration) {
  std::vector<std::string> submits;
  for (const auto& submit : orchestration.plan.submits) {
    std::string text = orchestration.kernels.at(static_cast<size_t>(submit.func_id)).name;
    for (const auto& arg : submit.args)
      if (arg.direction == rt::ArgDirection::Scalar) text += " " + std::to_string(static_cast<int64_t>(arg.scalar));
    submits.push_back(text);
  }
  return submits;
}

constexpr const char* kChoose =
    "    k = pl.cast(n, pl.INDEX)\n"
    "    if k < 8:\n"
    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"double\"):\n"
    "            y[:] = pl.mul(x, 2.0)\n"
    "    else:\n"
    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"expo\"):\n"
    "            y[:] = pl.exp(x)\n"
    "    return y\n";

TEST(OrchestrationIf, AnIfOnAScalarParameterIsAnIfInTheIr) {
  EXPECT_EQ(ParseText(ScalarRequest(kChoose, 5)),
            "@pl.program\n"
            "class _jit_f:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def f(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
            "pl.Tensor[[16, 32], pl.FP32]:\n"
            "        k: pl.Scalar[pl.INDEX] = pl.scalar.cast(5, target_type=pl.INDEX)\n"
            "        if k < 8:\n"
            "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"double\"):\n"
            "                pl.tile.store(pl.tile.muls(pl.tile.load(x, [0, 0], [16, 32]), 2.0), [0, 0], y)\n"
            "        else:\n"
            "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"expo\"):\n"
            "                pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
            "        return y\n");
}

// The C++ keeps the if; the plan holds the submit of the branch the scalar selects.
TEST(OrchestrationIf, TheCppBranchesAndThePlanTakesOneBranch) {
  auto small = Generate(ScalarRequest(kChoose, 5));
  ASSERT_TRUE(small) << small.error().str();
  EXPECT_NE(small->cpp_source.find("  PTO2_SCOPE() {\n"
                                   "    int64_t k = static_cast<int64_t>(5);\n"
                                   "    if (k < 8) {\n"
                                   "      CoreTaskArgs params_t0;\n"
                                   "      params_t0.add_input(ext_x);\n"
                                   "      params_t0.add_output(ext_y);\n"
                                   "      rt_submit_aiv_task(0, params_t0);\n"
                                   "    } else {\n"
                                   "      CoreTaskArgs params_t1;\n"
                                   "      params_t1.add_input(ext_x);\n"
                                   "      params_t1.add_output(ext_y);\n"
                                   "      rt_submit_aiv_task(1, params_t1);\n"
                                   "    }\n"
                                   "  }\n"),
            std::string::npos)
      << small->cpp_source;
  EXPECT_EQ(Submits(*small), (std::vector<std::string>{"double"}));
  auto large = Generate(ScalarRequest(kChoose, 9));
  ASSERT_TRUE(large) << large.error().str();
  EXPECT_EQ(Submits(*large), (std::vector<std::string>{"expo"}));
}

// In a loop the plan takes each iteration's branch: both kernels run, in loop order.
TEST(OrchestrationIf, EachIterationOfALoopTakesItsOwnBranch) {
  const std::string body =
      "    for i in pl.range(4):\n"
      "        if i < n:\n"
      "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"a\"):\n"
      "                y[i * 4 : i * 4 + 4, :] = pl.mul(x[i * 4 : i * 4 + 4, :], 2.0)\n"
      "        else:\n"
      "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"b\"):\n"
      "                y[i * 4 : i * 4 + 4, :] = pl.exp(x[i * 4 : i * 4 + 4, :])\n"
      "    return y\n";
  auto orchestration = Generate(ScalarRequest(body, 1));
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  EXPECT_NE(orchestration->cpp_source.find("        if (i < 1) {\n"), std::string::npos) << orchestration->cpp_source;
  EXPECT_EQ(Submits(*orchestration), (std::vector<std::string>{"a 0", "b 1", "b 2", "b 3"}));
}

// Scalars assigned in both branches (an if yielding values) reach the launches after the if.
TEST(OrchestrationIf, ScalarsClampedByIfsReachLaterLaunches) {
  const std::string body =
      "    k = pl.cast(n, pl.INDEX)\n"
      "    if k < 0:\n"
      "        k = pl.cast(0, pl.INDEX)\n"
      "    if k > 3:\n"
      "        k = pl.cast(3, pl.INDEX)\n"
      "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"rows\"):\n"
      "        y[0:4, :] = pl.add(x[k * 4 : k * 4 + 4, :], 1.0)\n"
      "    return y\n";
  auto clamped = Generate(ScalarRequest(body, 7));
  ASSERT_TRUE(clamped) << clamped.error().str();
  EXPECT_NE(clamped->cpp_source.find("    int64_t k = static_cast<int64_t>(7);\n"
                                     "    int64_t k_1;\n"
                                     "    if (k < 0) {\n"
                                     "      int64_t k_2 = static_cast<int64_t>(0);\n"
                                     "      k_1 = k_2;\n"
                                     "    } else {\n"
                                     "      k_1 = k;\n"
                                     "    }\n"
                                     "\n"
                                     "    int64_t k_3;\n"
                                     "    if (k_1 > 3) {\n"
                                     "      int64_t k_4 = static_cast<int64_t>(3);\n"
                                     "      k_3 = k_4;\n"
                                     "    } else {\n"
                                     "      k_3 = k_1;\n"
                                     "    }\n"
                                     "\n"
                                     "    CoreTaskArgs params_t0;\n"
                                     "    params_t0.add_input(ext_x);\n"
                                     "    params_t0.add_output(ext_y);\n"
                                     "    params_t0.add_scalar(k_3);\n"),
            std::string::npos)
      << clamped->cpp_source;
  EXPECT_EQ(Submits(*clamped), (std::vector<std::string>{"rows 3"}));
  auto negative = Generate(ScalarRequest(body, -5));
  ASSERT_TRUE(negative) << negative.error().str();
  EXPECT_EQ(Submits(*negative), (std::vector<std::string>{"rows 0"}));
  auto inside = Generate(ScalarRequest(body, 2));
  ASSERT_TRUE(inside) << inside.error().str();
  EXPECT_EQ(Submits(*inside), (std::vector<std::string>{"rows 2"}));
}

// A launch's TaskId bound in both branches names whichever ran; a later launch waits for it.
TEST(OrchestrationIf, ALaterLaunchWaitsForTheBranchThatRan) {
  const std::string body =
      "    k = pl.cast(n, pl.INDEX)\n"
      "    if k < 8:\n"
      "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"double\") as t:\n"
      "            y[:] = pl.mul(x, 2.0)\n"
      "    else:\n"
      "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"expo\") as t:\n"
      "            y[:] = pl.exp(x)\n"
      "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"after\", deps=[t]):\n"
      "        y[:] = pl.add(x, 1.0)\n"
      "    return y\n";
  auto orchestration = Generate(ScalarRequest(body, 9));
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  EXPECT_NE(orchestration->cpp_source.find("    PTO2TaskId t = PTO2TaskId::invalid();\n"
                                           "    if (k < 8) {\n"
                                           "      CoreTaskArgs params_t0;\n"
                                           "      params_t0.add_input(ext_x);\n"
                                           "      params_t0.add_output(ext_y);\n"
                                           "      PTO2TaskId t_1 = rt_submit_aiv_task(0, params_t0).task_id();\n"
                                           "      t = t_1;\n"
                                           "    } else {\n"
                                           "      CoreTaskArgs params_t1;\n"
                                           "      params_t1.add_input(ext_x);\n"
                                           "      params_t1.add_output(ext_y);\n"
                                           "      PTO2TaskId t_2 = rt_submit_aiv_task(1, params_t1).task_id();\n"
                                           "      t = t_2;\n"
                                           "    }\n"
                                           "\n"
                                           "    CoreTaskArgs params_t2;\n"
                                           "    params_t2.add_input(ext_x);\n"
                                           "    params_t2.add_output(ext_y);\n"
                                           "    PTO2TaskId params_t2_deps[1] = {t};\n"),
            std::string::npos)
      << orchestration->cpp_source;
  EXPECT_EQ(Submits(*orchestration), (std::vector<std::string>{"expo", "after"}));
  ASSERT_EQ(orchestration->plan.submits.size(), 2u);
  EXPECT_EQ(orchestration->plan.submits[1].deps, (std::vector<uint32_t>{0}));
}

// A condition that reads an input tensor: the C++ reads the element before the if, and the plan is
// expanded for each run from the tensors passed (a deferred plan).
TEST(OrchestrationIf, AConditionReadFromAnInputTensorIsDecidedPerRun) {
  auto request = ScalarRequest("    if pl.read(x, [0, 1]) > 0.0:\n"
                               "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"expo\"):\n"
                               "            y[:] = pl.exp(x)\n"
                               "    return y\n",
                               0);
  auto generated = GenerateForTest(request);  // keeps the lowered program the deferred plan points into
  ASSERT_TRUE(generated) << generated.error().str();
  const codegen_orch::Orchestration* orchestration = &generated->orchestration;
  ASSERT_NE(orchestration->deferred, nullptr);
  EXPECT_TRUE(orchestration->plan.submits.empty());
  EXPECT_NE(orchestration->cpp_source.find("    uint32_t element_index[2] = {static_cast<uint32_t>(0), "
                                           "static_cast<uint32_t>(1)};\n"
                                           "    float element = get_tensor_data<float>(ext_x, 2, element_index);\n"),
            std::string::npos)
      << orchestration->cpp_source;
  std::vector<float> x(16 * 32, 0.0f), y(16 * 32, 0.0f);
  const std::vector<uint32_t> shape = {16, 32};
  for (float first : {2.0f, -2.0f}) {
    x[1] = first;
    const std::vector<rt::ChipTensor> tensors = {rt::MakeExternalTensor(x.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(y.data(), shape, PYPTO_RT_FLOAT32)};
    size_t submits = 0;
    auto ran = codegen_orch::RunDeferredPlan(
        *orchestration->deferred, orchestration->plan, tensors,
        [&](const rt::TaskPlan& plan, std::span<const rt::ChipTensor>) -> ir::Result<bool> {
          submits += plan.submits.size();
          return true;
        });
    ASSERT_TRUE(ran) << ran.error().str();
    EXPECT_EQ(submits, first > 0 ? 1u : 0u);
  }
}

}  // namespace
}  // namespace pypto::frontend::testing
