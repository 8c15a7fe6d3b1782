// FunctionParser: which kernel values upstream types as tensors.
//
// Inside a kernel this frontend makes every value a tile, but upstream's parser keeps a tensor a
// tensor until its tensor-to-tile conversion: `x[a:b, c:d]` is a tensor.slice, `pl.full(...)` a
// tensor.full, and a unified op (`pl.add`, `pl.cast`, `pl.cmp`, ...) dispatches on its first
// operand's type, so what it computes from a tensor is a tensor. The difference shows where an op
// means something else on each: `pl.cmp` of tensors is 1 where the comparison holds and 0 elsewhere
// (tensor.cmp), of tiles the packed predicate mask (tile.cmp). The answer is read off the source,
// the way upstream's Python types flow: a name is a tensor when its last assignment in a kernel was
// one, or when it names a tensor of the program.
#include "ast_node.h"
#include "function_parser.h"

namespace pypto::frontend {

namespace {

// The calls that make a tile whatever their operands are (upstream's tile-only spellings).
bool MakesTile(const std::string& callee) {
  return callee.starts_with("pl.tile.") || callee == "pl.load" || callee == "pl.create_tile" ||
         callee == "pl.move";
}

// The calls that make a tensor whatever their operands are.
bool MakesTensor(const std::string& callee) {
  return callee.starts_with("pl.tensor.") || callee == "pl.full" || callee == "pl.create_tensor";
}

}  // namespace

bool FunctionParser::IsUpstreamTensor(py::handle expr) const {
  if (IsNode(expr, "Name")) {
    const std::string name = expr.attr("id").cast<std::string>();
    if (upstream_tensors_.contains(name)) return true;
    auto found = env_.find(name);
    return found != env_.end() && found->second->type()->As<ir::TensorType>();
  }
  // A window of a tensor is a tensor (tensor.slice); of a tile, a tile.
  if (IsNode(expr, "Subscript")) return IsUpstreamTensor(expr.attr("value"));
  if (IsNode(expr, "BinOp")) return IsUpstreamTensor(expr.attr("left")) || IsUpstreamTensor(expr.attr("right"));
  if (IsNode(expr, "UnaryOp")) return IsUpstreamTensor(expr.attr("operand"));
  if (!IsNode(expr, "Call")) return false;
  const std::string callee = DottedName(expr.attr("func"));
  if (MakesTile(callee)) return false;
  if (MakesTensor(callee)) return true;
  py::list args = expr.attr("args");
  return callee.starts_with("pl.") && !args.empty() && IsUpstreamTensor(args[0]);
}

// Outside kernels upstream has no tiles: an orchestration slice this frontend holds as the tile a
// kernel would load is a tensor there.
void FunctionParser::RecordUpstreamTensor(const std::string& name, py::handle value) {
  if (kernel_depth_ == 0 || (!value.is_none() && IsUpstreamTensor(value)))
    upstream_tensors_.insert(name);
  else
    upstream_tensors_.erase(name);
}

}  // namespace pypto::frontend
