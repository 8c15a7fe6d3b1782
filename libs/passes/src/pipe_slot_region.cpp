// The pipe slot region of a vector kernel (pipe_slot_region.h).
#include "pipe_slot_region.h"

#include <algorithm>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

class PipeOps final : public IRVisitor {
 public:
  PipeSlotUse use;

  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto* call = stmt->value()->As<Call>();
    if (call && call->target_name() == "tile.tpop_from_aic") {
      use.dir_mask |= 1;
      use.pops.push_back(stmt->var().get());
      // A lane pops its half of a split tile; the slot holds the whole.
      const int64_t split = FindAttr<int64_t>(call->kwargs(), "split").value_or(0);
      Crossing(stmt->var()->type(), split == 0 ? 1 : 2);
    }
    IRVisitor::VisitAssign(stmt);
  }
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    if (call->target_name() == "tile.tpush_to_aic") {
      use.dir_mask |= 2;
      Crossing(call->args()[0]->type(), 1);
    }
    IRVisitor::VisitCall(call);
  }

 private:
  void Crossing(const TypePtr& type, int64_t parts) {
    if (const auto* tile = type->As<TileType>()) use.slot_size = std::max(use.slot_size, tile->num_bytes() * parts);
  }
};

}  // namespace

PipeSlotUse CollectPipeSlotUse(const ir::Function& kernel) {
  PipeOps ops;
  if (kernel.body()) ops.VisitStmt(kernel.body());
  return ops.use;
}

bool ReadableInSlot(const ir::Var& tile) {
  const auto* type = tile.type()->As<ir::TileType>();
  return type && type->shape().size() <= 2 && !type->has_partial_valid_shape();
}

}  // namespace pypto::passes
