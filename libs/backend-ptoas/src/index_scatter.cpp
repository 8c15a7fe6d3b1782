// tile.scatter_mask as the mask form of pto.tscatter, spelled as upstream pypto's PTO emitter
// (hw-native-sys/pypto e2d0f78ae) writes it for a PTOAS newer than any this backend can read:
//
//     pto.tscatter ins(%src, {maskPattern = #pto.mask_pattern<P0101>} : S, "row") outs(%dst : D)
//
// The pattern rides inside ins() after the source, as in tgather's mask form, and the scatter runs
// along each row ("row": lane j of src's row r lands in the pattern's j-th lane of dst's row r). The
// instruction writes the whole of outs, zeros where the pattern selects no lane, so the planner lowers
// it only into a tile of zeros (kernel_plan_scatter.cpp): the result is then the IR's.
//
// The generic form carries the same facts, the axis as an attribute of that name:
// `"pto.tscatter"(%src, %dst) {maskPattern = #pto.mask_pattern<P0101>, axis = "row"} : (S, D) -> ()`.
// Upstream writes only the custom syntax; that attribute name is this backend's (pto-check's table
// records it under its upstream-emitter source).
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "pypto/ir/mask_pattern.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerScatterMask(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const TypedValue src = TileOperand(*call.args()[1]->As<ir::Var>(), false);
  const TypedValue dst = TileOperand(result, false);
  const std::string pattern = fmt::format(
      "#pto.mask_pattern<{}>", ir::MaskPatternName(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern")));
  PtoOp op = DpsOp("pto.tscatter", {src}, dst);
  op.attrs = {{"maskPattern", pattern}, {"axis", "\"row\""}};
  op.custom_syntax = fmt::format("pto.tscatter ins({}, {{maskPattern = {}}} : {}, \"row\") outs({} : {})", src.value,
                                 pattern, src.type, dst.value, dst.type);
  Add(body_, op, span);
}

}  // namespace pypto::backend_ptoas
