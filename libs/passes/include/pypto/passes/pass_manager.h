// Runs passes in order, checking each one's required properties and verifying what it produces.
#pragma once

#include <functional>
#include <vector>

#include "pypto/passes/pass.h"

namespace pypto::passes {

struct PassManagerOptions {
  // Run the verifier of every produced property after each pass (tests and the debug flag).
  bool verify = false;
  // Called with the 1-based slot, the pass name and the program after each pass (dump_passes).
  std::function<void(int, const std::string&, const ir::Program&)> after_pass;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}
  PassManager& Add(Pass pass);
  const std::vector<Pass>& passes() const { return passes_; }

  // `initial` are the properties the input is known to have.
  ir::Result<ir::ProgramPtr> Run(ir::ProgramPtr program, const PassContext& context,
                                 PropertySet initial = {}) const;

 private:
  PassManagerOptions options_;
  std::vector<Pass> passes_;
};

}  // namespace pypto::passes
