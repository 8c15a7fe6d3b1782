// tile.mgather and tile.mscatter: elements or rows of a global tensor at per-element INT32 indices.
// The tensor is passed whole, as a partition of all of it (offsets 0, sizes its shape), as upstream
// pypto's PTO emitter (hw-native-sys/pypto e2d0f78ae, src/backend/common/pto_ops_memory.cpp) does:
//
//   pto.mgather ins(%mem_pview, %idx : P, I) outs(%r : T) {coalesce = #pto<coalesce row>}
//   pto.mscatter ins(%src, %idx : S, I) outs(%out_pview : P)
//
// pto.mscatter is PTOAS a56b18c32af3's own form. Its pto.mgather has no `coalesce` (an [R, 1] index
// column picks rows, an index tile shaped like the result picks elements); upstream writes the
// attribute of a later PTOAS, row (the default) or elem, and a gather_oob other than "undefined" as
// `gatherOob = #pto<gather_oob clamp>`. A Mat result reads its indices from a tensor (a partition
// too), and in element mode stages through a scratch tensor, a third partition in ins(). tools/
// pto-check's table records that form under its upstream-emitter source.
#include <fmt/format.h>

#include "kernel_emitter.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerMemGather(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& args = call.args();
  std::vector<TypedValue> ins = {WholeTensor(*args[0]->As<ir::Var>(), span)};
  if (args[1]->type()->As<ir::TensorType>()) {
    ins.push_back(WholeTensor(*args[1]->As<ir::Var>(), span));
    if (args.size() > 2 && args[2]->type()->As<ir::TensorType>())
      ins.push_back(WholeTensor(*args[2]->As<ir::Var>(), span));
  } else {
    ins.push_back(TileOperand(*args[1]->As<ir::Var>(), false));
  }
  PtoOp op = DpsOp("pto.mgather", std::move(ins), TileOperand(result, false));
  const std::string coalesce = ir::FindAttr<std::string>(call.kwargs(), "coalesce").value_or("row");
  op.attrs = {{"coalesce", fmt::format("#pto<coalesce {}>", coalesce)}};
  const std::string oob = ir::FindAttr<std::string>(call.kwargs(), "gather_oob").value_or("undefined");
  if (oob != "undefined") op.attrs.push_back({"gatherOob", fmt::format("#pto<gather_oob {}>", oob)});
  Add(body_, op, span);
}

void KernelEmitter::LowerMemScatter(const ir::Call& call, const ir::Span& span) {
  const auto& args = call.args();
  const TypedValue src = TileOperand(*args[0]->As<ir::Var>(), false);
  const TypedValue idx = TileOperand(*args[1]->As<ir::Var>(), false);
  Add(body_, DpsOp("pto.mscatter", {src, idx}, WholeTensor(*args[2]->As<ir::Var>(), span)), span);
}

}  // namespace pypto::backend_ptoas
