#include "pypto/runtime/task_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using Result = pypto::expected<void, FatalError>;

PlanTensor F32(std::string name, std::vector<uint32_t> shape) {
  return PlanTensor{.name = std::move(name), .dtype = PYPTO_RT_FLOAT32, .shape = std::move(shape)};
}

ChipTensor F32Tensor(std::vector<float>& data, std::vector<uint32_t> shape) {
  return MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32);
}

TEST(TaskPlan, CheckPlanParamsCountsArguments) {
  TaskPlan plan;
  plan.params = {F32("a", {128, 128}), F32("b", {128, 128}), F32("c", {128, 128})};
  std::vector<float> a(128 * 128), b(128 * 128);
  const std::vector<ChipTensor> params = {F32Tensor(a, {128, 128}), F32Tensor(b, {128, 128})};
  auto checked = CheckPlanParams(plan, params);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, FatalCode::InvalidArgs);
  EXPECT_EQ(checked.error().message, "expected 3 tensor arguments, got 2");
}

TEST(TaskPlan, CheckPlanParamsComparesShapeAndDtype) {
  TaskPlan plan;
  plan.params = {F32("a", {128, 128}), F32("b", {128, 128}), F32("c", {128, 128})};
  std::vector<float> a(128 * 128), b(128 * 128), c(64 * 128);
  std::vector<ChipTensor> params = {F32Tensor(a, {128, 128}), F32Tensor(b, {128, 128}), F32Tensor(c, {64, 128})};
  auto checked = CheckPlanParams(plan, params);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message, "argument 2 ('c'): expected shape [128, 128] FLOAT32, got [64, 128] FLOAT32");

  params[2] = F32Tensor(c, {64, 128});
  params[1] = MakeExternalTensor(b.data(), std::array<uint32_t, 2>{128, 128}, PYPTO_RT_FLOAT16);
  checked = CheckPlanParams(plan, params);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message, "argument 1 ('b'): expected shape [128, 128] FLOAT32, got [128, 128] FLOAT16");

  params[1] = F32Tensor(b, {128, 128});
  params[2] = F32Tensor(c, {128, 64});
  plan.params[2].shape = {128, 64};
  EXPECT_TRUE(CheckPlanParams(plan, params));
}

// func 0 (AIV): t = x * scale; func 1 (AIC): y = t + offset. t is an intermediate the runtime allocates.
class PlanExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch& launch) override {
    const auto& in = *reinterpret_cast<const ChipTensor*>(launch.args[0]);
    const auto& out = *reinterpret_cast<const ChipTensor*>(launch.args[1]);
    const float operand = std::bit_cast<float>(static_cast<uint32_t>(launch.args[2]));
    const size_t n = size_t{out.shapes[0]} * out.shapes[1];
    float* dst = DataPointer<float>(out);
    if (launch.func_id == 0) {
      // The intermediate is fresh: zero-filled and cache-line aligned.
      if (out.buffer_addr % 64 != 0) return Fail("intermediate is not 64-byte aligned");
      for (size_t i = 0; i < n; ++i) {
        if (dst[i] != 0.0f) return Fail("intermediate is not zero-filled");
      }
      std::this_thread::sleep_for(20ms);  // a missing dependency would let func 1 read zeros
      for (size_t i = 0; i < n; ++i) dst[i] = DataPointer<float>(in)[i] * operand;
    } else {
      for (size_t i = 0; i < n; ++i) dst[i] = DataPointer<float>(in)[i] + operand;
    }
    return {};
  }

 private:
  static Result Fail(const char* message) {
    return pypto::unexpected(FatalError{FatalCode::KernelFailed, message});
  }
};

PlanTaskArg Param(uint32_t index, ArgDirection direction) {
  return {.direction = direction, .tensor = {.kind = PlanTensorRef::Kind::Param, .index = index}};
}
PlanTaskArg Intermediate(uint32_t index, ArgDirection direction) {
  return {.direction = direction, .tensor = {.kind = PlanTensorRef::Kind::Intermediate, .index = index}};
}
PlanTaskArg FloatScalar(float value) {
  return {.direction = ArgDirection::Scalar, .scalar = std::bit_cast<uint32_t>(value)};
}

TaskPlan ScaleThenOffsetPlan() {
  TaskPlan plan;
  plan.orchestration_name = "scale_then_offset";
  plan.params = {F32("x", {4, 8}), F32("y", {4, 8})};
  plan.intermediates = {F32("t", {4, 8})};
  plan.kernels = {{.func_id = 0, .name = "scale", .core_type = CoreType::AIV},
                  {.func_id = 1, .name = "offset", .core_type = CoreType::AIC}};
  plan.submits = {
      {.func_id = 0,
       .core_type = CoreType::AIV,
       .args = {Param(0, ArgDirection::Input), Intermediate(0, ArgDirection::OutputExisting), FloatScalar(2.0f)}},
      {.func_id = 1,
       .core_type = CoreType::AIC,
       .args = {Intermediate(0, ArgDirection::Input), Param(1, ArgDirection::OutputExisting), FloatScalar(1.0f)}},
  };
  return plan;
}

TEST(TaskPlan, RunPlanWithIntermediate) {
  const TaskPlan plan = ScaleThenOffsetPlan();
  std::vector<float> x(32), y(32, -1.0f);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i);
  const std::vector<ChipTensor> params = {F32Tensor(x, {4, 8}), F32Tensor(y, {4, 8})};

  PlanExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 2.0f * i + 1.0f) << i;
  EXPECT_EQ(runtime.tasks_completed(), 2u);
}

// The same plan with y written through a view: y seen as [8, 4], then [32] (a view of a view).
TEST(TaskPlan, RunPlanPassesViewsOfTheSameBuffer) {
  TaskPlan plan = ScaleThenOffsetPlan();
  plan.views = {{.name = "y84", .base = {.kind = PlanTensorRef::Kind::Param, .index = 1}, .shape = {8, 4}},
                {.name = "y32", .base = {.kind = PlanTensorRef::Kind::View, .index = 0}, .shape = {4, 8}}};
  plan.submits[1].args[1] = {.direction = ArgDirection::OutputExisting,
                             .tensor = {.kind = PlanTensorRef::Kind::View, .index = 1}};
  std::vector<float> x(32), y(32, -1.0f);
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i);
  const std::vector<ChipTensor> params = {F32Tensor(x, {4, 8}), F32Tensor(y, {4, 8})};
  PlanExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .worker_threads = 2}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], 2.0f * i + 1.0f) << i;

  plan.views[0].shape = {5, 4};
  auto refused = RunPlan(plan, params, runtime);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "view 'y84': ReshapedTensor: 32 elements cannot take a shape of 20");
}

TEST(TaskPlan, RunPlanChecksParams) {
  const TaskPlan plan = ScaleThenOffsetPlan();
  std::vector<float> x(32);
  const std::vector<ChipTensor> params = {F32Tensor(x, {4, 8})};
  PlanExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().message, "expected 2 tensor arguments, got 1");
  EXPECT_EQ(runtime.tasks_completed(), 0u);
}

TEST(TaskPlan, RunPlanRefusesDanglingReference) {
  TaskPlan plan = ScaleThenOffsetPlan();
  plan.submits[1].args[0] = Intermediate(3, ArgDirection::Input);
  std::vector<float> x(32), y(32);
  const std::vector<ChipTensor> params = {F32Tensor(x, {4, 8}), F32Tensor(y, {4, 8})};
  PlanExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code, FatalCode::InvalidArgs);
  EXPECT_EQ(ran.error().message, "submit 1: argument 0 refers to intermediate 3, but the plan has 1");
  // The first submit still ran to completion before RunPlan returned.
  EXPECT_EQ(runtime.tasks_completed(), 1u);
}

// Records what each kernel receives in args[]: the descriptors behind the tensor slots and the raw
// scalar slots that follow them.
class RecordingExecutor : public CoreExecutor {
 public:
  struct Launch {
    int32_t func_id = -1;
    std::vector<ChipTensor> tensors;
    std::vector<uint64_t> scalars;
  };

  explicit RecordingExecutor(std::vector<size_t> tensor_counts, std::vector<size_t> scalar_counts)
      : tensor_counts_(std::move(tensor_counts)), scalar_counts_(std::move(scalar_counts)) {}

  Result Execute(const KernelLaunch& launch) override {
    Launch record{.func_id = launch.func_id};
    const auto f = static_cast<size_t>(launch.func_id);
    for (size_t i = 0; i < tensor_counts_[f]; ++i)
      record.tensors.push_back(*reinterpret_cast<const ChipTensor*>(launch.args[i]));
    for (size_t i = 0; i < scalar_counts_[f]; ++i)
      record.scalars.push_back(static_cast<uint64_t>(launch.args[tensor_counts_[f] + i]));
    std::lock_guard lock(mutex_);
    launches_.push_back(std::move(record));
    return {};
  }

  std::vector<Launch> launches() {
    std::lock_guard lock(mutex_);
    auto sorted = launches_;
    std::ranges::sort(sorted, {}, &Launch::func_id);
    return sorted;
  }

 private:
  std::vector<size_t> tensor_counts_, scalar_counts_;
  std::mutex mutex_;
  std::vector<Launch> launches_;
};

TEST(TaskPlan, RunPlanDeliversIntermediatesAndScalars) {
  // func 0 writes intermediate 0 from x with a float and a negative int scalar; func 1 reads it into y,
  // with intermediate 1 as scratch.
  TaskPlan plan;
  plan.params = {F32("x", {4, 8}), F32("y", {4, 8})};
  plan.intermediates = {F32("t", {4, 8}), PlanTensor{.name = "u", .dtype = PYPTO_RT_INT32, .shape = {3}}};
  plan.kernels = {{.func_id = 0, .name = "produce"}, {.func_id = 1, .name = "consume"}};
  PlanTaskArg negative{.direction = ArgDirection::Scalar, .scalar = static_cast<uint64_t>(int64_t{-3})};
  plan.submits = {
      {.func_id = 0, .args = {Param(0, ArgDirection::Input), Intermediate(0, ArgDirection::OutputExisting),
                              FloatScalar(2.0f), negative}},
      {.func_id = 1, .args = {Intermediate(0, ArgDirection::Input), Intermediate(1, ArgDirection::InOut),
                              Param(1, ArgDirection::OutputExisting)}},
  };
  std::vector<float> x(32), y(32);
  const std::vector<ChipTensor> params = {F32Tensor(x, {4, 8}), F32Tensor(y, {4, 8})};
  RecordingExecutor executor({2, 3}, {2, 0});
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();

  auto launches = executor.launches();
  ASSERT_EQ(launches.size(), 2u);
  const auto& produce = launches[0];
  const auto& consume = launches[1];
  EXPECT_EQ(produce.tensors[0].buffer_addr, reinterpret_cast<uint64_t>(x.data()));
  const ChipTensor& t = produce.tensors[1];
  EXPECT_EQ(t.ndims, 2u);
  EXPECT_EQ(t.shapes[0], 4u);
  EXPECT_EQ(t.shapes[1], 8u);
  EXPECT_EQ(t.dtype, PYPTO_RT_FLOAT32);
  EXPECT_GE(t.buffer_size, 4u * 8u * sizeof(float));
  EXPECT_EQ(t.buffer_addr % 64, 0u);
  EXPECT_NE(t.buffer_addr, reinterpret_cast<uint64_t>(x.data()));
  EXPECT_NE(t.buffer_addr, reinterpret_cast<uint64_t>(y.data()));
  // The scalars follow the tensors, bit for bit: a float in the low 32 bits, an int sign-extended.
  EXPECT_EQ(produce.scalars, (std::vector<uint64_t>{0x40000000u, 0xFFFFFFFFFFFFFFFDull}));

  // The consumer sees the same intermediate buffer; the second intermediate is a buffer of its own.
  EXPECT_EQ(consume.tensors[0].buffer_addr, t.buffer_addr);
  const ChipTensor& u = consume.tensors[1];
  EXPECT_EQ(u.ndims, 1u);
  EXPECT_EQ(u.shapes[0], 3u);
  EXPECT_EQ(u.dtype, PYPTO_RT_INT32);
  EXPECT_NE(u.buffer_addr, t.buffer_addr);
  EXPECT_EQ(consume.tensors[2].buffer_addr, reinterpret_cast<uint64_t>(y.data()));
}

}  // namespace
}  // namespace pypto::rt

namespace pypto::rt {
namespace {

// func 0 finishes late; func 1 records whether func 0 had finished when it started.
class LateFirstExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch& launch) override {
    if (launch.func_id == 0) {
      std::this_thread::sleep_for(20ms);
      first_done_ = true;
    } else {
      second_saw_first_done_ = first_done_.load();
    }
    return {};
  }
  std::atomic<bool> first_done_ = false, second_saw_first_done_ = false;
};

// Two kernels writing different tensors, ordered only by explicit dependencies through a dummy task.
TaskPlan OrderedThroughADummy() {
  TaskPlan plan;
  plan.params = {F32("a", {4, 8}), F32("b", {4, 8})};
  plan.kernels = {{.func_id = 0, .name = "first"}, {.func_id = 1, .name = "second"}};
  plan.submits = {
      {.func_id = 0, .args = {Param(0, ArgDirection::OutputExisting)}},
      {.dummy = true, .deps = {0}},
      {.func_id = 1, .deps = {1}, .args = {Param(1, ArgDirection::OutputExisting)}},
  };
  return plan;
}

TEST(TaskPlan, ExplicitDependenciesOrderTasksThatShareNoTensor) {
  const TaskPlan plan = OrderedThroughADummy();
  std::vector<float> a(32), b(32);
  const std::vector<ChipTensor> params = {F32Tensor(a, {4, 8}), F32Tensor(b, {4, 8})};
  LateFirstExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  EXPECT_TRUE(executor.second_saw_first_done_);
  EXPECT_EQ(runtime.tasks_completed(), 2u);  // kernel tasks; the dummy runs none
  EXPECT_TRUE(SubmitKernels(plan.submits[1]).empty());
}

TEST(TaskPlan, ADependencyOnALaterSubmitIsRefused) {
  TaskPlan plan = OrderedThroughADummy();
  plan.submits[1].deps = {2};
  std::vector<float> a(32), b(32);
  const std::vector<ChipTensor> params = {F32Tensor(a, {4, 8}), F32Tensor(b, {4, 8})};
  LateFirstExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code, FatalCode::InvalidArgs);
  EXPECT_EQ(ran.error().message, "submit 1 depends on submit 2, which is not an earlier one");
}

// A plan's manual scope: the two writers of y run together (each waits until the other has started);
// in an auto scope the second would wait for the first, and neither would meet the other.
class TogetherExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch&) override {
    std::unique_lock lock(mu_);
    ++started_;
    cv_.notify_all();
    met_ &= cv_.wait_for(lock, 5s, [&] { return started_ >= 2; });
    return {};
  }
  bool met_ = true;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
};

TEST(TaskPlan, AManualScopeDerivesNoDependenciesFromTensors) {
  TaskPlan plan;
  plan.orchestration_name = "manual";
  plan.params = {F32("y", {4, 8})};
  plan.kernels = {{.func_id = 0, .name = "write", .core_type = CoreType::AIV}};
  plan.submits = {
      {.func_id = 0, .args = {Param(0, ArgDirection::InOut)}, .scopes_opened = 1, .opens_manual_scope = true},
      {.func_id = 0, .args = {Param(0, ArgDirection::InOut)}, .scopes_closed = 1},
  };
  std::vector<float> y(32);
  const std::vector<ChipTensor> params = {F32Tensor(y, {4, 8})};
  TogetherExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  EXPECT_TRUE(executor.met_);
}

TEST(TaskPlan, AScopeOpenedInsideAManualOneFailsTheRun) {
  TaskPlan plan;
  plan.orchestration_name = "nested";
  plan.params = {F32("y", {4, 8})};
  plan.kernels = {{.func_id = 0, .name = "write", .core_type = CoreType::AIV}};
  plan.submits = {
      {.func_id = 0, .args = {Param(0, ArgDirection::InOut)}, .scopes_opened = 1, .opens_manual_scope = true},
      {.func_id = 0, .args = {Param(0, ArgDirection::InOut)}, .scopes_opened = 1, .scopes_closed = 2},
  };
  std::vector<float> y(32);
  const std::vector<ChipTensor> params = {F32Tensor(y, {4, 8})};
  struct : CoreExecutor {
    Result Execute(const KernelLaunch&) override { return {}; }
  } executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code, FatalCode::InvalidArgs);
  EXPECT_NE(ran.error().message.find("an auto scope opened at depth 2 inside a manual scope"), std::string::npos);
}

}  // namespace
}  // namespace pypto::rt
