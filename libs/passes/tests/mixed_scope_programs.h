// The programs of upstream's examples/advanced/03_mixed_kernel.py, built by hand: a matmul whose
// product a bias add reads, written as two pl.at scopes or as one scope mixing both. Separate
// because the tests of OutlineIncoreScopes, SplitMixedScopes and the default pipeline all use them.
#pragma once

#include <string>
#include <vector>

#include "sample_programs.h"

namespace pypto::testing::mixed_scope {

// The entry's parameters: a [16, 32] and b [32, 16] (FP16), bias and out [16, 16] (FP32).
extern const ir::VarPtr a;
extern const ir::VarPtr b;
extern const ir::VarPtr bias;
extern const ir::VarPtr out;

// The statements of one scope, built one `name = value` at a time.
struct Body {
  std::vector<ir::StmtPtr> stmts;
  ir::VarPtr Let(const std::string& name, const ir::ExprPtr& value) {
    auto var = Local(name, value);
    stmts.push_back(Assign(var, value));
    return var;
  }
};

// `acc = a @ b` as the frontend writes `pl.matmul(a, b, out_dtype=pl.FP32)` on whole tensors.
ir::VarPtr Matmul(Body& body);

// `out[:] = pl.add(acc, bias)`.
ir::VarPtr AddBias(Body& body, const ir::VarPtr& acc);

// The Opaque entry `f(a, b, bias, out)` running `stmts` and returning `result`.
ir::ProgramPtr Entry(std::vector<ir::StmtPtr> stmts, const ir::VarPtr& result);

// Two scopes: the matmul, then the bias add reading its result.
ir::ProgramPtr StagedProgram();

// One scope holding both.
ir::ProgramPtr MixedProgram();

// One scope: the matmul accumulated over a K loop that carries it (matmul_acc), then the bias add.
ir::ProgramPtr KLoopMixedProgram();

}  // namespace pypto::testing::mixed_scope
