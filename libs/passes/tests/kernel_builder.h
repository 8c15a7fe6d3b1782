// Builds a one-kernel test program statement by statement: `t = k.Let("t", call)`, `k.Eval(call)`,
// then `k.Program(params, output)`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sample_programs.h"

namespace pypto::testing {

class KernelBuilder {
 public:
  ir::VarPtr Let(const std::string& name, const ir::ExprPtr& value) {
    auto var = Local(name, value);
    body.push_back(Assign(var, value));
    return var;
  }
  void Eval(const ir::ExprPtr& call) { body.push_back(std::make_shared<ir::EvalStmt>(call, call->span())); }

  // `name = pl.load(tensor, [row, col], [rows, cols])` on line `line`, into `space` when given.
  ir::VarPtr Load(const std::string& name, const ir::VarPtr& tensor, int64_t row, int64_t col, int64_t rows,
                  int64_t cols, int line, std::optional<ir::MemorySpace> space = std::nullopt) {
    ir::Call::Kwargs kwargs;
    if (space) kwargs.emplace_back("target_memory", *space);
    return Let(name, OpWithKwargs("tile.load", {tensor, Ints({row, col}), Ints({rows, cols})}, kwargs, line));
  }

  // The program holding one InCore kernel `k(params...) -> output`, its last parameter the output.
  ir::ProgramPtr Program(std::vector<ir::VarPtr> params, const ir::VarPtr& output) {
    std::vector<ir::ParamDirection> directions(params.size(), ir::ParamDirection::In);
    directions.back() = ir::ParamDirection::Out;
    auto kernel = KernelFunction("k", std::move(params), std::move(directions), body, output);
    return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
  }

  std::vector<ir::StmtPtr> body;
};

}  // namespace pypto::testing
