// The MX block-scale products (tile.matmul_mx, _acc, _bias) as upstream pypto writes them for A5:
// each scale tile is first bound to the data tile it scales (pto.tget_scale_addr ins(data) outs(scale):
// the scale buffer's address follows the data's), then pto.tmatmul.mx[.acc|.bias] reads
//   ins(lhs, lhs_scale, rhs, rhs_scale [, bias]) outs(result)       (matmul_mx, matmul_mx_bias)
//   ins(result, lhs, lhs_scale, rhs, rhs_scale) outs(result)        (matmul_mx_acc, in place)
// A binding is written before every product: it changes the scale buffer itself, so one made for an
// earlier product says nothing of what the next reads.
#include "kernel_emitter.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerMatmulMx(const OpLowering& lowering, const ir::Call& call, const ir::Var& result,
                                  const ir::Span& span) {
  const auto& args = call.args();
  const bool accumulating = call.target_name() == "tile.matmul_mx_acc";
  const size_t lhs = accumulating ? 1 : 0;  // lhs, lhs_scale, rhs, rhs_scale from here
  auto tile = [&](size_t i) { return TileOperand(*args[i]->As<ir::Var>(), false); };
  for (size_t data : {lhs, lhs + 2})
    Add(body_, DpsOp("pto.tget_scale_addr", {tile(data)}, tile(data + 1)), span);
  std::vector<TypedValue> ins;
  if (accumulating) ins.push_back(TileOperand(result, false));  // ptoas wants outs()' very value
  for (size_t i = lhs; i < args.size(); ++i) ins.push_back(tile(i));
  Add(body_, DpsOp(std::string(lowering.pto), std::move(ins), TileOperand(result, false)), span);
}

// The `layout` attribute of a tload from an MX scale tensor: ptoas reads the scale blocks by it.
std::vector<PtoAttr> MxLoadAttrs(const ir::TensorType& tensor) {
  if (tensor.layout() == ir::TensorLayout::ND) return {};
  return {{"layout", std::string(MxLayoutAttr(tensor.layout()))}};
}

std::string_view MxLayoutAttr(ir::TensorLayout layout) {
  return layout == ir::TensorLayout::MX_A_ZZ ? "#pto.layout<mx_a_zz>" : "#pto.layout<mx_b_nn>";
}

}  // namespace pypto::backend_ptoas
