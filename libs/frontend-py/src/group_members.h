// The members of a pl.FunctionType.Group (the kernels its body calls, launched together as one mixed
// task) and the rule on what they are written in: all hand-written (external_source=) or all in the
// DSL. The compiler wires the cross-core hand-over between DSL members (pipes, sync events), which a
// hand-written source cannot take part in, so a group mixing the two is refused at its declaration.
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"
#include "pypto/ir/program.h"

namespace pypto::frontend {

// The functions `group`'s body calls, in order.
std::vector<std::string> GroupMembers(const ir::Function& group);

// Every Group of `program` calls hand-written kernels only, or DSL kernels only.
ir::Result<bool> CheckGroupMembers(const ir::Program& program);

}  // namespace pypto::frontend
