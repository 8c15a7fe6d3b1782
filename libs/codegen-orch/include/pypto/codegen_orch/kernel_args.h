// The args[] a kernel's `kernel_entry(int64_t* args)` receives, as a table a kernel author can check
// a hand-written kernel against: tensors first in signature order (each a pointer to its ChipTensor
// descriptor), then scalars in signature order (raw 64-bit values), then the two runtime contexts.
#pragma once

#include <string>

#include "pypto/ir/program.h"

namespace pypto::codegen_orch {

// One kernel's table, e.g.
//   kernel_entry(args) of 'rows' (AIV, hand-written: /src/rows.cpp)
//     args[0]   out    tensor  InOut  pl.Tensor[[4, 8], pl.FP32]  -> its ChipTensor descriptor
//     args[1]   scale  scalar  In     pl.Scalar[pl.INDEX]          the value's 64 bits
//     args[48]  LocalContext   get_block_idx(args), get_block_num(args)
//     args[49]  GlobalContext  get_sub_block_id(args)
std::string ExplainKernelArgs(const ir::Function& kernel);

// The tables of every hand-written kernel (an `external_source` attribute) of `program`, one after
// another, or a line saying there is none.
std::string ExplainExternArgs(const ir::Program& program);

}  // namespace pypto::codegen_orch
