// Structural equality of IR: the same program up to the choice of variable objects and names.
//
// Two programs are structurally equal when they have the same functions (name, type, attributes,
// parameter types and directions, return types) in the same order, with bodies of the same shape:
// the same statements, ops, callees, constants (value and dtype), keyword attributes and call
// directions. Variables are compared by binding, not by name: a parameter, an assignment target or
// a loop variable on one side corresponds to the one at the same place on the other, and every use
// must refer to corresponding variables. The types of variables are compared exactly (a tile's
// memref included). Not compared: spans, name hints, the nesting of statement sequences (a
// sequence inside a sequence is the same as its statements inline), the order of an op call's
// keyword attributes, and the memref of a call's own result type (the allocator places variables;
// a call's type is what the op deduced from its operands, before or after placement).
#pragma once

#include <optional>
#include <string>

#include "pypto/ir/program.h"

namespace pypto::ir {

// The first difference found, as "function 'f': statement 3: ...", or nothing when equal.
std::optional<std::string> StructuralDiff(const Program& lhs, const Program& rhs);
std::optional<std::string> StructuralDiff(const Function& lhs, const Function& rhs);

inline bool StructuralEqual(const Program& lhs, const Program& rhs) { return !StructuralDiff(lhs, rhs); }
inline bool StructuralEqual(const Function& lhs, const Function& rhs) { return !StructuralDiff(lhs, rhs); }

}  // namespace pypto::ir
