// Where an external kernel's files are. The DSL writes paths relative to the .py file that declares
// the kernel, so the same program works from any working directory.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::ir {
class Function;
}  // namespace pypto::ir

namespace pypto::backend_extern {

// An absolute path is kept; a relative one is taken from the directory of `defining_python_file`.
// The result is absolute and lexically normal. A missing file is an error naming the path as
// written and the path it resolved to.
pypto::expected<std::filesystem::path, std::string> ResolveSource(const std::filesystem::path& path,
                                                                  const std::filesystem::path& defining_python_file);

// Resolves each directory like ResolveSource; every one must be an existing directory. The order is
// kept because it is the compiler's search order.
pypto::expected<std::vector<std::filesystem::path>, std::string> ResolveIncludeDirs(
    const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& defining_python_file);

// The function attribute "external_include_dirs" holds the directories as a JSON list of strings
// (absolute, in search order); an empty text means none. Anything else is an error.
pypto::expected<std::vector<std::filesystem::path>, std::string> IncludeDirsFromAttr(std::string_view json);

// The include directories of a hand-written kernel: its "external_include_dirs" attribute read as
// above (none when the attribute is absent).
pypto::expected<std::vector<std::filesystem::path>, std::string> IncludeDirsOf(const ir::Function& function);

}  // namespace pypto::backend_extern
