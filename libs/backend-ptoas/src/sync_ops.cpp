// The cross-core events of a mixed kernel's members and the FFTS scratch they go through, as PTOAS
// a56b18c32af3 defines them (include/PTO/IR/PTOOps.td, SyncSetOp/SyncWaitOp/SetFFTsOp, and the custom
// syntax of lib/PTO/IR/PTO.cpp):
//
//   pto.set_ffts %ws : memref<256xi64>                   pl.system.set_ffts(ws)
//   pto.sync.set <PIPE_MTE3>, 4 {ffts_mode = 2 : i32}    pl.system.sync_set(4, pipe=MTE3, ffts_mode=2)
//   pto.sync.wait <PIPE_MTE2>, %e                        pl.system.sync_wait(e, pipe=MTE2)
//
// The event id is an `event_id` attribute when it is a constant and an `index` operand otherwise;
// `ffts_mode` is written only where the program gives it (PTOAS keeps its legacy mode without it), as
// upstream pypto's emitter does. set_ffts takes a memref in that PTOAS (upstream writes the
// `!pto.ptr<i64>` of a later one), so the workspace parameter is typed so in the signature.
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "pypto/ir/op_registry.h"

namespace pypto::backend_ptoas {

std::string KernelEmitter::FftsWorkspaceType(const ir::TensorType& tensor) const {
  return fmt::format("memref<{}x{}>", tensor.shape()[0], ElementOf(tensor.dtype()));
}

void KernelEmitter::LowerSync(const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  if (op == "system.set_ffts") {
    const auto& workspace = *call.args()[0]->As<ir::Var>();
    const TypedValue ws{values_.at(&workspace), FftsWorkspaceType(*workspace.type()->As<ir::TensorType>())};
    Add(body_,
        PtoOp{.name = "pto.set_ffts",
              .custom_syntax = fmt::format("pto.set_ffts {} : {}", ws.value, ws.type),
              .generic_operands = GenericOperands{.groups = {{ws}}}},
        span);
    return;
  }
  const bool set = op == "system.sync_set";
  const std::string pipe = "PIPE_" + *ir::FindAttr<std::string>(call.kwargs(), "pipe");
  std::vector<PtoAttr> attrs = {{"pipe", fmt::format("#pto.pipe<{}>", pipe)}};
  std::vector<TypedValue> operands;
  std::string event;
  if (const auto id = ir::AsConstInt(call.args()[0])) {
    event = std::to_string(*id);
    attrs.push_back({"event_id", fmt::format("{} : i32", *id)});
  } else {
    event = IndexValue(call.args()[0], span);
    operands.push_back({event, "index"});
  }
  std::string custom = fmt::format("pto.sync.{} <{}>, {}", set ? "set" : "wait", pipe, event);
  if (const auto mode = ir::FindAttr<int64_t>(call.kwargs(), "ffts_mode"); set && mode) {
    attrs.push_back({"ffts_mode", fmt::format("{} : i32", *mode)});
    custom += fmt::format(" {{ffts_mode = {} : i32}}", *mode);
  }
  Add(body_,
      PtoOp{.name = set ? "pto.sync.set" : "pto.sync.wait",
            .attrs = std::move(attrs),
            .custom_syntax = std::move(custom),
            .generic_operands = operands.empty() ? GenericOperands{} : GenericOperands{.groups = {operands}}},
      span);
}

}  // namespace pypto::backend_ptoas
