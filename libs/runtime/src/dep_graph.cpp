#include "pypto/runtime/dep_graph.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <array>
#include <fstream>
#include <set>
#include <utility>

namespace pypto::rt {

const char* DepSourceName(DepSource source) {
  switch (source) {
    case DepSource::Explicit: return "explicit";
    case DepSource::Creator: return "creator";
    case DepSource::Overlap: return "tensormap";
  }
  return "unknown";
}

uint32_t DepGraph::BeginSubmit(const MixedKernels& kernels, const TaskArgs& args, bool manual) {
  current_.clear();
  nodes_.push_back({.kernels = kernels,
                    .block_num = args.launch_spec.block_num,
                    .manual = manual,
                    .args = args.tensors()});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

void DepGraph::EndSubmit(uint32_t node, TaskId returned) { nodes_.at(node).task_id = returned; }

void DepGraph::AddEdge(const DepEdge& edge) {
  if (edge.pred == edge.succ || !current_.insert(edge).second) return;
  edges_.push_back(edge);
}

void DepGraph::Clear() {
  nodes_.clear();
  edges_.clear();
  current_.clear();
}

namespace {

// Upstream's arg type names.
const char* ArgTypeName(ArgDirection direction) {
  switch (direction) {
    case ArgDirection::Input: return "INPUT";
    case ArgDirection::Output: return "OUTPUT";
    case ArgDirection::InOut: return "INOUT";
    case ArgDirection::OutputExisting: return "OUTPUT_EXISTING";
    case ArgDirection::NoDep: return "NO_DEP";
    case ArgDirection::Scalar: return "SCALAR";
  }
  return "UNKNOWN";
}

// A tensor's identity, as upstream makes it: FNV-1a over its buffer address and version, so that the
// same inputs give the same ids.
uint64_t TensorId(const ChipTensor& tensor) {
  uint64_t hash = 14695981039346656037ull;
  const auto mix = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      hash ^= (value >> (8 * i)) & 0xff;
      hash *= 1099511628211ull;
    }
  };
  mix(tensor.buffer_addr, 8);
  mix(static_cast<uint32_t>(tensor.version), 4);
  return hash;
}

std::string Decimal(uint64_t value) { return std::to_string(value); }

std::vector<uint32_t> Dims(const uint32_t* values, const ChipTensor& tensor) {
  return std::vector<uint32_t>(values, values + tensor.ndims);
}

// The slice geometry of a view, under keys with `prefix` ("" for a task's argument, "consumer_" or
// "producer_" for an edge).
void AddView(nlohmann::json& out, const std::string& prefix, const ChipTensor& tensor) {
  out[prefix + "shape"] = Dims(tensor.shapes, tensor);
  out[prefix + "start_offset"] = Decimal(tensor.start_offset);
  out[prefix + "strides"] = Dims(tensor.strides, tensor);
}

nlohmann::json TaskJson(const DepNode& node) {
  nlohmann::json args = nlohmann::json::array();
  for (size_t i = 0; i < node.args.size(); ++i) {
    const ChipTensor& tensor = node.args[i].tensor;
    nlohmann::json arg = {{"idx", i},
                          {"type", ArgTypeName(node.args[i].direction)},
                          {"tensor_id", Decimal(TensorId(tensor))},
                          {"dtype", DtypeName(tensor.dtype)}};
    AddView(arg, "", tensor);
    args.push_back(std::move(arg));
  }
  return {{"task_id", Decimal(node.task_id)},
          {"scope", node.manual ? "manual" : "auto"},
          {"kernel_ids", {node.kernels.aic, node.kernels.aiv0, node.kernels.aiv1}},
          {"block_num", node.block_num},
          {"args", std::move(args)}};
}

// Every distinct (buffer, version) the recorded submits touch, in first-touch order.
nlohmann::json TensorsJson(const std::vector<DepNode>& nodes) {
  nlohmann::json tensors = nlohmann::json::array();
  std::set<std::pair<uint64_t, int32_t>> seen;
  for (const DepNode& node : nodes) {
    if (node.task_id == kInvalidTaskId) continue;
    for (const TensorArg& arg : node.args) {
      const ChipTensor& tensor = arg.tensor;
      if (!seen.emplace(tensor.buffer_addr, tensor.version).second) continue;
      const size_t element = ElementSize(tensor.dtype);
      tensors.push_back({{"tensor_id", Decimal(TensorId(tensor))},
                         {"buffer_addr", Decimal(tensor.buffer_addr)},
                         {"version", tensor.version},
                         {"dtype", DtypeName(tensor.dtype)},
                         {"buffer_numel", Decimal(element > 0 ? tensor.buffer_size / element : 0)}});
    }
  }
  return tensors;
}

// Upstream's flags: an edge to a tensor's creator, and an explicit one, also keep the producer alive;
// an overlap only orders. (This runtime's edges all only order; the flags say what upstream's would.)
nlohmann::json EdgeJson(const DepEdge& edge, const DepNode& pred, const DepNode& succ) {
  nlohmann::json out = {{"pred", Decimal(pred.task_id)},
                        {"succ", Decimal(succ.task_id)},
                        {"arg", edge.arg},
                        {"source", DepSourceName(edge.source)}};
  out["flags"] = edge.source == DepSource::Overlap ? nlohmann::json::array({"wait"})
                                                   : nlohmann::json::array({"wait", "retain"});
  if (edge.source == DepSource::Explicit) return out;
  const ChipTensor& consumer = succ.args.at(static_cast<size_t>(edge.arg)).tensor;
  if (edge.source == DepSource::Overlap) {
    const ChipTensor& producer = pred.args.at(static_cast<size_t>(edge.producer_arg)).tensor;
    const ByteRange produced = ViewBytes(producer), consumed = ViewBytes(consumer);
    const bool covered = produced.first <= consumed.first && consumed.last <= produced.last;
    out["overlap"] = covered ? "covered" : "other";
  }
  out["tensor_id"] = Decimal(TensorId(consumer));
  out["consumer_dtype"] = DtypeName(consumer.dtype);
  AddView(out, "consumer_", consumer);
  if (edge.source == DepSource::Overlap)
    AddView(out, "producer_", pred.args.at(static_cast<size_t>(edge.producer_arg)).tensor);
  return out;
}

}  // namespace

nlohmann::json DepGraph::ToJson() const {
  nlohmann::json tasks = nlohmann::json::array();
  for (const DepNode& node : nodes_)
    if (node.task_id != kInvalidTaskId) tasks.push_back(TaskJson(node));
  nlohmann::json edges = nlohmann::json::array();
  for (const DepEdge& edge : edges_) {
    const DepNode& pred = nodes_.at(edge.pred);
    const DepNode& succ = nodes_.at(edge.succ);
    if (pred.task_id != kInvalidTaskId && succ.task_id != kInvalidTaskId) edges.push_back(EdgeJson(edge, pred, succ));
  }
  return {{"tasks", std::move(tasks)}, {"tensors", TensorsJson(nodes_)}, {"edges", std::move(edges)}};
}

pypto::expected<void, std::string> DepGraph::Write(const std::filesystem::path& file) const {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return pypto::unexpected(fmt::format("cannot create {}: {}", file.parent_path().string(), ec.message()));
  std::ofstream out(file, std::ios::trunc);
  out << ToJson().dump(1) << '\n';
  out.close();
  if (!out) return pypto::unexpected(fmt::format("cannot write {}", file.string()));
  return {};
}

}  // namespace pypto::rt
