// The dependency graph (RuntimeOptions::dep_graph): one node per submit, the edges the runtime derives
// (explicit, creator, overlapping accesses), recorded whether or not the producer has finished, and
// their deps.json form.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "pypto/runtime/dep_graph.h"
#include "pypto/runtime/runtime.h"
#include "runtime_test_util.h"

namespace pypto::rt {
namespace {

using testing::IntTensor;

class NoopExecutor : public CoreExecutor {
 public:
  pypto::expected<void, FatalError> Execute(const KernelLaunch&) override { return {}; }
};

RuntimeOptions Options(DepGraph& graph) {
  return {.aic_cores = 2, .aiv_cores = 4, .worker_threads = 2, .dep_graph = &graph};
}

// (pred task id, succ task id, source, consumer arg), in the order recorded.
using Edge = std::tuple<TaskId, TaskId, std::string, int32_t>;
std::vector<Edge> Edges(const DepGraph& graph) {
  std::vector<Edge> edges;
  for (const DepEdge& e : graph.edges())
    edges.emplace_back(graph.nodes()[e.pred].task_id, graph.nodes()[e.succ].task_id, DepSourceName(e.source), e.arg);
  return edges;
}

TaskArgs Reads(std::vector<int32_t>& in, std::vector<int32_t>& out) {
  TaskArgs args;
  args.add_input(IntTensor(in));
  args.add_output(IntTensor(out));
  return args;
}

TEST(DepGraph, RecordsReadAfterWriteWriteAfterReadAndExplicitEdges) {
  std::vector<int32_t> a(8), b(8), c(8), d(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  auto t0 = runtime.SubmitAiv(0, Reads(d, a));  // writes a
  auto t1 = runtime.SubmitAiv(1, Reads(a, b));  // reads a: after t0
  TaskArgs explicit_args = Reads(d, c);
  explicit_args.set_dependencies(&*t0, 1);
  auto t2 = runtime.SubmitAic(2, explicit_args);  // shares nothing with t0: only the named edge
  auto t3 = runtime.SubmitAiv(3, Reads(c, a));    // reads c (t2), overwrites a (t0 wrote, t1 read)
  ASSERT_TRUE(t3);
  ASSERT_TRUE(runtime.WaitAll());

  ASSERT_EQ(graph.nodes().size(), 4u);
  EXPECT_EQ(graph.nodes()[2].kernels.aic, 2);
  EXPECT_EQ(graph.nodes()[2].kernels.aiv0, kNoKernel);
  EXPECT_EQ(graph.nodes()[3].kernels.aiv0, 3);
  EXPECT_EQ(Edges(graph), (std::vector<Edge>{
                              {*t0, *t1, "tensormap", 0},
                              {*t0, *t2, "explicit", -1},
                              {*t2, *t3, "tensormap", 0},
                              {*t0, *t3, "tensormap", 1},  // write after write
                              {*t1, *t3, "tensormap", 1},  // write after read
                          }));
}

// The runtime waits only for producers still running; the graph has the edge either way.
TEST(DepGraph, KeepsEdgesToProducersThatHaveFinished) {
  std::vector<int32_t> a(8), b(8), c(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  auto t0 = runtime.SubmitAiv(0, Reads(c, a));
  ASSERT_TRUE(runtime.WaitAll());  // t0 has finished
  TaskArgs args = Reads(a, b);
  args.set_dependencies(&*t0, 1);
  auto t1 = runtime.SubmitAiv(1, args);
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_EQ(Edges(graph), (std::vector<Edge>{{*t0, *t1, "explicit", -1}, {*t0, *t1, "tensormap", 0}}));
  EXPECT_EQ(runtime.tasks_completed(), 2u);

  // A new run starts a new graph's worth of tasks: nothing of the last one is found.
  runtime.Reset();
  graph.Clear();
  auto again = runtime.SubmitAiv(1, Reads(a, b));
  ASSERT_TRUE(again);
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_TRUE(graph.edges().empty());
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_EQ(graph.nodes()[0].task_id, 0u);
}

// An SPMD launch is one node; its blocks find the same producer once, and never each other.
TEST(DepGraph, ALaunchIsOneNode) {
  std::vector<int32_t> a(8), b(8), out(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  auto producer = runtime.SubmitAiv(0, Reads(a, b));
  TaskArgs spmd = Reads(b, out);
  spmd.launch_spec.block_num = 3;
  auto launch = runtime.SubmitAiv(1, spmd);
  TaskArgs after;
  after.add_input(IntTensor(out));
  auto dummy = runtime.SubmitDummy(after);
  ASSERT_TRUE(dummy);
  ASSERT_TRUE(runtime.WaitAll());

  ASSERT_EQ(graph.nodes().size(), 3u);
  EXPECT_EQ(graph.nodes()[1].block_num, 3);
  EXPECT_EQ(graph.nodes()[1].task_id, *launch);
  EXPECT_EQ(graph.nodes()[2].kernels.aiv0, kNoKernel);
  EXPECT_EQ(Edges(graph), (std::vector<Edge>{{*producer, *launch, "tensormap", 0}, {*launch, *dummy, "tensormap", 0}}));
}

// A mixed task and a co-started launch wait through a gate and are waited for through a join: each is
// still one node, with the edges of its arguments.
TEST(DepGraph, MixedAndCoStartedLaunchesAreOneNodeEach) {
  std::vector<int32_t> a(8), b(8), c(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  auto producer = runtime.SubmitAiv(0, Reads(c, a));
  TaskArgs mixed_args = Reads(a, b);
  mixed_args.launch_spec.block_num = 2;
  auto mixed = runtime.SubmitMixed({.aic = 1, .aiv0 = 2}, mixed_args);
  TaskArgs co_started = Reads(b, c);
  co_started.launch_spec.block_num = 2;
  co_started.launch_spec.require_sync_start = true;
  auto launch = runtime.SubmitAiv(3, co_started);
  ASSERT_TRUE(launch);
  ASSERT_TRUE(runtime.WaitAll());

  ASSERT_EQ(graph.nodes().size(), 3u);
  EXPECT_EQ(graph.nodes()[1].kernels.aic, 1);
  EXPECT_EQ(graph.nodes()[1].kernels.aiv0, 2);
  EXPECT_EQ(graph.nodes()[1].task_id, *mixed);
  EXPECT_EQ(graph.nodes()[2].task_id, *launch);
  EXPECT_EQ(Edges(graph), (std::vector<Edge>{
                              {*producer, *mixed, "tensormap", 0},
                              {*mixed, *launch, "tensormap", 0},     // reads b, which mixed wrote
                              {*producer, *launch, "tensormap", 1},  // overwrites c, which producer read
                          }));
}

TEST(DepGraph, ManualScopeTasksTakeOnlyTheirNamedEdges) {
  std::vector<int32_t> a(8), b(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  auto t0 = runtime.SubmitAiv(0, Reads(b, a));
  ASSERT_TRUE(runtime.ScopeBegin(ScopeMode::Manual));
  auto t1 = runtime.SubmitAiv(1, Reads(a, b));  // would be after t0 in an auto scope
  TaskArgs named = Reads(a, b);
  named.set_dependencies(&*t1, 1);
  auto t2 = runtime.SubmitAiv(2, named);
  runtime.ScopeEnd();
  ASSERT_TRUE(runtime.WaitAll());
  EXPECT_FALSE(graph.nodes()[0].manual);
  EXPECT_TRUE(graph.nodes()[1].manual);
  EXPECT_EQ(Edges(graph), (std::vector<Edge>{{*t1, *t2, "explicit", -1}}));
}

TEST(DepGraph, WritesUpstreamsDepsJson) {
  std::vector<int32_t> a(8), b(8), c(8);
  DepGraph graph;
  NoopExecutor executor;
  Runtime runtime(Options(graph), executor);
  ASSERT_TRUE(runtime.SubmitAiv(4, Reads(c, a)));
  ChipTensor half = IntTensor(a);
  half.shapes[0] = 4;
  half.start_offset = 2;
  TaskArgs args;
  args.add_input(half);
  args.add_output(IntTensor(b));
  ASSERT_TRUE(runtime.SubmitAiv(5, args));
  ASSERT_TRUE(runtime.WaitAll());

  const auto file = std::filesystem::path(::testing::TempDir()) / "pypto_dep_graph_test" / "deps.json";
  ASSERT_TRUE(graph.Write(file));
  const auto deps = nlohmann::json::parse(std::ifstream(file));
  ASSERT_EQ(deps["tasks"].size(), 2u);
  const auto& task = deps["tasks"][1];
  EXPECT_EQ(task["task_id"], "1");
  EXPECT_EQ(task["scope"], "auto");
  EXPECT_EQ(task["kernel_ids"], nlohmann::json({-1, 5, -1}));
  EXPECT_EQ(task["block_num"], 1);
  EXPECT_EQ(task["args"][0]["type"], "INPUT");
  EXPECT_EQ(task["args"][1]["type"], "OUTPUT_EXISTING");
  EXPECT_EQ(task["args"][0]["start_offset"], "2");
  EXPECT_EQ(task["args"][0]["shape"], nlohmann::json({4}));

  ASSERT_EQ(deps["edges"].size(), 1u);
  const auto& edge = deps["edges"][0];
  EXPECT_EQ(edge["pred"], "0");
  EXPECT_EQ(edge["succ"], "1");
  EXPECT_EQ(edge["arg"], 0);
  EXPECT_EQ(edge["source"], "tensormap");
  EXPECT_EQ(edge["flags"], nlohmann::json({"wait"}));
  EXPECT_EQ(edge["overlap"], "covered");  // the whole of a was written; half of it is read
  EXPECT_EQ(edge["consumer_shape"], nlohmann::json({4}));
  EXPECT_EQ(edge["consumer_start_offset"], "2");
  EXPECT_EQ(edge["producer_shape"], nlohmann::json({8}));
  EXPECT_EQ(edge["producer_start_offset"], "0");
  EXPECT_EQ(edge["consumer_dtype"], "INT32");
  EXPECT_EQ(edge["tensor_id"], task["args"][0]["tensor_id"]);

  // Three buffers (c, a, b), each once, with its address and element count.
  ASSERT_EQ(deps["tensors"].size(), 3u);
  const auto& tensor = deps["tensors"][1];
  EXPECT_EQ(tensor["tensor_id"], edge["tensor_id"]);
  EXPECT_EQ(tensor["buffer_addr"], std::to_string(reinterpret_cast<uint64_t>(a.data())));
  EXPECT_EQ(tensor["buffer_numel"], "8");
  EXPECT_EQ(tensor["dtype"], "INT32");
}

}  // namespace
}  // namespace pypto::rt
