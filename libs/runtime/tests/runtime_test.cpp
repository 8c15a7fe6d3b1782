#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using testing::Rendezvous;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// Runs a test-supplied kernel body and records what the runtime handed it: the order of func_ids,
// and whether a core was ever given to two running tasks at once.
class FakeExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  explicit FakeExecutor(Body body) : body_(std::move(body)) {}

  Result Execute(const KernelLaunch& launch) override {
    const std::pair<CoreType, int> core{launch.core_type, launch.core_index};
    {
      std::lock_guard lock(mu_);
      if (!busy_.insert(core).second) double_booked_ = true;
      launches_.push_back(launch);
      int& running = running_[static_cast<size_t>(launch.core_type)];
      ++running;
      max_running_[static_cast<size_t>(launch.core_type)] =
          std::max(max_running_[static_cast<size_t>(launch.core_type)], running);
    }
    Result result = body_(launch);
    {
      std::lock_guard lock(mu_);
      busy_.erase(core);
      --running_[static_cast<size_t>(launch.core_type)];
    }
    return result;
  }

  std::vector<int32_t> order() const {
    std::lock_guard lock(mu_);
    std::vector<int32_t> ids;
    for (const KernelLaunch& launch : launches_) ids.push_back(launch.func_id);
    return ids;
  }
  std::vector<KernelLaunch> launches() const {
    std::lock_guard lock(mu_);
    return launches_;
  }
  bool double_booked() const {
    std::lock_guard lock(mu_);
    return double_booked_;
  }
  int max_running(CoreType type) const {
    std::lock_guard lock(mu_);
    return max_running_[static_cast<size_t>(type)];
  }

 private:
  Body body_;
  mutable std::mutex mu_;
  std::vector<KernelLaunch> launches_;
  std::set<std::pair<CoreType, int>> busy_;
  std::array<int, 2> running_{};
  std::array<int, 2> max_running_{};
  bool double_booked_ = false;
};

Result KernelError(std::string message) { return pypto::unexpected(FatalError{FatalCode::KernelFailed, message}); }

TEST(Runtime, ReadAfterWriteChainRunsInOrder) {
  constexpr int kSteps = 16;
  std::vector<int32_t> data(64, -1);
  // Task k checks that every element holds what task k-1 wrote, then writes k+1. Task 0 dawdles, so a
  // missing dependency would let task 1 see -1.
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    const ChipTensor& tensor = TensorArgOf(launch, 0);
    int32_t* values = DataPointer<int32_t>(tensor);
    if (launch.func_id == 0) std::this_thread::sleep_for(20ms);
    const int32_t expected = launch.func_id == 0 ? -1 : launch.func_id;
    for (uint32_t i = 0; i < tensor.shapes[0]; ++i) {
      if (values[i] != expected)
        return KernelError("task " + std::to_string(launch.func_id) + " read " + std::to_string(values[i]));
    }
    for (uint32_t i = 0; i < tensor.shapes[0]; ++i) values[i] = launch.func_id + 1;
    return {};
  });
  Runtime runtime({.aic_cores = 4, .aiv_cores = 8, .worker_threads = 8}, executor);
  for (int step = 0; step < kSteps; ++step) {
    TaskArgs args;
    args.add_inout(IntTensor(data));
    // Alternate core types: dependencies cross them.
    auto id = runtime.Submit(step % 2 ? CoreType::AIC : CoreType::AIV, step, args);
    ASSERT_TRUE(id) << id.error().str();
    EXPECT_EQ(*id, static_cast<TaskId>(step));
  }
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();

  std::vector<int32_t> expected_order(kSteps);
  for (int step = 0; step < kSteps; ++step) expected_order[step] = step;
  EXPECT_EQ(executor.order(), expected_order);
  for (int32_t value : data) EXPECT_EQ(value, kSteps);
  EXPECT_EQ(runtime.tasks_completed(), static_cast<size_t>(kSteps));
}

TEST(Runtime, InputWaitsForProducerOfOverlappingView) {
  std::vector<int32_t> a(32, 0), b(32, 0);
  // func 0 fills a[8..16) slowly; func 1 copies a[12..20) to b. Their views overlap, so 1 waits for 0.
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 0) {
      std::this_thread::sleep_for(30ms);
      int32_t* out = DataPointer<int32_t>(TensorArgOf(launch, 0));
      for (int i = 0; i < 8; ++i) out[i] = 7;
    } else {
      const int32_t* in = DataPointer<int32_t>(TensorArgOf(launch, 0));
      int32_t* out = DataPointer<int32_t>(TensorArgOf(launch, 1));
      for (int i = 0; i < 8; ++i) out[i] = in[i];
    }
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);

  auto window = [&](std::vector<int32_t>& data, uint64_t offset) {
    ChipTensor tensor = IntTensor(data);
    tensor.start_offset = offset;
    tensor.shapes[0] = 8;
    return tensor;
  };
  TaskArgs produce;
  produce.add_output(window(a, 8));
  ASSERT_TRUE(runtime.SubmitAiv(0, produce));
  TaskArgs consume;
  consume.add_input(window(a, 12));
  consume.add_output(IntTensor(b));
  ASSERT_TRUE(runtime.SubmitAiv(1, consume));
  ASSERT_TRUE(runtime.WaitAll());

  EXPECT_EQ(executor.order(), (std::vector<int32_t>{0, 1}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b[i], 7) << i;  // a[12..16) came from func 0
  for (int i = 4; i < 8; ++i) EXPECT_EQ(b[i], 0) << i;  // a[16..20) was never written
}

TEST(Runtime, WriteAfterWriteKeepsProgramOrder) {
  std::vector<int32_t> data(16, 0);
  // The first writer is slow; without a WAW edge the second would finish first and be overwritten.
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 1) std::this_thread::sleep_for(30ms);
    int32_t* out = DataPointer<int32_t>(TensorArgOf(launch, 0));
    for (int i = 0; i < 16; ++i) out[i] = launch.func_id;
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  for (int32_t func_id : {1, 2}) {
    TaskArgs args;
    args.add_output(IntTensor(data));
    ASSERT_TRUE(runtime.SubmitAiv(func_id, args));
  }
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.order(), (std::vector<int32_t>{1, 2}));
  for (int32_t value : data) EXPECT_EQ(value, 2);
}

TEST(Runtime, WriteAfterReadWaitsForTheReader) {
  std::vector<int32_t> data(16, 7), seen(16, 0);
  // The reader is slow; without a WAR edge the writer would overwrite `data` while it is read.
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 1) {
      std::this_thread::sleep_for(30ms);
      const int32_t* in = DataPointer<int32_t>(TensorArgOf(launch, 0));
      int32_t* out = DataPointer<int32_t>(TensorArgOf(launch, 1));
      std::copy(in, in + 16, out);
    } else {
      int32_t* out = DataPointer<int32_t>(TensorArgOf(launch, 0));
      std::fill(out, out + 16, -1);
    }
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  TaskArgs read;
  read.add_input(IntTensor(data));
  read.add_output(IntTensor(seen));
  ASSERT_TRUE(runtime.SubmitAiv(1, read));
  TaskArgs write;
  write.add_inout(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(2, write));
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.order(), (std::vector<int32_t>{1, 2}));
  for (int32_t value : seen) EXPECT_EQ(value, 7);
  for (int32_t value : data) EXPECT_EQ(value, -1);
}

TEST(Runtime, IndependentTasksRunConcurrentlyOnDistinctCores) {
  std::vector<int32_t> a(8), b(8);
  Rendezvous both(2);
  std::mutex mu;
  std::vector<std::pair<int, int32_t>> core_and_lane;
  FakeExecutor executor([&](const KernelLaunch& launch) -> Result {
    const auto* global = reinterpret_cast<const GlobalContext*>(launch.args[kGlobalContextSlot]);
    {
      std::lock_guard lock(mu);
      core_and_lane.emplace_back(launch.core_index, global->sub_block_id);
    }
    if (!both.ArriveAndWait()) return KernelError("the other task never ran alongside this one");
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2}, executor);
  TaskArgs first, second;
  first.add_output(IntTensor(a));
  second.add_output(IntTensor(b));
  ASSERT_TRUE(runtime.SubmitAiv(0, first));
  ASSERT_TRUE(runtime.SubmitAiv(1, second));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();

  std::sort(core_and_lane.begin(), core_and_lane.end());
  // AIVs come in lane pairs: core 0 is lane 0, core 1 is lane 1.
  EXPECT_EQ(core_and_lane, (std::vector<std::pair<int, int32_t>>{{0, 0}, {1, 1}}));
  EXPECT_FALSE(executor.double_booked());
}

TEST(Runtime, DisjointViewsOfOneBufferDoNotDepend) {
  std::vector<int32_t> data(16);
  Rendezvous both(2);
  FakeExecutor executor([&](const KernelLaunch&) -> Result {
    if (!both.ArriveAndWait()) return KernelError("disjoint writers were serialized");
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .worker_threads = 2}, executor);
  for (uint64_t offset : {0u, 8u}) {
    ChipTensor half = IntTensor(data);
    half.start_offset = offset;
    half.shapes[0] = 8;
    TaskArgs args;
    args.add_output(half);
    // One on each core type: both have a core free at once.
    ASSERT_TRUE(runtime.Submit(offset ? CoreType::AIC : CoreType::AIV, 0, args));
  }
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
}

ChipTensor View(std::vector<int32_t>& data, uint64_t first, uint32_t count) {
  ChipTensor view = IntTensor(data);
  view.start_offset = first;
  view.shapes[0] = count;
  return view;
}

// A write that covers earlier accesses stands in for them (the runtime stops scanning them): later
// tasks must still be ordered after everything the covered accesses did.
TEST(Runtime, AWriteCoveringEarlierAccessesStillOrdersLaterTasks) {
  std::vector<int32_t> data(64, 7), seen_by_reader(32, 0), seen_after(16, 0);
  FakeExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (launch.func_id <= 2) std::this_thread::sleep_for(20ms);  // A and B are slow
    const ChipTensor& tensor = TensorArgOf(launch, 0);
    int32_t* values = DataPointer<int32_t>(tensor);
    switch (launch.func_id) {
      case 1: std::fill(values, values + 32, 1); break;                            // A writes [0, 32)
      case 2: std::copy(values, values + 32, seen_by_reader.data()); break;          // B reads [32, 64)
      case 3: std::fill(values, values + 64, 2); break;                            // C writes [0, 64)
      case 4: std::copy(values, values + 16, seen_after.data()); break;             // D reads [8, 24)
    }
    return {};
  });
  Runtime runtime({.aic_cores = 4, .aiv_cores = 4, .worker_threads = 4}, executor);
  TaskArgs a, b, c, d;
  a.add_output(View(data, 0, 32));
  b.add_input(View(data, 32, 32));
  c.add_output(View(data, 0, 64));
  d.add_input(View(data, 8, 16));
  for (auto [func_id, args] : {std::pair{1, &a}, {2, &b}, {3, &c}, {4, &d}}) ASSERT_TRUE(runtime.SubmitAiv(func_id, *args));
  ASSERT_TRUE(runtime.WaitAll());
  auto order = executor.order();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[2], 3);  // C after A (WAW) and B (WAR)
  EXPECT_EQ(order[3], 4);  // D after C (RAW)
  for (int32_t value : seen_by_reader) EXPECT_EQ(value, 7);
  for (int32_t value : seen_after) EXPECT_EQ(value, 2);
}

// Every update of one tensor waits only for the one before: a long chain stays linear (it used to
// rescan every earlier access, and add an edge from each, per submit).
TEST(Runtime, ALongChainOfUpdatesRunsInOrder) {
  constexpr int kSteps = 20000;
  std::vector<int32_t> counter(1, 0);
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    int32_t* value = DataPointer<int32_t>(TensorArgOf(launch, 0));
    if (*value != launch.func_id) return KernelError("step " + std::to_string(launch.func_id) + " ran out of order");
    ++*value;
    return {};
  });
  // All in the run's outer scope, so the window and the dependency pool (an entry per step's edge to
  // the one before) must hold them all.
  Runtime runtime({.aic_cores = 4,
                   .aiv_cores = 4,
                   .worker_threads = 2,
                   .dispatch = Dispatch::CallerFirst,
                   .task_window = 32768,
                   .ring_dep_pool = {32768, 32768, 32768, 32768}},
                  executor);
  for (int step = 0; step < kSteps; ++step) {
    TaskArgs args;
    args.add_inout(IntTensor(counter));
    ASSERT_TRUE(runtime.SubmitAiv(step, args));
  }
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(counter[0], kSteps);
}

// The blocks of an SPMD launch write their parts of one output; a task reading all of it waits for
// every part, and a short access anywhere under a long earlier write waits for that write (the
// runtime finds overlaps in an index ordered by first byte, where a long range starts far before
// the short ones it overlaps).
TEST(Runtime, AccessesFindEveryOverlappingPartWhereverItStarts) {
  constexpr int kParts = 16;
  std::vector<int32_t> data(64, 0), seen(64, -1), seen_late(1, -1);
  FakeExecutor executor([&](const KernelLaunch& launch) -> Result {
    const ChipTensor& tensor = TensorArgOf(launch, 0);
    int32_t* values = DataPointer<int32_t>(tensor);
    if (launch.func_id < kParts) {  // part p: [4p, 4p + 4) = p + 1, slowly
      std::this_thread::sleep_for(1ms);
      std::fill(values, values + 4, launch.func_id + 1);
    } else if (launch.func_id == kParts) {  // the reader of all of it
      std::copy(values, values + 64, seen.data());
    } else if (launch.func_id == kParts + 1) {  // the long write: [2, 62) = 100, slowly
      std::this_thread::sleep_for(20ms);
      std::fill(values, values + 60, 100);
    } else {  // the short read of [60, 61)
      seen_late[0] = values[0];
    }
    return {};
  });
  Runtime runtime({.aic_cores = 4, .aiv_cores = 4, .worker_threads = 4}, executor);
  for (int part = 0; part < kParts; ++part) {
    TaskArgs args;
    args.add_output(View(data, 4 * static_cast<uint64_t>(part), 4));
    ASSERT_TRUE(runtime.SubmitAiv(part, args));
  }
  TaskArgs read_all, write_long, read_short;
  read_all.add_input(IntTensor(data));
  write_long.add_output(View(data, 2, 60));
  read_short.add_input(View(data, 60, 1));
  ASSERT_TRUE(runtime.SubmitAiv(kParts, read_all));
  ASSERT_TRUE(runtime.SubmitAiv(kParts + 1, write_long));
  ASSERT_TRUE(runtime.SubmitAiv(kParts + 2, read_short));
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i / 4 + 1) << i;
  EXPECT_EQ(seen_late[0], 100);
  EXPECT_EQ(data[1], 1);
  EXPECT_EQ(data[62], kParts);
}

TEST(Runtime, NoDepArgumentsAreNotTracked) {
  std::vector<int32_t> data(4);
  Rendezvous both(2);
  FakeExecutor executor([&](const KernelLaunch&) -> Result {
    if (!both.ArriveAndWait()) return KernelError("a NoDep argument created a dependency");
    return {};
  });
  Runtime runtime({.aic_cores = 0, .aiv_cores = 2, .worker_threads = 2}, executor);
  TaskArgs writer, reader;
  writer.add_output(IntTensor(data));
  reader.add_no_dep(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(0, writer));
  ASSERT_TRUE(runtime.SubmitAiv(1, reader));
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
}

TEST(Runtime, CoreIsNeverSharedByRunningTasks) {
  constexpr int kTasks = 200;
  FakeExecutor executor([](const KernelLaunch&) -> Result {
    std::this_thread::sleep_for(100us);
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 3, .worker_threads = 8}, executor);
  std::vector<std::vector<int32_t>> buffers(kTasks, std::vector<int32_t>(4));
  for (int i = 0; i < kTasks; ++i) {
    TaskArgs args;
    args.add_output(IntTensor(buffers[i]));
    ASSERT_TRUE(runtime.Submit(i % 3 ? CoreType::AIV : CoreType::AIC, i, args));
  }
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(runtime.tasks_completed(), static_cast<size_t>(kTasks));
  EXPECT_FALSE(executor.double_booked());
  EXPECT_LE(executor.max_running(CoreType::AIC), 2);
  EXPECT_LE(executor.max_running(CoreType::AIV), 3);
  for (const KernelLaunch& launch : executor.launches()) {
    EXPECT_GE(launch.core_index, 0);
    EXPECT_LT(launch.core_index, launch.core_type == CoreType::AIC ? 2 : 3);
  }
}

TEST(Runtime, KernelSeesArgsLayout) {
  std::vector<int32_t> a(4), b(6);
  struct Seen {
    ChipTensor first{}, second{};
    const void* first_address = nullptr;
    uint64_t scalar0 = 0, scalar1 = 0;
    LocalContext local;
    KernelLaunch launch;
  } seen;
  FakeExecutor executor([&](const KernelLaunch& launch) -> Result {
    seen.first = TensorArgOf(launch, 0);
    seen.second = TensorArgOf(launch, 1);
    seen.first_address = reinterpret_cast<const void*>(launch.args[0]);
    seen.scalar0 = static_cast<uint64_t>(launch.args[2]);
    seen.scalar1 = static_cast<uint64_t>(launch.args[3]);
    seen.local = *reinterpret_cast<const LocalContext*>(launch.args[kLocalContextSlot]);
    seen.launch = launch;
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .worker_threads = 1}, executor);
  TaskArgs args;
  args.add_input(IntTensor(a));
  args.add_output(IntTensor(b));
  args.add_scalar(42);
  args.add_scalar_value(2.5f);
  auto id = runtime.SubmitAic(7, args);
  ASSERT_TRUE(id);
  ASSERT_TRUE(runtime.WaitAll());

  EXPECT_EQ(seen.launch.task_id, *id);
  EXPECT_EQ(seen.launch.func_id, 7);
  EXPECT_EQ(seen.launch.core_type, CoreType::AIC);
  EXPECT_EQ(seen.launch.core_index, 0);
  // args[i] points at the task's own copy of the descriptor, not at the caller's.
  EXPECT_NE(seen.first_address, static_cast<const void*>(&args.tensors()[0].tensor));
  EXPECT_EQ(seen.first.buffer_addr, reinterpret_cast<uint64_t>(a.data()));
  EXPECT_EQ(seen.second.buffer_addr, reinterpret_cast<uint64_t>(b.data()));
  EXPECT_EQ(seen.second.shapes[0], 6u);
  EXPECT_EQ(seen.scalar0, 42u);
  EXPECT_EQ(seen.scalar1, uint64_t{std::bit_cast<uint32_t>(2.5f)});
  EXPECT_EQ(seen.local.block_idx, 0);
  EXPECT_EQ(seen.local.block_num, 1);
}

TEST(Runtime, FailingKernelSkipsLaterTasks) {
  std::vector<int32_t> data(4);
  std::promise<void> all_submitted;
  std::shared_future<void> gate = all_submitted.get_future().share();
  FakeExecutor executor([&](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 0) gate.wait();  // so every submit happens before the failure
    if (launch.func_id == 1) return KernelError("kernel 1 trapped");
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 2, .worker_threads = 4}, executor);
  for (int32_t func_id = 0; func_id < 6; ++func_id) {
    TaskArgs args;
    args.add_inout(IntTensor(data));
    ASSERT_TRUE(runtime.SubmitAiv(func_id, args));
  }
  all_submitted.set_value();

  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::KernelFailed);
  EXPECT_EQ(done.error().message, "kernel 1 trapped");
  EXPECT_EQ(executor.order(), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(runtime.tasks_completed(), 1u);

  // The error is latched: the run is over, and a further submit is refused with it.
  TaskArgs more;
  more.add_input(IntTensor(data));
  auto refused = runtime.SubmitAiv(9, more);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "kernel 1 trapped");
  EXPECT_FALSE(runtime.WaitAll());
}

TEST(Runtime, ThrowingExecutorBecomesInternalError) {
  std::vector<int32_t> data(4);
  FakeExecutor executor([](const KernelLaunch&) -> Result { throw std::runtime_error("oops"); });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .worker_threads = 1}, executor);
  TaskArgs args;
  args.add_input(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(3, args));
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::Internal);
  EXPECT_EQ(done.error().message, "task 0 (func_id 3): executor threw: oops");
}

TEST(Runtime, MalformedArgsAreInvalidArgs) {
  std::vector<int32_t> data(4);
  FakeExecutor executor([](const KernelLaunch&) -> Result { return {}; });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 1, .worker_threads = 1}, executor);
  TaskArgs args;
  args.add_scalar(1);
  args.add_input(IntTensor(data));
  auto id = runtime.SubmitAiv(3, args);
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, FatalCode::InvalidArgs);
  EXPECT_EQ(id.error().str(),
            "fatal error 5 (InvalidArgs): task for func_id 3 has invalid arguments: tensor argument added after a "
            "scalar: all tensors must come first");
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::InvalidArgs);
  EXPECT_TRUE(executor.order().empty());
}

TEST(Runtime, CoreTypeWithoutCoresIsInvalidArgs) {
  FakeExecutor executor([](const KernelLaunch&) -> Result { return {}; });
  Runtime runtime({.aic_cores = 0, .aiv_cores = 2}, executor);
  auto id = runtime.SubmitAic(0, TaskArgs());
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code, FatalCode::InvalidArgs);
  EXPECT_EQ(id.error().message, "task for func_id 0 needs an AIC core, but none are configured");
}

TEST(Runtime, DestructorWaitsForSubmittedTasks) {
  std::vector<int32_t> data(4, 0);
  FakeExecutor executor([](const KernelLaunch& launch) -> Result {
    std::this_thread::sleep_for(20ms);
    DataPointer<int32_t>(TensorArgOf(launch, 0))[0] = 5;
    return {};
  });
  {
    Runtime runtime({.aic_cores = 1, .aiv_cores = 1}, executor);
    TaskArgs args;
    args.add_output(IntTensor(data));
    ASSERT_TRUE(runtime.SubmitAiv(0, args));
  }
  EXPECT_EQ(data[0], 5);
}

TEST(Runtime, CoreTypeNames) {
  EXPECT_STREQ(CoreTypeName(CoreType::AIC), "AIC");
  EXPECT_STREQ(CoreTypeName(CoreType::AIV), "AIV");
}

}  // namespace
}  // namespace pypto::rt
