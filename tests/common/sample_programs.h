// Small hand-built programs shared by the C++ test suites.
#pragma once

#include <memory>
#include <string>

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

}  // namespace pypto::testing
