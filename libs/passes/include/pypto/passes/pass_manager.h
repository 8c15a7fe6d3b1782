// Runs passes in order, checking each one's required properties; under `verify`, every property
// the program should hold after a pass (what it produced, and what it did not invalidate) is checked.
#pragma once

#include <functional>
#include <vector>

#include "pypto/passes/pass.h"

namespace pypto::passes {

struct PassManagerOptions {
  // After each pass, run the verifier of every property the program should then hold: those the
  // pass produced and those it kept, so an undeclared invalidation is caught at the pass that made
  // it (tests and the debug flag, PYPTO_VERIFY_LEVEL=1).
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
