// The identity of the running block of an SPMD launch, read inside a kernel: which block of how
// many, and which AIV lane of a dual-lane dispatch. They take no arguments and yield INDEX scalars,
// so the offsets computed from them type like loop variables.
#include "op_checks.h"

namespace pypto::ir {
namespace {

OpDef SpmdIdentity(std::string name, std::string description) {
  return OpDef{.name = std::move(name),
               .description = std::move(description),
               .params = {},
               .deduce_type = [](const auto&, const auto&, const Span&) -> Result<TypePtr> {
                 return TypePtr(std::make_shared<ScalarType>(DataType::INDEX));
               },
               .affinity = CoreAffinity::Shared};
}

}  // namespace

void RegisterTileSpmdOps(OpRegistry& registry) {
  registry.Register(SpmdIdentity("tile.get_block_idx", "the index of this block in its SPMD launch, 0..block_num-1"));
  registry.Register(SpmdIdentity("tile.get_block_num", "the number of blocks of this SPMD launch"));
  registry.Register(SpmdIdentity("tile.get_subblock_idx", "the AIV lane (0 or 1) running this block"));
}

}  // namespace pypto::ir
