// The mixed-scope test programs of mixed_scope_programs.h: kept out of the header so that each test
// file including it does not compile their bodies again.
#include "mixed_scope_programs.h"

namespace pypto::testing::mixed_scope {

using namespace ir;

const VarPtr a = testing::Tensor("a", {16, 32}, DataType::FP16);
const VarPtr b = testing::Tensor("b", {32, 16}, DataType::FP16);
const VarPtr bias = testing::Tensor("bias", {16, 16});
const VarPtr out = testing::Tensor("out", {16, 16});

// `acc = a @ b` as the frontend writes `pl.matmul(a, b, out_dtype=pl.FP32)` on whole tensors.
VarPtr Matmul(Body& body) {
  auto tile_a = body.Let("tile_a", Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, 3));
  auto tile_b = body.Let("tile_b", Op("tile.load", {b, Ints({0, 0}), Ints({32, 16})}, 3));
  return body.Let("acc", Op("tile.matmul", {tile_a, tile_b}, 3));
}

// `out[:] = pl.add(acc, bias)`.
VarPtr AddBias(Body& body, const VarPtr& acc) {
  auto tile_bias = body.Let("tile_bias", Op("tile.load", {bias, Ints({0, 0}), Ints({16, 16})}, 5));
  auto sum = body.Let("sum", Op("tile.add", {acc, tile_bias}, 5));
  return body.Let("out_1", Op("tile.store", {sum, Ints({0, 0}), out}, 5));
}

ProgramPtr Entry(std::vector<StmtPtr> stmts, const VarPtr& result) {
  stmts.push_back(std::make_shared<ReturnStmt>(std::vector<ExprPtr>{result}));
  std::vector<ParamDirection> directions{ParamDirection::In, ParamDirection::In, ParamDirection::In,
                                         ParamDirection::Out};
  auto entry = std::make_shared<Function>("f", std::vector<VarPtr>{a, b, bias, out}, directions,
                                          std::vector<TypePtr>{result->type()},
                                          std::make_shared<SeqStmts>(std::move(stmts)), FunctionType::Opaque);
  return std::make_shared<Program>("p", std::vector<FunctionPtr>{entry}, "f");
}

// Two scopes: the matmul, then the bias add reading its result.
ProgramPtr StagedProgram() {
  Body cube, vector;
  auto acc = Matmul(cube);
  auto result = AddBias(vector, acc);
  return Entry({testing::Scope("cube_only", cube.stmts, 2), testing::Scope("vector_only", vector.stmts, 4)}, result);
}

// One scope holding both.
ProgramPtr MixedProgram() {
  Body mixed;
  auto result = AddBias(mixed, Matmul(mixed));
  return Entry({testing::Scope("mixed", mixed.stmts, 2)}, result);
}

// One scope: the matmul accumulated over a K loop that carries it (matmul_acc), then the bias add.
ProgramPtr KLoopMixedProgram() {
  Body mixed;
  auto first = Matmul(mixed);
  auto k = testing::LoopVar("k", 3);
  auto carried = std::make_shared<Var>("acc_k", first->type());
  Body loop;
  auto tile_a = loop.Let("tile_a_k", Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, 3));
  auto tile_b = loop.Let("tile_b_k", Op("tile.load", {b, Ints({0, 0}), Ints({32, 16})}, 3));
  auto next = loop.Let("acc_next", Op("tile.matmul_acc", {carried, tile_a, tile_b}, 3));
  loop.stmts.push_back(std::make_shared<YieldStmt>(std::vector<ExprPtr>{next}));
  auto summed = std::make_shared<Var>("acc_sum", first->type());
  mixed.stmts.push_back(std::make_shared<ForStmt>(k, testing::Index(0), testing::Index(2), testing::Index(1),
                                                  std::vector<IterArg>{{carried, first}},
                                                  std::make_shared<SeqStmts>(loop.stmts),
                                                  std::vector<VarPtr>{summed}, ForKind::Sequential));
  auto result = AddBias(mixed, summed);
  return Entry({testing::Scope("mixed", mixed.stmts, 2)}, result);
}

}  // namespace pypto::testing::mixed_scope
