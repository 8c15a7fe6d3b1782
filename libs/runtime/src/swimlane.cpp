// The swimlane recorder. The simulator has no cycle counter, so times are the host's steady clock in
// nanoseconds since the run started: they show how the host threads ran the tasks, not device timing.
#include "pypto/runtime/swimlane.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <tuple>

namespace pypto::rt {
namespace {

pypto::expected<void, std::string> WriteJson(const std::filesystem::path& path, const nlohmann::json& value) {
  std::ofstream out(path, std::ios::trunc);
  out << value.dump(1) << '\n';
  out.close();
  if (!out) return pypto::unexpected(fmt::format("cannot write {}", path.string()));
  return {};
}

std::string TrackName(const SwimlaneRecord& r) { return fmt::format("{} {}", CoreTypeName(r.core_type), r.core_index); }

}  // namespace

SwimlaneRecorder::SwimlaneRecorder(int level, std::vector<std::string> kernel_names, int aic_cores, int aiv_cores)
    : level_(level),
      kernel_names_(std::move(kernel_names)),
      aic_cores_(aic_cores),
      aiv_cores_(aiv_cores),
      origin_ns_(SteadyNowNs()) {}

void SwimlaneRecorder::AfterCompletion(const ObservedTask& task) {
  std::lock_guard lock(mu_);
  records_.push_back(SwimlaneRecord{
      .core_id = task.core_type == CoreType::AIC ? task.core_index : aic_cores_ + task.core_index,
      .core_type = task.core_type,
      .core_index = task.core_index,
      .task_id = task.id,
      .func_id = task.func_id,
      .start_ns = task.start_ns - origin_ns_,
      .end_ns = task.end_ns - origin_ns_,
      .staged_ns = task.staged_ns != 0 ? task.staged_ns - origin_ns_ : -1,
  });
}

void SwimlaneRecorder::Clear() {
  std::lock_guard lock(mu_);
  records_.clear();
  origin_ns_ = SteadyNowNs();
}

std::vector<SwimlaneRecord> SwimlaneRecorder::Records() const {
  std::vector<SwimlaneRecord> records;
  {
    std::lock_guard lock(mu_);
    records = records_;
  }
  std::ranges::sort(records, {}, [](const SwimlaneRecord& r) { return std::tuple(r.start_ns, r.core_id, r.task_id); });
  return records;
}

std::string SwimlaneRecorder::KernelName(int32_t func_id) const {
  if (func_id >= 0 && static_cast<size_t>(func_id) < kernel_names_.size()) return kernel_names_[func_id];
  return fmt::format("func_{}", func_id);
}

pypto::expected<void, std::string> SwimlaneRecorder::Write(const std::filesystem::path& dir) const {
  const std::vector<SwimlaneRecord> records = Records();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return pypto::unexpected(fmt::format("cannot create {}: {}", dir.string(), ec.message()));

  nlohmann::json tasks = nlohmann::json::array();
  for (const SwimlaneRecord& r : records) {
    tasks.push_back({{"core_id", r.core_id},
                     {"core_type", CoreTypeName(r.core_type)},
                     {"core_index", r.core_index},
                     {"task_id", fmt::format("0x{:x}", r.task_id)},
                     {"func_id", r.func_id},
                     {"kernel", KernelName(r.func_id)},
                     {"start_ns", r.start_ns},
                     {"end_ns", r.end_ns}});
    if (r.staged_ns >= 0) tasks.back()["staged_ns"] = r.staged_ns;
  }
  const nlohmann::json raw = {
      {"chip_swimlane_level", level_},
      {"metadata",
       {{"clock", "host steady clock, ns since the run started"},
        {"num_cores", aic_cores_ + aiv_cores_},
        {"aic_cores", aic_cores_},
        {"aiv_cores", aiv_cores_}}},
      {"aicore_tasks", tasks},
  };
  if (auto ok = WriteJson(dir / "chip_swimlane_records.json", raw); !ok) return ok;

  // Chrome trace events: one thread (track) per core that ran something, named and sorted by core id,
  // so AIC tracks come first. Times are in microseconds, as the format wants.
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", "chip"}}}});
  std::set<int> cores;
  for (const SwimlaneRecord& r : records) {
    if (!cores.insert(r.core_id).second) continue;
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", r.core_id}, {"name", "thread_name"},
                      {"args", {{"name", TrackName(r)}}}});
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", r.core_id}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", r.core_id}}}});
  }
  for (const SwimlaneRecord& r : records) {
    events.push_back({{"ph", "X"},
                      {"pid", 0},
                      {"tid", r.core_id},
                      {"name", KernelName(r.func_id)},
                      {"cat", CoreTypeName(r.core_type)},
                      {"ts", static_cast<double>(r.start_ns) / 1000.0},
                      {"dur", static_cast<double>(r.end_ns - r.start_ns) / 1000.0},
                      {"args", {{"task_id", fmt::format("0x{:x}", r.task_id)}, {"func_id", r.func_id}}}});
    // Early resolve: the time the task held its core before it could start, as a slice of its own.
    if (r.staged_ns >= 0)
      events.push_back({{"ph", "X"},
                        {"pid", 0},
                        {"tid", r.core_id},
                        {"name", KernelName(r.func_id) + " (staged)"},
                        {"cat", "staged"},
                        {"ts", static_cast<double>(r.staged_ns) / 1000.0},
                        {"dur", static_cast<double>(r.start_ns - r.staged_ns) / 1000.0},
                        {"args", {{"task_id", fmt::format("0x{:x}", r.task_id)}}}});
  }
  return WriteJson(dir / "merged_swimlane.json", {{"traceEvents", events}, {"displayTimeUnit", "ns"}});
}

}  // namespace pypto::rt
