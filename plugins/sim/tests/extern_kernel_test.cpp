// Hand-written kernels on the simulator: compiled once with the host compiler against the simulator's
// runtime headers, loaded, and run per block of an SPMD launch with args[] laid out as on the device.
#include "extern_kernel.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "pypto/ir/soc.h"
#include "pypto/runtime/run_interrupt.h"
#include "pypto/runtime/task_plan.h"
#include "sim_executor.h"
#include "tensor.h"  // the kernels' descriptor (extern_include), checked against the runtime's

namespace pypto::sim {
namespace {

namespace fs = std::filesystem;

static_assert(sizeof(::ChipTensor) == sizeof(pypto_chip_tensor));
static_assert(offsetof(::ChipTensor, buffer.addr) == offsetof(pypto_chip_tensor, buffer_addr));
static_assert(offsetof(::ChipTensor, buffer.size) == offsetof(pypto_chip_tensor, buffer_size));
static_assert(offsetof(::ChipTensor, reserved) == offsetof(pypto_chip_tensor, reserved));

const fs::path kKernels = fs::path(PYPTO_SIM_TEST_DIR) / "extern_kernels" / "aiv";

// An AIV kernel `name(base: INDEX, out: InOut[[rows, 8], FP32])` implemented by `source`.
ir::FunctionPtr ExternKernel(const fs::path& source, int64_t rows = 4) {
  auto base = std::make_shared<ir::Var>("base", std::make_shared<ir::ScalarType>(ir::DataType::INDEX));
  auto out = std::make_shared<ir::Var>("out", std::make_shared<ir::TensorType>(ir::Shape{rows, 8}, ir::DataType::FP32));
  return std::make_shared<ir::Function>(
      "block_fill", std::vector<ir::VarPtr>{base, out},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::InOut},
      std::vector<ir::TypePtr>{out->type()}, std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}),
      ir::FunctionType::AIV, std::map<std::string, ir::AttrValue>{{"external_source", source.string()}});
}

class ExternKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    build_dir_ = fs::temp_directory_path() / ("pypto_sim_extern_test_" + std::to_string(::getpid()));
  }
  void TearDown() override { fs::remove_all(build_dir_); }
  fs::path build_dir_;
};

TEST_F(ExternKernelTest, RunsEveryBlockWithItsIndex) {
  const ir::SocSpec& soc = ir::Ascend910B();
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "block_fill.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_TRUE(kernel) << kernel.error();
  EXPECT_EQ(kernel->tensor_count, 1u);
  EXPECT_EQ(kernel->scalar_count, 1u);
  EXPECT_EQ(kernel->params[0].slot, 1u);  // the scalar, first in the signature, follows the tensor
  EXPECT_EQ(kernel->params[1].slot, 0u);

  std::vector<DecodedKernel> kernels;
  kernels.push_back(std::move(*kernel));
  SimExecutor executor(soc, std::move(kernels), soc.aic_cores, soc.aiv_cores);
  rt::Runtime runtime({.aic_cores = soc.aic_cores, .aiv_cores = soc.aiv_cores}, executor);
  rt::TaskPlan plan{.orchestration_name = "main",
                    .params = {rt::PlanTensor{.name = "out", .dtype = PYPTO_RT_FLOAT32, .shape = {4, 8}}},
                    .kernels = {rt::PlanKernel{.func_id = 0, .name = "block_fill"}},
                    .submits = {rt::PlanSubmit{.func_id = 0,
                                               .block_num = 4,
                                               .args = {rt::PlanTaskArg{.direction = rt::ArgDirection::InOut},
                                                        rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar,
                                                                        .scalar = 10}}}}};
  std::vector<float> data(32, -1.0f);
  const uint32_t shape[] = {4, 8};
  std::vector<rt::ChipTensor> params = {rt::MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32)};
  auto ran = rt::RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  for (int b = 0; b < 4; ++b) {
    for (int j = 0; j < 7; ++j) EXPECT_EQ(data[b * 8 + j], 10.0f + b) << b << "," << j;
    EXPECT_EQ(data[b * 8 + 7], 4.0f);
  }
}

// Seed 002: a CCEC build defines the device core's macros; a body guarded on them must be the body
// that runs here too, built for the platform's arch (a2a3sim: C220, a5sim: C310).
// A kernel that ends the process (exit and its relatives, abort, a failed assert) fails its task
// with the kernel and the call named, and the process carries on to the next run.
TEST_F(ExternKernelTest, EndingTheProcessFailsTheTaskInstead) {
  const ir::SocSpec& soc = ir::Ascend910B();
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "ends_process.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_TRUE(kernel) << kernel.error();
  std::vector<DecodedKernel> kernels;
  kernels.push_back(std::move(*kernel));
  SimExecutor executor(soc, std::move(kernels), soc.aic_cores, soc.aiv_cores);
  const std::string task = "fatal error 203 (KernelFailed): hand-written kernel 'block_fill' (task 0, AIV core ";
  const std::string ends = "), which would have ended the whole process; a kernel ends by returning from kernel_entry, "
                           "and reports a failure through its outputs";
  const std::pair<uint64_t, std::string> cases[] = {
      {0, "called exit(7" + ends}, {1, "called quick_exit(7" + ends}, {2, "called _Exit(7" + ends},
      {3, "called _exit(7" + ends}, {4, "crashed with SIGABRT (abort(), which a failed assert() calls)"},
      {5, "crashed with SIGABRT (abort(), which a failed assert() calls)"}};
  for (const auto& [how, message] : cases) {
    rt::Runtime runtime({.aic_cores = soc.aic_cores, .aiv_cores = soc.aiv_cores}, executor);
    rt::TaskPlan plan{.orchestration_name = "main",
                      .params = {rt::PlanTensor{.name = "out", .dtype = PYPTO_RT_FLOAT32, .shape = {4, 8}}},
                      .kernels = {rt::PlanKernel{.func_id = 0, .name = "block_fill"}},
                      .submits = {rt::PlanSubmit{.func_id = 0,
                                                 .args = {rt::PlanTaskArg{.direction = rt::ArgDirection::InOut},
                                                          rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar,
                                                                          .scalar = how}}}}};
    std::vector<float> data(32, 0.0f);
    const uint32_t shape[] = {4, 8};
    std::vector<rt::ChipTensor> params = {rt::MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32)};
    auto ran = rt::RunPlan(plan, params, runtime);
    ASSERT_FALSE(ran) << how;
    const std::string error = ran.error().str();
    EXPECT_TRUE(error.starts_with(task)) << error;
    EXPECT_TRUE(error.ends_with(message)) << error;
  }
}

// Ctrl-C while a kernel loops forever stops the run, naming the kernel, instead of being lost.
TEST_F(ExternKernelTest, SigintStopsAKernelThatNeverReturns) {
  const ir::SocSpec& soc = ir::Ascend910B();
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "spins_forever.cpp"), 0, rt::CoreType::AIV, "a2a3",
                                   build_dir_);
  ASSERT_TRUE(kernel) << kernel.error();
  std::vector<DecodedKernel> kernels;
  kernels.push_back(std::move(*kernel));
  SimExecutor executor(soc, std::move(kernels), soc.aic_cores, soc.aiv_cores);
  rt::Runtime runtime({.aic_cores = soc.aic_cores, .aiv_cores = soc.aiv_cores}, executor);
  int running = 0;  // set by the kernel once it runs
  rt::TaskPlan plan{.orchestration_name = "main",
                    .params = {rt::PlanTensor{.name = "out", .dtype = PYPTO_RT_FLOAT32, .shape = {4, 8}}},
                    .kernels = {rt::PlanKernel{.func_id = 0, .name = "block_fill"}},
                    .submits = {rt::PlanSubmit{
                        .func_id = 0,
                        .args = {rt::PlanTaskArg{.direction = rt::ArgDirection::InOut},
                                 rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar,
                                                 .scalar = reinterpret_cast<uint64_t>(&running)}}}}};
  std::vector<float> data(32, 0.0f);
  const uint32_t shape[] = {4, 8};
  std::vector<rt::ChipTensor> params = {rt::MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32)};
  std::thread ctrl_c([&running] {
    while (std::atomic_ref<int>(running).load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::kill(::getpid(), SIGINT);
  });
  const auto start = std::chrono::steady_clock::now();
  auto ran = [&] {
    const rt::InterruptibleRun interruptible;
    return rt::RunPlan(plan, params, runtime);
  }();
  ctrl_c.join();
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().str(),
            "fatal error 202 (Interrupted): interrupted (SIGINT, Ctrl-C) while task 0 (kernel 'block_fill' on AIV core "
            "0) ran; the run stopped there, its outputs are incomplete");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Outside a run SIGINT is the process's own again (here: the default).
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
}

TEST_F(ExternKernelTest, ABuildSeesTheDeviceMacrosOfItsArchAndCore) {
  for (const auto& [arch, variant, family] : {std::tuple{"a2a3", 220.0f, 220.0f}, std::tuple{"a5", 310.0f, 310.0f}}) {
    auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "device_macros.cpp"), 0, rt::CoreType::AIV, arch,
                                     build_dir_);
    ASSERT_TRUE(kernel) << kernel.error();
    std::vector<float> data(32, -1.0f);
    const uint32_t shape[] = {4, 8};
    rt::ChipTensor out = rt::MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32);
    int64_t args[] = {reinterpret_cast<int64_t>(&out), 0};
    kernel->external_entry(args);
    EXPECT_EQ(data[0], variant) << arch;
    EXPECT_EQ(data[1], family) << arch;
    EXPECT_EQ(data[2], 1.0f) << arch;  // pto-isa's __DAV_VEC__ too, as upstream's simulator builds
  }
}

TEST_F(ExternKernelTest, BuildsOnceIntoTheBuildDirectory) {
  auto first = LoadExternalKernel(*ExternKernel(kKernels / "block_fill.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_TRUE(first) << first.error();
  auto second = LoadExternalKernel(*ExternKernel(kKernels / "block_fill.cpp"), 1, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ(first->external_entry, second->external_entry);
}

TEST_F(ExternKernelTest, CompileErrorNamesTheFileAndTheCompilersMessage) {
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "broken.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().find((kKernels / "broken.cpp").string()), std::string::npos) << kernel.error();
  EXPECT_NE(kernel.error().find("undeclared_function"), std::string::npos) << kernel.error();
}

TEST_F(ExternKernelTest, MissingEntryIsAClearError) {
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "no_entry.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().find("defines no `extern \"C\" void kernel_entry"), std::string::npos) << kernel.error();
}

TEST_F(ExternKernelTest, MissingSource) {
  auto kernel = LoadExternalKernel(*ExternKernel(kKernels / "absent.cpp"), 0, rt::CoreType::AIV, "a2a3", build_dir_);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().find("absent.cpp does not exist"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace pypto::sim
