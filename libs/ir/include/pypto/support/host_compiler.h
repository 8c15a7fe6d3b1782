// The host C++ compiler the toolchain runs for hand-written kernels and compiled orchestrations.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace pypto {

// $CXX split into words (it may carry a launcher, "ccache g++", as build tools allow), else "c++".
inline std::vector<std::string> HostCompiler() {
  std::vector<std::string> words;
  if (const char* cxx = std::getenv("CXX")) {
    std::istringstream in(cxx);
    for (std::string word; in >> word;) words.push_back(word);
  }
  if (words.empty()) words.push_back("c++");
  return words;
}

}  // namespace pypto
