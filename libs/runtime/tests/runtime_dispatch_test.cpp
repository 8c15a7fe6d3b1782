// Dispatch::CallerFirst (the waiting thread runs tasks; workers start on first need) and
// Runtime::Reset (many runs on one Runtime). The Eager scheduler is covered by runtime_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using testing::Rendezvous;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// Records every launch with the thread it ran on, and whether a core was ever double-booked.
class RecordingExecutor : public CoreExecutor {
 public:
  using Body = std::function<Result(const KernelLaunch&)>;
  explicit RecordingExecutor(Body body = {}) : body_(std::move(body)) {}

  Result Execute(const KernelLaunch& launch) override {
    const std::pair<CoreType, int> core{launch.core_type, launch.core_index};
    {
      std::lock_guard lock(mu_);
      if (!busy_.insert(core).second) double_booked_ = true;
      launches_.push_back(launch);
      threads_.push_back(std::this_thread::get_id());
      max_running_ = std::max(max_running_, static_cast<int>(busy_.size()));
    }
    Result result = body_ ? body_(launch) : Result{};
    std::lock_guard lock(mu_);
    busy_.erase(core);
    return result;
  }

  std::vector<KernelLaunch> launches() const {
    std::lock_guard lock(mu_);
    return launches_;
  }
  std::set<std::thread::id> threads() const {
    std::lock_guard lock(mu_);
    return {threads_.begin(), threads_.end()};
  }
  bool double_booked() const {
    std::lock_guard lock(mu_);
    return double_booked_;
  }
  int max_running() const {
    std::lock_guard lock(mu_);
    return max_running_;
  }
  void Clear() {
    std::lock_guard lock(mu_);
    launches_.clear();
    threads_.clear();
    max_running_ = 0;
  }

 private:
  Body body_;
  mutable std::mutex mu_;
  std::vector<KernelLaunch> launches_;
  std::vector<std::thread::id> threads_;
  std::set<std::pair<CoreType, int>> busy_;
  int max_running_ = 0;
  bool double_booked_ = false;
};

constexpr RuntimeOptions kCallerFirst{.aic_cores = 2, .aiv_cores = 4, .worker_threads = 4,
                                      .dispatch = Dispatch::CallerFirst};

TEST(CallerFirst, DependentChainRunsOnTheWaitingThread) {
  std::vector<int32_t> data(1, 0);
  RecordingExecutor executor([](const KernelLaunch& launch) -> Result {
    int32_t& value = DataPointer<int32_t>(TensorArgOf(launch, 0))[0];
    value = value * 10 + launch.func_id;  // order-sensitive
    return {};
  });
  Runtime runtime(kCallerFirst, executor);
  for (int32_t func_id = 1; func_id <= 6; ++func_id) {
    TaskArgs args;
    args.add_inout(IntTensor(data));
    ASSERT_TRUE(runtime.SubmitAiv(func_id, args));
  }
  EXPECT_EQ(data[0], 0);  // nothing runs before a thread waits
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(data[0], 123456);
  EXPECT_EQ(executor.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(runtime.tasks_completed(), 6u);
}

TEST(CallerFirst, IndependentTasksStillRunConcurrently) {
  std::vector<int32_t> a(4), b(4), c(4);
  Rendezvous all_started(3);
  RecordingExecutor executor([&](const KernelLaunch&) -> Result {
    if (!all_started.ArriveAndWait()) return pypto::unexpected(FatalError{FatalCode::Internal, "serialized"});
    return {};
  });
  Runtime runtime(kCallerFirst, executor);
  for (auto* data : {&a, &b, &c}) {
    TaskArgs args;
    args.add_output(IntTensor(*data));
    ASSERT_TRUE(runtime.SubmitAiv(0, args));
  }
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(executor.max_running(), 3);
  EXPECT_EQ(executor.threads().size(), 3u);
  EXPECT_FALSE(executor.double_booked());
}

// Tasks of a kernel known to be short are not worth waking a thread for: they stay on the caller.
TEST(CallerFirst, ShortTasksStayOnTheCallerOnceMeasured) {
  std::vector<std::vector<int32_t>> data(8, std::vector<int32_t>(4));
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 4, .dispatch = Dispatch::CallerFirst,
                   .helper_min_task_ns = 1'000'000'000},
                  executor);
  TaskArgs first;
  first.add_output(IntTensor(data[0]));
  ASSERT_TRUE(runtime.SubmitAiv(7, first));  // alone: runs on the caller, and measures kernel 7
  ASSERT_TRUE(runtime.WaitAll());
  for (int run = 0; run < 5; ++run) {
    runtime.Reset();
    for (auto& buffer : data) {
      TaskArgs args;
      args.add_output(IntTensor(buffer));
      ASSERT_TRUE(runtime.SubmitAiv(7, args));
    }
    ASSERT_TRUE(runtime.WaitAll());
  }
  EXPECT_EQ(executor.launches().size(), 41u);
  EXPECT_EQ(executor.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

// Tasks of a kernel known to be long still fan out over the workers.
TEST(CallerFirst, LongTasksFanOutOnceMeasured) {
  std::vector<std::vector<int32_t>> data(3, std::vector<int32_t>(4));
  std::atomic<bool> measuring{true};
  Rendezvous all_started(3);
  RecordingExecutor executor([&](const KernelLaunch&) -> Result {
    if (measuring) {
      std::this_thread::sleep_for(2ms);
      return {};
    }
    if (!all_started.ArriveAndWait()) return pypto::unexpected(FatalError{FatalCode::Internal, "serialized"});
    return {};
  });
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 4, .dispatch = Dispatch::CallerFirst,
                   .helper_min_task_ns = 1'000'000},
                  executor);
  TaskArgs first;
  first.add_output(IntTensor(data[0]));
  ASSERT_TRUE(runtime.SubmitAiv(7, first));
  ASSERT_TRUE(runtime.WaitAll());
  runtime.Reset();
  measuring = false;
  for (auto& buffer : data) {
    TaskArgs args;
    args.add_output(IntTensor(buffer));
    ASSERT_TRUE(runtime.SubmitAiv(7, args));
  }
  auto done = runtime.WaitAll();
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ(executor.max_running(), 3);
}

TEST(CallerFirst, OneThreadRunsEverythingOnTheCaller) {
  std::vector<std::vector<int32_t>> data(16, std::vector<int32_t>(4));
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 2, .aiv_cores = 4, .worker_threads = 1, .dispatch = Dispatch::CallerFirst}, executor);
  for (auto& buffer : data) {
    TaskArgs args;
    args.add_output(IntTensor(buffer));
    ASSERT_TRUE(runtime.Submit(&buffer - data.data() < 8 ? CoreType::AIV : CoreType::AIC, 0, args));
  }
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(executor.launches().size(), 16u);
  EXPECT_EQ(executor.threads(), std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(executor.max_running(), 1);
}

TEST(CallerFirst, WriteAfterWriteAndReadAfterWriteKeepProgramOrder) {
  // Writers and readers of overlapping halves of one buffer, mixed with independent work.
  std::vector<int32_t> shared(8, 0);
  std::vector<std::vector<int32_t>> other(8, std::vector<int32_t>(2));
  std::mutex mu;
  std::vector<int> order;
  RecordingExecutor executor([&](const KernelLaunch& launch) -> Result {
    std::this_thread::sleep_for(1ms);
    std::lock_guard lock(mu);
    order.push_back(launch.func_id);
    return {};
  });
  Runtime runtime(kCallerFirst, executor);
  ChipTensor whole = IntTensor(shared);
  for (int32_t step = 0; step < 8; ++step) {
    TaskArgs args;
    if (step % 2 == 0) args.add_output(whole);
    else args.add_input(whole);
    ASSERT_TRUE(runtime.SubmitAiv(100 + step, args));
    TaskArgs independent;
    independent.add_output(IntTensor(other[static_cast<size_t>(step)]));
    ASSERT_TRUE(runtime.SubmitAiv(step, independent));
  }
  ASSERT_TRUE(runtime.WaitAll());
  ASSERT_EQ(order.size(), 16u);
  auto position = [&](int id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  // Writers keep program order (WAW); each reader follows the writer before it (RAW). A reader and
  // the next writer are not ordered: the runtime tracks no write-after-read.
  for (int step = 0; step + 2 < 8; step += 2) EXPECT_LT(position(100 + step), position(102 + step));
  for (int step = 1; step < 8; step += 2) EXPECT_LT(position(99 + step), position(100 + step));
  EXPECT_FALSE(executor.double_booked());
}

TEST(CallerFirst, DestructorRunsTheSubmittedTasks) {
  std::vector<int32_t> data(4, 0);
  RecordingExecutor executor([](const KernelLaunch& launch) -> Result {
    DataPointer<int32_t>(TensorArgOf(launch, 0))[0] = 5;
    return {};
  });
  {
    Runtime runtime(kCallerFirst, executor);
    TaskArgs args;
    args.add_output(IntTensor(data));
    ASSERT_TRUE(runtime.SubmitAiv(0, args));
  }
  EXPECT_EQ(data[0], 5);
}

TEST(CallerFirst, ManyRunsOfAWideDagNeverDoubleBookACore) {
  // A diamond per column: a writer, two readers, a joiner; columns are independent. Repeated on one
  // Runtime, so that workers started in an early run serve the later ones.
  constexpr int kColumns = 12;
  RecordingExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 3, .worker_threads = 4, .dispatch = Dispatch::CallerFirst}, executor);
  for (int run = 0; run < 50; ++run) {
    runtime.Reset();
    std::vector<std::vector<int32_t>> buffers(kColumns * 3, std::vector<int32_t>(4));
    for (int col = 0; col < kColumns; ++col) {
      auto& source = buffers[static_cast<size_t>(col * 3)];
      auto& left = buffers[static_cast<size_t>(col * 3 + 1)];
      auto& right = buffers[static_cast<size_t>(col * 3 + 2)];
      TaskArgs write, read_left, read_right, join;
      write.add_output(IntTensor(source));
      read_left.add_input(IntTensor(source));
      read_left.add_output(IntTensor(left));
      read_right.add_input(IntTensor(source));
      read_right.add_output(IntTensor(right));
      join.add_input(IntTensor(left));
      join.add_input(IntTensor(right));
      join.add_inout(IntTensor(source));
      ASSERT_TRUE(runtime.SubmitAiv(0, write));
      ASSERT_TRUE(runtime.SubmitAiv(1, read_left));
      ASSERT_TRUE(runtime.Submit(col % 2 ? CoreType::AIC : CoreType::AIV, 2, read_right));
      ASSERT_TRUE(runtime.SubmitAiv(3, join));
    }
    ASSERT_TRUE(runtime.WaitAll()) << "run " << run;
    ASSERT_EQ(runtime.tasks_completed(), static_cast<size_t>(kColumns * 4)) << "run " << run;
  }
  EXPECT_FALSE(executor.double_booked());
}

// A child forked after the workers started has none of them: it still runs its tasks (starting
// workers of its own), and destroying the Runtime there must not wait for the missing ones.
TEST(CallerFirst, ForkedChildRunsWithoutTheWorkers) {
  std::vector<std::vector<int32_t>> data(3, std::vector<int32_t>(4, 0));
  RecordingExecutor executor([](const KernelLaunch& launch) -> Result {
    DataPointer<int32_t>(TensorArgOf(launch, 0))[0] += 1;
    return {};
  });
  RuntimeOptions options = kCallerFirst;
  options.helper_min_task_ns = 0;  // every surplus task wakes a worker: in the child, workers of its own
  auto runtime = std::make_unique<Runtime>(options, executor);
  auto submit_all = [&] {
    for (auto& buffer : data) {
      TaskArgs args;
      args.add_inout(IntTensor(buffer));
      if (!runtime->SubmitAiv(0, args)) return false;
    }
    return true;
  };
  ASSERT_TRUE(submit_all());  // three ready tasks of a kernel not seen yet: the workers start
  ASSERT_TRUE(runtime->WaitAll());
  runtime->Reset();

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);  // a hang fails the test instead of stalling it
    const bool ran = submit_all() && runtime->WaitAll().has_value();
    runtime.reset();
    _exit(ran && data[0][0] == 2 && data[1][0] == 2 && data[2][0] == 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(data[0][0], 1);  // the parent's memory is its own
}

// Reset under both dispatch modes: a failed run's error is forgotten, ids and counts start again.
class ResetTest : public ::testing::TestWithParam<Dispatch> {};

TEST_P(ResetTest, StartsAFreshRunOnTheSameRuntime) {
  std::vector<int32_t> data(4);
  RecordingExecutor executor([](const KernelLaunch& launch) -> Result {
    if (launch.func_id == 1) return pypto::unexpected(FatalError{FatalCode::KernelFailed, "kernel 1 trapped"});
    return {};
  });
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .worker_threads = 2, .dispatch = GetParam()}, executor);
  for (int round = 0; round < 3; ++round) {
    for (int32_t func_id = 0; func_id < 3; ++func_id) {
      TaskArgs args;
      args.add_inout(IntTensor(data));
      auto id = runtime.SubmitAiv(func_id, args);
      // Eager workers may already have failed task 1, which makes the last submit refused.
      if (func_id < 2) {
        ASSERT_TRUE(id);
      }
    }
    auto failed = runtime.WaitAll();
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().message, "kernel 1 trapped");
    EXPECT_EQ(runtime.tasks_completed(), 1u);
    TaskArgs refused;
    refused.add_input(IntTensor(data));
    EXPECT_FALSE(runtime.SubmitAiv(0, refused));  // latched until Reset

    runtime.Reset();
    executor.Clear();
    EXPECT_EQ(runtime.tasks_completed(), 0u);
    TaskArgs args;
    args.add_inout(IntTensor(data));
    auto id = runtime.SubmitAiv(0, args);
    ASSERT_TRUE(id) << id.error().str();
    EXPECT_EQ(*id, 0u);  // ids count from 0 again
    ASSERT_TRUE(runtime.WaitAll());
    ASSERT_EQ(executor.launches().size(), 1u);
    EXPECT_EQ(executor.launches()[0].task_id, 0u);
    EXPECT_EQ(runtime.tasks_completed(), 1u);
    runtime.Reset();
    executor.Clear();
  }
}

INSTANTIATE_TEST_SUITE_P(Dispatch, ResetTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
