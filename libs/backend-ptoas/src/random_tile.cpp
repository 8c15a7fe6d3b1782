// tile.random as pto.trandom (PTOAS a56b18c32af3: key0, key1, counter0..3, dst, rounds 7 or 10).
// The six seed words are i32 scalars; the shape operand of the IR only types the result, whose tile_buf
// gives the extent. ptoas's custom syntax for trandom has no place for attributes after outs(), so,
// as upstream pypto's emitter does, the default rounds (10) is left out of the custom form and any
// other is written in the generic form:
//
//   pto.trandom ins(%k0, %k1, %c0, %c1, %c2, %c3 : i32, i32, i32, i32, i32, i32) outs(%r : T)
//   "pto.trandom"(%k0, %k1, %c0, %c1, %c2, %c3, %r) {rounds = 7 : i32} : (i32, ..., T) -> ()
#include <fmt/format.h>

#include "kernel_emitter.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerRandom(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  std::vector<TypedValue> seeds;
  for (size_t i = 0; i < 6; ++i) seeds.push_back(ScalarOperand(call.args()[i], ir::DataType::INT32, span));
  PtoOp op = DpsOp("pto.trandom", std::move(seeds), TileOperand(result, true));
  if (const int64_t rounds = ir::FindAttr<int64_t>(call.kwargs(), "rounds").value_or(10); rounds != 10) {
    op.attrs = {{"rounds", fmt::format("{} : i32", rounds)}};
    op.generic_only = true;
  }
  Add(body_, op, span);
}

}  // namespace pypto::backend_ptoas
