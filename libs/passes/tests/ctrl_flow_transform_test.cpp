// CtrlFlowTransform on small hand-built kernels: the exact printed IR after the pass for a continue,
// a break, a break in an if/else whose other branch yields, nested loops, carried values, and the
// StructuredCtrlFlow verifier refusing a program that still jumps.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Index;
using testing::Ints;
using testing::Op;

using Stmts = std::vector<ir::StmtPtr>;

ir::StmtPtr Seq(Stmts stmts) { return std::make_shared<ir::SeqStmts>(std::move(stmts)); }
ir::StmtPtr If(ir::ExprPtr condition, Stmts then_body, Stmts else_body, std::vector<ir::VarPtr> results = {}) {
  return std::make_shared<ir::IfStmt>(std::move(condition), Seq(std::move(then_body)),
                                      else_body.empty() && results.empty() ? nullptr : Seq(std::move(else_body)),
                                      std::move(results), ir::Span{"k.py", 4, 9});
}
ir::StmtPtr Yield(std::vector<ir::ExprPtr> values) { return std::make_shared<ir::YieldStmt>(std::move(values)); }
ir::StmtPtr Break(std::vector<ir::ExprPtr> values = {}) {
  return std::make_shared<ir::BreakStmt>(std::move(values), ir::Span{"k.py", 5, 13});
}
ir::StmtPtr Continue(std::vector<ir::ExprPtr> values = {}) {
  return std::make_shared<ir::ContinueStmt>(std::move(values), ir::Span{"k.py", 5, 13});
}
ir::VarPtr IndexVar(const std::string& name) {
  return std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX));
}
ir::ExprPtr Eq(const ir::ExprPtr& lhs, int64_t rhs) { return testing::Binary(ir::BinaryOp::Eq, lhs, Index(rhs)); }
ir::ExprPtr Ge(const ir::ExprPtr& lhs, int64_t rhs) { return testing::Binary(ir::BinaryOp::Ge, lhs, Index(rhs)); }
ir::ExprPtr Add(const ir::ExprPtr& lhs, const ir::ExprPtr& rhs) { return testing::Binary(ir::BinaryOp::Add, lhs, rhs); }

// A kernel over x [64, 32] -> y whose body is `body`, returning y.
ir::ProgramPtr Kernel(const ir::VarPtr& x, const ir::VarPtr& y, Stmts body) {
  auto kernel = testing::KernelFunction("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(body), y);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

// y[i * 16 : i * 16 + 16] = x[i * 16 : i * 16 + 16]
Stmts CopyRows(const ir::VarPtr& x, const ir::VarPtr& y, const ir::VarPtr& i) {
  auto offsets = std::make_shared<ir::TupleLiteral>(
      std::vector<ir::ExprPtr>{testing::Binary(ir::BinaryOp::Mul, i, Index(16)), Index(0)});
  auto load = Op("tile.load", {x, offsets, Ints({16, 32})}, 6);
  auto t = testing::Local("t", load);
  return {testing::Assign(t, load), std::make_shared<ir::EvalStmt>(Op("tile.store", {t, offsets, y}, 7))};
}

ir::Result<ir::ProgramPtr> Transform(const ir::ProgramPtr& program) {
  auto manager = PipelineOf({"CtrlFlowTransform"}, {.verify = true});
  if (!manager) return pypto::unexpected(manager.error());
  return manager->Run(program, PassContext{});
}

std::string Transformed(const ir::ProgramPtr& program) {
  auto result = Transform(program);
  EXPECT_TRUE(result) << result.error().str();
  return result ? ir::PrintFunction(*(*result)->Find("k")) : "";
}

const char* const kHeader =
    "@pl.function(type=pl.FunctionType.InCore)\n"
    "def k(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> "
    "pl.Tensor[[64, 32], pl.FP32]:\n";

TEST(CtrlFlowTransform, TheRestOfAnIterationAfterAContinueMovesIntoTheElseBranch) {
  // for i in pl.range(4): if i == 1: continue; y[i] = x[i]
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto i = testing::LoopVar("i", 3);
  Stmts body = {If(Eq(i, 1), {Continue()}, {})};
  for (auto& stmt : CopyRows(x, y, i)) body.push_back(stmt);
  auto program = Kernel(x, y, {testing::Loop(i, Index(0), Index(4), Index(1), body)});
  EXPECT_EQ(ir::PrintFunction(*program->Find("k")),
            std::string(kHeader) +
                "    for i in pl.range(4):\n"
                "        if i == 1:\n"
                "            continue\n"
                "        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
                "        pl.tile.store(t, [i * 16, 0], y)\n"
                "    return y\n");
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    for i in pl.range(4):\n"
                "        if i == 1:\n"
                "            pass\n"
                "        else:\n"
                "            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
                "            pl.tile.store(t, [i * 16, 0], y)\n"
                "    return y\n");
}

// n = 0; for i in pl.range(4) carrying n: <body>; the loop's result is `n_out`.
struct CarryingLoop {
  ir::VarPtr x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  ir::VarPtr i = testing::LoopVar("i", 3);
  ir::VarPtr n0 = IndexVar("n"), n = IndexVar("n"), n_out = IndexVar("n");

  ir::ProgramPtr Program(Stmts body) const {
    auto loop = std::make_shared<ir::ForStmt>(i, Index(0), Index(4), Index(1), std::vector<ir::IterArg>{{n, n0}},
                                              Seq(std::move(body)), std::vector<ir::VarPtr>{n_out},
                                              ir::ForKind::Sequential, ir::Span{"k.py", 3, 5});
    return Kernel(x, y, {testing::Assign(n0, Index(0)), loop});
  }
};

TEST(CtrlFlowTransform, AContinueInALoopWithCarriedValuesYieldsTheValuesItHandsOn) {
  // for i: if i == 1: continue (n unchanged); n = n + i
  CarryingLoop loop;
  auto next = IndexVar("n");
  auto program = loop.Program({If(Eq(loop.i, 1), {Continue({loop.n})}, {}),
                               testing::Assign(next, Add(loop.n, loop.i)), Yield({next})});
  EXPECT_EQ(ir::PrintFunction(*program->Find("k")),
            std::string(kHeader) +
                "    n: pl.Scalar[pl.INDEX] = 0\n"
                "    for i, (n_1,) in pl.range(4, init_values=(n,)):\n"
                "        if i == 1:\n"
                "            pl.continue_(n_1)\n"
                "        n_2: pl.Scalar[pl.INDEX] = n_1 + i\n"
                "        n_3: pl.Scalar[pl.INDEX] = pl.yield_(n_2)\n"
                "    return y\n");
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    n: pl.Scalar[pl.INDEX] = 0\n"
                "    for i, (n_1,) in pl.range(4, init_values=(n,)):\n"
                "        if i == 1:\n"
                "            n_2: pl.Scalar[pl.INDEX] = pl.yield_(n_1)\n"
                "        else:\n"
                "            n_3: pl.Scalar[pl.INDEX] = n_1 + i\n"
                "            n_2: pl.Scalar[pl.INDEX] = pl.yield_(n_3)\n"
                "        n_4: pl.Scalar[pl.INDEX] = pl.yield_(n_2)\n"
                "    return y\n");
}

TEST(CtrlFlowTransform, ALoopThatBreaksCarriesAFlagAndRunsItsBodyOnlyWhileTheFlagIsZero) {
  // for i: if i >= 2: break (n unchanged); n = n + i
  CarryingLoop loop;
  auto next = IndexVar("n");
  auto program = loop.Program({If(Ge(loop.i, 2), {Break({loop.n})}, {}),
                               testing::Assign(next, Add(loop.n, loop.i)), Yield({next})});
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    n: pl.Scalar[pl.INDEX] = 0\n"
                "    _break_flag_0: pl.Scalar[pl.INDEX] = 0\n"
                "    for i, (n_1, _break_flag_0_1) in pl.range(4, init_values=(n, _break_flag_0)):\n"
                "        if _break_flag_0_1 == 0:\n"
                "            if i >= 2:\n"
                "                n_2, _break_flag_0_2 = pl.yield_(n_1, 1)\n"
                "            else:\n"
                "                n_3: pl.Scalar[pl.INDEX] = n_1 + i\n"
                "                n_2, _break_flag_0_2 = pl.yield_(n_3, _break_flag_0_1)\n"
                "            n_4, _break_flag_0_3 = pl.yield_(n_2, _break_flag_0_2)\n"
                "        else:\n"
                "            n_4, _break_flag_0_3 = pl.yield_(n_1, _break_flag_0_1)\n"
                "        n_5, _break_flag_0_4 = pl.yield_(n_4, _break_flag_0_3)\n"
                "    return y\n");
}

TEST(CtrlFlowTransform, ABreakInAnIfWhoseOtherBranchYieldsTakesThatBranchsValuesAfterTheIf) {
  // for i: if i >= 2: (m = n * 2; break with m) else: k = n + 1 -> r; n = r + i
  CarryingLoop loop;
  auto m = IndexVar("m"), k = IndexVar("k"), r = IndexVar("r"), next = IndexVar("n");
  auto program = loop.Program(
      {If(Ge(loop.i, 2),
          {testing::Assign(m, testing::Binary(ir::BinaryOp::Mul, loop.n, Index(2))), Break({m})},
          {testing::Assign(k, Add(loop.n, Index(1))), Yield({k})}, {r}),
       testing::Assign(next, Add(r, loop.i)), Yield({next})});
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    n: pl.Scalar[pl.INDEX] = 0\n"
                "    _break_flag_0: pl.Scalar[pl.INDEX] = 0\n"
                "    for i, (n_1, _break_flag_0_1) in pl.range(4, init_values=(n, _break_flag_0)):\n"
                "        if _break_flag_0_1 == 0:\n"
                "            if i >= 2:\n"
                "                m: pl.Scalar[pl.INDEX] = n_1 * 2\n"
                "                n_2, _break_flag_0_2 = pl.yield_(m, 1)\n"
                "            else:\n"
                "                k: pl.Scalar[pl.INDEX] = n_1 + 1\n"
                "                n_3: pl.Scalar[pl.INDEX] = k + i\n"
                "                n_2, _break_flag_0_2 = pl.yield_(n_3, _break_flag_0_1)\n"
                "            n_4, _break_flag_0_3 = pl.yield_(n_2, _break_flag_0_2)\n"
                "        else:\n"
                "            n_4, _break_flag_0_3 = pl.yield_(n_1, _break_flag_0_1)\n"
                "        n_5, _break_flag_0_4 = pl.yield_(n_4, _break_flag_0_3)\n"
                "    return y\n");
}

TEST(CtrlFlowTransform, WhatFollowsAnIfBothOfWhoseBranchesFallThroughIsCopiedIntoEach) {
  // for i: if i >= 1: (if i == 3: continue) else: pass; y[i] = x[i]  (the copy defines its own t)
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto i = testing::LoopVar("i", 3);
  Stmts body = {If(Ge(i, 1), {If(Eq(i, 3), {Continue()}, {})}, {})};
  for (auto& stmt : CopyRows(x, y, i)) body.push_back(stmt);
  auto program = Kernel(x, y, {testing::Loop(i, Index(0), Index(4), Index(1), body)});
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    for i in pl.range(4):\n"
                "        if i >= 1:\n"
                "            if i == 3:\n"
                "                pass\n"
                "            else:\n"
                "                t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
                "                pl.tile.store(t, [i * 16, 0], y)\n"
                "        else:\n"
                "            t_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
                "            pl.tile.store(t_1, [i * 16, 0], y)\n"
                "    return y\n");
}

TEST(CtrlFlowTransform, EachLoopOfANestKeepsItsOwnJumps) {
  // for o in pl.range(2): (for i in pl.range(4): if i == 1: break; y[i] = x[i]); if o == 0: continue;
  // y[o] = x[o]
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto o = testing::LoopVar("o", 2), i = testing::LoopVar("i", 3);
  Stmts inner_body = {If(Eq(i, 1), {Break()}, {})};
  for (auto& stmt : CopyRows(x, y, i)) inner_body.push_back(stmt);
  Stmts outer_body = {testing::Loop(i, Index(0), Index(4), Index(1), inner_body), If(Eq(o, 0), {Continue()}, {})};
  for (auto& stmt : CopyRows(x, y, o)) outer_body.push_back(stmt);
  auto program = Kernel(x, y, {testing::Loop(o, Index(0), Index(2), Index(1), outer_body)});
  EXPECT_EQ(Transformed(program),
            std::string(kHeader) +
                "    for o in pl.range(2):\n"
                "        _break_flag_0: pl.Scalar[pl.INDEX] = 0\n"
                "        for i, (_break_flag_0_1,) in pl.range(4, init_values=(_break_flag_0,)):\n"
                "            if _break_flag_0_1 == 0:\n"
                "                if i == 1:\n"
                "                    _break_flag_0_2: pl.Scalar[pl.INDEX] = pl.yield_(1)\n"
                "                else:\n"
                "                    t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], "
                "[16, 32])\n"
                "                    pl.tile.store(t, [i * 16, 0], y)\n"
                "                    _break_flag_0_2: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_1)\n"
                "                _break_flag_0_3: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_2)\n"
                "            else:\n"
                "                _break_flag_0_3: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_1)\n"
                "            _break_flag_0_4: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_3)\n"
                "        if o == 0:\n"
                "            pass\n"
                "        else:\n"
                "            t_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [o * 16, 0], [16, 32])\n"
                "            pl.tile.store(t_1, [o * 16, 0], y)\n"
                "    return y\n");
}

TEST(CtrlFlowTransform, TheVerifierRejectsAProgramThatStillBreaks) {
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto i = testing::LoopVar("i", 3);
  auto program = Kernel(x, y, {testing::Loop(i, Index(0), Index(4), Index(1), {If(Eq(i, 1), {Break()}, {})})});
  auto verified = VerifyProperty(IRProperty::StructuredCtrlFlow, *program);
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().message, "property StructuredCtrlFlow does not hold in function 'k': a 'break' is left");
  EXPECT_EQ(verified.error().span.line, 5);
  // What requires structured loops refuses it before running.
  auto outlined = PipelineOf({"OutlineIncoreScopes"}, {.verify = true})->Run(program, PassContext{});
  ASSERT_FALSE(outlined);
  EXPECT_NE(outlined.error().str().find("pass OutlineIncoreScopes requires StructuredCtrlFlow"), std::string::npos)
      << outlined.error().str();
  EXPECT_TRUE(Transform(program));
}

}  // namespace
}  // namespace pypto::passes
