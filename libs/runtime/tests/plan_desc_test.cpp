// The plan as plugins read it through the C ABI (pypto-c/plan.h).
#include "pypto-c/plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "pypto/runtime/c_api_bridge.h"

namespace pypto::rt {
namespace {

PlanTensor F32(std::string name, std::vector<uint32_t> shape) {
  return PlanTensor{.name = std::move(name), .dtype = PYPTO_RT_FLOAT32, .shape = std::move(shape)};
}

PlanTaskArg Tensor(ArgDirection direction, PlanTensorRef::Kind kind, uint32_t index) {
  return PlanTaskArg{.direction = direction, .tensor = {.kind = kind, .index = index}};
}

// x[8, 16] -> t0 writes rows 4..7 of tmp (a view), t1 reads the view back and writes y after t0
// explicitly; t2 is a mixed submit with a scalar.
pypto_rt_plan ThreeTasks() {
  pypto_rt_plan handle;
  TaskPlan& plan = handle.plan;
  plan.orchestration_name = "orch";
  plan.params = {F32("x", {8, 16}), F32("y", {4, 16})};
  plan.intermediates = {F32("tmp", {8, 16})};
  plan.views = {PlanView{.name = "tmp_lo",
                         .base = {.kind = PlanTensorRef::Kind::Intermediate, .index = 0},
                         .shape = {4, 16},
                         .offsets = {4, 0}}};
  plan.kernels = {{.func_id = 0, .name = "k_add", .core_type = CoreType::AIV},
                  {.func_id = 1, .name = "k_mm", .core_type = CoreType::AIC}};
  using K = PlanTensorRef::Kind;
  plan.submits.push_back({.func_id = 0, .args = {Tensor(ArgDirection::Input, K::Param, 0),
                                                 Tensor(ArgDirection::Output, K::View, 0)}});
  plan.submits.push_back({.func_id = 0, .deps = {0}, .args = {Tensor(ArgDirection::Input, K::View, 0),
                                                              Tensor(ArgDirection::Output, K::Param, 1)}});
  plan.submits.push_back({.mixed = MixedKernels{.aic = 1, .aiv0 = 0, .aiv1 = 0},
                          .args = {Tensor(ArgDirection::InOut, K::Param, 1),
                                   PlanTaskArg{.direction = ArgDirection::Scalar, .scalar = 7}}});
  return handle;
}

TEST(PlanDesc, DescribesTasksKernelsAndRegions) {
  const pypto_rt_plan plan = ThreeTasks();
  pypto_plan_desc* desc = nullptr;
  ASSERT_EQ(pypto_rt_plan_describe(&plan, &desc), PYPTO_OK) << pypto_last_error_message();
  EXPECT_STREQ(desc->orchestration, "orch");
  ASSERT_EQ(desc->num_tensors, 3u);
  EXPECT_STREQ(desc->tensors[2].name, "tmp");
  EXPECT_EQ(desc->tensors[2].is_param, 0);
  ASSERT_EQ(desc->num_kernels, 2u);
  EXPECT_EQ(desc->kernels[1].core_type, static_cast<uint32_t>(PYPTO_CORE_AIC));
  ASSERT_EQ(desc->num_tasks, 3u);

  const pypto_plan_arg& out = desc->tasks[0].args[1];
  EXPECT_EQ(out.direction, static_cast<uint32_t>(PYPTO_ARG_OUTPUT));
  EXPECT_STREQ(out.tensor, "tmp_lo");
  EXPECT_EQ(out.region.root, 2u);
  EXPECT_EQ(out.region.start, 64u);  // row 4 of 16 columns
  EXPECT_EQ(out.region.extent, 64u);
  EXPECT_EQ(out.region.strides[0], 16u);

  ASSERT_EQ(desc->tasks[1].num_deps, 1u);
  EXPECT_EQ(desc->tasks[1].deps[0], 0u);
  EXPECT_EQ(desc->tasks[2].num_kernels, 3u);
  EXPECT_EQ(desc->tasks[2].kernels[0].func_id, 1);
  EXPECT_EQ(desc->tasks[2].args[1].direction, static_cast<uint32_t>(PYPTO_ARG_SCALAR));
  EXPECT_EQ(desc->tasks[2].args[1].scalar, 7u);
  pypto_rt_plan_desc_free(desc);
}

TEST(PlanDesc, JsonSaysTheSame) {
  const pypto_rt_plan plan = ThreeTasks();
  char* text = nullptr;
  ASSERT_EQ(pypto_rt_plan_to_json(&plan, -1, &text), PYPTO_OK) << pypto_last_error_message();
  const auto json = nlohmann::json::parse(text);
  pypto_string_free(text);
  EXPECT_EQ(json["format"], "pypto-plan");
  EXPECT_EQ(json["tasks"][0]["args"][1],
            nlohmann::json::parse(R"({"direction": "Output", "tensor": "tmp_lo", "region": {"root": "tmp",
                                      "start": 64, "extent": 64, "shape": [4, 16], "strides": [16, 1]}})"));
  EXPECT_EQ(json["tasks"][1]["deps"], nlohmann::json::parse("[0]"));
  EXPECT_EQ(json["tasks"][2]["kernels"],
            nlohmann::json::parse(R"([{"func_id": 1, "core_type": "AIC"}, {"func_id": 0, "core_type": "AIV"},
                                      {"func_id": 0, "core_type": "AIV"}])"));
  EXPECT_EQ(json["kernels"][0], nlohmann::json::parse(R"({"func_id": 0, "name": "k_add", "core_type": "AIV"})"));
}

TEST(PlanDesc, RefusesAViewOutsideItsTensor) {
  pypto_rt_plan plan = ThreeTasks();
  plan.plan.views[0].offsets = {8, 0};
  pypto_plan_desc* desc = nullptr;
  EXPECT_EQ(pypto_rt_plan_describe(&plan, &desc), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(desc, nullptr);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_rt_plan_describe: view 'tmp_lo': SlicedTensor: the window [8, 12) of dimension 0 is outside its "
               "extent 8");
}

}  // namespace
}  // namespace pypto::rt
