// The Planner's checks of the GM-to-L2 prefetch ops (prefetch.*, `pl.prefetch.*` in a kernel;
// kernel_planner.h), lowered as upstream pypto's PTO emitter writes them (hw-native-sys/pypto
// e2d0f78ae, src/backend/common/pto_ops_prefetch.cpp; prefetch_ops.cpp here). Their handles
// (context, event, session) are SSA values that only connect the four ops.
#include <fmt/format.h>

#include <string>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckPrefetch(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
  const std::string& op = call.target_name();
  const ir::Span& span = call.span().known() ? call.span() : stmt.span();
  // The handles an op reads come from earlier prefetch ops of the kernel.
  const size_t first_handle = op == "prefetch.async_prefetch" ? 1 : 0;
  for (size_t i = first_handle; i < call.args().size(); ++i) {
    const auto* handle = call.args()[i]->As<ir::Var>();
    if (!handle || !plan_.prefetch_handles.contains(handle))
      return Error(span, fmt::format("an operand of 'pl.{}' is not a handle an earlier prefetch op of kernel '{}' "
                                     "gave",
                                     op, kernel_.name()));
  }
  if (op == "prefetch.make_context") plan_.sdma_workspace = true;
  // The whole source tensor is prefetched, through its view.
  if (op == "prefetch.async_prefetch")
    if (auto ok = CheckTensorOperand(call.args()[0], "pl.prefetch.async_prefetch", span); !ok) return ok;
  if (assign) plan_.prefetch_handles.insert(assign->var().get());
  return {};
}

}  // namespace pypto::backend_ptoas::detail
