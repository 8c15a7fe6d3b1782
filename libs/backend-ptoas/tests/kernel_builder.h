// Hand-built kernels as they look after lowering and memory allocation.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/program.h"

namespace pypto::backend_ptoas::testing {

// A row-major Vec tile's type as the module prints it, its valid shape given at run time.
inline std::string VecTileBuf(std::string_view dtype, int rows, int cols) {
  return fmt::format("!pto.tile_buf<loc=vec, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout=row_major, "
                     "slayout=none_box, fractal=512, pad=0>",
                     dtype, rows, cols);
}

// Whether `text` holds `line` as a whole statement of a kernel's body (indented four spaces).
inline bool HasBodyLine(const std::string& text, const std::string& line) {
  return text.find("    " + line + "\n") != std::string::npos;
}

inline ir::Span At(int line, int column) { return ir::Span{"k.py", line, column}; }

inline ir::ExprPtr Ints(std::initializer_list<int64_t> values) {
  std::vector<ir::ExprPtr> elements;
  for (auto v : values) elements.push_back(std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX));
  return std::make_shared<ir::TupleLiteral>(std::move(elements));
}

inline ir::ExprPtr Index(int64_t value) { return std::make_shared<ir::ConstInt>(value, ir::DataType::INDEX); }

// `[e0, e1, ...]` of arbitrary index expressions (offsets computed from loop variables).
inline ir::ExprPtr Tuple(std::vector<ir::ExprPtr> elements) {
  return std::make_shared<ir::TupleLiteral>(std::move(elements));
}

// `lhs op rhs` as the frontend builds it (constants fold).
inline ir::ExprPtr Bin(ir::BinaryOp op, const ir::ExprPtr& lhs, const ir::ExprPtr& rhs, ir::Span span = {}) {
  auto expr = ir::MakeBinary(op, lhs, rhs, span);
  if (!expr) throw std::runtime_error(expr.error().str());
  return *expr;
}

inline ir::VarPtr LoopVar(const std::string& name, ir::Span span = {}) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX), span);
}

inline ir::StmtPtr For(const ir::VarPtr& var, ir::ExprPtr start, ir::ExprPtr stop, ir::ExprPtr step,
                       std::vector<ir::StmtPtr> body, ir::Span span, ir::ForKind kind = ir::ForKind::Sequential) {
  return std::make_shared<ir::ForStmt>(var, std::move(start), std::move(stop), std::move(step),
                                       std::make_shared<ir::SeqStmts>(std::move(body)), kind, std::move(span));
}

inline ir::VarPtr TensorParam(const std::string& name, ir::Shape shape, ir::Span span,
                              ir::DataType dtype = ir::DataType::FP32) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::TensorType>(std::move(shape), dtype), span);
}

inline ir::VarPtr ScalarParam(const std::string& name, ir::DataType dtype, ir::Span span) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(dtype), span);
}

// A call through the registry, so arity and types are checked as the frontend would.
inline ir::CallPtr Op(const std::string& name, std::vector<ir::ExprPtr> args, ir::Span span,
                      ir::Call::Kwargs kwargs = {}) {
  auto call = ir::OpRegistry::Get().CreateCall(name, std::move(args), std::move(kwargs), span);
  if (!call) throw std::runtime_error(call.error().str());
  return *call;
}

// A call built without type deduction, for calls whose arguments already carry their memory
// placement when deduction compares placements (tile.matmul_acc's accumulator).
inline ir::CallPtr PlacedOp(const std::string& name, std::vector<ir::ExprPtr> args, ir::TypePtr type,
                            ir::Span span) {
  return std::make_shared<ir::Call>(ir::OpRegistry::Get().Find(name), std::move(args), ir::Call::Kwargs{},
                                    std::move(type), std::move(span));
}

// Scalar literals as the frontend types them.
inline ir::ExprPtr Float(double value, ir::DataType dtype = ir::DataType::FP32) {
  return std::make_shared<ir::ConstFloat>(value, dtype);
}
inline ir::ExprPtr Int(int64_t value, ir::DataType dtype = ir::DataType::INT32) {
  return std::make_shared<ir::ConstInt>(value, dtype);
}

// The tile a call produces, placed at `byte_offset` in the call's memory space, or in `space`
// (what memory allocation writes).
inline ir::VarPtr TileAt(const std::string& name, const ir::CallPtr& call, int64_t byte_offset,
                         std::optional<ir::MemorySpace> space = std::nullopt) {
  const auto* type = call->type()->As<ir::TileType>();
  auto placed = std::make_shared<ir::TileType>(type->shape(), type->dtype(), space.value_or(type->memory_space()),
                                               ir::TileMemRef{byte_offset, type->num_bytes()});
  return std::make_shared<ir::Var>(name, placed, call->span());
}

inline ir::StmtPtr Assign(const ir::VarPtr& var, const ir::ExprPtr& value, ir::Span span) {
  return std::make_shared<ir::AssignStmt>(var, value, span);
}

inline ir::StmtPtr Eval(const ir::ExprPtr& value, ir::Span span) {
  return std::make_shared<ir::EvalStmt>(value, span);
}

inline ir::StmtPtr Return(std::vector<ir::ExprPtr> values, ir::Span span) {
  return std::make_shared<ir::ReturnStmt>(std::move(values), span);
}

inline ir::FunctionPtr Kernel(const std::string& name, std::vector<ir::VarPtr> params,
                              std::vector<ir::ParamDirection> directions, std::vector<ir::StmtPtr> body,
                              ir::FunctionType type = ir::FunctionType::AIV) {
  return std::make_shared<ir::Function>(name, std::move(params), std::move(directions), std::vector<ir::TypePtr>{},
                                        std::make_shared<ir::SeqStmts>(std::move(body)), type,
                                        std::map<std::string, ir::AttrValue>{}, At(1, 1));
}

// def vector_add(a, b, out):            # line 1
//     tile_a = pl.load(a, [0, 0], [32, 64])     # line 3
//     tile_b = pl.load(b, [0, 0], [32, 64])     # line 4
//     tile_c = pl.add(tile_a, tile_b)           # line 5, reuses tile_a's buffer
//     pl.store(tile_c, [0, 0], out)             # line 6
//     return out                                # line 7
inline ir::FunctionPtr VectorAddKernel(const std::string& op = "tile.add") {
  auto a = TensorParam("a", {32, 64}, At(1, 16));
  auto b = TensorParam("b", {32, 64}, At(1, 19));
  auto out = TensorParam("out", {32, 64}, At(1, 22));
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({32, 64})}, At(3, 14));
  auto tile_a = TileAt("tile_a", load_a, 0);
  auto load_b = Op("tile.load", {b, Ints({0, 0}), Ints({32, 64})}, At(4, 14));
  auto tile_b = TileAt("tile_b", load_b, 8192);
  auto sum = Op(op, {tile_a, tile_b}, At(5, 14));
  auto tile_c = TileAt("tile_c", sum, 0);
  auto store = Op("tile.store", {tile_c, Ints({0, 0}), out}, At(6, 5));
  return Kernel("vector_add", {a, b, out}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                {Assign(tile_a, load_a, At(3, 5)), Assign(tile_b, load_b, At(4, 5)), Assign(tile_c, sum, At(5, 5)),
                 Eval(store, At(6, 5)), Return({out}, At(7, 5))});
}

// def chunked_add_incore_0(a, b, c):                             # line 1
//     for i in pl.range(4):                                      # line 2
//         tile_a = pl.tile.load(a, [i * 128, 0], [128, 128])     # line 3
//         tile_b = pl.tile.load(b, [i * 128, 0], [128, 128])     # line 4
//         __tmp_v0 = pl.tile.add(tile_a, tile_b)                 # line 5, in tile_a's buffer
//         pl.tile.store(__tmp_v0, [i * 128, 0], c)               # line 6
//     return c                                                   # line 7
inline ir::FunctionPtr ChunkedAddKernel() {
  auto a = TensorParam("a", {512, 128}, At(1, 31));
  auto b = TensorParam("b", {512, 128}, At(1, 34));
  auto c = TensorParam("c", {512, 128}, At(1, 37));
  auto i = LoopVar("i", At(2, 9));
  auto row = [&](int column) { return Tuple({Bin(ir::BinaryOp::Mul, i, Index(128), At(3, column)), Index(0)}); };
  auto load_a = Op("tile.load", {a, row(36), Ints({128, 128})}, At(3, 18));
  auto tile_a = TileAt("tile_a", load_a, 0);
  auto load_b = Op("tile.load", {b, row(36), Ints({128, 128})}, At(4, 18));
  auto tile_b = TileAt("tile_b", load_b, 65536);
  auto sum = Op("tile.add", {tile_a, tile_b}, At(5, 20));
  auto tmp = TileAt("__tmp_v0", sum, 0);
  auto store = Op("tile.store", {tmp, row(33), c}, At(6, 9));
  auto loop = For(i, Index(0), Index(4), Index(1),
                  {Assign(tile_a, load_a, At(3, 9)), Assign(tile_b, load_b, At(4, 9)), Assign(tmp, sum, At(5, 9)),
                   Eval(store, At(6, 9))},
                  At(2, 5));
  return Kernel("chunked_add_incore_0", {a, b, c},
                {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                {loop, Return({c}, At(7, 5))});
}

// def matmul(a: [16, 32] FP16, b: [32, 64] FP16, c: [16, 64] FP16):   an AIC kernel
//     a_mat = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)   # Mat at 0
//     b_mat = pl.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)   # Mat at 1024
//     a_left = pl.move(a_mat, target_memory=pl.Mem.Left)               # Left at 0
//     b_right = pl.move(b_mat, target_memory=pl.Mem.Right)             # Right at 0
//     acc = pl.matmul(a_left, b_right)                                 # Acc at 0, FP32
//     acc2 = pl.matmul_acc(acc, a_left, b_right)                       # Acc at 0, in place
//     pl.store(acc2, [0, 0], c)                                        # FP32 -> FP16 on the way out
inline ir::FunctionPtr MatmulKernel() {
  auto a = TensorParam("a", {16, 32}, {}, ir::DataType::FP16);
  auto b = TensorParam("b", {32, 64}, {}, ir::DataType::FP16);
  auto c = TensorParam("c", {16, 64}, {}, ir::DataType::FP16);
  const ir::Call::Kwargs to_mat = {{"target_memory", ir::MemorySpace::Mat}};
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, {}, to_mat);
  auto a_mat = TileAt("a_mat", load_a, 0);
  auto load_b = Op("tile.load", {b, Ints({0, 0}), Ints({32, 64})}, {}, to_mat);
  auto b_mat = TileAt("b_mat", load_b, 1024);
  auto to_left = Op("tile.move", {a_mat}, {}, {{"target_memory", ir::MemorySpace::Left}});
  auto a_left = TileAt("a_left", to_left, 0);
  auto to_right = Op("tile.move", {b_mat}, {}, {{"target_memory", ir::MemorySpace::Right}});
  auto b_right = TileAt("b_right", to_right, 0);
  auto matmul = Op("tile.matmul", {a_left, b_right}, {});
  auto acc = TileAt("acc", matmul, 0);
  // The registry's deduction compares the accumulator's type, placement included, with the product's.
  auto matmul_acc = PlacedOp("tile.matmul_acc", {acc, a_left, b_right}, matmul->type(), {});
  auto acc2 = TileAt("acc2", matmul_acc, 0);
  return Kernel("matmul", {a, b, c}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                {Assign(a_mat, load_a, {}), Assign(b_mat, load_b, {}), Assign(a_left, to_left, {}),
                 Assign(b_right, to_right, {}), Assign(acc, matmul, {}), Assign(acc2, matmul_acc, {}),
                 Eval(Op("tile.store", {acc2, Ints({0, 0}), c}, {}), {})},
                ir::FunctionType::AIC);
}

inline ir::ProgramPtr ProgramOf(const ir::FunctionPtr& kernel) {
  return std::make_shared<ir::Program>("_jit_" + kernel->name(), std::vector<ir::FunctionPtr>{kernel}, kernel->name());
}

}  // namespace pypto::backend_ptoas::testing
