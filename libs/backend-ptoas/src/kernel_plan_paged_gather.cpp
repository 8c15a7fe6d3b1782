// The Planner's check of tile.paged_gather (paged_gather.cpp): a loop over the indices, each row
// loaded from the pool into its row of the result. What it takes: INT32 tables laid out as [n] or
// [1, n] (element k at offset k), and no more indices than max_indices where their number is static.
#include <fmt/format.h>

#include "kernel_planner.h"
#include "pypto/ir/dynamic_extent.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckPagedGather(const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  for (const auto& arg : call.args())
    if (auto ok = CheckTensorOperand(arg, op, span); !ok) return ok;
  auto refuse = [&](const std::string& why) {
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}': {}", op, kernel_.name(), why));
  };
  for (size_t k : {1, 2}) {
    const auto& table = *call.args()[k]->type()->As<ir::TensorType>();
    const auto& shape = table.shape();
    const bool row = shape.size() == 1 || (shape.size() == 2 && shape[0] == 1);
    if (!row)
      return refuse(fmt::format("its {} {} must be one row ([n] or [1, n]), whose element k is at offset k",
                                k == 1 ? "indices" : "block table", table.str()));
  }
  const auto& indices = *call.args()[1]->type()->As<ir::TensorType>();
  const int64_t rows = indices.shape().back();
  const int64_t max_indices = *ir::FindAttr<int64_t>(call.kwargs(), "max_indices");
  // A length known only at run time is not checked here; upstream's loop runs to it likewise.
  if (rows != ir::kDynamicExtent && rows > max_indices)
    return refuse(fmt::format("its {} indices are more than the max_indices={} rows of the result; raise "
                              "max_indices or pass fewer indices",
                              rows, max_indices));
  return {};
}

}  // namespace pypto::backend_ptoas::detail
