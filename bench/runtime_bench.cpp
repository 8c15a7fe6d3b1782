// What the runtime itself costs per task, with kernels that do nothing: submit-to-completion time of
// empty tasks, so that scheduling overhead is measured alone (the sim benchmarks add kernels on top).
//
//   BM_EmptyTasks/independent/<N>  N tasks with no arguments: no dependencies, any order
//   BM_EmptyTasks/chain/<N>        N tasks that each update one tensor (InOut): each waits for the last
//   BM_EmptyTasks/fan/<N>          one producer, N-2 readers of its output, one task writing it after them
//
// One iteration submits the N tasks to a Runtime made once (CallerFirst, as a session's), waits for
// them and resets it. The `us_per_task` counter is the figure the budget (2 us a task) is
// about; bench/compare.py prints it.
#include <benchmark/benchmark.h>

#include <array>
#include <string>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"

namespace {

using namespace pypto;

class EmptyKernels final : public rt::CoreExecutor {
 public:
  pypto::expected<void, rt::FatalError> Execute(const rt::KernelLaunch&) override { return {}; }
};

enum class Shape { Independent, Chain, Fan };

const char* ShapeName(Shape shape) {
  switch (shape) {
    case Shape::Independent: return "independent";
    case Shape::Chain: return "chain";
    case Shape::Fan: return "fan";
  }
  return "?";
}

struct Buffers {
  std::array<float, 16> data{};
  rt::ChipTensor tensor;
  Buffers() {
    const std::array<uint32_t, 1> shape{16};
    tensor = rt::MakeExternalTensor(data.data(), shape, /*dtype: FP32*/ 0);
  }
};

rt::TaskArgs ArgsFor(Shape shape, int index, int tasks, const rt::ChipTensor& tensor) {
  rt::TaskArgs args;
  if (shape == Shape::Chain) args.add_inout(tensor);
  if (shape == Shape::Fan) {
    if (index == 0 || index == tasks - 1) args.add_inout(tensor);
    else args.add_input(tensor);
  }
  return args;
}

void BM_EmptyTasks(benchmark::State& state, Shape shape, int tasks) {
  EmptyKernels kernels;
  rt::Runtime runtime(rt::RuntimeOptions{.dispatch = rt::Dispatch::CallerFirst}, kernels);
  Buffers buffers;
  std::vector<rt::TaskArgs> args;
  for (int i = 0; i < tasks; ++i) args.push_back(ArgsFor(shape, i, tasks, buffers.tensor));
  for (auto _ : state) {
    for (const auto& task : args) {
      if (!runtime.SubmitAiv(0, task)) {
        state.SkipWithError("submit failed");
        return;
      }
    }
    if (!runtime.WaitAll() || runtime.tasks_completed() != static_cast<size_t>(tasks)) {
      state.SkipWithError("a run did not complete every task");
      return;
    }
    runtime.Reset();
  }
  state.SetItemsProcessed(state.iterations() * tasks);
  // A rate, inverted: elapsed seconds / (tasks * 1e-6) = microseconds per task.
  state.counters["us_per_task"] = benchmark::Counter(static_cast<double>(state.iterations() * tasks) * 1e-6,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  for (Shape shape : {Shape::Independent, Shape::Chain, Shape::Fan}) {
    for (int tasks : {16, 256, 4096}) {
      auto name = std::string("BM_EmptyTasks/") + ShapeName(shape) + "/" + std::to_string(tasks);
      benchmark::RegisterBenchmark(name.c_str(), BM_EmptyTasks, shape, tasks)->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
