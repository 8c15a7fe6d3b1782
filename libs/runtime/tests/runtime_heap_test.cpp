// Heap rings: the memory a run's tensors take, one ring per scope depth. A full ring waits for blocks
// whose users finish; a ring that only the orchestration could free, or a block larger than its ring,
// is upstream's HEAP_RING_DEADLOCK (fatal error 2). And RunPlan's intermediates live only as long as
// the scope that holds their uses, so a loop whose iterations each create a tensor runs in a heap that
// holds a few iterations' worth, not all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_plan.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// func 0 writes its first tensor's elements with its scalar; func 1 adds its first tensor into the
// second. Both pause a little, so that the orchestration runs ahead and has to wait for the heap. Each
// records the most heap ring 1 held while it ran.
class HeapExecutor : public CoreExecutor {
 public:
  void Watch(const Runtime* runtime) { runtime_ = runtime; }
  Result Execute(const KernelLaunch& launch) override {
    std::this_thread::sleep_for(1ms);
    const ChipTensor& first = TensorArgOf(launch, 0);
    const size_t n = first.shapes[0];
    if (launch.func_id == 0) {
      const int32_t value = static_cast<int32_t>(launch.args[1]);
      for (size_t i = 0; i < n; ++i) DataPointer<int32_t>(first)[i] = value;
    } else {
      for (size_t i = 0; i < n; ++i) DataPointer<int32_t>(TensorArgOf(launch, 1))[i] += DataPointer<int32_t>(first)[i];
    }
    if (runtime_) {
      const uint64_t used = runtime_->heap_used(1);
      uint64_t seen = peak_.load();
      while (used > seen && !peak_.compare_exchange_weak(seen, used)) {
      }
    }
    return {};
  }
  uint64_t peak() const { return peak_; }

 private:
  const Runtime* runtime_ = nullptr;
  std::atomic<uint64_t> peak_{0};
};

RuntimeOptions WithHeap(uint64_t bytes, Dispatch dispatch) {
  return {.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2, .dispatch = dispatch,
          .ring_heap = {bytes, bytes, bytes, bytes}};
}

class HeapTest : public ::testing::TestWithParam<Dispatch> {};

// Upstream's fatal-code test for HEAP_RING_DEADLOCK: a 32 KiB output with ring_heap=1024.
TEST_P(HeapTest, ABlockLargerThanItsRingIsAHeapRingDeadlock) {
  HeapExecutor executor;
  Runtime runtime(WithHeap(1024, GetParam()), executor);
  auto block = runtime.HeapAllocate(32 * 1024, 0, "intermediate 't'");
  ASSERT_FALSE(block);
  EXPECT_EQ(block.error().str(),
            "fatal error 2 (HeapRingDeadlock): intermediate 't' needs 32768 bytes of heap ring 0 (scope depth 0), "
            "which is more than the whole ring (1024 bytes); raise the heap (RunConfig(ring_heap=...), "
            "PTO2_RING_HEAP) or create fewer or smaller tensors in that scope (e.g. inside a loop, whose body is a "
            "scope)");
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::HeapRingDeadlock);
}

TEST_P(HeapTest, ARingHeldOnlyByUnreleasedBlocksIsAHeapRingDeadlock) {
  HeapExecutor executor;
  Runtime runtime(WithHeap(2048, GetParam()), executor);
  auto first = runtime.HeapAllocate(1000, 3, "intermediate 'a'");  // one 1 KiB slice each
  auto second = runtime.HeapAllocate(1024, 5, "intermediate 'b'");  // depth 5 shares ring 3
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->ring, 3u);
  EXPECT_EQ(runtime.heap_used(3), 2048u);
  auto third = runtime.HeapAllocate(8, 3, "intermediate 'c'");
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().str(),
            "fatal error 2 (HeapRingDeadlock): intermediate 'c' needs 8 bytes of heap ring 3 (scope depth 3 or "
            "deeper), but 2048 of its 2048 bytes are held by tensors whose scopes are still open, which give them "
            "back only when those scopes end; raise the heap (RunConfig(ring_heap=...), PTO2_RING_HEAP) or create "
            "fewer or smaller tensors in that scope (e.g. inside a loop, whose body is a scope)");
  runtime.HeapRelease(*first, {});
  runtime.HeapRelease(*second, {});
  EXPECT_EQ(runtime.heap_used(3), 0u);
}

// A block released while a task still uses it comes back when that task retires; an allocation that
// finds the ring full waits for it rather than failing.
TEST_P(HeapTest, AFullRingWaitsForTheUsersOfReleasedBlocks) {
  HeapExecutor executor;
  Runtime runtime(WithHeap(2048, GetParam()), executor);
  auto a = runtime.HeapAllocate(1024, 0, "a");
  auto b = runtime.HeapAllocate(1024, 0, "b");
  ASSERT_TRUE(a && b);
  std::vector<int32_t> sink(4, 0);
  ChipTensor in = MakeExternalTensor(a->memory, std::array<uint32_t, 1>{4}, PYPTO_RT_INT32);
  std::memset(a->memory, 0, 16);
  static_cast<int32_t*>(a->memory)[2] = 7;
  TaskArgs add;
  add.add_input(in);
  add.add_inout(IntTensor(sink));
  auto user = runtime.SubmitAiv(1, add);
  ASSERT_TRUE(user) << user.error().str();
  const TaskId users[] = {*user};
  runtime.HeapRelease(*a, users);
  auto c = runtime.HeapAllocate(1024, 0, "c");  // waits for the task reading `a`
  ASSERT_TRUE(c) << c.error().str();
  EXPECT_EQ(sink[2], 7);  // the user had finished before its block was reused
  ASSERT_TRUE(runtime.WaitAll());
  runtime.HeapRelease(*b, {});
  runtime.HeapRelease(*c, {});
  EXPECT_EQ(runtime.heap_used(0), 0u);
}

// A loop of 32 iterations, each a scope that creates a 4 KiB tensor, fills it and adds it into the
// output: 128 KiB of intermediates in all, run in heap rings of 16 KiB.
TaskPlan LoopOfScopedTensors(int iterations, bool scoped) {
  TaskPlan plan;
  plan.orchestration_name = "loop";
  plan.params = {PlanTensor{.name = "y", .dtype = PYPTO_RT_INT32, .shape = {1024}}};
  plan.kernels = {{.func_id = 0, .name = "fill"}, {.func_id = 1, .name = "accumulate"}};
  for (int i = 0; i < iterations; ++i) {
    const uint32_t t = static_cast<uint32_t>(plan.intermediates.size());
    plan.intermediates.push_back({.name = "t" + std::to_string(i), .dtype = PYPTO_RT_INT32, .shape = {1024}});
    const PlanTensorRef tensor{.kind = PlanTensorRef::Kind::Intermediate, .index = t};
    const PlanTensorRef y{.kind = PlanTensorRef::Kind::Param, .index = 0};
    plan.submits.push_back({.func_id = 0,
                            .args = {{.direction = ArgDirection::OutputExisting, .tensor = tensor},
                                     {.direction = ArgDirection::Scalar, .scalar = static_cast<uint64_t>(i)}},
                            .scopes_opened = static_cast<uint16_t>(scoped ? 1 : 0)});
    plan.submits.push_back({.func_id = 1,
                            .args = {{.direction = ArgDirection::Input, .tensor = tensor},
                                     {.direction = ArgDirection::InOut, .tensor = y}},
                            .scopes_closed = static_cast<uint16_t>(scoped ? 1 : 0)});
  }
  return plan;
}

TEST_P(HeapTest, AScopedTensorGivesItsMemoryBackWhenItsScopeEnds) {
  const TaskPlan plan = LoopOfScopedTensors(32, true);
  std::vector<int32_t> y(1024, 0);
  const std::vector<ChipTensor> params = {IntTensor(y)};
  HeapExecutor executor;
  Runtime runtime(WithHeap(16 * 1024, GetParam()), executor);
  executor.Watch(&runtime);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_TRUE(ran) << ran.error().str();
  EXPECT_TRUE(std::ranges::all_of(y, [](int32_t v) { return v == 31 * 32 / 2; }));
  EXPECT_GT(executor.peak(), 0u);             // the iterations' tensors are in ring 1
  EXPECT_LE(executor.peak(), 16u * 1024u);    // never more than the ring holds
  EXPECT_EQ(runtime.heap_used(0), 0u);
  EXPECT_EQ(runtime.heap_used(1), 0u);        // all given back by the end of the run
}

TEST_P(HeapTest, TensorsOfTheOuterScopeAllLiveToTheEndOfTheRun) {
  const TaskPlan plan = LoopOfScopedTensors(32, false);
  std::vector<int32_t> y(1024, 0);
  const std::vector<ChipTensor> params = {IntTensor(y)};
  HeapExecutor executor;
  Runtime runtime(WithHeap(16 * 1024, GetParam()), executor);
  auto ran = RunPlan(plan, params, runtime);
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code, FatalCode::HeapRingDeadlock);
  EXPECT_EQ(ran.error().message,
            "intermediate 't4' needs 4096 bytes of heap ring 0 (scope depth 0), but 16384 of its 16384 bytes are "
            "held by tensors whose scopes are still open, which give them back only when those scopes end; raise the "
            "heap (RunConfig(ring_heap=...), PTO2_RING_HEAP) or create fewer or smaller tensors in that scope (e.g. "
            "inside a loop, whose body is a scope)");
  EXPECT_EQ(runtime.heap_used(0), 0u);
}

INSTANTIATE_TEST_SUITE_P(Dispatch, HeapTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
