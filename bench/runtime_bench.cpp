// What the runtime itself costs per task, with kernels that do nothing: submit-to-completion time of
// empty tasks, so that scheduling overhead is measured alone (the sim benchmarks add kernels on top).
//
//   BM_EmptyTasks/independent/<N>  N tasks with no arguments: no dependencies, any order
//   BM_EmptyTasks/chain/<N>        N tasks that each update one tensor (InOut): each waits for the last
//   BM_EmptyTasks/fan/<N>          one producer, N-2 readers of its output, one task writing it after them
//   BM_EmptyTasks/fanout/<N>       one producer, N-1 readers of its output (each waits for it)
//   BM_EmptyTasks/fanin/<N>        N-1 tasks each writing its own element of one tensor, then one reader
//                                  of the whole tensor (it waits for all of them), as the blocks of an
//                                  SPMD launch write their parts of one output
//
// One iteration submits the N tasks to a Runtime made once (CallerFirst, as a session's), waits for
// them and resets it. The `us_per_task` counter is the figure the budget (2 us a task) is
// about; bench/ratios.py prints it.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
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

enum class Shape { Independent, Chain, Fan, FanOut, FanIn };

const char* ShapeName(Shape shape) {
  switch (shape) {
    case Shape::Independent: return "independent";
    case Shape::Chain: return "chain";
    case Shape::Fan: return "fan";
    case Shape::FanOut: return "fanout";
    case Shape::FanIn: return "fanin";
  }
  return "?";
}

// One fp32 tensor of `elements` elements over owned memory.
struct Buffers {
  std::vector<float> data;
  rt::ChipTensor tensor;
  explicit Buffers(uint32_t elements) : data(elements) {
    const std::array<uint32_t, 1> shape{elements};
    tensor = rt::MakeExternalTensor(data.data(), shape, /*dtype: FP32*/ 0);
  }
};

// Element `index` of a one-dimensional tensor, as a view of the same buffer (dependencies are only
// found between views of one buffer).
rt::ChipTensor Element(const rt::ChipTensor& tensor, uint32_t index) {
  rt::ChipTensor element = tensor;
  element.start_offset = tensor.start_offset + index;
  element.shapes[0] = 1;
  return element;
}

rt::TaskArgs ArgsFor(Shape shape, int index, int tasks, const rt::ChipTensor& tensor) {
  rt::TaskArgs args;
  const bool first = index == 0, last = index == tasks - 1;
  switch (shape) {
    case Shape::Independent: break;
    case Shape::Chain: args.add_inout(tensor); break;
    case Shape::Fan:
      if (first || last) args.add_inout(tensor);
      else args.add_input(tensor);
      break;
    case Shape::FanOut:
      if (first) args.add_inout(tensor);
      else args.add_input(tensor);
      break;
    case Shape::FanIn:
      if (last) args.add_input(tensor);
      else args.add_output(Element(tensor, static_cast<uint32_t>(index)));
      break;
  }
  return args;
}

void BM_EmptyTasks(benchmark::State& state, Shape shape, int tasks) {
  EmptyKernels kernels;
  rt::Runtime runtime(rt::RuntimeOptions{.dispatch = rt::Dispatch::CallerFirst}, kernels);
  Buffers buffers(static_cast<uint32_t>(tasks));
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
  for (Shape shape : {Shape::Independent, Shape::Chain, Shape::Fan, Shape::FanOut, Shape::FanIn}) {
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
