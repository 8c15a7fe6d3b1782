#include "pypto/passes/pass_manager.h"

#include <fmt/format.h>

namespace pypto::passes {

PassManager& PassManager::Add(Pass pass) {
  passes_.push_back(std::move(pass));
  return *this;
}

ir::Result<ir::ProgramPtr> PassManager::Run(ir::ProgramPtr program, const PassContext& context,
                                            PropertySet initial) const {
  PropertySet have = initial;
  int slot = 0;
  for (const auto& pass : passes_) {
    ++slot;
    // A required property nobody produced may still hold (e.g. a program without pl.at scopes):
    // the verifier decides, and its message explains a refusal.
    for (auto property : pass.required().items()) {
      if (have.contains(property)) continue;
      auto holds = VerifyProperty(property, *program);
      if (!holds) {
        auto error = holds.error();
        error.message = fmt::format("pass {} requires {}: {}", pass.name(), IRPropertyName(property), error.message);
        return pypto::unexpected(error);
      }
      have.insert(property);
    }
    auto result = pass.Run(program, context);
    if (!result) return result;
    program = *result;
    have.erase_all(pass.invalidated());
    have.insert_all(pass.produced());
    if (options_.verify) {
      for (auto property : have.items()) {
        auto holds = VerifyProperty(property, *program);
        if (!holds) {
          auto error = holds.error();
          const char* how = pass.produced().contains(property) ? "" : " (it does not declare that it invalidates it)";
          error.message = fmt::format("after pass {}{}: {}", pass.name(), how, error.message);
          return pypto::unexpected(error);
        }
      }
    }
    if (options_.after_pass) options_.after_pass(slot, pass.name(), *program);
  }
  return program;
}

}  // namespace pypto::passes
