#include "index_op_forms.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pypto::frontend {
namespace {

// The argument nodes of `call` by parameter, positional ones taken in the order of `names`; null
// where an argument is not given.
ir::Result<std::vector<py::object>> ArgumentsByName(py::handle call, const std::string& name,
                                                    const std::vector<std::string>& names, const SourceMap& map) {
  std::vector<py::object> args(names.size());
  py::list positional = call.attr("args");
  if (py::len(positional) > names.size())
    return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' takes at most {} positional arguments, got {}", name, names.size(),
                                     py::len(positional)),
                         map.SpanOf(call.attr("func")));
  for (size_t i = 0; i < py::len(positional); ++i) args[i] = positional[i];
  for (auto keyword : call.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    auto slot = std::find(names.begin(), names.end(), key);
    if (slot == names.end())
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' has no argument '{}' (arguments: {})", name, key, fmt::join(names, ", ")),
                           map.SpanOf(keyword.attr("value")));
    auto& arg = args[static_cast<size_t>(slot - names.begin())];
    if (arg)
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' got argument '{}' twice", name, key), map.SpanOf(keyword.attr("value")));
    arg = py::reinterpret_borrow<py::object>(keyword.attr("value"));
  }
  return args;
}

pypto::unexpected<ir::Diagnostic> Missing(py::handle call, const std::string& name, const std::string& what,
                                          const SourceMap& map) {
  return ir::MakeError(ir::DiagnosticKind::InvalidOperation, fmt::format("'{}' needs {}", name, what),
                       map.SpanOf(call.attr("func")));
}

py::list Keyword(const char* key, const py::object& value) {
  py::list keywords;
  keywords.append(py::module_::import("ast").attr("keyword")(key, value));
  return keywords;
}

}  // namespace

ir::Result<py::object> GatherAlongDim(py::handle call, const SourceMap& map) {
  const std::string name = DottedName(call.attr("func"));
  auto args = ArgumentsByName(call, name, {"input", "dim", "index"}, map);
  if (!args) return pypto::unexpected(args.error());
  const auto& input = (*args)[0];
  const auto& dim = (*args)[1];
  const auto& index = (*args)[2];
  if (!input || !dim || !index) return Missing(call, name, "input, dim and index (or mask_pattern=...)", map);
  return RewrittenCall(call, "pl.gather_dim", {input, index}, Keyword("dim", dim));
}

bool IsCompareGather(py::handle node) {
  if (!IsNode(node, "Call")) return false;
  const std::string name = DottedName(node.attr("func"));
  if (name == "pl.tile.gather_compare") return true;
  if (name != "pl.gather" && name != "pl.tensor.gather") return false;
  for (auto keyword : node.attr("keywords"))
    if (!keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == "kvalue") return true;
  return false;
}

ir::Result<py::object> GatherCompare(py::handle call, const SourceMap& map) {
  const std::string name = DottedName(call.attr("func"));
  const std::vector<std::string> names = {"src", "kvalue", "tmp", "cmp_mode", "offset", "out_cols", "count_dtype"};
  auto args = ArgumentsByName(call, name, names, map);
  if (!args) return pypto::unexpected(args.error());
  if (!(*args)[0] || !(*args)[1]) return Missing(call, name, "src and kvalue", map);
  std::vector<py::object> positional = {(*args)[0], (*args)[1]};
  if ((*args)[2]) positional.push_back((*args)[2]);
  py::list keywords;
  py::module_ ast = py::module_::import("ast");
  for (size_t i = 3; i < names.size(); ++i)
    if ((*args)[i]) keywords.append(ast.attr("keyword")(names[i], (*args)[i]));
  py::list pair;
  pair.append(RewrittenCall(call, "pl.gather_compare", positional, keywords));
  pair.append(RewrittenCall(call, "pl.gather_compare_count", positional, keywords));
  py::object tuple = ast.attr("Tuple")(pair, ast.attr("Load")());
  ast.attr("copy_location")(tuple, call);
  return tuple;
}

ir::Result<py::object> ScatterForm(py::handle call, const SourceMap& map) {
  const std::string name = DottedName(call.attr("func"));
  auto args = ArgumentsByName(call, name, {"input", "dim", "index", "src", "mask_pattern", "dst"}, map);
  if (!args) return pypto::unexpected(args.error());
  const auto& a = *args;
  const bool index_form = a[1] || a[2] || a[3];
  const bool mask_form = a[4] || a[5];
  if (!a[0]) return Missing(call, name, "input", map);
  if (index_form && mask_form)
    return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' takes either dim, index and src (the index form) or mask_pattern and dst "
                                     "(the mask form), not both",
                                     name),
                         map.SpanOf(call.attr("func")));
  if (mask_form) {
    if (!a[4] || !a[5]) return Missing(call, name, "both mask_pattern and dst in the mask form", map);
    return RewrittenCall(call, "pl.scatter_mask", {a[5], a[0]}, Keyword("mask_pattern", a[4]));
  }
  if (!a[1] || !a[2] || !a[3]) return Missing(call, name, "dim, index and src (or mask_pattern and dst)", map);
  return RewrittenCall(call, "pl.scatter_dim", {a[0], a[2], a[3]}, Keyword("dim", a[1]));
}

ir::Result<py::object> ScatterUpdateForm(py::handle call, const SourceMap& map) {
  const std::string name = DottedName(call.attr("func"));
  bool dim_keyword = false, other_keyword = false;
  for (auto keyword : call.attr("keywords")) {
    const bool dim = !keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == "dim";
    dim_keyword = dim_keyword || dim;
    other_keyword = other_keyword || !dim;
  }
  if (py::len(call.attr("args")) == 3 && !other_keyword && (dim_keyword || !name.starts_with("pl.tensor.")))
    return py::none();  // already (input, index, src[, dim=])
  // Without a dim= keyword the second positional argument is the dim, as upstream reads it.
  const std::vector<std::string> names = dim_keyword ? std::vector<std::string>{"input", "index", "src", "dim"}
                                                     : std::vector<std::string>{"input", "dim", "index", "src"};
  auto args = ArgumentsByName(call, name, names, map);
  if (!args) return pypto::unexpected(args.error());
  auto arg = [&](const char* key) { return (*args)[static_cast<size_t>(std::find(names.begin(), names.end(), key) -
                                                                        names.begin())]; };
  const py::object input = arg("input"), index = arg("index"), src = arg("src"), dim = arg("dim");
  if (!input || !index || !src) return Missing(call, name, "input, index and src", map);
  const std::string spelling = name.starts_with("pl.tile.") ? "pl.tile.scatter_update" : "pl.scatter_update";
  return RewrittenCall(call, spelling, {input, index, src}, dim ? Keyword("dim", dim) : py::list());
}

}  // namespace pypto::frontend
