// The debugging outputs: the runtime reports tasks to its observer, the args dump takes the right
// arguments at the right stages with their bytes, and the swimlane records who ran where and when.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pypto/runtime/args_dump.h"
#include "pypto/runtime/dfx_recorder.h"
#include "pypto/runtime/log_destination.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/swimlane.h"
#include "pypto/runtime/task_observer.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;
using testing::TensorArgOf;
using Result = pypto::expected<void, FatalError>;

// out[i] = in[i] * 2 + scalar (args: in, out, scalar).
class DoubleExecutor : public CoreExecutor {
 public:
  Result Execute(const KernelLaunch& launch) override {
    const ChipTensor& in = TensorArgOf(launch, 0);
    const ChipTensor& out = TensorArgOf(launch, 1);
    for (uint32_t i = 0; i < in.shapes[0]; ++i)
      DataPointer<int32_t>(out)[i] = DataPointer<int32_t>(in)[i] * 2 + static_cast<int32_t>(launch.args[2]);
    return {};
  }
};

std::string Bytes(const std::vector<int32_t>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int32_t));
}

// Runs one task `out = in * 2 + 5` with `in` marked for the dump when `mark_input`, on a runtime that
// reports to `observer`.
void RunOneTask(TaskObserver& observer, std::vector<int32_t>& in, std::vector<int32_t>& out, bool mark_input) {
  DoubleExecutor executor;
  Runtime runtime({.aic_cores = 1, .aiv_cores = 2, .observer = &observer}, executor);
  TaskArgs args;
  args.add_input(IntTensor(in));
  args.add_output(IntTensor(out));
  args.add_scalar(5);
  if (mark_input) args.mark_dump(0);
  ASSERT_TRUE(runtime.SubmitAiv(0, args));
  ASSERT_TRUE(runtime.WaitAll());
}

TEST(ArgsDump, TaggedLevelTakesOnlyMarkedArgumentsBeforeDispatch) {
  ArgsDumpRecorder recorder(ArgsDumpLevel::Tagged, {"k"});
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, /*mark_input=*/true);
  const auto records = recorder.Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].arg_index, 0u);
  EXPECT_FALSE(records[0].after);
  EXPECT_STREQ(records[0].role, "input");
  EXPECT_EQ(records[0].payload, Bytes({1, 2, 3}));
}

TEST(ArgsDump, FullLevelTakesOutputsAfterCompletionAndScalars) {
  ArgsDumpRecorder recorder(ArgsDumpLevel::All, {"k"});
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, /*mark_input=*/false);
  const auto records = recorder.Records();
  ASSERT_EQ(records.size(), 3u);  // input and scalar before, output after
  EXPECT_EQ(records[0].arg_index, 0u);
  EXPECT_FALSE(records[1].is_tensor);
  EXPECT_EQ(records[1].scalar, 5u);
  EXPECT_TRUE(records[2].after);
  EXPECT_STREQ(records[2].role, "output");
  EXPECT_EQ(records[2].payload, Bytes({7, 9, 11}));  // what the kernel wrote
}

TEST(ArgsDump, HybridLevelKeepsPayloadsOfMarkedArgumentsOnly) {
  ArgsDumpRecorder recorder(ArgsDumpLevel::MetadataAll, {"k"});
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, /*mark_input=*/true);
  const auto records = recorder.Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].payload, Bytes({1, 2, 3}));
  EXPECT_TRUE(records[1].payload.empty());  // the scalar
  EXPECT_TRUE(records[2].payload.empty());  // the unmarked output
  EXPECT_EQ(records[2].shape, std::vector<uint32_t>{3});
}

TEST(ArgsDump, PayloadsPastTheBudgetAreDroppedAndCounted) {
  ArgsDumpRecorder recorder(ArgsDumpLevel::All, {"k"}, /*max_payload_bytes=*/12 + 8);
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, /*mark_input=*/false);
  const auto records = recorder.Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_FALSE(records[0].dropped);
  EXPECT_FALSE(records[1].dropped);
  EXPECT_TRUE(records[2].dropped);  // the output came last and did not fit
  EXPECT_TRUE(records[2].payload.empty());
  const auto dir = std::filesystem::path(::testing::TempDir()) / "pypto_args_dump_budget_test";
  ASSERT_TRUE(recorder.Write(dir));
  const auto manifest = nlohmann::json::parse(std::ifstream(dir / "args_dump.json"));
  EXPECT_EQ(manifest["counters"]["dropped"], 1);
}

TEST(ArgsDump, ViewElementsFollowStridesAndRefuseOutOfBounds) {
  std::vector<int32_t> data = {0, 1, 2, 3, 4, 5};  // 2 x 3
  const std::array<uint32_t, 2> shape = {2, 3};
  ChipTensor column = MakeExternalTensor(data.data(), shape, PYPTO_RT_INT32);
  column.shapes[1] = 1;
  column.start_offset = 1;  // column 1: elements 1 and 4
  std::string bytes;
  ASSERT_TRUE(CopyViewElements(column, bytes));
  EXPECT_EQ(bytes, Bytes({1, 4}));
  column.start_offset = 3;  // rows 1 and 2: row 2 lies past the buffer
  column.shapes[1] = 3;
  std::string none;
  EXPECT_FALSE(CopyViewElements(column, none));
}

TEST(ArgsDump, WritesManifestAndPayloads) {
  ArgsDumpRecorder recorder(ArgsDumpLevel::All, {"kernel_add"});
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, /*mark_input=*/false);
  const auto dir = std::filesystem::path(::testing::TempDir()) / "pypto_args_dump_test";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(recorder.Write(dir));
  const auto manifest = nlohmann::json::parse(std::ifstream(dir / "args_dump.json"));
  EXPECT_EQ(manifest["counters"]["before_dispatch"], 2);
  EXPECT_EQ(manifest["counters"]["after_completion"], 1);
  const auto& output = manifest["records"][2];
  EXPECT_EQ(output["task_id"], "0x0");
  EXPECT_EQ(output["kernel"], "kernel_add");
  EXPECT_EQ(output["stage"], "after_completion");
  EXPECT_EQ(output["dtype"], "INT32");
  EXPECT_EQ(output["bin_offset"], 12 + 8);  // after the input's 12 bytes and the scalar's 8
  std::ifstream bin(dir / "args.bin", std::ios::binary);
  const std::string payloads((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
  EXPECT_EQ(payloads.substr(20, 12), Bytes({7, 9, 11}));
}

// Reports every task; counts what it saw.
class CountingObserver : public TaskObserver {
 public:
  void BeforeDispatch(const ObservedTask&) override { ++before; }
  void AfterCompletion(const ObservedTask& task) override {
    ++after;
    ordered = ordered && task.start_ns <= task.end_ns;
  }
  std::atomic<int> before = 0, after = 0;
  std::atomic<bool> ordered = true;
};

TEST(TaskObserver, SeesEveryKernelTaskOfAnSpmdLaunch) {
  CountingObserver observer;
  DoubleExecutor executor;
  std::vector<int32_t> in = {1}, out(1);
  {
    Runtime runtime({.aic_cores = 1, .aiv_cores = 4, .observer = &observer}, executor);
    TaskArgs args;
    args.add_input(IntTensor(in));
    args.add_inout(IntTensor(out));
    args.add_scalar(0);
    args.launch_spec.set_block_num(3);
    ASSERT_TRUE(runtime.SubmitAiv(0, args));
    ASSERT_TRUE(runtime.WaitAll());
  }
  EXPECT_EQ(observer.before, 3);  // the blocks, not the join that stands for them
  EXPECT_EQ(observer.after, 3);
  EXPECT_TRUE(observer.ordered);
}

TEST(Swimlane, RecordsCoresWithAicFirstAndWritesAChromeTrace) {
  SwimlaneRecorder recorder(1, {"k"}, /*aic_cores=*/2, /*aiv_cores=*/4);
  std::vector<int32_t> in = {1, 2, 3}, out(3);
  RunOneTask(recorder, in, out, false);
  const auto records = recorder.Records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].core_type, CoreType::AIV);
  EXPECT_EQ(records[0].core_id, 2 + records[0].core_index);  // after the two AIC cores
  EXPECT_LE(records[0].start_ns, records[0].end_ns);
  const auto dir = std::filesystem::path(::testing::TempDir()) / "pypto_swimlane_test";
  ASSERT_TRUE(recorder.Write(dir));
  const auto trace = nlohmann::json::parse(std::ifstream(dir / "merged_swimlane.json"));
  int spans = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      ++spans;
      EXPECT_EQ(event["name"], "k");
    } else if (event["name"] == "thread_name") {
      EXPECT_EQ(event["args"]["name"], fmt::format("AIV {}", records[0].core_index));
    }
  }
  EXPECT_EQ(spans, 1);
  const auto raw = nlohmann::json::parse(std::ifstream(dir / "chip_swimlane_records.json"));
  EXPECT_EQ(raw["aicore_tasks"].size(), 1u);
}

TEST(DfxRecorder, ForgetsThePreviousRun) {
  DfxRecorder recorder({.dump_args = 2, .chip_swimlane = 1}, {"k"}, 1, 2);
  std::vector<int32_t> in = {1}, out(1);
  RunOneTask(recorder, in, out, false);
  RunOneTask(recorder, in, out, false);
  EXPECT_EQ(recorder.args_dump()->Records().size(), 6u);
  recorder.BeginRun();
  EXPECT_TRUE(recorder.args_dump()->Records().empty());
  EXPECT_TRUE(recorder.swimlane()->Records().empty());
}

TEST(LogDestination, FollowsAscendProcessLogPath) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "pypto_log_destination_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  setenv("ASCEND_PROCESS_LOG_PATH", dir.c_str(), 1);
  FollowProcessLogPath();
  const std::string file = ProcessLogFile();
  EXPECT_EQ(std::filesystem::path(file).parent_path(), dir);
  spdlog::warn("a line for the log file");
  unsetenv("ASCEND_PROCESS_LOG_PATH");
  FollowProcessLogPath();  // back to stderr
  EXPECT_EQ(ProcessLogFile(), "");
  std::ifstream log(file);
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("a line for the log file"), std::string::npos) << text;

  setenv("ASCEND_PROCESS_LOG_PATH", (dir / "missing").c_str(), 1);
  FollowProcessLogPath();
  EXPECT_EQ(ProcessLogFile(), "");  // stays on stderr, with a warning there
  unsetenv("ASCEND_PROCESS_LOG_PATH");
  FollowProcessLogPath();
}

}  // namespace
}  // namespace pypto::rt
