// DSL call spellings (`pl.add`, `pl.tile.load`, `pl.create_tile`, ...) -> registered ops.
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

// Where a call stands: inside a kernel (a pl.at scope or an InCore function) ops work on tiles;
// outside, in orchestration code, on tensors.
enum class CallContext { Kernel, Orchestration };

// `pl.tile.X` and `pl.tensor.X` name the op directly (with the aliases create_tile/create_tensor).
// A unified spelling `pl.X` picks tile.X or tensor.X from its first operand, or from the context
// when no operand says (pl.full); a scalar right operand selects the scalar form (pl.mul(t, 2.0) is
// tile.muls). `operands` holds the expression arguments parsed so far, in order.
ir::Result<const ir::OpDef*> ResolveOp(const std::string& dsl_name, const std::vector<ir::ExprPtr>& operands,
                                       CallContext context, const ir::Span& span);

// Ops whose form depends on the keywords given: `pl.mrgsort(t, block_len=64)` is
// pl.tile.mrgsort_format1 and `pl.mrgsort(a, b)` (separate sorted tiles) pl.tile.mrgsort_format2,
// `pl.gather(t, mask_pattern=...)` pl.tile.gather_mask. Returns the
// spelling to resolve (dsl_name itself for every other op), or an error for a form not supported.
ir::Result<std::string> SelectForm(const std::string& dsl_name, const std::vector<std::string>& keywords,
                                   const ir::Span& span);

// The scratch tile a unified reduction (`pl.row_sum(x)`) needs when the call gives none: a fresh
// tile shaped like the operand, as upstream's lowering creates. Null when `dsl_name` is not a
// unified reduction or `op` takes no required scratch tile (`pl.tile.row_sum` still requires one).
ir::Result<ir::ExprPtr> DefaultScratchTile(const std::string& dsl_name, const ir::OpDef& op,
                                           const ir::ExprPtr& operand, const ir::Span& span);

// The scratch tile of a merge of separate sorted tiles when the call gives none: one row as long as
// all the lists together, of the first list's dtype and memory space (what upstream's tensor-to-tile
// lowering creates). An error names a list that is not a tile.
ir::Result<ir::ExprPtr> MergeScratchTile(const std::vector<ir::ExprPtr>& lists, const ir::Span& span);

// `pl.tile.create(shape, dtype=..., target_memory=...)` of `tile`'s shape, dtype and memory space.
ir::Result<ir::ExprPtr> CreateTileLike(const ir::TileType& tile, const ir::Span& span);

// Whether `pl.X(a, b)` on two scalars is scalar arithmetic (pl.add, pl.max, ...), and which.
std::optional<ir::BinaryOp> ScalarArithmetic(const std::string& dsl_name);

}  // namespace pypto::frontend
