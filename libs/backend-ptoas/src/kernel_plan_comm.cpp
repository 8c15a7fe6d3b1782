// The Planner's checks of the communication ops of a distributed kernel (comm.*, `pld.*` in the DSL;
// kernel_planner.h). They are lowered the way upstream pypto's PTO emitter writes them (hw-native-sys/
// pypto e2d0f78ae, src/backend/common/pto_ops_distributed.cpp; comm_ops.cpp here): a peer's copy of a
// window region is reached through the window's CommContext, a `!pto.ptr<i64>` argument the kernel
// gets for each window it communicates through. No PTOAS revision available defines the pto.comm.*
// instructions; tools/pto-check holds them as a separate source, transcribed from that emitter.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

namespace {

// The window argument of each comm op: the tensor whose CommContext it reads.
size_t WindowArg(const std::string& op) { return op == "comm.remote_store" ? 1 : 0; }

}  // namespace

Status Planner::CheckComm(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
  const std::string& op = call.target_name();
  const ir::Span& span = call.span().known() ? call.span() : stmt.span();
  auto window = ParamOf(call.args()[WindowArg(op)], op, span);
  if (!window) return pypto::unexpected(window.error());
  plan_.comm_windows.insert(*window);
  // pld.tensor.barrier (`signal = pld.tensor.barrier(signal)`): notifies into the peers' copies and
  // waits on this rank's own cells, through its view; the result is the same window.
  if (op == "comm.barrier") {
    const auto& shape = (*window)->type()->As<ir::TensorType>()->shape();
    if (shape.size() > 2 || (shape.size() == 2 && shape[1] != 1))
      return Error(span, fmt::format("the barrier's signal '{}' in kernel '{}' must hold one cell per rank "
                                     "([nranks] or [nranks, 1]), got {}",
                                     (*window)->name_hint(), kernel_.name(), (*window)->type()->str()));
    if (auto ok = CheckTensorOperand(call.args()[0], op, span); !ok) return ok;
    if (assign) plan_.tensor_param_of[assign->var().get()] = *window;
    return {};
  }
  if (op == "comm.rank" || op == "comm.nranks") {
    if (!assign) return Error(span, fmt::format("the value of '{}' in kernel '{}' is not used", op, kernel_.name()));
    scalars_.insert(assign->var().get());
    return {};
  }
  if (op == "comm.wait") {
    const std::string cmp = ir::FindAttr<std::string>(call.kwargs(), "cmp").value_or("");
    // PTOAS pull request #467's wait_cmp has all six; upstream's emitter writes eq and ge only.
    if (cmp != "Eq" && cmp != "Ge")
      return Error(span, fmt::format("backend-ptoas cannot lower 'comm.wait' with cmp=pld.WaitCmp.{} in kernel "
                                     "'{}': upstream pypto's pto.comm.twait compares with eq or ge only; wait "
                                     "with pld.WaitCmp.Eq or pld.WaitCmp.Ge",
                                     cmp, kernel_.name()));
    if (auto ok = CheckTensorOperand(call.args()[0], op, span); !ok) return ok;  // the local cell's view
    if (auto ok = CheckOffsets(call.args()[1], op, span); !ok) return ok;
    return CheckIndexExpr(call.args()[2], fmt::format("the expected value of '{}'", op), span);
  }
  if (auto ok = CheckIndexExpr(call.args()[op == "comm.remote_store" ? 2 : 1], fmt::format("the peer of '{}'", op),
                               span);
      !ok)
    return ok;
  if (auto ok = CheckOffsets(call.args()[op == "comm.remote_store" ? 3 : 2], op, span); !ok) return ok;
  if (op == "comm.notify") return CheckIndexExpr(call.args()[3], fmt::format("the value of '{}'", op), span);
  const auto& tensor = *call.args()[WindowArg(op)]->As<ir::Var>();
  if (op == "comm.remote_load") {
    if (!assign) return Error(span, fmt::format("the tile of '{}' in kernel '{}' is not used", op, kernel_.name()));
    if (auto ok = DefineTile(*assign, span); !ok) return ok;
    return CheckTensorLayout(tensor, *assign->var()->type()->As<ir::TileType>(), "load", span);
  }
  // comm.remote_store
  if (auto ok = CheckTileOperand(call.args()[0], op, span); !ok) return ok;
  if (auto ok = CheckTensorLayout(tensor, *call.args()[0]->type()->As<ir::TileType>(), "store", span); !ok)
    return ok;
  if (assign) plan_.tensor_param_of[assign->var().get()] = *window;
  return {};
}

}  // namespace pypto::backend_ptoas::detail
