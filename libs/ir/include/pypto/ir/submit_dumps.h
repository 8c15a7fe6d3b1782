// `pl.submit(self.k, x, s, dumps=[x, s])`: the arguments of one launch marked for the args dump
// (RunConfig(enable_dump_args=1)), unlike `pl.dump_tag(t)`, which marks a tensor for every later
// launch. The call keeps them as its keyword `dumps`: the argument positions, joined by commas.
#pragma once

#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

inline constexpr const char* kDumpsKwarg = "dumps";

// The positions of the arguments `call` marks for the dump; empty when it marks none.
std::vector<size_t> DumpedArgs(const Call& call);

// `kwargs` with the mark of `positions` (replacing any earlier one); unchanged when `positions` is empty.
Call::Kwargs WithDumpedArgs(Call::Kwargs kwargs, const std::vector<size_t>& positions);

}  // namespace pypto::ir
