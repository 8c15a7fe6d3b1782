// Dependency pools: a submit takes an entry of its ring's pool per producer task, and one of the ring's
// fanin spill pool per producer beyond the 64 it holds inline; the entries of a ring's oldest open scope
// come back only when it ends. Running out is upstream's DEP_POOL_OVERFLOW (fatal error 4), decided by
// the order of submits and scopes, never by which producers happen to have finished.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <thread>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using namespace std::chrono_literals;
using testing::IntTensor;
using Result = pypto::expected<void, FatalError>;

// Kernels that do nothing, slowly or at once.
class IdleExecutor : public CoreExecutor {
 public:
  explicit IdleExecutor(std::chrono::milliseconds pause = 0ms) : pause_(pause) {}
  Result Execute(const KernelLaunch&) override {
    std::this_thread::sleep_for(pause_);
    return {};
  }

 private:
  std::chrono::milliseconds pause_;
};

RuntimeOptions WithDepPool(uint32_t entries, Dispatch dispatch) {
  return {.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2, .dispatch = dispatch,
          .ring_dep_pool = {entries, entries, entries, entries}};
}

ChipTensor Part(std::vector<int32_t>& data, uint32_t first, uint32_t count) {
  const std::array<uint32_t, 1> shape = {count}, offset = {first};
  return SlicedTensor(IntTensor(data), shape, offset);
}

constexpr char kFix[] =
    "; raise the pool (RunConfig(ring_dep_pool=...), PTO2_RING_DEP_POOL) or give the tasks of that scope fewer "
    "producers (e.g. split the work into smaller scopes: a loop's body is a scope)";

class DepPoolTest : public ::testing::TestWithParam<Dispatch> {};

// Upstream's fatal-code test for DEP_POOL_OVERFLOW: in a scope, one consumer of 128 producers with
// ring_dep_pool=4; the 64 producers beyond the inline ones spill into a pool of 4 entries.
TEST_P(DepPoolTest, OneConsumerOfMoreProducersThanThePoolHoldsOverflowsIt) {
  IdleExecutor executor;
  Runtime runtime(WithDepPool(4, GetParam()), executor);
  ASSERT_TRUE(runtime.ScopeBegin());
  std::vector<TaskId> producers;
  std::vector<std::vector<int32_t>> outputs(128, std::vector<int32_t>(1));
  for (auto& output : outputs) {
    TaskArgs args;
    args.add_output(IntTensor(output));
    auto id = runtime.SubmitDummy(args);
    ASSERT_TRUE(id);
    producers.push_back(*id);
  }
  std::this_thread::sleep_for(20ms);  // finished or not, they stay counted: their scope is open
  TaskArgs consumer;
  consumer.set_dependencies(producers.data(), producers.size());
  auto id = runtime.SubmitDummy(consumer);
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().str(),
            std::string("fatal error 4 (DepPoolOverflow): task 128 (func_id -1) waits for 128 producer tasks, 64 "
                        "more than the 64 a task holds inline, which take as many entries of the fanin spill pool "
                        "of ring 1 (scope depth 1), which is more than the whole pool (4 entries)") +
                kFix);
  runtime.ScopeEnd();
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, FatalCode::DepPoolOverflow);
}

// Eight writers of the parts of one tensor, then readers of all of it: each reader takes eight entries
// of ring 1's pool, which its scope keeps. Sixteen entries hold two readers; eight hold one.
void SubmitWritersAndReaders(Runtime& runtime, std::vector<int32_t>& data, int readers) {
  for (uint32_t part = 0; part < 8; ++part) {
    TaskArgs writer;
    writer.add_output(Part(data, 4 * part, 4));
    ASSERT_TRUE(runtime.SubmitAiv(0, writer));
  }
  for (int reader = 0; reader < readers; ++reader) {
    TaskArgs args;
    args.add_input(IntTensor(data));
    if (!runtime.SubmitAiv(1, args)) return;
  }
}

TEST_P(DepPoolTest, ReadersFitAPoolOfTheirEdgesAndOverflowASmallerOne) {
  IdleExecutor executor(1ms);
  std::vector<int32_t> data(32);
  {
    Runtime runtime(WithDepPool(16, GetParam()), executor);
    ASSERT_TRUE(runtime.ScopeBegin());
    SubmitWritersAndReaders(runtime, data, 2);
    runtime.ScopeEnd();
    auto done = runtime.WaitAll();
    EXPECT_TRUE(done) << done.error().str();
  }
  Runtime runtime(WithDepPool(8, GetParam()), executor);
  ASSERT_TRUE(runtime.ScopeBegin());
  SubmitWritersAndReaders(runtime, data, 2);
  runtime.ScopeEnd();
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            std::string("fatal error 4 (DepPoolOverflow): task 9 (func_id 1) waits for 8 producer tasks, one entry "
                        "each of the dependency pool of ring 1 (scope depth 1), but 8 of its 8 entries hold the "
                        "dependencies of earlier tasks of that ring, which come back only when the scope at depth 1 "
                        "ends") +
                kFix);
}

// Each iteration's scope gives its entries back as it ends, so a loop needs a pool for one iteration.
TEST_P(DepPoolTest, AScopeGivesItsEntriesBackWhenItEnds) {
  IdleExecutor executor;
  Runtime runtime(WithDepPool(8, GetParam()), executor);
  std::vector<int32_t> data(32);
  for (int iteration = 0; iteration < 4; ++iteration) {
    ASSERT_TRUE(runtime.ScopeBegin());
    SubmitWritersAndReaders(runtime, data, 1);
    runtime.ScopeEnd();
  }
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
}

// Producers of a scope that has ended are taken as consumed, finished or not: a reader after the scope
// counts none of them, whatever the timing.
TEST_P(DepPoolTest, ProducersOfAnEndedScopeAreNotCounted) {
  IdleExecutor executor(5ms);
  Runtime runtime(WithDepPool(4, GetParam()), executor);
  std::vector<int32_t> data(32);
  ASSERT_TRUE(runtime.ScopeBegin());
  SubmitWritersAndReaders(runtime, data, 0);
  runtime.ScopeEnd();
  TaskArgs reader;
  reader.add_input(IntTensor(data));
  ASSERT_TRUE(runtime.SubmitAiv(1, reader));
  auto done = runtime.WaitAll();
  EXPECT_TRUE(done) << done.error().str();
}

// Depths 3 and deeper share ring 3, whose oldest open scope (depth 3) keeps the entries of the deeper
// scopes that have ended inside it.
TEST_P(DepPoolTest, ScopesDeeperThanThreeShareTheLastRing) {
  IdleExecutor executor;
  Runtime runtime(WithDepPool(8, GetParam()), executor);
  std::vector<int32_t> data(32);
  for (int depth = 1; depth <= 3; ++depth) ASSERT_TRUE(runtime.ScopeBegin());
  ASSERT_TRUE(runtime.ScopeBegin());  // depth 4
  SubmitWritersAndReaders(runtime, data, 1);
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.ScopeBegin());  // depth 4 again
  SubmitWritersAndReaders(runtime, data, 1);
  runtime.ScopeEnd();
  for (int depth = 1; depth <= 3; ++depth) runtime.ScopeEnd();
  auto done = runtime.WaitAll();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().str(),
            std::string("fatal error 4 (DepPoolOverflow): task 17 (func_id 1) waits for 8 producer tasks, one entry "
                        "each of the dependency pool of ring 3 (scope depth 4), but 8 of its 8 entries hold the "
                        "dependencies of earlier tasks of that ring, which come back only when the scope at depth 3 "
                        "ends") +
                kFix);
}

INSTANTIATE_TEST_SUITE_P(Dispatch, DepPoolTest, ::testing::Values(Dispatch::Eager, Dispatch::CallerFirst),
                         [](const auto& info) { return info.param == Dispatch::Eager ? "Eager" : "CallerFirst"; });

}  // namespace
}  // namespace pypto::rt
