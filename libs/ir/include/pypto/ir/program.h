// A program: named functions, one of which is the entry the user called.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::ir {

class Program {
 public:
  Program(std::string name, std::vector<FunctionPtr> functions, std::string entry);

  const std::string& name() const { return name_; }
  // In definition order; outlining passes put new kernels before their callers.
  const std::vector<FunctionPtr>& functions() const { return functions_; }
  const std::string& entry_name() const { return entry_; }
  FunctionPtr entry() const { return Find(entry_); }
  FunctionPtr Find(const std::string& name) const;

 private:
  std::string name_;
  std::vector<FunctionPtr> functions_;
  std::string entry_;
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace pypto::ir
