// The args dump recorder. Payloads are copied on the thread that runs the task, under one lock (a dump
// is a debugging run; its cost only matters when it is on). Offsets into args.bin are assigned when
// the files are written, in the sorted order of the records, so that two runs of one program write
// identical files whatever order their threads recorded in.
#include "pypto/runtime/args_dump.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <tuple>

namespace pypto::rt {
namespace {

constexpr uint8_t kScalarDtype = PYPTO_RT_UINT64;

bool IsRead(ArgDirection direction) {
  return direction == ArgDirection::Input || direction == ArgDirection::InOut || direction == ArgDirection::NoDep;
}
bool IsWritten(ArgDirection direction) {
  return direction == ArgDirection::Output || direction == ArgDirection::OutputExisting ||
         direction == ArgDirection::InOut;
}

const char* RoleOf(ArgDirection direction) {
  if (direction == ArgDirection::InOut) return "inout";
  return IsWritten(direction) ? "output" : "input";
}

// Appends the elements of dimensions [dim, ndims) starting at element `base`, row-major.
void AppendElements(const ChipTensor& tensor, uint32_t dim, uint64_t base, size_t element_size, std::string& out) {
  const auto* bytes = reinterpret_cast<const char*>(tensor.buffer_addr);
  if (dim + 1 == tensor.ndims && tensor.strides[dim] == 1) {  // a contiguous row: one copy
    out.append(bytes + base * element_size, static_cast<size_t>(tensor.shapes[dim]) * element_size);
    return;
  }
  for (uint32_t i = 0; i < tensor.shapes[dim]; ++i) {
    const uint64_t at = base + static_cast<uint64_t>(i) * tensor.strides[dim];
    if (dim + 1 == tensor.ndims)
      out.append(bytes + at * element_size, element_size);
    else
      AppendElements(tensor, dim + 1, at, element_size, out);
  }
}

}  // namespace

bool CopyViewElements(const ChipTensor& tensor, std::string& out) {
  const size_t element_size = ElementSize(tensor.dtype);
  if (element_size == 0 || tensor.ndims < 1 || tensor.ndims > PYPTO_MAX_TENSOR_DIMS) return false;
  uint64_t extent = 1;  // elements from start_offset to the last one the view touches, inclusive
  for (uint32_t d = 0; d < tensor.ndims; ++d) {
    if (tensor.shapes[d] == 0) return true;  // no elements
    extent += static_cast<uint64_t>(tensor.shapes[d] - 1) * tensor.strides[d];
  }
  if ((tensor.start_offset + extent) * element_size > tensor.buffer_size) return false;
  AppendElements(tensor, 0, tensor.start_offset, element_size, out);
  return true;
}

ArgsDumpRecorder::ArgsDumpRecorder(ArgsDumpLevel level, std::vector<std::string> kernel_names,
                                   uint64_t max_payload_bytes)
    : level_(level), kernel_names_(std::move(kernel_names)), max_payload_bytes_(max_payload_bytes) {}

void ArgsDumpRecorder::BeforeDispatch(const ObservedTask& task) { Record(task, /*after=*/false); }
void ArgsDumpRecorder::AfterCompletion(const ObservedTask& task) { Record(task, /*after=*/true); }

void ArgsDumpRecorder::Record(const ObservedTask& task, bool after) {
  std::vector<ArgRecord> taken;
  const ArgRecord common{.task_id = task.id,
                         .func_id = task.func_id,
                         .core_type = task.core_type,
                         .core_index = task.core_index,
                         .after = after};
  for (size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorArg& arg = task.tensors[i];
    if (!(after ? IsWritten(arg.direction) : IsRead(arg.direction)) || !Wanted(arg.dump)) continue;
    const ChipTensor& tensor = arg.tensor;
    ArgRecord record = common;
    record.role = RoleOf(arg.direction);
    record.arg_index = i;
    record.tagged = arg.dump;
    record.dtype = tensor.dtype;
    record.shape.assign(tensor.shapes, tensor.shapes + tensor.ndims);
    record.strides.assign(tensor.strides, tensor.strides + tensor.ndims);
    record.start_offset = tensor.start_offset;
    record.is_contiguous = tensor.is_contiguous != 0;
    if (WantsPayload(arg.dump)) record.truncated = !CopyViewElements(tensor, record.payload);
    taken.push_back(std::move(record));
  }
  // Scalars cannot be tagged: they are recorded at the levels that record every argument.
  if (!after && level_ != ArgsDumpLevel::Tagged) {
    for (size_t i = 0; i < task.scalars.size(); ++i) {
      ArgRecord record = common;
      record.arg_index = task.tensors.size() + i;
      record.is_tensor = false;
      record.dtype = kScalarDtype;
      record.shape = {1};
      record.strides = {1};
      record.scalar = static_cast<uint64_t>(task.scalars[i]);
      if (WantsPayload(false)) record.payload.assign(reinterpret_cast<const char*>(&task.scalars[i]), 8);
      taken.push_back(std::move(record));
    }
  }
  if (taken.empty()) return;
  std::lock_guard lock(mu_);
  for (ArgRecord& record : taken) {
    if (payload_bytes_ + record.payload.size() > max_payload_bytes_) {
      record.dropped = true;
      std::string().swap(record.payload);
    }
    payload_bytes_ += record.payload.size();
  }
  std::move(taken.begin(), taken.end(), std::back_inserter(records_));
}

void ArgsDumpRecorder::Clear() {
  std::lock_guard lock(mu_);
  records_.clear();
  payload_bytes_ = 0;
}

std::vector<ArgRecord> ArgsDumpRecorder::Records() const {
  std::vector<ArgRecord> records;
  {
    std::lock_guard lock(mu_);
    records = records_;
  }
  std::ranges::sort(records, {}, [](const ArgRecord& r) { return std::tuple(r.task_id, r.after, r.arg_index); });
  return records;
}

pypto::expected<void, std::string> ArgsDumpRecorder::Write(const std::filesystem::path& dir) const {
  const std::vector<ArgRecord> records = Records();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return pypto::unexpected(fmt::format("cannot create {}: {}", dir.string(), ec.message()));

  std::ofstream bin(dir / "args.bin", std::ios::binary | std::ios::trunc);
  nlohmann::json entries = nlohmann::json::array();
  uint64_t offset = 0, before = 0, after = 0, truncated = 0, dropped = 0;
  for (const ArgRecord& r : records) {
    bin.write(r.payload.data(), static_cast<std::streamsize>(r.payload.size()));
    const bool known = r.func_id >= 0 && static_cast<size_t>(r.func_id) < kernel_names_.size();
    nlohmann::json entry = {
        {"task_id", fmt::format("0x{:x}", r.task_id)},
        {"func_id", nlohmann::json::array({r.func_id})},
        {"kernel", known ? kernel_names_[r.func_id] : std::string()},
        {"core_type", CoreTypeName(r.core_type)},
        {"core_id", r.core_index},
        {"role", r.role},
        {"stage", r.after ? "after_completion" : "before_dispatch"},
        {"arg_index", r.arg_index},
        {"kind", r.is_tensor ? "tensor" : "scalar"},
        {"tagged", r.tagged},
        {"dtype", DtypeName(r.dtype)},
        {"shape", r.shape},
        {"strides", r.strides},
        {"start_offset", r.start_offset},
        {"is_contiguous", r.is_contiguous},
        {"bin_offset", offset},
        {"bin_size", r.payload.size()},
        {"truncated", r.truncated},
        {"dropped", r.dropped},
        {"overwritten", false},
    };
    if (!r.is_tensor) entry["value"] = r.scalar;
    entries.push_back(std::move(entry));
    offset += r.payload.size();
    ++(r.after ? after : before);
    truncated += r.truncated ? 1 : 0;
    dropped += r.dropped ? 1 : 0;
  }
  bin.close();
  if (!bin) return pypto::unexpected(fmt::format("cannot write {}", (dir / "args.bin").string()));

  const nlohmann::json manifest = {
      {"version", 1},
      {"level", static_cast<int>(level_)},
      {"counters",
       {{"before_dispatch", before}, {"after_completion", after}, {"truncated", truncated}, {"dropped", dropped},
        {"bytes", offset}}},
      {"records", entries},
  };
  std::ofstream json(dir / "args_dump.json", std::ios::trunc);
  json << manifest.dump(2) << '\n';
  json.close();
  if (!json) return pypto::unexpected(fmt::format("cannot write {}", (dir / "args_dump.json").string()));
  return {};
}

}  // namespace pypto::rt
