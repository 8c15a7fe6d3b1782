#include "pypto/backend_ptoas/module.h"

#include <fmt/format.h>

#include "kernel_emitter.h"
#include "kernel_plan.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/program.h"

namespace pypto::backend_ptoas {
namespace {

std::string ModuleText(std::string_view arch, const std::string& functions) {
  return fmt::format("module attributes {{pto.target_arch = \"{}\"}} {{\n{}}}\n", arch, functions);
}

// The AIC and AIV members the Group function `group` calls.
std::pair<const ir::Function*, const ir::Function*> MembersOf(const ir::Program& program, const ir::Function& group) {
  const ir::Function* aic = nullptr;
  const ir::Function* aiv = nullptr;
  for (const auto& stmt : ir::FlattenStmts(group.body())) {
    const ir::Call* call = nullptr;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) call = assign->value()->As<ir::Call>();
    if (const auto* eval = stmt->As<ir::EvalStmt>()) call = eval->expr()->As<ir::Call>();
    const auto member = call ? program.Find(call->callee()) : nullptr;
    if (member && member->type() == ir::FunctionType::AIC) aic = member.get();
    if (member && member->type() == ir::FunctionType::AIV) aiv = member.get();
  }
  return {aic, aiv};
}

}  // namespace

bool IsTargetArch(std::string_view arch) { return arch == "a2a3" || arch == "a5"; }

pypto::expected<std::string, std::string> EmitModule(const ir::Function& kernel, std::string_view arch,
                                                     const ModuleOptions& options) {
  if (!IsTargetArch(arch)) {
    return pypto::unexpected(fmt::format("unknown target arch '{}' (expected \"a2a3\" or \"a5\")", arch));
  }
  auto plan = PlanKernel(kernel, arch);
  if (!plan) return pypto::unexpected(plan.error());
  if (plan->pipes.used())
    return pypto::unexpected(fmt::format("{}: kernel '{}' hands tiles to its peer through cross-core pipes; its "
                                         "module holds both members of its mixed kernel (EmitGroupModule)",
                                         kernel.span().str(), kernel.name()));
  return ModuleText(arch, KernelEmitter(kernel, *plan, options).Emit());
}

pypto::expected<std::string, std::string> EmitGroupModule(std::string_view group, const ir::Function& aic,
                                                          const ir::Function& aiv, std::string_view arch,
                                                          const ModuleOptions& options) {
  if (!IsTargetArch(arch)) {
    return pypto::unexpected(fmt::format("unknown target arch '{}' (expected \"a2a3\" or \"a5\")", arch));
  }
  auto aic_plan = PlanKernel(aic, arch);
  if (!aic_plan) return pypto::unexpected(aic_plan.error());
  auto aiv_plan = PlanKernel(aiv, arch);
  if (!aiv_plan) return pypto::unexpected(aiv_plan.error());
  if (auto joined = ConnectPipes(group, aic, *aic_plan, aiv, *aiv_plan, arch); !joined)
    return pypto::unexpected(joined.error());
  return ModuleText(arch, KernelEmitter(aic, *aic_plan, options).Emit() + "\n" +
                              KernelEmitter(aiv, *aiv_plan, options).Emit());
}

pypto::expected<std::string, std::string> EmitKernelModule(const ir::Program& program, const ir::Function& kernel,
                                                           std::string_view arch, const ModuleOptions& options) {
  for (const auto& function : program.functions()) {
    if (function->type() != ir::FunctionType::Group) continue;
    auto [aic, aiv] = MembersOf(program, *function);
    if ((aic != &kernel && aiv != &kernel) || !aic || !aiv) continue;
    if (!UsesCrossCorePipes(*aic) && !UsesCrossCorePipes(*aiv)) break;
    return EmitGroupModule(function->name(), *aic, *aiv, arch, options);
  }
  return EmitModule(kernel, arch, options);
}

bool UsesCrossCorePipes(const ir::Function& kernel) {
  if (!kernel.body()) return false;
  struct Finder final : ir::IRVisitor {
    bool found = false;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      found |= call->is_op_call() && ir::IsCrossCorePipeOp(call->target_name());
      ir::IRVisitor::VisitCall(call);
    }
  } finder;
  finder.VisitStmt(kernel.body());
  return finder.found;
}

}  // namespace pypto::backend_ptoas
