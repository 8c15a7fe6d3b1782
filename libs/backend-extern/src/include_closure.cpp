#include "pypto/backend_extern/include_closure.h"

#include <optional>
#include <set>
#include <system_error>

#include "file_text.h"
#include "include_directives.h"

namespace pypto::backend_extern {
namespace fs = std::filesystem;
namespace {

bool IsFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The compiler's search: the includer's own directory for quoted includes, then the -I dirs in order.
std::optional<fs::path> FindInclude(const IncludeDirective& directive, const fs::path& includer,
                                    const std::vector<fs::path>& include_dirs) {
  if (directive.quoted) {
    fs::path local = (includer.parent_path() / directive.target).lexically_normal();
    if (IsFile(local)) return local;
  }
  for (const auto& dir : include_dirs) {
    fs::path candidate = (dir / directive.target).lexically_normal();
    if (IsFile(candidate)) return candidate;
  }
  return std::nullopt;
}

class ClosureWalk {
 public:
  explicit ClosureWalk(const std::vector<fs::path>& include_dirs) : include_dirs_(include_dirs) {}

  void Visit(const fs::path& file) {
    // Identity is the canonical path, so "a/../b.h" and a symlink to b.h are one file and
    // mutually including headers terminate.
    std::error_code ec;
    fs::path identity = fs::weakly_canonical(file, ec);
    if (ec) identity = file;
    if (!visited_.insert(identity).second) return;
    auto text = ReadFileBytes(file);
    if (!text) return;
    ordered_.push_back(file);
    for (const auto& directive : ScanIncludeDirectives(*text)) {
      if (auto found = FindInclude(directive, file, include_dirs_)) Visit(*found);
    }
  }

  std::vector<fs::path> Take() { return std::move(ordered_); }

 private:
  const std::vector<fs::path>& include_dirs_;
  std::set<fs::path> visited_;
  std::vector<fs::path> ordered_;
};

}  // namespace

std::vector<fs::path> CollectIncludeClosure(const fs::path& entry, const std::vector<fs::path>& include_dirs) {
  std::error_code ec;
  ClosureWalk walk(include_dirs);
  walk.Visit(fs::absolute(entry, ec).lexically_normal());
  return walk.Take();
}

}  // namespace pypto::backend_extern
