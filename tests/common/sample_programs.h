// Small hand-built programs shared by the C++ test suites.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/program.h"

namespace pypto::testing {

inline ir::ExprPtr Ints(std::initializer_list<int64_t> values) {
  std::vector<ir::ExprPtr> elements;
  for (auto v : values) elements.push_back(std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX));
  return std::make_shared<ir::TupleLiteral>(std::move(elements));
}

inline ir::CallPtr Op(const std::string& name, std::vector<ir::ExprPtr> args, int line = 0) {
  auto call = ir::OpRegistry::Get().CreateCall(name, std::move(args), {}, ir::Span{"k.py", line, 9});
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

inline ir::CallPtr OpWithKwargs(const std::string& name, std::vector<ir::ExprPtr> args, ir::Call::Kwargs kwargs,
                                int line = 0) {
  auto call = ir::OpRegistry::Get().CreateCall(name, std::move(args), std::move(kwargs), ir::Span{"k.py", line, 9});
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

inline ir::ExprPtr Op(const std::string& name, std::vector<ir::ExprPtr> args, ir::Span span) {
  auto call = ir::OpRegistry::Get().CreateCall(name, std::move(args), {}, span);
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

inline ir::VarPtr Tensor(const std::string& name, ir::Shape shape, ir::DataType dtype = ir::DataType::FP32) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::TensorType>(std::move(shape), dtype));
}

inline ir::StmtPtr Assign(const ir::VarPtr& var, const ir::ExprPtr& value) {
  return std::make_shared<ir::AssignStmt>(var, value, value->span());
}

inline ir::VarPtr Local(const std::string& name, const ir::ExprPtr& value) {
  return std::make_shared<ir::Var>(name, value->type(), value->span());
}

// The hello-world kernel as the frontend produces it: an Opaque function whose pl.at region loads
// two [rows, cols] tiles, adds them and stores the sum into the output tensor.
inline ir::ProgramPtr TileAddProgram(int64_t rows = 128, int64_t cols = 128, std::string op = "tile.add") {
  auto a = Tensor("a", {rows, cols}), b = Tensor("b", {rows, cols}), c = Tensor("c", {rows, cols});
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({rows, cols})}, 3);
  auto tile_a = Local("tile_a", load_a);
  auto load_b = Op("tile.load", {b, Ints({0, 0}), Ints({rows, cols})}, 4);
  auto tile_b = Local("tile_b", load_b);
  auto sum = Op(op, {tile_a, tile_b}, 5);
  auto tile_c = Local("tile_c", sum);
  auto store = Op("tile.store", {tile_c, Ints({0, 0}), c}, 6);
  std::vector<ir::StmtPtr> region = {Assign(tile_a, load_a), Assign(tile_b, load_b), Assign(tile_c, sum),
                                     std::make_shared<ir::EvalStmt>(store, store->span())};
  auto scope = std::make_shared<ir::InCoreScopeStmt>("", std::make_shared<ir::SeqStmts>(region), ir::Span{"k.py", 2, 5});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{scope, std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{c})});
  auto fn = std::make_shared<ir::Function>(
      "tile_add", std::vector<ir::VarPtr>{a, b, c},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{c->type()}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_tile_add", std::vector<ir::FunctionPtr>{fn}, "tile_add");
}

// The kernels of the vector DAG as `@pl.jit.incore` functions arrive: separate InCore functions whose
// parameters carry their directions, ending in `return output`.
inline ir::VarPtr Scalar(const std::string& name, ir::DataType dtype) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(dtype));
}

inline ir::FunctionPtr KernelFunction(const std::string& name, std::vector<ir::VarPtr> params,
                                      std::vector<ir::ParamDirection> directions, std::vector<ir::StmtPtr> body,
                                      const ir::VarPtr& output) {
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{output}));
  return std::make_shared<ir::Function>(name, std::move(params), std::move(directions),
                                        std::vector<ir::TypePtr>{output->type()},
                                        std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::InCore);
}

// `output = lhs <op> rhs` over whole [rows, cols] tensors; `tile_op` is tile.add or tile.mul.
inline ir::FunctionPtr BinaryKernel(const std::string& name, const std::string& tile_op, int64_t rows, int64_t cols) {
  auto a = Tensor("a", {rows, cols}), b = Tensor("b", {rows, cols}), output = Tensor("output", {rows, cols});
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({rows, cols})});
  auto a_tile = Local("a_tile", load_a);
  auto load_b = Op("tile.load", {b, Ints({0, 0}), Ints({rows, cols})});
  auto b_tile = Local("b_tile", load_b);
  auto value = Op(tile_op, {a_tile, b_tile});
  auto result = Local("result", value);
  auto store = Op("tile.store", {result, Ints({0, 0}), output});
  return KernelFunction(name, {a, b, output},
                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                        {Assign(a_tile, load_a), Assign(b_tile, load_b), Assign(result, value),
                         std::make_shared<ir::EvalStmt>(store)},
                        output);
}

// `output = a + scalar`, the scalar between the tensors as upstream's kernel_add_scalar declares it.
inline ir::FunctionPtr AddScalarKernel(const std::string& name, int64_t rows, int64_t cols) {
  auto a = Tensor("a", {rows, cols}), output = Tensor("output", {rows, cols});
  auto scalar = Scalar("scalar", ir::DataType::FP32);
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({rows, cols})});
  auto x = Local("x", load);
  auto sum = Op("tile.adds", {x, scalar});
  auto result = Local("result", sum);
  auto store = Op("tile.store", {result, Ints({0, 0}), output});
  return KernelFunction(name, {a, scalar, output},
                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                        {Assign(x, load), Assign(result, sum), std::make_shared<ir::EvalStmt>(store)}, output);
}

// `name = pl.create_tensor([rows, cols], dtype=dtype)`.
inline ir::VarPtr CreateTensor(const std::string& name, int64_t rows, int64_t cols, std::vector<ir::StmtPtr>& body,
                               ir::DataType dtype = ir::DataType::FP32) {
  auto create = OpWithKwargs("tensor.create", {Ints({rows, cols})}, {{"dtype", dtype}});
  auto var = Local(name, create);
  body.push_back(Assign(var, create));
  return var;
}

// `name = kernel(args...)`: a new version of the Out tensor, as the frontend binds a call result.
inline ir::VarPtr CallKernel(const ir::FunctionPtr& kernel, std::vector<ir::ExprPtr> args, const std::string& name,
                             std::vector<ir::StmtPtr>& body) {
  auto call = std::make_shared<ir::Call>(kernel->name(), std::move(args), kernel->return_types()[0]);
  auto var = Local(name, call);
  body.push_back(Assign(var, call));
  return var;
}

// Upstream's vector DAG example, f = (a + b + 1)(a + b + 2) + (a + b), as the frontend produces it: an
// Opaque entry without pl.at scopes that creates four intermediates and calls three InCore kernels.
inline ir::ProgramPtr VectorDagProgram(int64_t rows = 128, int64_t cols = 128) {
  auto kernel_add = BinaryKernel("kernel_add", "tile.add", rows, cols);
  auto kernel_add_scalar = AddScalarKernel("kernel_add_scalar", rows, cols);
  auto kernel_mul = BinaryKernel("kernel_mul", "tile.mul", rows, cols);
  auto a = Tensor("a", {rows, cols}), b = Tensor("b", {rows, cols}), f = Tensor("f", {rows, cols});
  auto one = std::make_shared<ir::ConstFloat>(1.0, ir::DataType::FP32);
  auto two = std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32);
  std::vector<ir::StmtPtr> body;
  auto c0 = CreateTensor("c", rows, cols, body);
  auto c = CallKernel(kernel_add, {a, b, c0}, "c", body);
  auto d0 = CreateTensor("d", rows, cols, body);
  auto d = CallKernel(kernel_add_scalar, {c, one, d0}, "d", body);
  auto e0 = CreateTensor("e", rows, cols, body);
  auto e = CallKernel(kernel_add_scalar, {c, two, e0}, "e", body);
  auto g0 = CreateTensor("g", rows, cols, body);
  auto g = CallKernel(kernel_mul, {d, e, g0}, "g", body);
  auto f1 = CallKernel(kernel_add, {g, c, f}, "f", body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{f1}));
  auto entry = std::make_shared<ir::Function>(
      "vector_dag", std::vector<ir::VarPtr>{a, b, f},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{f->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_vector_dag",
                                       std::vector<ir::FunctionPtr>{kernel_add, kernel_add_scalar, kernel_mul, entry},
                                       "vector_dag");
}

// `name = value` for an orchestration scalar (`k0 = kb * 64`).
inline ir::VarPtr ScalarDef(const std::string& name, const ir::ExprPtr& value, std::vector<ir::StmtPtr>& body) {
  auto var = Local(name, value);
  body.push_back(Assign(var, value));
  return var;
}

inline ir::ExprPtr Index(int64_t value, int line = 0) {
  return std::make_shared<ir::ConstInt>(value, ir::DataType::INDEX, ir::Span{"k.py", line, 9});
}

inline ir::ExprPtr Binary(ir::BinaryOp op, const ir::ExprPtr& lhs, const ir::ExprPtr& rhs) {
  auto expr = ir::MakeBinary(op, lhs, rhs, lhs->span());
  if (!expr) throw std::runtime_error(expr.error().str());
  return *expr;
}

inline ir::VarPtr LoopVar(const std::string& name, int line) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                   ir::Span{"k.py", line, 9});
}

inline ir::StmtPtr Loop(const ir::VarPtr& var, ir::ExprPtr start, ir::ExprPtr stop, ir::ExprPtr step,
                        std::vector<ir::StmtPtr> body, ir::ForKind kind = ir::ForKind::Sequential) {
  const int line = var->span().line;
  return std::make_shared<ir::ForStmt>(var, std::move(start), std::move(stop), std::move(step),
                                       std::make_shared<ir::SeqStmts>(std::move(body)), kind,
                                       ir::Span{"k.py", line, 5});
}

inline ir::StmtPtr Scope(const std::string& name_hint, std::vector<ir::StmtPtr> body, int line) {
  return std::make_shared<ir::InCoreScopeStmt>(name_hint, std::make_shared<ir::SeqStmts>(std::move(body)),
                                               ir::Span{"k.py", line, 13});
}

// A region that loads `source[row, col]` ([tile_rows, tile_cols]), applies `op` (tile.adds / tile.muls)
// with `scalar`, and stores the result at the same place in `dest`, as the frontend produces
// `pl.store(pl.adds(pl.load(source, [row, col], [tr, tc]), scalar), [row, col], dest)`.
inline std::vector<ir::StmtPtr> ScalarTileRegion(const ir::VarPtr& source, const ir::VarPtr& dest, ir::ExprPtr row,
                                                 ir::ExprPtr col, int64_t tile_rows, int64_t tile_cols,
                                                 const std::string& op, double scalar, int line) {
  auto offsets = [&] { return std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{row, col}); };
  auto load = Op("tile.load", {source, offsets(), Ints({tile_rows, tile_cols})}, line);
  auto tile = Local("t", load);
  auto value = Op(op, {tile, std::make_shared<ir::ConstFloat>(scalar, ir::DataType::FP32)}, line + 1);
  auto store = Op("tile.store", {value, offsets(), dest}, line + 1);
  return {Assign(tile, load), std::make_shared<ir::EvalStmt>(store, store->span())};
}

// pypto-lib's hello_world: `y = x + 1` over [rows, cols], one [tile_rows, tile_cols] pl.at region per
// iteration of two orchestration loops.
//
//   for r in pl.parallel(0, rows, tile_rows):                         # line 3
//       for c in pl.range(0, cols, tile_cols):                        # line 4
//           with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_scalar"):
//               t = pl.load(x, [r, c], [tile_rows, tile_cols])        # line 6
//               pl.store(pl.adds(t, 1.0), [r, c], y)                  # line 7
//   return y
inline ir::ProgramPtr HelloWorldProgram(int64_t rows = 1024, int64_t cols = 512, int64_t tile_rows = 128,
                                        int64_t tile_cols = 256) {
  auto x = Tensor("x", {rows, cols}), y = Tensor("y", {rows, cols});
  auto r = LoopVar("r", 3), c = LoopVar("c", 4);
  auto scope = Scope("add_scalar", ScalarTileRegion(x, y, r, c, tile_rows, tile_cols, "tile.adds", 1.0, 6), 5);
  auto inner = Loop(c, Index(0), Index(cols), Index(tile_cols), {scope});
  auto outer = Loop(r, Index(0), Index(rows), Index(tile_rows), {inner}, ir::ForKind::Parallel);
  auto body = std::make_shared<ir::SeqStmts>(
      std::vector<ir::StmtPtr>{outer, std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{y})});
  auto fn = std::make_shared<ir::Function>(
      "hello_world", std::vector<ir::VarPtr>{x, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{y->type()}, body, ir::FunctionType::Opaque, std::map<std::string, ir::AttrValue>{},
      ir::Span{"k.py", 2, 1});
  return std::make_shared<ir::Program>("_jit_hello_world", std::vector<ir::FunctionPtr>{fn}, "hello_world");
}

// An orchestration loop that rebinds two tensors, alternating between their buffers, and updates a
// third in place (`add(a, b, output)` writes a + b into output and returns it):
//
//   c = pl.create_tensor([16, 16]); c = self.add(x, x, c); spare = pl.create_tensor([16, 16])
//   for i, (cur, other, acc) in pl.range(3, init_values=(c, spare, y)):   # line 3
//       nxt = self.add(cur, cur, other)
//       acc = self.add(nxt, nxt, acc)
//       cur, other, acc = pl.yield_(nxt, cur, acc)     # cur, other: Rebind; acc: Alias
//   return acc                                         # y = 2 * 2^3 * 2x = 32x
inline ir::ProgramPtr RebindingLoopProgram() {
  auto add = BinaryKernel("add", "tile.add", 16, 16);
  auto x = Tensor("x", {16, 16}), y = Tensor("y", {16, 16});
  auto cur = Tensor("cur", {16, 16}), other = Tensor("other", {16, 16}), acc = Tensor("acc", {16, 16});
  auto cur_r = Tensor("cur_r", {16, 16}), other_r = Tensor("other_r", {16, 16}), acc_r = Tensor("acc_r", {16, 16});
  auto i = LoopVar("i", 3);
  std::vector<ir::StmtPtr> body;
  auto c0 = CreateTensor("c", 16, 16, body);
  auto c = CallKernel(add, {x, x, c0}, "c_1", body);
  auto spare = CreateTensor("spare", 16, 16, body);
  std::vector<ir::StmtPtr> loop_body;
  auto nxt = CallKernel(add, {cur, cur, other}, "nxt", loop_body);
  auto acc_1 = CallKernel(add, {nxt, nxt, acc}, "acc_1", loop_body);
  loop_body.push_back(std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{nxt, cur, acc_1}));
  body.push_back(std::make_shared<ir::ForStmt>(
      i, Index(0), Index(3), Index(1), std::vector<ir::IterArg>{{cur, c}, {other, spare}, {acc, y}},
      std::make_shared<ir::SeqStmts>(std::move(loop_body)), std::vector<ir::VarPtr>{cur_r, other_r, acc_r},
      ir::ForKind::Sequential, ir::Span{"k.py", 3, 5}));
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{acc_r}));
  auto entry = std::make_shared<ir::Function>(
      "rebind", std::vector<ir::VarPtr>{x, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{y->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_rebind", std::vector<ir::FunctionPtr>{add, entry}, "rebind");
}

// An orchestration loop that rebinds two carried tensors to the tensor it creates in its body, which is
// a new tensor in each iteration (`add(a, b, output)` writes a + b into output):
//
//   h = pl.create_tensor([16, 16]); h = self.add(x, x, h)
//   for i, (cur, prev) in pl.range(iterations, init_values=(h, x)):   # line 3
//       nxt = pl.create_tensor([16, 16])
//       nxt = self.add(cur, prev, nxt)
//       cur, prev = pl.yield_(nxt, cur)                # both Rebind
//   y = self.add(cur, cur, y)                          # y = 2 * F(iterations + 3) x (Fibonacci)
//   return y
inline ir::ProgramPtr FreshTensorLoopProgram(int64_t iterations = 3) {
  auto add = BinaryKernel("add", "tile.add", 16, 16);
  auto x = Tensor("x", {16, 16}), y = Tensor("y", {16, 16});
  auto cur = Tensor("cur", {16, 16}), prev = Tensor("prev", {16, 16});
  auto cur_r = Tensor("cur_r", {16, 16}), prev_r = Tensor("prev_r", {16, 16});
  auto i = LoopVar("i", 3);
  std::vector<ir::StmtPtr> body;
  auto h0 = CreateTensor("h", 16, 16, body);
  auto h = CallKernel(add, {x, x, h0}, "h_1", body);
  std::vector<ir::StmtPtr> loop_body;
  auto nxt0 = CreateTensor("nxt", 16, 16, loop_body);
  auto nxt = CallKernel(add, {cur, prev, nxt0}, "nxt_1", loop_body);
  loop_body.push_back(std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{nxt, cur}));
  body.push_back(std::make_shared<ir::ForStmt>(
      i, Index(0), Index(iterations), Index(1), std::vector<ir::IterArg>{{cur, h}, {prev, x}},
      std::make_shared<ir::SeqStmts>(std::move(loop_body)), std::vector<ir::VarPtr>{cur_r, prev_r},
      ir::ForKind::Sequential, ir::Span{"k.py", 3, 5}));
  auto result = CallKernel(add, {cur_r, cur_r, y}, "y_1", body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{result}));
  auto entry = std::make_shared<ir::Function>(
      "fresh", std::vector<ir::VarPtr>{x, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{y->type()}, std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_fresh", std::vector<ir::FunctionPtr>{add, entry}, "fresh");
}

// Two regions per iteration, with orchestration scalar code before and between them:
//
//   for kb in pl.range(0, blocks):                                    # line 3
//       k0 = kb * 64                                                  # line 4
//       with pl.at(level=pl.Level.CORE_GROUP):                        # line 5: two_stage_incore_0
//           t = pl.load(x, [k0, 0], [64, cols])                       # line 6
//           pl.store(pl.adds(t, 1.0), [k0, 0], y)                     # line 7
//       row = k0 // 2 * 2                                             # line 8
//       with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):     # line 9
//           t = pl.load(y, [row, 0], [64, cols])                      # line 10
//           pl.store(pl.muls(t, 2.0), [row, 0], z)                    # line 11
//   return z
inline ir::ProgramPtr TwoStageLoopProgram(int64_t blocks = 4, int64_t cols = 32) {
  const int64_t rows = blocks * 64;
  auto x = Tensor("x", {rows, cols}), y = Tensor("y", {rows, cols}), z = Tensor("z", {rows, cols});
  auto kb = LoopVar("kb", 3);
  std::vector<ir::StmtPtr> loop_body;
  auto k0 = ScalarDef("k0", Binary(ir::BinaryOp::Mul, kb, Index(64, 4)), loop_body);
  loop_body.push_back(Scope("", ScalarTileRegion(x, y, k0, Index(0), 64, cols, "tile.adds", 1.0, 6), 5));
  auto row = ScalarDef("row", Binary(ir::BinaryOp::Mul, Binary(ir::BinaryOp::FloorDiv, k0, Index(2, 8)), Index(2, 8)),
                       loop_body);
  loop_body.push_back(Scope("scale", ScalarTileRegion(y, z, row, Index(0), 64, cols, "tile.muls", 2.0, 10), 9));
  auto loop = Loop(kb, Index(0), Index(blocks), Index(1), std::move(loop_body));
  auto body = std::make_shared<ir::SeqStmts>(
      std::vector<ir::StmtPtr>{loop, std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{z})});
  auto fn = std::make_shared<ir::Function>(
      "two_stage", std::vector<ir::VarPtr>{x, y, z},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{z->type()}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_two_stage", std::vector<ir::FunctionPtr>{fn}, "two_stage");
}

// A pl.spmd scope whose block count the orchestration computes in a loop, and a kernel that waits for
// it (when it launches anything):
//
//   for i in pl.range(0, 3):                                          # line 3
//       n = i * scale - shift                                         # line 4 (`- shift` when not 0)
//       with pl.spmd(n, name_hint="fill") as tid:                     # line 5
//           t = pl.load(x, [0, 0], [64, 32])                          # line 6
//           pl.store(pl.adds(t, 1.0), [0, 0], y)                      # line 7
//       with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale", deps=[tid]):   # line 8
//           t = pl.load(y, [0, 0], [64, 32])                          # line 9
//           pl.store(pl.muls(t, 2.0), [0, 0], z)                      # line 10
//   return z
inline ir::ProgramPtr SpmdComputedBlocksProgram(int64_t scale = 2, int64_t shift = 0) {
  auto x = Tensor("x", {64, 32}), y = Tensor("y", {64, 32}), z = Tensor("z", {64, 32});
  auto i = LoopVar("i", 3);
  std::vector<ir::StmtPtr> loop_body;
  auto count = Binary(ir::BinaryOp::Mul, i, Index(scale, 4));
  if (shift != 0) count = Binary(ir::BinaryOp::Sub, count, Index(shift, 4));
  auto n = ScalarDef("n", count, loop_body);
  auto tid = std::make_shared<ir::Var>("tid", std::make_shared<ir::ScalarType>(ir::DataType::TASK_ID),
                                       ir::Span{"k.py", 5, 52});
  loop_body.push_back(std::make_shared<ir::InCoreScopeStmt>(
      "fill", std::make_shared<ir::SeqStmts>(ScalarTileRegion(x, y, Index(0), Index(0), 64, 32, "tile.adds", 1.0, 6)),
      ir::Span{"k.py", 5, 13}, n, false, ir::LaunchOrder{.task_id = tid}));
  loop_body.push_back(std::make_shared<ir::InCoreScopeStmt>(
      "scale", std::make_shared<ir::SeqStmts>(ScalarTileRegion(y, z, Index(0), Index(0), 64, 32, "tile.muls", 2.0, 9)),
      ir::Span{"k.py", 8, 13}, nullptr, false, ir::LaunchOrder{.deps = {tid}}));
  auto loop = Loop(i, Index(0), Index(3), Index(1), std::move(loop_body));
  auto body = std::make_shared<ir::SeqStmts>(
      std::vector<ir::StmtPtr>{loop, std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{z})});
  auto fn = std::make_shared<ir::Function>(
      "spmd_blocks", std::vector<ir::VarPtr>{x, y, z},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{z->type()}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("_jit_spmd_blocks", std::vector<ir::FunctionPtr>{fn}, "spmd_blocks");
}

}  // namespace pypto::testing
