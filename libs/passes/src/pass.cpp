#include "pypto/passes/pass.h"

#include "pypto/ir/program.h"

namespace pypto::passes {

ir::Result<ir::ProgramPtr> RewriteEachFunction(const ir::ProgramPtr& program, const FunctionRewrite& rewrite) {
  std::vector<ir::FunctionPtr> functions;
  for (const auto& function : program->functions()) {
    auto rewritten = rewrite(function);
    if (!rewritten) return pypto::unexpected(rewritten.error());
    functions.push_back(*rewritten);
  }
  return std::make_shared<ir::Program>(program->name(), std::move(functions), program->entry_name());
}

}  // namespace pypto::passes
