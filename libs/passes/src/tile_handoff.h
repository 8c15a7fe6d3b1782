// Handing a tile from one kernel to another through global memory.
//
// A tile lives in one core's buffers, so a tile computed in one pl.at scope and read after it (by a
// later scope, or by the vector half of a split mixed scope) is handed over as a tensor: the
// producing kernel stores the whole tile into a tensor the orchestration allocates, and the
// consuming kernel loads it back into a fresh tile. These helpers build the statements of that
// hand-off and re-derive the types of what the reloaded tile feeds.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::passes {

using VarMap = std::unordered_map<const ir::Var*, ir::VarPtr>;

// The [shape] dtype tensor that carries `tile` between kernels (a fresh orchestration variable).
ir::VarPtr HandoffTensorFor(const ir::Var& tile);

// `tensor = tensor.create(shape, dtype=...)` in the orchestration.
ir::Result<ir::StmtPtr> CreateHandoffTensor(const ir::VarPtr& tensor, const ir::Span& span);

// `tensor' = tile.store(tile, [0, ...], tensor)`: the producing kernel writes the whole tile.
ir::Result<ir::StmtPtr> StoreWholeTile(const ir::VarPtr& tile, const ir::VarPtr& tensor, const ir::Span& span);

// `<name> = tile.load(tensor, [0, ...], shape)`: the consuming kernel reads it back into a fresh Vec
// tile (InferTileMemorySpace loads it into Mat instead when a matmul reads it).
ir::Result<ir::StmtPtr> ReloadWholeTile(const std::string& name, const ir::VarPtr& tensor, const ir::Span& span);

// Substitutes `map` in `stmts` and re-deduces each top-level op call reading a retyped operand, so a
// reloaded Vec tile replacing an Acc tile makes the ops it feeds Vec too. Assigned variables whose
// type changes are replaced by fresh ones (added to `map`).
// SubstituteVars on one statement of a sequence. A variable the statement defines anew (a tile
// whose valid shape names a substituted variable gets a retyped variable) is added to `map`, so
// that the statements after it read the new variable.
ir::StmtPtr SubstituteInSequence(const ir::StmtPtr& stmt, VarMap& map);

ir::Result<std::vector<ir::StmtPtr>> SubstituteAndRetype(const std::vector<ir::StmtPtr>& stmts, VarMap& map);

}  // namespace pypto::passes
