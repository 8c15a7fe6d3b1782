#include "pypto/backend_extern/source_paths.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <system_error>

#include "pypto/ir/function.h"

namespace pypto::backend_extern {
namespace fs = std::filesystem;
namespace {

// The DSL anchors relative paths at the declaring .py file, not at the process's working directory,
// so a program behaves the same wherever it is run from.
fs::path Anchor(const fs::path& path, const fs::path& defining_python_file) {
  if (path.is_absolute()) return path.lexically_normal();
  std::error_code ec;
  fs::path base = fs::absolute(defining_python_file, ec).parent_path();
  return (base / path).lexically_normal();
}

}  // namespace

pypto::expected<fs::path, std::string> ResolveSource(const fs::path& path, const fs::path& defining_python_file) {
  fs::path resolved = Anchor(path, defining_python_file);
  std::error_code ec;
  if (!fs::is_regular_file(resolved, ec)) {
    return pypto::unexpected(fmt::format("external kernel source '{}' not found (resolved to '{}')", path.string(),
                                         resolved.string()));
  }
  return resolved;
}

pypto::expected<std::vector<fs::path>, std::string> ResolveIncludeDirs(const std::vector<fs::path>& dirs,
                                                                       const fs::path& defining_python_file) {
  std::vector<fs::path> resolved;
  resolved.reserve(dirs.size());
  for (const auto& dir : dirs) {
    fs::path absolute = Anchor(dir, defining_python_file);
    std::error_code ec;
    if (!fs::exists(absolute, ec)) {
      return pypto::unexpected(fmt::format("external kernel include directory '{}' not found (resolved to '{}')",
                                           dir.string(), absolute.string()));
    }
    if (!fs::is_directory(absolute, ec)) {
      return pypto::unexpected(fmt::format(
          "external kernel include directory '{}' is not a directory (resolved to '{}')", dir.string(),
          absolute.string()));
    }
    resolved.push_back(std::move(absolute));
  }
  return resolved;
}

pypto::expected<std::vector<std::filesystem::path>, std::string> IncludeDirsFromAttr(std::string_view json) {
  std::vector<std::filesystem::path> dirs;
  if (json.empty()) return dirs;
  const auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array())
    return pypto::unexpected(fmt::format("external_include_dirs must be a JSON list of paths, got '{}'", json));
  for (const auto& entry : parsed) {
    if (!entry.is_string())
      return pypto::unexpected(fmt::format("external_include_dirs must be a JSON list of paths, got '{}'", json));
    dirs.emplace_back(entry.get<std::string>());
  }
  return dirs;
}

pypto::expected<std::vector<std::filesystem::path>, std::string> IncludeDirsOf(const ir::Function& function) {
  const auto* attr = ir::FunctionAttr<std::string>(function, ir::kExternalIncludeDirsAttr);
  return IncludeDirsFromAttr(attr ? *attr : "");
}

}  // namespace pypto::backend_extern
