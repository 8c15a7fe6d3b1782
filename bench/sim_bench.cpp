// The CPU simulator (plugins/sim) timed through its C entry point, next to a plain scalar reference
// of the same element-wise add. Ratios, not absolute times, are the result: see bench/compare.py.
//
//   BM_SimTileAdd/<rows>x<cols>    one execute() of the lowered tile_add program on caller buffers
//   BM_SimTileAddSession/<rows>x<cols>  the same call as run_session() on a session opened once
//   BM_ScalarReference/<rows>x<cols>  element-by-element copy-in, add, copy-out through a UB scratch
//   BM_SimChain/<N>                one execute() of N dependent 16x16 add tasks (per-task overhead)
//   BM_Repeat/<plan>/<how>         one call of a small plan, called over and over: `execute` (the
//                                  one-shot entry: decode, executor and runtime per call, the path
//                                  every call took before sessions), `session` (run_session on a
//                                  session opened once) and `scalar_ref` (the scalar reference doing
//                                  the same tile adds); plans: add16 (one 16x16 add task) and dag5
//                                  (five 16x16 add tasks in a diamond-shaped DAG)
//
// The kernels alone (row sums, matmul, ...) are timed by tile_bench.cpp.
//
// Every benchmark checks its result once, before timing; a wrong result skips it with an error.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto-c/backend_plugin.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/soc.h"
#include "pypto/passes/pipeline.h"
#include "pypto/runtime/backend_registry.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/chip_tensor.h"
#include "sample_programs.h"

namespace {

namespace ir = pypto::ir;
namespace rt = pypto::rt;

constexpr const char* kPlatform = "a2a3sim";

// fp32 sizes whose two input tiles fit the 184 KB of Ascend910B UB (the add reuses a's tile).
// 128x256 would need 2 x 128 KB, more than either SoC has, so the wide case is 64x256.
struct Size {
  int64_t rows;
  int64_t cols;
};
constexpr Size kSizes[] = {{64, 64}, {128, 128}, {64, 256}};

// Chain lengths for BM_SimChain; compare.py fits time against N, so keep several far apart.
constexpr int kChainLengths[] = {1, 4, 16, 64, 256};
constexpr int64_t kChainTile = 16;

// Setup failures are reported through SkipWithError, never by aborting the other benchmarks.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The sim plugin, loaded through the registry from the path meson passes (as the sim tests do).
const pypto_backend_plugin* Plugin() {
  static const pypto_backend_plugin* plugin = nullptr;
  static std::string error;
  static const bool loaded = [] {
    auto& registry = rt::BackendRegistry::Get();
    if (auto info = registry.LoadFile(PYPTO_SIM_PLUGIN_PATH); !info) {
      error = std::string("cannot load ") + PYPTO_SIM_PLUGIN_PATH + ": " + info.error();
      return false;
    }
    auto found = registry.ForPlatform(kPlatform);
    if (!found) {
      error = found.error();
      return false;
    }
    if (std::string((*found)->name) != "sim") {
      error = std::string(kPlatform) + " is served by plugin '" + (*found)->name + "', not by " + PYPTO_SIM_PLUGIN_PATH;
      return false;
    }
    plugin = *found;
    return true;
  }();
  if (!loaded) throw SetupError(error);
  return plugin;
}

// testing::TileAddProgram lowered for the platform's SoC, with the plan codegen derives from it.
struct Compiled {
  std::shared_ptr<pypto_ir_program> program;
  pypto_rt_plan plan;
};

Compiled CompileTileAdd(int64_t rows, int64_t cols) {
  const ir::SocSpec* soc = &ir::Ascend910B();  // what a2a3sim models
  auto lowered = pypto::passes::Lower(pypto::testing::TileAddProgram(rows, cols), pypto::passes::PassContext{.soc = soc});
  if (!lowered) throw SetupError("lowering failed: " + lowered.error().str());
  auto orchestration = pypto::codegen_orch::GenerateOrchestration(**lowered);
  if (!orchestration) throw SetupError("orchestration failed: " + orchestration.error().str());
  Compiled compiled{std::make_shared<pypto_ir_program>(pypto_ir_program{*lowered}), {}};
  compiled.plan.plan = std::move(orchestration->plan);
  if (compiled.plan.plan.params.size() != 3 || compiled.plan.plan.submits.size() != 1)
    throw SetupError("tile_add is expected to lower to one task over three tensors");
  return compiled;
}

void Execute(const Compiled& compiled, const std::vector<pypto_chip_tensor>& params) {
  const pypto_status status =
      Plugin()->execute(kPlatform, compiled.program.get(), &compiled.plan, params.data(), params.size());
  if (status != PYPTO_OK) throw SetupError(std::string("execute failed: ") + pypto_last_error_message());
}

// A session of the sim plugin over a compiled program, closed at scope exit.
class Session {
 public:
  explicit Session(const Compiled& compiled) {
    if (Plugin()->open_session(kPlatform, compiled.program.get(), &compiled.plan, &session_) != PYPTO_OK)
      throw SetupError(std::string("open_session failed: ") + pypto_last_error_message());
  }
  ~Session() { Plugin()->close_session(session_); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Run(const std::vector<pypto_chip_tensor>& params) {
    if (Plugin()->run_session(session_, params.data(), params.size()) != PYPTO_OK)
      throw SetupError(std::string("run_session failed: ") + pypto_last_error_message());
  }

 private:
  pypto_backend_session* session_ = nullptr;
};

// a[i] = i % 97 - 48 and b[i] = (i % 13) * 0.5: small values, so every sum below is exact in fp32.
std::vector<float> InputA(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int64_t>(i % 97) - 48);
  return v;
}
std::vector<float> InputB(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 13) * 0.5f;
  return v;
}

void CheckSum(const std::vector<float>& a, const std::vector<float>& b, float b_times,
              const std::vector<float>& c) {
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] != a[i] + b_times * b[i]) throw SetupError("wrong result at element " + std::to_string(i));
}

// Google Benchmark exits 0 after SkipWithError; main turns any skip into a failing exit status, so
// that `meson test --benchmark` and compare.py notice a simulator that fails or computes wrongly.
bool any_skipped = false;

void Skip(benchmark::State& state, const std::string& message) {
  any_skipped = true;
  state.SkipWithError(message.c_str());
}
void Skip(benchmark::State& state, const std::exception& e) { Skip(state, std::string(e.what())); }

void SetThroughput(benchmark::State& state, int64_t elements) {
  state.SetItemsProcessed(state.iterations() * elements);
  state.SetBytesProcessed(state.iterations() * elements * 3 * static_cast<int64_t>(sizeof(float)));
}

// (a) One execute of the lowered add: decode, runtime start-up, one task, teardown; or, with
// `session`, one run_session of a session opened before timing.
void BM_SimTileAdd(benchmark::State& state, Size size, bool session) {
  const auto n = static_cast<size_t>(size.rows * size.cols);
  auto a = InputA(n), b = InputB(n);
  std::vector<float> c(n, -1.0f);
  const uint32_t shape[] = {static_cast<uint32_t>(size.rows), static_cast<uint32_t>(size.cols)};
  const std::vector<pypto_chip_tensor> params = {rt::MakeExternalTensor(a.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(b.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(c.data(), shape, PYPTO_RT_FLOAT32)};
  try {
    const Compiled compiled = CompileTileAdd(size.rows, size.cols);
    if (session) {
      Session opened(compiled);
      opened.Run(params);
      CheckSum(a, b, 1.0f, c);
      for (auto _ : state) {
        opened.Run(params);
        benchmark::ClobberMemory();
      }
    } else {
      Execute(compiled, params);
      CheckSum(a, b, 1.0f, c);
      for (auto _ : state) {
        Execute(compiled, params);
        benchmark::ClobberMemory();
      }
    }
  } catch (const std::exception& e) {
    return Skip(state, e);
  }
  SetThroughput(state, static_cast<int64_t>(n));
}

// The scalar reference: what a simulator that walks tiles element by element does. Load a and b
// into a UB-sized scratch (at the offsets the allocator would pick), add into a third scratch, store
// back; one element per step. DoNotOptimize on every element keeps each loop scalar (no
// vectorization, no memcpy idiom), as an interpreter's per-element dispatch would be. The values are
// const on purpose: GCC drops the load feeding the "+m,r" (non-const) overload of benchmark 1.7's
// DoNotOptimize (google/benchmark#903), while the const overload is an input-only barrier.
void ScalarTileAdd(const float* a, const float* b, float* c, int64_t rows, int64_t cols, float* ub_a, float* ub_b,
                   float* scratch_c) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const float v = a[r * cols + col];
      benchmark::DoNotOptimize(v);
      ub_a[r * cols + col] = v;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const float v = b[r * cols + col];
      benchmark::DoNotOptimize(v);
      ub_b[r * cols + col] = v;
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float sum = ub_a[i] + ub_b[i];
    benchmark::DoNotOptimize(sum);
    scratch_c[i] = sum;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const float v = scratch_c[r * cols + col];
      benchmark::DoNotOptimize(v);
      c[r * cols + col] = v;
    }
  }
  benchmark::ClobberMemory();
}

// (b) The scalar reference on the same caller buffers.
void BM_ScalarReference(benchmark::State& state, Size size) {
  const auto n = static_cast<size_t>(size.rows * size.cols);
  auto a = InputA(n), b = InputB(n);
  std::vector<float> c(n, -1.0f);
  const ir::SocSpec& soc = ir::Ascend910B();
  const int64_t tile_bytes = static_cast<int64_t>(n * sizeof(float));
  const int64_t b_offset = (tile_bytes + soc.alignment - 1) / soc.alignment * soc.alignment;
  if (b_offset + tile_bytes > soc.ub_bytes) {
    Skip(state, "two input tiles do not fit the UB");
    return;
  }
  std::vector<float> ub(static_cast<size_t>(soc.ub_bytes) / sizeof(float));
  std::vector<float> scratch_c(n);
  float* ub_a = ub.data();
  float* ub_b = ub.data() + b_offset / static_cast<int64_t>(sizeof(float));
  try {
    ScalarTileAdd(a.data(), b.data(), c.data(), size.rows, size.cols, ub_a, ub_b, scratch_c.data());
    CheckSum(a, b, 1.0f, c);
  } catch (const std::exception& e) {
    return Skip(state, e);
  }
  for (auto _ : state) {
    ScalarTileAdd(a.data(), b.data(), c.data(), size.rows, size.cols, ub_a, ub_b, scratch_c.data());
  }
  SetThroughput(state, static_cast<int64_t>(n));
}

// (c) N dependent tasks in one execute: x0 = a, x(i+1) = x(i) + b in runtime-allocated
// intermediates, the last one written to c. Each task reads the previous task's output, so the tasks
// run one after another; the growth of the time with N is the per-task cost (scheduling, dispatch,
// a 16x16 kernel), and the part that does not grow is the fixed cost of an execute.
void BM_SimChain(benchmark::State& state, int tasks) {
  constexpr auto n = static_cast<size_t>(kChainTile * kChainTile);
  auto a = InputA(n), b = InputB(n);
  std::vector<float> c(n, -1.0f);
  const uint32_t shape[] = {kChainTile, kChainTile};
  const std::vector<pypto_chip_tensor> params = {rt::MakeExternalTensor(a.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(b.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(c.data(), shape, PYPTO_RT_FLOAT32)};
  try {
    Compiled compiled = CompileTileAdd(kChainTile, kChainTile);
    rt::TaskPlan& plan = compiled.plan.plan;
    const rt::PlanSubmit single = plan.submits[0];
    using D = rt::ArgDirection;
    using K = rt::PlanTensorRef::Kind;
    auto arg = [](D direction, K kind, uint32_t index) {
      return rt::PlanTaskArg{.direction = direction, .tensor = {.kind = kind, .index = index}};
    };
    plan.intermediates.clear();
    plan.submits.clear();
    for (int t = 0; t + 1 < tasks; ++t)
      plan.intermediates.push_back({"x" + std::to_string(t + 1), PYPTO_RT_FLOAT32, {shape[0], shape[1]}});
    for (int t = 0; t < tasks; ++t) {
      const auto input = t == 0 ? arg(D::Input, K::Param, 0) : arg(D::Input, K::Intermediate, t - 1);
      const auto output = t + 1 == tasks ? arg(D::OutputExisting, K::Param, 2) : arg(D::Output, K::Intermediate, t);
      plan.submits.push_back(
          {.func_id = single.func_id, .core_type = single.core_type, .args = {input, arg(D::Input, K::Param, 1), output}});
    }
    Execute(compiled, params);
    CheckSum(a, b, static_cast<float>(tasks), c);
    for (auto _ : state) {
      Execute(compiled, params);
      benchmark::ClobberMemory();
    }
  } catch (const std::exception& e) {
    return Skip(state, e);
  }
  state.SetItemsProcessed(state.iterations() * tasks);  // tasks per second
  state.counters["tasks"] = tasks;
}

// (d) Repeated calls of one small plan. add16 is the lowered 16x16 add as one task; dag5 is five such
// tasks in a diamond, on runtime-allocated intermediates:
//   x1 = a + b;  x2 = b + b;  x3 = x1 + x2;  x4 = x3 + b;  c = x4 + x3     (so c = 2a + 7b)
// x1 and x2 are independent; x3 waits for both (RAW); x4 for x3; the last for x4 and x3.
enum class Plan { Add16, Dag5 };
enum class How { Execute, Session, ScalarRef };

const char* PlanName(Plan plan) { return plan == Plan::Add16 ? "add16" : "dag5"; }
const char* HowName(How how) {
  switch (how) {
    case How::Execute: return "execute";
    case How::Session: return "session";
    case How::ScalarRef: return "scalar_ref";
  }
  return "?";
}

Compiled CompilePlan(Plan which) {
  Compiled compiled = CompileTileAdd(kChainTile, kChainTile);
  if (which == Plan::Add16) return compiled;
  rt::TaskPlan& plan = compiled.plan.plan;
  const rt::PlanSubmit single = plan.submits[0];
  using D = rt::ArgDirection;
  using K = rt::PlanTensorRef::Kind;
  const auto in = [](K kind, uint32_t index) {
    return rt::PlanTaskArg{.direction = D::Input, .tensor = {.kind = kind, .index = index}};
  };
  const auto out = [](D direction, K kind, uint32_t index) {
    return rt::PlanTaskArg{.direction = direction, .tensor = {.kind = kind, .index = index}};
  };
  const auto submit = [&](std::vector<rt::PlanTaskArg> args) {
    plan.submits.push_back({.func_id = single.func_id, .core_type = single.core_type, .args = std::move(args)});
  };
  plan.intermediates.clear();
  plan.submits.clear();
  for (int i = 1; i <= 4; ++i)
    plan.intermediates.push_back({"x" + std::to_string(i), PYPTO_RT_FLOAT32, {kChainTile, kChainTile}});
  submit({in(K::Param, 0), in(K::Param, 1), out(D::Output, K::Intermediate, 0)});                // x1 = a + b
  submit({in(K::Param, 1), in(K::Param, 1), out(D::Output, K::Intermediate, 1)});                // x2 = b + b
  submit({in(K::Intermediate, 0), in(K::Intermediate, 1), out(D::Output, K::Intermediate, 2)});  // x3 = x1 + x2
  submit({in(K::Intermediate, 2), in(K::Param, 1), out(D::Output, K::Intermediate, 3)});         // x4 = x3 + b
  submit({in(K::Intermediate, 3), in(K::Intermediate, 2), out(D::OutputExisting, K::Param, 2)});  // c = x4 + x3
  return compiled;
}

void CheckPlan(Plan plan, const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  const float a_times = plan == Plan::Add16 ? 1.0f : 2.0f;
  const float b_times = plan == Plan::Add16 ? 1.0f : 7.0f;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] != a_times * a[i] + b_times * b[i]) throw SetupError("wrong result at element " + std::to_string(i));
}

// The scalar reference of a plan: each task as ScalarTileAdd, through the same UB-sized scratch.
struct ScalarPlan {
  static constexpr size_t kElements = static_cast<size_t>(kChainTile * kChainTile);
  std::vector<float> ub =
      std::vector<float>(static_cast<size_t>(ir::Ascend910B().ub_bytes) / sizeof(float));
  std::vector<float> scratch = std::vector<float>(kElements);
  std::vector<std::vector<float>> x = std::vector<std::vector<float>>(4, std::vector<float>(kElements));

  void Add(const float* lhs, const float* rhs, float* out) {
    ScalarTileAdd(lhs, rhs, out, kChainTile, kChainTile, ub.data(), ub.data() + kElements, scratch.data());
  }
  void Run(Plan plan, const float* a, const float* b, float* c) {
    if (plan == Plan::Add16) return Add(a, b, c);
    Add(a, b, x[0].data());
    Add(b, b, x[1].data());
    Add(x[0].data(), x[1].data(), x[2].data());
    Add(x[2].data(), b, x[3].data());
    Add(x[3].data(), x[2].data(), c);
  }
};

void BM_Repeat(benchmark::State& state, Plan plan, How how) {
  constexpr auto n = static_cast<size_t>(kChainTile * kChainTile);
  auto a = InputA(n), b = InputB(n);
  std::vector<float> c(n, -1.0f);
  const uint32_t shape[] = {kChainTile, kChainTile};
  const std::vector<pypto_chip_tensor> params = {rt::MakeExternalTensor(a.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(b.data(), shape, PYPTO_RT_FLOAT32),
                                                 rt::MakeExternalTensor(c.data(), shape, PYPTO_RT_FLOAT32)};
  try {
    if (how == How::ScalarRef) {
      ScalarPlan scalar;
      scalar.Run(plan, a.data(), b.data(), c.data());
      CheckPlan(plan, a, b, c);
      for (auto _ : state) scalar.Run(plan, a.data(), b.data(), c.data());
    } else {
      const Compiled compiled = CompilePlan(plan);
      if (how == How::Execute) {
        Execute(compiled, params);
        CheckPlan(plan, a, b, c);
        for (auto _ : state) {
          Execute(compiled, params);
          benchmark::ClobberMemory();
        }
      } else {
        Session session(compiled);  // opened once, as a CompiledProgram does on its first call
        session.Run(params);
        CheckPlan(plan, a, b, c);
        std::fill(c.begin(), c.end(), -1.0f);
        session.Run(params);  // a second run must compute the same (nothing stale from the first)
        CheckPlan(plan, a, b, c);
        for (auto _ : state) {
          session.Run(params);
          benchmark::ClobberMemory();
        }
      }
    }
  } catch (const std::exception& e) {
    return Skip(state, e);
  }
  state.SetItemsProcessed(state.iterations());  // calls per second
}

std::string SizeName(Size size) { return std::to_string(size.rows) + "x" + std::to_string(size.cols); }

}  // namespace

int main(int argc, char** argv) {
  // The simulator runs tasks on worker threads while this thread waits, so wall time is the measure.
  for (Size size : kSizes) {
    benchmark::RegisterBenchmark(("BM_SimTileAdd/" + SizeName(size)).c_str(), BM_SimTileAdd, size, false)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_SimTileAddSession/" + SizeName(size)).c_str(), BM_SimTileAdd, size, true)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_ScalarReference/" + SizeName(size)).c_str(), BM_ScalarReference, size)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  for (int tasks : kChainLengths) {
    benchmark::RegisterBenchmark(("BM_SimChain/" + std::to_string(tasks)).c_str(), BM_SimChain, tasks)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  for (Plan plan : {Plan::Add16, Plan::Dag5}) {
    for (How how : {How::Execute, How::Session, How::ScalarRef}) {
      benchmark::RegisterBenchmark((std::string("BM_Repeat/") + PlanName(plan) + "/" + HowName(how)).c_str(),
                                   BM_Repeat, plan, how)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return any_skipped ? 1 : 0;
}
