// A scratch directory tree for one test, removed afterwards.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace pypto::backend_extern::testing {

class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pypto-extern-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    // Canonical, so expectations match what the library computes even when $TMPDIR is a symlink.
    root_ = std::filesystem::canonical(pattern);
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path operator/(const std::string& relative) const { return root_ / relative; }

  // Creates parent directories as needed.
  std::filesystem::path Write(const std::string& relative, const std::string& text) const {
    auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::filesystem::path Dir(const std::string& relative) const {
    auto path = root_ / relative;
    std::filesystem::create_directories(path);
    return path;
  }

 private:
  std::filesystem::path root_;
};

// The multi-file kernel of the user guide: aic/entry.cpp -> kernel/impl.cce -> tiling/params.h.
inline void WriteMultiFileKernel(const TempTree& tree) {
  tree.Write("my_kernel/aic/entry.cpp",
             "#include <pto/pto-inst.hpp>\n"
             "#include \"tensor.h\"\n"
             "#include \"../kernel/impl.cce\"\n"
             "extern \"C\" void kernel_entry(__gm__ int64_t* args) { run(args); }\n");
  tree.Write("my_kernel/kernel/impl.cce",
             "  #  include \"../tiling/params.h\"\n"
             "static void run(__gm__ int64_t* args) {}\n");
  tree.Write("my_kernel/tiling/params.h", "constexpr int kTileRows = 64;\n");
}

}  // namespace pypto::backend_extern::testing
