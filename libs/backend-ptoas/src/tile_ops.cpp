// How each supported tile op prints. Loads and stores go through a partition_view: the window
// [offsets, offsets + sizes) of a tensor view, statically shaped but possibly at offsets computed in a
// loop, which tload/tstore then move as a whole.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernel_emitter.h"
#include "mlir_types.h"
#include "source_loc.h"

namespace pypto::backend_ptoas {
namespace {

ir::Shape StaticInts(const ir::ExprPtr& tuple) {
  ir::Shape values;
  for (const auto& element : tuple->As<ir::TupleLiteral>()->elements()) values.push_back(*ir::AsConstInt(element));
  return values;
}

}  // namespace

void KernelEmitter::LowerStmt(const ir::Stmt& stmt) {
  if (const auto* loop = stmt.As<ir::ForStmt>()) return LowerFor(*loop);
  const ir::Call* call = nullptr;
  const auto* assign = stmt.As<ir::AssignStmt>();
  if (assign) {
    call = assign->value()->As<ir::Call>();
  } else if (const auto* eval = stmt.As<ir::EvalStmt>()) {
    call = eval->expr()->As<ir::Call>();
  }
  if (!call) return;  // the return: results leave through output tensors
  const ir::Span& span = OpSpan(stmt.span(), call->span());
  const std::string& op = call->target_name();
  if (op == "tile.load") {
    LowerLoad(*assign, *call, span);
  } else if (op == "tile.store") {
    LowerStore(*call, span);
  } else {
    LowerElementwise(*assign, *call, span);
  }
}

void KernelEmitter::LowerLoad(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span) {
  const auto& tensor = *call.args()[0]->As<ir::Var>();
  const auto* tensor_type = tensor.type()->As<ir::TensorType>();
  ir::Shape sizes = StaticInts(call.args()[2]);
  std::string partition_type = PartitionViewType(sizes, ElementOf(tensor_type->dtype()));
  std::string window = PartitionView(tensor, call.args()[1], sizes, partition_type, span);
  Add(body_,
      fmt::format("pto.tload ins({} : {}) outs({} : {})", window, partition_type, values_.at(assign.var().get()),
                  TileOperandType(*assign.var())),
      span);
}

void KernelEmitter::LowerStore(const ir::Call& call, const ir::Span& span) {
  const auto& tile = *call.args()[0]->As<ir::Var>();
  const auto& tensor = *call.args()[2]->As<ir::Var>();
  const auto* tensor_type = tensor.type()->As<ir::TensorType>();
  // The window has the tile's shape, in the tensor's rank (the IR checked the two agree).
  const ir::Shape& sizes = tile.type()->As<ir::TileType>()->shape();
  std::string partition_type = PartitionViewType(sizes, ElementOf(tensor_type->dtype()));
  std::string window = PartitionView(tensor, call.args()[1], sizes, partition_type, span);
  Add(body_,
      fmt::format("pto.tstore ins({} : {}) outs({} : {})", values_.at(&tile), TileOperandType(tile), window,
                  partition_type),
      span);
}

void KernelEmitter::LowerElementwise(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span) {
  std::vector<std::string> operands, types;
  for (const auto& arg : call.args()) {
    const auto& tile = *arg->As<ir::Var>();
    operands.push_back(values_.at(&tile));
    types.push_back(TileOperandType(tile));
  }
  Add(body_,
      fmt::format("{} ins({} : {}) outs({} : {})", ElementwisePtoOp(call.target_name()), fmt::join(operands, ", "),
                  fmt::join(types, ", "), values_.at(assign.var().get()), TileOperandType(*assign.var())),
      span);
}

std::string KernelEmitter::PartitionView(const ir::Var& tensor, const ir::ExprPtr& offsets, const ir::Shape& sizes,
                                         const std::string& partition_type, const ir::Span& span) {
  // A store's result names the same memory as its destination; views exist only for parameters.
  const ir::Var* param = plan_.tensor_param_of.at(&tensor);
  const auto* tensor_type = param->type()->As<ir::TensorType>();
  std::vector<std::string> offset_values, size_values;
  // Offsets computed from loop variables get their arith ops here, just before the view that reads them.
  for (const auto& offset : offsets->As<ir::TupleLiteral>()->elements()) {
    offset_values.push_back(IndexValue(offset, span));
  }
  for (int64_t size : sizes) size_values.push_back(names_.Constant(size, "index"));
  std::string window = names_.Named(param->name_hint() + "_pview");
  Add(body_,
      fmt::format("{} = pto.partition_view {}, offsets = [{}], sizes = [{}] : {} -> {}", window, views_.at(param),
                  fmt::join(offset_values, ", "), fmt::join(size_values, ", "),
                  TensorViewType(tensor_type->shape().size(), ElementOf(tensor_type->dtype())), partition_type),
      span);
  return window;
}

}  // namespace pypto::backend_ptoas
