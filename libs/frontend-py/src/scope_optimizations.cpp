// Reading `optimizations=[...]` of pl.at / pl.spmd. The simulator splits every scope that mixes cube
// and vector work itself (SplitMixedScopes), so the split mode and slot count change no result; they
// are checked all the same, as upstream checks them, so that a program refused there is refused here.
#include "scope_optimizations.h"

#include <fmt/format.h>

#include <Python.h>

#include <map>
#include <string>

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

constexpr const char* kEntryHint = "each entry is pl.split(pl.SplitMode.X) or pl.cross_core_slot(slot_num=N)";

// `pl.NAME(...)`, or its fully qualified form `pl.optimizations.NAME(...)`.
bool IsOptimization(py::handle node, std::string_view name) {
  if (!IsNode(node, "Call")) return false;
  const std::string callee = DottedName(node.attr("func"));
  return callee == fmt::format("pl.{}", name) || callee == fmt::format("pl.optimizations.{}", name);
}

// A slot count: a positive integer literal (`-1` is read as the literal it negates, to say so).
ir::Result<int64_t> ReadSlotNum(py::handle value, std::string_view api, const SourceMap& map) {
  bool negative = false;
  py::handle literal = value;
  if (IsNode(value, "UnaryOp") && NodeType(value.attr("op")) == "USub") {
    negative = true;
    literal = value.attr("operand");
  }
  py::handle constant = IsNode(literal, "Constant") ? literal.attr("value") : py::handle();
  if (!constant || !py::isinstance<py::int_>(constant) || py::isinstance<py::bool_>(constant))
    return MakeError(DiagnosticKind::Syntax, fmt::format("{} must be an integer literal", api), map.SpanOf(value),
                     "write e.g. pl.cross_core_slot(slot_num=4)");
  const int64_t count = negative ? -constant.cast<int64_t>() : constant.cast<int64_t>();
  if (count <= 0)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{} must be positive, got {}", api, count),
                     map.SpanOf(value));
  return count;
}

// `pl.split(MODE)`, or the deprecated `pl.split(MODE, slot_num=N)`.
ir::Result<ScopeOptimizations> ReadSplit(py::handle call, const SourceMap& map) {
  ScopeOptimizations read;
  for (auto keyword : call.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key != "slot_num")
      return MakeError(DiagnosticKind::Syntax, fmt::format("pl.split() has no argument '{}'", key),
                       map.SpanOf(keyword), "pl.split takes one pl.SplitMode");
    auto slots = ReadSlotNum(keyword.attr("value"), "pl.split(slot_num=...)", map);
    if (!slots) return pypto::unexpected(slots.error());
    read.slot_num = *slots;
    const std::string warning = fmt::format(
        "{}: pl.split(..., slot_num={}) is deprecated: the cross-core slot count is not a split mode; write "
        "pl.cross_core_slot(slot_num={}) as its own entry of optimizations=[...]",
        map.SpanOf(keyword).str(), *slots, *slots);
    if (PyErr_WarnEx(PyExc_DeprecationWarning, warning.c_str(), 1) != 0)
      throw py::error_already_set();  // warnings turned into errors
  }
  py::list args = call.attr("args");
  if (py::len(args) != 1)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("pl.split() takes exactly one pl.SplitMode, got {} positional arguments",
                                 py::len(args)),
                     map.SpanOf(call), "write pl.split(pl.SplitMode.UP_DOWN)");
  static const std::map<std::string, int64_t> kModes = {
      {"pl.SplitMode.NONE", 0}, {"pl.SplitMode.UP_DOWN", 1}, {"pl.SplitMode.LEFT_RIGHT", 2}};
  const std::string mode = DottedName(args[0]);
  auto found = kModes.find(mode);
  if (found == kModes.end())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("unknown split mode '{}'", mode.empty() ? NodeType(args[0]) : mode),
                     map.SpanOf(args[0]), "split modes: pl.SplitMode.NONE, UP_DOWN, LEFT_RIGHT");
  read.split_mode = found->second;
  return read;
}

// `pl.cross_core_slot(slot_num=N)`: slot_num= is required and is its only argument.
ir::Result<int64_t> ReadCrossCoreSlot(py::handle call, const SourceMap& map) {
  constexpr const char* kUsage = "write pl.cross_core_slot(slot_num=4)";
  if (py::len(call.attr("args")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.cross_core_slot() takes its count by keyword: slot_num=N",
                     map.SpanOf(call), kUsage);
  std::optional<int64_t> slots;
  for (auto keyword : call.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key != "slot_num")
      return MakeError(DiagnosticKind::Syntax, fmt::format("pl.cross_core_slot() has no argument '{}'", key),
                       map.SpanOf(keyword), kUsage);
    auto read = ReadSlotNum(keyword.attr("value"), "pl.cross_core_slot(slot_num=...)", map);
    if (!read) return pypto::unexpected(read.error());
    slots = *read;
  }
  if (!slots)
    return MakeError(DiagnosticKind::Syntax, "pl.cross_core_slot() needs slot_num=N", map.SpanOf(call), kUsage);
  return *slots;
}

}  // namespace

ir::Result<ScopeOptimizations> ReadScopeOptimizations(py::handle value, std::string_view owner,
                                                      const SourceMap& map) {
  if (!IsNode(value, "List"))
    return MakeError(DiagnosticKind::Syntax, fmt::format("{}(optimizations=...) must be a list literal", owner),
                     map.SpanOf(value), "write optimizations=[pl.split(pl.SplitMode.UP_DOWN)]");
  ScopeOptimizations result;
  bool seen_split = false, seen_slot = false, slot_from_split = false;
  constexpr const char* kTwice =
      "optimizations=[...] sets the cross-core slot count twice: with the deprecated pl.split(slot_num=...) and "
      "with pl.cross_core_slot(...)";
  for (auto entry : value.attr("elts")) {
    const ir::Span span = map.SpanOf(entry);
    if (IsOptimization(entry, "split")) {
      if (seen_split)
        return MakeError(DiagnosticKind::Syntax, "pl.split(...) is given twice in optimizations=[...]", span);
      seen_split = true;
      auto split = ReadSplit(entry, map);
      if (!split) return pypto::unexpected(split.error());
      result.split_mode = split->split_mode;
      if (split->slot_num) {
        if (seen_slot)
          return MakeError(DiagnosticKind::Syntax, kTwice, span, "keep only pl.cross_core_slot(slot_num=N)");
        result.slot_num = split->slot_num;
        slot_from_split = true;
      }
    } else if (IsOptimization(entry, "cross_core_slot")) {
      if (seen_slot)
        return MakeError(DiagnosticKind::Syntax, "pl.cross_core_slot(...) is given twice in optimizations=[...]",
                         span);
      if (slot_from_split)
        return MakeError(DiagnosticKind::Syntax, kTwice, span,
                         "drop slot_num= from pl.split(...) and keep pl.cross_core_slot(slot_num=N)");
      seen_slot = true;
      auto slots = ReadCrossCoreSlot(entry, map);
      if (!slots) return pypto::unexpected(slots.error());
      result.slot_num = *slots;
    } else {
      return MakeError(DiagnosticKind::Syntax, fmt::format("unsupported entry in {}(optimizations=[...])", owner),
                       span, kEntryHint);
    }
  }
  return result;
}

}  // namespace pypto::frontend
