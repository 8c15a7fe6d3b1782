// The dependency graph of a run (RunConfig(enable_dep_gen=True)): one node per submit and one edge per
// reason a submit waits for an earlier one, written as upstream's deps.json. The runtime fills it at the
// point where it computes each task's dependencies, so the edges are the scheduler's own; while it
// records, the runtime keeps finished tasks' accesses, so that a producer which has already finished
// is still an edge and the graph does not depend on how fast tasks ran.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_args.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

// Why a submit waits for an earlier one: it names it (TaskArgs::set_dependencies), it uses a tensor
// the earlier one created (owner_task_id), or it touches bytes the earlier one accessed (the runtime's
// access index; upstream calls this the tensormap).
enum class DepSource : uint8_t { Explicit, Creator, Overlap };
const char* DepSourceName(DepSource source);  // "explicit", "creator", "tensormap" (upstream's names)

struct DepNode {
  TaskId task_id = kInvalidTaskId;  // the id the submit returned; kInvalidTaskId if it was refused
  MixedKernels kernels;             // [aic, aiv0, aiv1]; none for a dummy task
  int32_t block_num = 1;
  bool manual = false;  // submitted in a manual scope
  std::vector<TensorArg> args;
};

struct DepEdge {
  uint32_t pred = 0;  // indices into DepGraph::nodes()
  uint32_t succ = 0;
  DepSource source = DepSource::Explicit;
  int32_t arg = -1;           // the consumer's tensor argument; -1 for an explicit edge
  int32_t producer_arg = -1;  // Overlap: the producer's tensor argument whose access was found

  auto operator<=>(const DepEdge&) const = default;
};

class DepGraph {
 public:
  // The runtime calls these from the submitting thread, with its scheduling mutex held.
  uint32_t BeginSubmit(const MixedKernels& kernels, const TaskArgs& args, bool manual);
  void EndSubmit(uint32_t node, TaskId returned);
  // Each edge once: the blocks of a launch find the same ones. An edge within one submit (between
  // blocks of one launch) is not one of the graph's.
  void AddEdge(const DepEdge& edge);
  void Clear();

  const std::vector<DepNode>& nodes() const { return nodes_; }
  const std::vector<DepEdge>& edges() const { return edges_; }

  // Upstream's deps.json: tasks[], tensors[] and edges[], 64-bit ids as decimal strings. Refused
  // submits and their edges are left out.
  nlohmann::json ToJson() const;
  pypto::expected<void, std::string> Write(const std::filesystem::path& file) const;

 private:
  std::vector<DepNode> nodes_;
  std::vector<DepEdge> edges_;
  std::set<DepEdge> current_;  // the edges of the submit in progress, for AddEdge's check
};

}  // namespace pypto::rt
