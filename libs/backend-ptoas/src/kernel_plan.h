// What a kernel contains, checked against what backend-ptoas can lower, before anything is printed.
// Keeping every check here lets the printers assume a well-formed kernel.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/function.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas {

inline constexpr std::string_view kSupportedOps = "tile.load, tile.store, tile.add, tile.sub, tile.mul, tile.div";

// The pto op of an element-wise tile op ("tile.add" -> "pto.tadd"), or "" for other ops.
std::string_view ElementwisePtoOp(std::string_view op_name);

struct KernelPlan {
  // The module's argument order: tensors first, then scalars, each in declaration order. The
  // runtime packs a task's args[] the same way.
  std::vector<ir::VarPtr> tensor_params;
  std::vector<ir::VarPtr> scalar_params;
  // Tensor parameters that loads and stores touch, in declaration order; only these get a view.
  std::vector<ir::VarPtr> viewed_tensors;
  // The body with nested sequences flattened; loops stay as ForStmts whose bodies are in loop_bodies.
  std::vector<ir::StmtPtr> stmts;
  std::map<const ir::ForStmt*, std::vector<ir::StmtPtr>> loop_bodies;
  // Scalar parameters that loop bounds or offsets read, in declaration order. Index arithmetic is
  // done in `index`, so each one that is not already INDEX gets one arith.index_cast up front.
  std::vector<ir::VarPtr> index_scalars;
  // The assignments that define tiles, in program order (each gets one alloc_tile).
  std::vector<const ir::AssignStmt*> tile_defs;
  // Every tensor-typed variable of the body (a store's result names its destination) mapped to the
  // parameter whose memory it is.
  std::map<const ir::Var*, const ir::Var*> tensor_param_of;
};

// Fails on the first construct backend-ptoas cannot lower, naming it and its Span::str().
pypto::expected<KernelPlan, std::string> PlanKernel(const ir::Function& kernel);

}  // namespace pypto::backend_ptoas
