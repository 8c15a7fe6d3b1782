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

// Whether `pl.X(a, b)` on two scalars is scalar arithmetic (pl.add, pl.max, ...), and which.
std::optional<ir::BinaryOp> ScalarArithmetic(const std::string& dsl_name);

}  // namespace pypto::frontend
