// The generated orchestration C++, compiled with the host compiler against pto_orchestration_api.h
// and run on the simulator's executor, computes exactly what the task plan of the same program does.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <unistd.h>

#include "pypto/codegen_orch/orchestration.h"
#include "pypto/passes/pipeline.h"
#include "pypto/runtime/args_dump.h"
#include "pypto/runtime/compiled_orchestration.h"
#include "pypto/runtime/task_plan.h"
#include "pypto/backend_extern/run_command.h"
#include "sample_programs.h"
#include "sim_executor.h"

namespace pypto::sim {
namespace {

namespace fs = std::filesystem;

struct Generated {
  ir::ProgramPtr lowered;
  codegen_orch::Orchestration orchestration;
};

Generated Generate(const ir::ProgramPtr& program) {
  auto lowered = passes::Lower(program, passes::PassContext{});
  EXPECT_TRUE(lowered) << lowered.error().str();
  auto orchestration = codegen_orch::GenerateOrchestration(**lowered);
  EXPECT_TRUE(orchestration) << orchestration.error().str();
  return {*lowered, *orchestration};
}

std::vector<DecodedKernel> Decode(const Generated& generated) {
  std::vector<DecodedKernel> kernels;
  for (const auto& entry : generated.orchestration.plan.kernels) {
    auto kernel = DecodeKernel(*generated.lowered->Find(entry.name), entry.func_id, entry.core_type, ir::Ascend910B());
    EXPECT_TRUE(kernel) << kernel.error();
    kernels.push_back(std::move(*kernel));
  }
  return kernels;
}

// Compiles the orchestration C++ into a shared object in a fresh directory.
fs::path CompileOrchestration(const Generated& generated, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("pypto-orch-test-{}-{}", getpid(), name);
  fs::create_directories(dir);
  std::ofstream(dir / "orchestration.cpp") << generated.orchestration.cpp_source;
  const auto argv = rt::OrchestrationCompileCommand(dir / "orchestration.cpp", dir / "orchestration.so");
  auto ran = backend_extern::RunCommand(argv);
  EXPECT_TRUE(ran) << ran.error();
  EXPECT_EQ(ran->exit_code, 0) << ran->output;
  return dir / "orchestration.so";
}

// Tensors of the plan's parameter shapes: inputs random, outputs zero; `seed` makes both runs alike.
struct Tensors {
  std::vector<std::vector<float>> data;
  std::vector<rt::ChipTensor> descriptors;
};

Tensors MakeTensors(const rt::TaskPlan& plan, uint32_t seed) {
  Tensors tensors;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (const auto& param : plan.params) {
    size_t elements = 1;
    for (uint32_t dim : param.shape) elements *= dim;
    auto& data = tensors.data.emplace_back(elements);
    for (float& v : data) v = value(rng);
  }
  for (size_t i = 0; i < plan.params.size(); ++i)
    tensors.descriptors.push_back(rt::MakeExternalTensor(tensors.data[i].data(), plan.params[i].shape, PYPTO_RT_FLOAT32));
  return tensors;
}

void ExpectSameResults(const ir::ProgramPtr& program, const std::string& name,
                       std::optional<size_t> kernel_tasks = std::nullopt) {
  const Generated generated = Generate(program);
  const fs::path library = CompileOrchestration(generated, name);
  const auto& plan = generated.orchestration.plan;

  Tensors by_plan = MakeTensors(plan, 7), compiled = MakeTensors(plan, 7);
  {
    SimExecutor executor(ir::Ascend910B(), Decode(generated), 24, 48);
    rt::Runtime runtime({.aic_cores = 24, .aiv_cores = 48, .worker_threads = 2}, executor);
    auto ran = rt::RunPlan(plan, by_plan.descriptors, runtime);
    ASSERT_TRUE(ran) << ran.error().str();
  }
  {
    SimExecutor executor(ir::Ascend910B(), Decode(generated), 24, 48);
    rt::Runtime runtime({.aic_cores = 24, .aiv_cores = 48, .worker_threads = 2}, executor);
    auto ran = rt::RunCompiledOrchestration(library, compiled.descriptors, runtime);
    ASSERT_TRUE(ran) << ran.error().str();
    EXPECT_EQ(runtime.tasks_completed(), kernel_tasks.value_or(plan.submits.size()));
  }
  EXPECT_EQ(by_plan.data, compiled.data) << name;
  EXPECT_NE(by_plan.data, MakeTensors(plan, 7).data) << name << ": the run wrote nothing";
  fs::remove_all(library.parent_path());
}

TEST(CompiledOrchestration, OneTask) { ExpectSameResults(testing::TileAddProgram(64, 64), "tile_add"); }

TEST(CompiledOrchestration, IntermediatesAndADag) {
  ExpectSameResults(testing::VectorDagProgram(64, 64), "vector_dag");
}

TEST(CompiledOrchestration, NestedLoopsWithScalarArguments) {
  ExpectSameResults(testing::HelloWorldProgram(256, 128, 64, 64), "hello_world");
}

// The C++ picks, in each iteration, the buffer of the created tensor's pool that the plan picks.
TEST(CompiledOrchestration, ATensorCreatedInARebindingLoopIsANewOneInEachIteration) {
  ExpectSameResults(testing::FreshTensorLoopProgram(5), "fresh_tensor_loop");
}

TEST(CompiledOrchestration, TwoKernelsPerIterationWithComputedScalars) {
  ExpectSameResults(testing::TwoStageLoopProgram(4, 16), "two_stage");
}

TEST(CompiledOrchestration, SpmdBlockCountsComputedInALoop) {
  // n = 0, 2, 4 blocks of 'fill' (none in the first iteration) and one 'scale' per iteration.
  ExpectSameResults(testing::SpmdComputedBlocksProgram(2, 0), "spmd_blocks", 0 + 2 + 4 + 3);
}

ir::VarPtr TaskIdVar(const std::string& name) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::TASK_ID));
}

// `name, task_id = pl.submit(kernel, args..., deps=[...])`.
ir::VarPtr SubmitKernel(const ir::FunctionPtr& kernel, std::vector<ir::ExprPtr> args, const std::string& name,
                        ir::LaunchOrder order, std::vector<ir::StmtPtr>& body) {
  auto call = std::make_shared<ir::Call>(kernel->name(), std::move(args), kernel->return_types()[0], ir::Span{},
                                         std::vector<ir::ArgDirection>{}, ir::Call::Kwargs{}, std::move(order));
  auto var = testing::Local(name, call);
  body.push_back(testing::Assign(var, call));
  return var;
}

// c = a + b and d = a + a, named by TaskIds, joined by a dummy task (with an invalid TaskId among what
// it waits for); f = c + d waits for the join on top of what its tensors imply.
ir::ProgramPtr OrderedProgram() {
  auto add = testing::BinaryKernel("kernel_add", "tile.add", 16, 16);
  auto a = testing::Tensor("a", {16, 16}), b = testing::Tensor("b", {16, 16}), f = testing::Tensor("f", {16, 16});
  std::vector<ir::StmtPtr> body;
  auto t_c = TaskIdVar("t_c"), t_d = TaskIdVar("t_d"), none = TaskIdVar("none"), join = TaskIdVar("join");
  auto c = SubmitKernel(add, {a, b, testing::CreateTensor("c", 16, 16, body)}, "c", {.task_id = t_c}, body);
  auto d = SubmitKernel(add, {a, a, testing::CreateTensor("d", 16, 16, body)}, "d", {.task_id = t_d}, body);
  body.push_back(testing::Assign(none, testing::Op("system.task_invalid", {})));
  body.push_back(testing::Assign(
      join, testing::Op("system.task_dummy", {std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{t_c, t_d, none})})));
  auto f1 = SubmitKernel(add, {c, d, f}, "f", {.deps = {join}}, body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{f1}));
  auto entry = std::make_shared<ir::Function>(
      "ordered", std::vector<ir::VarPtr>{a, b, f},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{f->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_ordered", std::vector<ir::FunctionPtr>{add, entry}, "ordered");
}

TEST(CompiledOrchestration, TaskIdsDependenciesAndADummyJoin) {
  const Generated generated = Generate(OrderedProgram());
  const std::string& cpp = generated.orchestration.cpp_source;
  EXPECT_NE(cpp.find("PTO2TaskId t_c = rt_submit_aiv_task(0, params_t0).task_id();"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("PTO2TaskId none = PTO2TaskId::invalid();"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("    PTO2TaskId params_t2_deps[3] = {t_c, t_d, none};\n"
                     "    params_t2.set_dependencies(params_t2_deps, 3);\n"
                     "    PTO2TaskId join = rt_submit_dummy_task(params_t2).task_id();\n"),
            std::string::npos)
      << cpp;
  const auto& submits = generated.orchestration.plan.submits;
  ASSERT_EQ(submits.size(), 4u);
  EXPECT_TRUE(submits[2].dummy);
  EXPECT_EQ(submits[2].deps, (std::vector<uint32_t>{0, 1}));  // the invalid TaskId orders nothing
  EXPECT_EQ(submits[3].deps, (std::vector<uint32_t>{2}));
  // Kernel tasks only: the plan has one dummy.
  ExpectSameResults(OrderedProgram(), "ordered", submits.size() - 1);
}

// A manual scope with a TaskId array fan-in: four launches writing c = a + b (into one tensor, which
// in a manual scope orders nothing) record their TaskIds in an array; f = c + a waits for all of them
// through deps=[tids], its only dependency on them.
ir::ProgramPtr ManualFanInProgram() {
  auto add = testing::BinaryKernel("kernel_add", "tile.add", 16, 16);
  auto a = testing::Tensor("a", {16, 16}), b = testing::Tensor("b", {16, 16}), c = testing::Tensor("c", {16, 16}),
       f = testing::Tensor("f", {16, 16});
  std::vector<ir::StmtPtr> scope;
  auto create = testing::OpWithKwargs("array.create", {testing::Index(4)}, {{"dtype", ir::DataType::TASK_ID}});
  auto tids = testing::Local("tids", create);
  scope.push_back(testing::Assign(tids, create));
  auto i = testing::LoopVar("i", 4);
  auto carried = std::make_shared<ir::Var>("tids_iter", tids->type());
  std::vector<ir::StmtPtr> loop_body;
  auto t = TaskIdVar("t");
  SubmitKernel(add, {a, b, c}, "c_i", {.task_id = t}, loop_body);
  auto update = testing::Op("array.update_element", {carried, i, t});
  auto updated = testing::Local("tids_next", update);
  loop_body.push_back(testing::Assign(updated, update));
  loop_body.push_back(std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{updated}));
  auto all = std::make_shared<ir::Var>("tids_all", tids->type());
  scope.push_back(std::make_shared<ir::ForStmt>(i, testing::Index(0), testing::Index(4), testing::Index(1),
                                                std::vector<ir::IterArg>{{carried, tids}},
                                                std::make_shared<ir::SeqStmts>(std::move(loop_body)),
                                                std::vector<ir::VarPtr>{all}, ir::ForKind::Sequential));
  auto f1 = SubmitKernel(add, {c, a, f}, "f_1", {.deps = {all}}, scope);
  std::vector<ir::StmtPtr> body;
  body.push_back(std::make_shared<ir::RuntimeScopeStmt>(true, std::make_shared<ir::SeqStmts>(std::move(scope))));
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{f}));
  auto entry = std::make_shared<ir::Function>(
      "fan_in", std::vector<ir::VarPtr>{a, b, c, f},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out,
                                      ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{f->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_fan_in", std::vector<ir::FunctionPtr>{add, entry}, "fan_in");
}

TEST(CompiledOrchestration, AManualScopeWithATaskIdArrayFanIn) {
  const Generated generated = Generate(ManualFanInProgram());
  const std::string& cpp = generated.orchestration.cpp_source;
  EXPECT_NE(cpp.find("    PTO2TaskId tids[4];\n"
                     "    PTO2TaskId t;\n"
                     "    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {\n"
                     "      for (PTO2TaskId& tids_slot : tids) tids_slot = PTO2TaskId::invalid();\n"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("        t = rt_submit_aiv_task(0, params_t0).task_id();\n"
                     "        tids[i] = t;\n"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("      PTO2TaskId params_t1_deps[4] = {tids[0], tids[1], tids[2], tids[3]};\n"),
            std::string::npos)
      << cpp;
  EXPECT_EQ(cpp.find("PTO2_SCOPE() {\n        t ="), std::string::npos) << "no scope per iteration:\n" << cpp;
  const auto& submits = generated.orchestration.plan.submits;
  ASSERT_EQ(submits.size(), 5u);
  EXPECT_EQ(submits[0].scopes_opened, 2);  // the body's scope (depth 1), then the manual one (depth 2)
  EXPECT_TRUE(submits[0].opens_manual_scope);
  for (size_t k = 1; k < 4; ++k) EXPECT_EQ(submits[k].scopes_opened + submits[k].scopes_closed, 0) << k;
  EXPECT_EQ(submits[4].deps, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(submits[4].scopes_closed, 2);
  ExpectSameResults(ManualFanInProgram(), "manual_fan_in");
}

// A scalar and a TaskId defined inside a runtime scope, used after it: the scope is a C++ block, so they
// are declared before it. c = a + k inside the scope; f = c + k after it, waiting for the first.
ir::ProgramPtr ValuesAfterAScopeProgram() {
  auto add = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto a = testing::Tensor("a", {16, 16}), c = testing::Tensor("c", {16, 16}), f = testing::Tensor("f", {16, 16});
  std::vector<ir::StmtPtr> scope;
  auto k = testing::ScalarDef("k", std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32), scope);
  auto first = TaskIdVar("first");
  auto c1 = SubmitKernel(add, {a, k, c}, "c_1", {.task_id = first}, scope);
  std::vector<ir::StmtPtr> body;
  body.push_back(std::make_shared<ir::RuntimeScopeStmt>(true, std::make_shared<ir::SeqStmts>(std::move(scope))));
  auto f1 = SubmitKernel(add, {c1, k, f}, "f_1", {.deps = {first}}, body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{f1}));
  auto entry = std::make_shared<ir::Function>(
      "after_scope", std::vector<ir::VarPtr>{a, c, f},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{f->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_after_scope", std::vector<ir::FunctionPtr>{add, entry}, "after_scope");
}

TEST(CompiledOrchestration, ValuesDefinedInARuntimeScopeAreSeenAfterIt) {
  const Generated generated = Generate(ValuesAfterAScopeProgram());
  const std::string& cpp = generated.orchestration.cpp_source;
  EXPECT_NE(cpp.find("    float k;\n"
                     "    PTO2TaskId first;\n"
                     "    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {\n"
                     "      k = "),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("      first = rt_submit_aiv_task(0, params_t0).task_id();\n"), std::string::npos) << cpp;
  ExpectSameResults(ValuesAfterAScopeProgram(), "after_scope");
}

// Hand-written orchestration code using the runtime's task order API directly: a submit's task id,
// explicit dependencies (with an invalid id among them) and a dummy task joining on them.
constexpr const char* kHandWrittenOrchestration = R"(
#include "pto_orchestration_api.h"

extern "C" {

PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
  const ChipTensor& a = orch_args.tensor(0).ref();
  const ChipTensor& b = orch_args.tensor(1).ref();
  const ChipTensor& c = orch_args.tensor(2).ref();
  PTO2_SCOPE() {
    uint32_t shapes[2] = {16, 16};
    TensorCreateInfo tmp_ci(shapes, 2, DataType::FLOAT32);
    TaskOutputTensors tmp = alloc_tensors(tmp_ci);
    CoreTaskArgs first;
    first.add_input(a);
    first.add_input(b);
    first.add_output(tmp.get_ref(0));
    TaskOutputTensors t0 = rt_submit_aiv_task(0, first);
    CoreTaskArgs join;
    PTO2TaskId before[2] = {t0.task_id(), PTO2TaskId::invalid()};
    join.set_dependencies(before, 2);
    TaskOutputTensors dummy = rt_submit_dummy_task(join);
    CoreTaskArgs second;
    second.add_input(tmp.get_ref(0));
    second.add_input(b);
    second.add_output(c);
    PTO2TaskId after[1] = {dummy.task_id()};
    second.set_dependencies(after, 1);
    rt_submit_aiv_task(0, second);
  }
}

}  // extern "C"
)";

TEST(CompiledOrchestration, TaskIdsExplicitDependenciesAndDummyTasks) {
  const Generated generated = Generate(testing::TileAddProgram(16, 16));
  Generated hand_written = generated;
  hand_written.orchestration.cpp_source = kHandWrittenOrchestration;
  const fs::path library = CompileOrchestration(hand_written, "explicit_deps");
  std::vector<float> a(256), b(256), c(256, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * static_cast<float>(i % 7);
  const std::array<uint32_t, 2> shape = {16, 16};
  const std::vector<rt::ChipTensor> params = {rt::MakeExternalTensor(a.data(), shape, PYPTO_RT_FLOAT32),
                                              rt::MakeExternalTensor(b.data(), shape, PYPTO_RT_FLOAT32),
                                              rt::MakeExternalTensor(c.data(), shape, PYPTO_RT_FLOAT32)};
  SimExecutor executor(ir::Ascend910B(), Decode(generated), 24, 48);
  rt::Runtime runtime({.aic_cores = 24, .aiv_cores = 48, .worker_threads = 2}, executor);
  auto ran = rt::RunCompiledOrchestration(library, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  EXPECT_EQ(runtime.tasks_completed(), 2u);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + 2 * b[i]) << i;
  fs::remove_all(library.parent_path());
}

// CoreTaskArgs::dump (what codegen emits for pl.dump_tag) marks the argument that is that tensor, and
// the args dump of a compiled orchestration takes it like the task plan's.
TEST(CompiledOrchestration, DumpMarksTheArgumentForTheArgsDump) {
  const Generated generated = Generate(testing::TileAddProgram(16, 16));
  Generated hand_written = generated;
  std::string source = kHandWrittenOrchestration;
  const std::string submit = "    TaskOutputTensors t0 = rt_submit_aiv_task(0, first);\n";
  source.replace(source.find(submit), submit.size(), "    first.dump(b);\n" + submit);
  hand_written.orchestration.cpp_source = source;
  const fs::path library = CompileOrchestration(hand_written, "dump_mark");
  std::vector<float> a(256, 1.0f), b(256, 2.0f), c(256);
  const std::array<uint32_t, 2> shape = {16, 16};
  const std::vector<rt::ChipTensor> params = {rt::MakeExternalTensor(a.data(), shape, PYPTO_RT_FLOAT32),
                                              rt::MakeExternalTensor(b.data(), shape, PYPTO_RT_FLOAT32),
                                              rt::MakeExternalTensor(c.data(), shape, PYPTO_RT_FLOAT32)};
  rt::ArgsDumpRecorder dump(rt::ArgsDumpLevel::Tagged, {"tile_add_incore_0"});
  SimExecutor executor(ir::Ascend910B(), Decode(generated), 24, 48);
  rt::Runtime runtime({.aic_cores = 24, .aiv_cores = 48, .worker_threads = 2, .observer = &dump}, executor);
  auto ran = rt::RunCompiledOrchestration(library, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  const auto records = dump.Records();
  ASSERT_EQ(records.size(), 1u);  // b in the first task only: the second task's b is not marked
  EXPECT_EQ(records[0].task_id, 0u);
  EXPECT_EQ(records[0].arg_index, 1u);
  EXPECT_FALSE(records[0].after);
  EXPECT_EQ(records[0].payload, std::string(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(float)));
  fs::remove_all(library.parent_path());
}

TEST(CompiledOrchestration, AWrongNumberOfTensorsIsRefused) {
  const Generated generated = Generate(testing::TileAddProgram(16, 16));
  const fs::path library = CompileOrchestration(generated, "wrong_count");
  std::vector<float> data(256);
  const std::array<uint32_t, 2> shape = {16, 16};
  const std::vector<rt::ChipTensor> one = {rt::MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32)};
  SimExecutor executor(ir::Ascend910B(), Decode(generated), 24, 48);
  rt::Runtime runtime({}, executor);
  auto ran = rt::RunCompiledOrchestration(library, one, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code, rt::FatalCode::InvalidArgs);
  EXPECT_EQ(ran.error().message, "fatal error 5 (InvalidArgs): the orchestration expects 3 tensors, got 1");
  fs::remove_all(library.parent_path());
}

TEST(CompiledOrchestration, AMissingLibraryIsAnError) {
  SimExecutor executor(ir::Ascend910B(), {}, 1, 1);
  rt::Runtime runtime({}, executor);
  auto ran = rt::RunCompiledOrchestration("/nonexistent/orchestration.so", {}, runtime);
  ASSERT_FALSE(ran);
  EXPECT_NE(ran.error().message.find("cannot load /nonexistent/orchestration.so"), std::string::npos);
}

}  // namespace
}  // namespace pypto::sim
