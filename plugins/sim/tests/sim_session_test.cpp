// Sessions (plugin ABI 2): a program opened once and run many times. Every run must behave as the
// one-shot execute does: outputs in the caller's tensors, dependencies honoured, the same errors.
// run_session_plan (ABI 4): a session running other plans of its kernels, as a plan expanded at each
// run does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core_memory.h"
#include "sim_test_util.h"

namespace simtest {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kTileBytes = 16 * 16 * 4;

// a, b -> c = op(a, b) over [16, 16], the result reusing a's place.
ir::FunctionPtr BinaryKernel(const std::string& name, const std::string& op) {
  KernelBuilder k(name);
  auto a = k.Tensor("a", {16, 16});
  auto b = k.Tensor("b", {16, 16});
  auto c = k.Tensor("c", {16, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto tb = k.Load("tb", b, {0, 0}, {16, 16}, kTileBytes);
  auto tc = k.Op(op, "tc", ta, tb, 0);
  k.Store(tc, {0, 0}, c);
  return k.Build();
}

std::vector<rt::PlanTensor> ThreeParams() {
  return {{"a", PYPTO_RT_FLOAT32, {16, 16}}, {"b", PYPTO_RT_FLOAT32, {16, 16}}, {"c", PYPTO_RT_FLOAT32, {16, 16}}};
}

const std::vector<rt::ArgDirection> kInInOut = {rt::ArgDirection::Input, rt::ArgDirection::Input,
                                                rt::ArgDirection::OutputExisting};

std::vector<float> Iota(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// An open session, closed when the test is done with it.
struct SessionCloser {
  void operator()(pypto_backend_session* session) const { Plugin()->close_session(session); }
};
using SessionPtr = std::unique_ptr<pypto_backend_session, SessionCloser>;

struct Opened {
  SessionPtr session;
  RunResult result;
};

Opened Open(const pypto_ir_program& program, const pypto_rt_plan& plan, const char* platform = "a2a3sim") {
  Opened opened;
  pypto_backend_session* session = nullptr;
  opened.result.status = Plugin()->open_session(platform, &program, &plan, &session);
  if (opened.result.status != PYPTO_OK) {
    opened.result.message = pypto_last_error_message();
    EXPECT_EQ(session, nullptr);
  }
  opened.session.reset(session);
  return opened;
}

RunResult RunSession(pypto_backend_session* session, const std::vector<pypto_chip_tensor>& params) {
  RunResult result;
  result.status = Plugin()->run_session(session, params.data(), params.size());
  if (result.status != PYPTO_OK) result.message = pypto_last_error_message();
  return result;
}

TEST(SimSession, PluginOffersSessions) {
  const auto* plugin = Plugin();
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->abi_version, 4u);
  EXPECT_NE(plugin->open_session, nullptr);
  EXPECT_NE(plugin->run_session, nullptr);
  EXPECT_NE(plugin->close_session, nullptr);
  EXPECT_NE(plugin->run_session_plan, nullptr);
}

TEST(SimSession, RunsRepeatedlyIntoEachCallsTensors) {
  auto program = MakeProgram({BinaryKernel("add_kernel", "tile.add")});
  auto plan = SingleTaskPlan("add_kernel", ThreeParams(), kInInOut);
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  for (int run = 0; run < 20; ++run) {
    // Fresh buffers each time: nothing may be remembered about the previous call's tensors.
    auto a = Iota(256, static_cast<float>(run), 0.5f), b = Iota(256, -3.0f, 0.25f * static_cast<float>(run));
    std::vector<float> c(256, -1.0f);
    auto result = RunSession(opened.session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
    ASSERT_EQ(result.status, PYPTO_OK) << result.message;
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "run " << run << " at " << i;
  }
}

TEST(SimSession, OutlivesTheProgramAndPlanItWasOpenedWith) {
  SessionPtr session;
  {
    auto program = MakeProgram({BinaryKernel("k", "tile.mul")});
    auto plan = SingleTaskPlan("k", ThreeParams(), kInInOut);
    auto opened = Open(*program, plan);
    ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
    session = std::move(opened.session);
  }
  auto a = Iota(256, 1.0f, 1.0f), b = Iota(256, 2.0f, 0.0f);
  std::vector<float> c(256, 0.0f);
  auto result = RunSession(session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] * 2.0f);
}

// tmp = a + b (runtime-allocated), c = tmp * a, then c = c - b in place: RAW through an
// intermediate, RAW and WAW on a parameter.
pypto_rt_plan DependentPlan() {
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.params = ThreeParams();
  plan.plan.intermediates = {{"tmp", PYPTO_RT_FLOAT32, {16, 16}}};
  plan.plan.kernels = {
      {.func_id = 0, .name = "k_add"}, {.func_id = 1, .name = "k_mul"}, {.func_id = 2, .name = "k_sub"}};
  using D = rt::ArgDirection;
  using K = rt::PlanTensorRef::Kind;
  plan.plan.submits = {
      {.func_id = 0, .args = {Arg(D::Input, 0), Arg(D::Input, 1), Arg(D::Output, 0, K::Intermediate)}},
      {.func_id = 1, .args = {Arg(D::Input, 0, K::Intermediate), Arg(D::Input, 0), Arg(D::OutputExisting, 2)}},
      {.func_id = 2, .args = {Arg(D::Input, 2), Arg(D::Input, 1), Arg(D::InOut, 2)}},
  };
  return plan;
}

TEST(SimSession, HonoursDependenciesOnEveryRun) {
  auto program = MakeProgram(
      {BinaryKernel("k_add", "tile.add"), BinaryKernel("k_mul", "tile.mul"), BinaryKernel("k_sub", "tile.sub")});
  auto plan = DependentPlan();
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  for (int run = 0; run < 10; ++run) {
    auto a = Iota(256, 1.0f + static_cast<float>(run), 0.25f), b = Iota(256, 3.0f, -0.5f);
    std::vector<float> c(256, 0.0f);
    auto result = RunSession(opened.session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
    ASSERT_EQ(result.status, PYPTO_OK) << result.message;
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], (a[i] + b[i]) * a[i] - b[i]) << "run " << run << " at " << i;
  }
}

RunResult RunSessionPlan(pypto_backend_session* session, const pypto_rt_plan& plan,
                         const std::vector<pypto_chip_tensor>& params) {
  RunResult result;
  result.status = Plugin()->run_session_plan(session, &plan, params.data(), params.size());
  if (result.status != PYPTO_OK) result.message = pypto_last_error_message();
  return result;
}

// c = a * a, one task, with DependentPlan's kernels.
pypto_rt_plan SquarePlan() {
  pypto_rt_plan plan = DependentPlan();
  plan.plan.intermediates.clear();
  using D = rt::ArgDirection;
  plan.plan.submits = {{.func_id = 1, .args = {Arg(D::Input, 0), Arg(D::Input, 0), Arg(D::OutputExisting, 2)}}};
  return plan;
}

// The driver's way with a plan expanded at each run: the session opened for the plan without tasks,
// then each run's plan on it. Plans of different shapes alternate; each run's results are its own.
TEST(SimSession, RunsOtherPlansOfItsKernels) {
  auto program = MakeProgram(
      {BinaryKernel("k_add", "tile.add"), BinaryKernel("k_mul", "tile.mul"), BinaryKernel("k_sub", "tile.sub")});
  pypto_rt_plan no_tasks = DependentPlan();
  no_tasks.plan.submits.clear();
  auto opened = Open(*program, no_tasks);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  const pypto_rt_plan dependent = DependentPlan(), square = SquarePlan();
  for (int run = 0; run < 12; ++run) {
    auto a = Iota(256, 1.0f + static_cast<float>(run), 0.25f), b = Iota(256, 3.0f, -0.5f);
    std::vector<float> c(256, -7.0f);
    const bool squares = run % 3 == 1;
    auto result = RunSessionPlan(opened.session.get(), squares ? square : dependent,
                                 {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
    ASSERT_EQ(result.status, PYPTO_OK) << result.message;
    for (size_t i = 0; i < c.size(); ++i)
      ASSERT_EQ(c[i], squares ? a[i] * a[i] : (a[i] + b[i]) * a[i] - b[i]) << "run " << run << " at " << i;
  }
  // The session's own plan (no tasks) still runs, and leaves c alone.
  auto a = Iota(256, 1.0f, 1.0f), b = Iota(256, 0.0f, 1.0f);
  std::vector<float> c(256, 5.0f);
  auto result = RunSession(opened.session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  EXPECT_EQ(c, std::vector<float>(256, 5.0f));
}

// A plan that does not fit the session is refused, naming what differs, and the session runs on.
TEST(SimSession, RunSessionPlanRefusesAPlanOfOtherKernelsOrOptions) {
  auto program = MakeProgram(
      {BinaryKernel("k_add", "tile.add"), BinaryKernel("k_mul", "tile.mul"), BinaryKernel("k_sub", "tile.sub")});
  const pypto_rt_plan dependent = DependentPlan();
  auto opened = Open(*program, dependent);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  auto a = Iota(256, 1.0f, 1.0f), b = Iota(256, 2.0f, 0.0f);
  std::vector<float> c(256, 0.0f);
  const std::vector<pypto_chip_tensor> params = {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})};

  pypto_rt_plan other_kernels = SquarePlan();
  other_kernels.plan.kernels[2].name = "k_div";
  auto refused = RunSessionPlan(opened.session.get(), other_kernels, params);
  EXPECT_EQ(refused.status, PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(refused.message, "sim run_session_plan: plan 'orch' differs from the plan the session was opened for "
                             "in its kernels; open a session for it");

  pypto_rt_plan other_window = SquarePlan();
  other_window.plan.task_window = 64;
  refused = RunSessionPlan(opened.session.get(), other_window, params);
  EXPECT_EQ(refused.status, PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(refused.message, HasSubstr("in its task window; open a session for it"));

  // A task that passes its kernel too few tensors: what open_session and execute say of it.
  pypto_rt_plan short_args = SquarePlan();
  short_args.plan.submits[0].args.pop_back();
  refused = RunSessionPlan(opened.session.get(), short_args, params);
  auto executed = Execute(*program, short_args, params);
  EXPECT_EQ(refused.status, PYPTO_ERR_COMPILE);
  EXPECT_EQ(refused.status, executed.status);
  EXPECT_EQ(refused.message, executed.message);
  EXPECT_THAT(refused.message, AllOf(HasSubstr("kernel 'k_mul'"), HasSubstr("2 tensors")));

  EXPECT_EQ(Plugin()->run_session_plan(nullptr, &dependent, params.data(), params.size()), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Plugin()->run_session_plan(opened.session.get(), nullptr, params.data(), params.size()),
            PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(pypto_last_error_message(), HasSubstr("null plan"));

  auto result = RunSessionPlan(opened.session.get(), SquarePlan(), params);
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] * a[i]);
}

TEST(SimSession, SpreadsIndependentTasksOverCoresOnEveryRun) {
  constexpr int kTasks = 64;
  auto program = MakeProgram({BinaryKernel("k", "tile.mul")});
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.kernels = {{.func_id = 0, .name = "k"}};
  plan.plan.params.push_back({"x", PYPTO_RT_FLOAT32, {16, 16}});
  for (int t = 0; t < kTasks; ++t) {
    plan.plan.params.push_back({"s" + std::to_string(t), PYPTO_RT_FLOAT32, {16, 16}});
    plan.plan.params.push_back({"o" + std::to_string(t), PYPTO_RT_FLOAT32, {16, 16}});
    plan.plan.submits.push_back({.func_id = 0,
                                 .args = {Arg(rt::ArgDirection::Input, 0),
                                          Arg(rt::ArgDirection::Input, static_cast<uint32_t>(1 + 2 * t)),
                                          Arg(rt::ArgDirection::OutputExisting, static_cast<uint32_t>(2 + 2 * t))}});
  }
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  for (int run = 0; run < 5; ++run) {
    std::vector<std::vector<float>> data(2 * kTasks + 1);
    std::vector<pypto_chip_tensor> params;
    data[0] = Iota(256, 1.0f + static_cast<float>(run), 1.0f);
    params.push_back(Dense(data[0], {16, 16}));
    for (int t = 0; t < kTasks; ++t) {
      data[1 + 2 * t] = std::vector<float>(256, static_cast<float>(t));
      data[2 + 2 * t] = std::vector<float>(256, -1.0f);
      params.push_back(Dense(data[1 + 2 * t], {16, 16}));
      params.push_back(Dense(data[2 + 2 * t], {16, 16}));
    }
    auto result = RunSession(opened.session.get(), params);
    ASSERT_EQ(result.status, PYPTO_OK) << result.message;
    for (int t = 0; t < kTasks; ++t)
      for (int i = 0; i < 256; ++i)
        ASSERT_EQ(data[2 + 2 * t][i], data[0][i] * static_cast<float>(t)) << "run " << run << " task " << t;
  }
}

// What open_session refuses, execute refuses with the same status and message.
TEST(SimSession, OpenFailsAsExecuteDoes) {
  auto program = MakeProgram({BinaryKernel("k", "tile.add")});
  std::vector<float> a(256), b(256), c(256);
  const std::vector<pypto_chip_tensor> params = {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})};

  auto missing = SingleTaskPlan("not_there", ThreeParams(), kInInOut);
  auto opened = Open(*program, missing);
  auto executed = Execute(*program, missing, params);
  EXPECT_EQ(opened.result.status, PYPTO_ERR_COMPILE);
  EXPECT_EQ(opened.result.status, executed.status);
  EXPECT_EQ(opened.result.message, executed.message);
  EXPECT_THAT(opened.result.message, HasSubstr("'not_there'"));

  auto mismatched = SingleTaskPlan("k", {{"a", PYPTO_RT_FLOAT32, {16, 16}}, {"c", PYPTO_RT_FLOAT32, {16, 16}}},
                                   {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  opened = Open(*program, mismatched);
  executed = Execute(*program, mismatched, {params[0], params[2]});
  EXPECT_NE(opened.result.status, PYPTO_OK);
  EXPECT_EQ(opened.result.status, executed.status);
  EXPECT_EQ(opened.result.message, executed.message);
  EXPECT_THAT(opened.result.message, AllOf(HasSubstr("kernel 'k'"), HasSubstr("2 tensors")));

  auto good = SingleTaskPlan("k", ThreeParams(), kInInOut);
  opened = Open(*program, good, "a2a3");
  executed = Execute(*program, good, params, "a2a3");
  EXPECT_EQ(opened.result.status, PYPTO_ERR_NOT_FOUND);
  EXPECT_EQ(opened.result.status, executed.status);
  EXPECT_EQ(opened.result.message, executed.message);
  EXPECT_THAT(opened.result.message, HasSubstr("a2a3sim"));
}

TEST(SimSession, NullArgumentsAreRefused) {
  auto program = MakeProgram({BinaryKernel("k", "tile.add")});
  auto plan = SingleTaskPlan("k", ThreeParams(), kInInOut);
  EXPECT_EQ(Plugin()->open_session("a2a3sim", program.get(), &plan, nullptr), PYPTO_ERR_INVALID_ARGUMENT);
  pypto_backend_session* session = reinterpret_cast<pypto_backend_session*>(&plan);  // overwritten with null
  EXPECT_EQ(Plugin()->open_session("a2a3sim", nullptr, &plan, &session), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  EXPECT_THAT(pypto_last_error_message(), HasSubstr("null program or plan"));
  EXPECT_EQ(Plugin()->run_session(nullptr, nullptr, 0), PYPTO_ERR_INVALID_ARGUMENT);

  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  EXPECT_EQ(Plugin()->run_session(opened.session.get(), nullptr, 3), PYPTO_ERR_INVALID_ARGUMENT);
  Plugin()->close_session(nullptr);  // ignored
}

// A failed run reports what execute reports, and leaves the session fit for the next run.
TEST(SimSession, RunFailsAsExecuteDoesAndRecovers) {
  auto program = MakeProgram({BinaryKernel("oob_read", "tile.add")});
  auto plan = SingleTaskPlan("oob_read", ThreeParams(), kInInOut);
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  auto a = Iota(256, 0.0f, 1.0f), b = Iota(256, 0.0f, 1.0f);
  std::vector<float> c(256, 0.0f);

  for (int round = 0; round < 3; ++round) {
    // A view one element longer than its buffer: the kernel's load is refused.
    const std::vector<pypto_chip_tensor> bad = {View(a.data(), 255 * 4, {16, 16}, {16, 1}, 0), Dense(b, {16, 16}),
                                                Dense(c, {16, 16})};
    auto failed = RunSession(opened.session.get(), bad);
    auto executed = Execute(*program, plan, bad);
    EXPECT_EQ(failed.status, PYPTO_ERR_RUNTIME);
    EXPECT_EQ(failed.status, executed.status);
    EXPECT_EQ(failed.message, executed.message);
    EXPECT_THAT(failed.message, AllOf(HasSubstr("oob_read"), HasSubstr("instruction #0"), HasSubstr("tile.load"),
                                      HasSubstr("out-of-bounds global read"), HasSubstr("'a'")));

    // Tensors that do not match the plan.
    std::vector<float> small(64);
    const std::vector<pypto_chip_tensor> wrong = {Dense(small, {8, 8}), Dense(b, {16, 16}), Dense(c, {16, 16})};
    failed = RunSession(opened.session.get(), wrong);
    executed = Execute(*program, plan, wrong);
    EXPECT_EQ(failed.status, PYPTO_ERR_RUNTIME);
    EXPECT_EQ(failed.message, executed.message);
    EXPECT_THAT(failed.message, HasSubstr("expected shape [16, 16]"));
    failed = RunSession(opened.session.get(), {Dense(a, {16, 16})});
    executed = Execute(*program, plan, {Dense(a, {16, 16})});
    EXPECT_EQ(failed.message, executed.message);

    // The latched error of the failed run does not outlive it.
    auto good = RunSession(opened.session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
    ASSERT_EQ(good.status, PYPTO_OK) << good.message;
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]);
    std::fill(c.begin(), c.end(), 0.0f);
  }
}

TEST(SimSession, KernelErrorsNameTheSameTaskOnEveryRun) {
  // Integer division by zero in the second task: its task id is 1 on every run, as on a fresh runtime.
  KernelBuilder k("idiv");
  auto a = k.Tensor("a", {16, 16}, ir::DataType::INT32);
  auto b = k.Tensor("b", {16, 16}, ir::DataType::INT32);
  auto c = k.Tensor("c", {16, 16}, ir::DataType::INT32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto tb = k.Load("tb", b, {0, 0}, {16, 16}, kTileBytes);
  auto tc = k.Op("tile.div", "tc", ta, tb, 0);
  k.Store(tc, {0, 0}, c);
  auto program = MakeProgram({k.Build()});
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.params = {{"a", PYPTO_RT_INT32, {16, 16}}, {"b", PYPTO_RT_INT32, {16, 16}},
                      {"z", PYPTO_RT_INT32, {16, 16}}, {"c", PYPTO_RT_INT32, {16, 16}}};
  plan.plan.kernels = {{.func_id = 0, .name = "idiv"}};
  using D = rt::ArgDirection;
  plan.plan.submits = {{.func_id = 0, .args = {Arg(D::Input, 0), Arg(D::Input, 1), Arg(D::OutputExisting, 3)}},
                       {.func_id = 0, .args = {Arg(D::Input, 3), Arg(D::Input, 2), Arg(D::OutputExisting, 3)}}};
  std::vector<int32_t> av(256, 6), bv(256, 3), zv(256, 0), cv(256, 0);
  const std::vector<pypto_chip_tensor> params = {
      Dense(av, {16, 16}, PYPTO_RT_INT32), Dense(bv, {16, 16}, PYPTO_RT_INT32), Dense(zv, {16, 16}, PYPTO_RT_INT32),
      Dense(cv, {16, 16}, PYPTO_RT_INT32)};
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  const auto executed = Execute(*program, plan, params);
  ASSERT_EQ(executed.status, PYPTO_ERR_RUNTIME);
  EXPECT_THAT(executed.message, AllOf(HasSubstr("idiv"), HasSubstr("integer division by zero")));
  for (int run = 0; run < 3; ++run) {
    auto failed = RunSession(opened.session.get(), params);
    EXPECT_EQ(failed.status, executed.status);
    EXPECT_EQ(failed.message, executed.message);
    for (int32_t v : cv) ASSERT_EQ(v, 2);  // the first task ran, the second stopped the run
  }
}

TEST(SimSession, ConcurrentCallersAreSerialized) {
  auto program = MakeProgram(
      {BinaryKernel("k_add", "tile.add"), BinaryKernel("k_mul", "tile.mul"), BinaryKernel("k_sub", "tile.sub")});
  auto plan = DependentPlan();
  auto opened = Open(*program, plan);
  ASSERT_EQ(opened.result.status, PYPTO_OK) << opened.result.message;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 25; ++run) {
        auto a = Iota(256, static_cast<float>(t), 0.5f), b = Iota(256, static_cast<float>(run), -0.25f);
        std::vector<float> c(256, 0.0f);
        auto result = RunSession(opened.session.get(), {Dense(a, {16, 16}), Dense(b, {16, 16}), Dense(c, {16, 16})});
        if (result.status != PYPTO_OK) ++wrong;
        for (size_t i = 0; i < c.size(); ++i)
          if (c[i] != (a[i] + b[i]) * a[i] - b[i]) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CoreMemory, ScrubZeroesWhatWasHandedOut) {
  const ir::SocSpec& soc = ir::Ascend910B();
  pypto::sim::CoreMemoryPool pool(soc, 1, 2);
  auto* core = pool.For(rt::CoreType::AIV, 1);
  ASSERT_NE(core, nullptr);
  std::byte* tile = core->Access(ir::MemorySpace::Vec, 1000, 24);
  ASSERT_NE(tile, nullptr);
  std::fill_n(tile, 24, std::byte{0x5a});
  std::byte* far = core->Access(ir::MemorySpace::Vec, soc.ub_bytes - 8, 8);
  ASSERT_NE(far, nullptr);
  std::fill_n(far, 8, std::byte{0x11});
  pool.Scrub();
  std::byte* whole = core->Access(ir::MemorySpace::Vec, 0, soc.ub_bytes);
  ASSERT_NE(whole, nullptr);
  for (int64_t i = 0; i < soc.ub_bytes; ++i) ASSERT_EQ(whole[i], std::byte{0}) << "byte " << i;
  // Out-of-range requests are still refused, and a core that was never used scrubs to nothing.
  EXPECT_EQ(core->Access(ir::MemorySpace::Vec, soc.ub_bytes - 4, 8), nullptr);
  pool.For(rt::CoreType::AIV, 0)->Scrub();
}

}  // namespace
}  // namespace simtest
