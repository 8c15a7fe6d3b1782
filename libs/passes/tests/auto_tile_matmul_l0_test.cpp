// AutoTileMatmulL0 on small hand-built kernels: the exact printed IR after the pass, the matmuls it
// leaves alone, and its requirement (matmul operands placed in Left/Right) checked on its input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Ints;
using testing::Op;
using testing::OpWithKwargs;

ir::Call::Kwargs In(ir::MemorySpace space) { return {{"target_memory", space}}; }

// The statements of a kernel body, each defining a named tile.
struct BodyBuilder {
  std::vector<ir::StmtPtr> stmts;

  ir::VarPtr Def(const std::string& name, const ir::CallPtr& value) {
    auto var = testing::Local(name, value);
    stmts.push_back(testing::Assign(var, value));
    return var;
  }
  ir::VarPtr Load(const std::string& name, const ir::VarPtr& tensor, int64_t rows, int64_t cols) {
    return Def(name, OpWithKwargs("tile.load", {tensor, Ints({0, 0}), Ints({rows, cols})}, In(ir::MemorySpace::Mat)));
  }
  // A load of which only the first valid_rows x valid_cols hold data.
  ir::VarPtr LoadPart(const std::string& name, const ir::VarPtr& tensor, int64_t rows, int64_t cols, int64_t valid_rows,
                      int64_t valid_cols) {
    auto valid = Ints({valid_rows, valid_cols});
    return Def(name,
               OpWithKwargs("tile.load", {tensor, Ints({0, 0}), Ints({rows, cols}), valid}, In(ir::MemorySpace::Mat)));
  }
  ir::VarPtr Move(const std::string& name, const ir::VarPtr& tile, ir::MemorySpace space) {
    return Def(name, OpWithKwargs("tile.move", {tile}, In(space)));
  }
  void Store(const ir::VarPtr& tile, const ir::VarPtr& tensor) {
    stmts.push_back(std::make_shared<ir::EvalStmt>(Op("tile.store", {tile, Ints({0, 0}), tensor})));
  }
};

// `out = a @ b` with a [M, K], b [K, N] loaded whole into Mat and moved into Left/Right, as
// InferTileMemorySpace leaves a tensor matmul; `moved` false feeds the Mat tiles to the matmul.
ir::ProgramPtr MatmulKernel(int64_t M, int64_t K, int64_t N, bool moved = true, bool stored = true) {
  auto a = testing::Tensor("a", {M, K}), b = testing::Tensor("b", {K, N}), out = testing::Tensor("out", {M, N});
  BodyBuilder body;
  auto a_mat = body.Load("a_mat", a, M, K), b_mat = body.Load("b_mat", b, K, N);
  ir::VarPtr lhs = a_mat, rhs = b_mat;
  if (moved) {
    lhs = body.Move("a_l", a_mat, ir::MemorySpace::Left);
    rhs = body.Move("b_r", b_mat, ir::MemorySpace::Right);
  }
  auto c = body.Def("c", Op("tile.matmul", {lhs, rhs}));
  // Stored from L0C, or kept on chip: moved to Vec and stored from there.
  body.Store(stored ? c : body.Move("c_vec", c, ir::MemorySpace::Vec), out);
  auto kernel = testing::KernelFunction("mm", {a, b, out},
                                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(body.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

// `out = bf16(a @ b) @ e` with BF16 operands: the first product is narrowed (round half to even, as
// the FIXPIPE does) and reaches the second matmul through Mat, as InferTileMemorySpace places it.
ir::ProgramPtr ChainedKernel(int64_t M, int64_t K, int64_t N) {
  const auto bf16 = ir::DataType::BF16;
  auto a = testing::Tensor("a", {M, K}, bf16), b = testing::Tensor("b", {K, N}, bf16);
  auto e = testing::Tensor("e", {N, 64}, bf16), out = testing::Tensor("out", {M, 64});
  BodyBuilder body;
  auto a_mat = body.Load("a_mat", a, M, K), b_mat = body.Load("b_mat", b, K, N), e_mat = body.Load("e_mat", e, N, 64);
  auto c = body.Def("c", Op("tile.matmul", {body.Move("a_l", a_mat, ir::MemorySpace::Left),
                                            body.Move("b_r", b_mat, ir::MemorySpace::Right)}));
  auto cb = body.Def("cb", OpWithKwargs("tile.cast", {c}, {{"target_type", bf16}, {"mode", std::string("rint")}}));
  auto cb_mat = body.Move("cb_mat", cb, ir::MemorySpace::Mat);
  auto d = body.Def("d", Op("tile.matmul", {body.Move("cb_l", cb_mat, ir::MemorySpace::Left),
                                            body.Move("e_r", e_mat, ir::MemorySpace::Right)}));
  body.Store(d, out);
  auto kernel = testing::KernelFunction(
      "mm", {a, b, e, out},
      {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      std::move(body.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

// `out = a @ b.T` with b given as [N, K] (b_trans=True), each operand loaded whole into Mat and
// moved into Left/Right.
ir::ProgramPtr TransposedRightKernel(int64_t M, int64_t K, int64_t N) {
  auto a = testing::Tensor("a", {M, K}), b = testing::Tensor("b", {N, K}), out = testing::Tensor("out", {M, N});
  BodyBuilder body;
  auto a_mat = body.Load("a_mat", a, M, K), b_mat = body.Load("b_mat", b, N, K);
  auto c = body.Def("c", OpWithKwargs("tile.matmul", {body.Move("a_l", a_mat, ir::MemorySpace::Left),
                                                      body.Move("b_r", b_mat, ir::MemorySpace::Right)},
                                      {{"b_trans", true}}));
  body.Store(c, out);
  auto kernel = testing::KernelFunction("mm", {a, b, out},
                                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(body.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

// `out = a.T @ b + a.T @ b` with a given as [K, M] (a_trans=True): a matmul whose product is read by
// a matmul_acc, as a K loop written in the kernel has them, both reading the same moved operands.
ir::ProgramPtr TransposedLeftAccumulatingKernel(int64_t M, int64_t K, int64_t N) {
  auto a = testing::Tensor("a", {K, M}), b = testing::Tensor("b", {K, N}), out = testing::Tensor("out", {M, N});
  BodyBuilder body;
  auto a_mat = body.Load("a_mat", a, K, M), b_mat = body.Load("b_mat", b, K, N);
  auto a_l = body.Move("a_l", a_mat, ir::MemorySpace::Left), b_r = body.Move("b_r", b_mat, ir::MemorySpace::Right);
  auto c = body.Def("c", OpWithKwargs("tile.matmul", {a_l, b_r}, {{"a_trans", true}}));
  auto c2 = body.Def("c2", OpWithKwargs("tile.matmul_acc", {c, a_l, b_r}, {{"a_trans", true}}));
  body.Store(c2, out);
  auto kernel = testing::KernelFunction("mm", {a, b, out},
                                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(body.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

// `out = a @ b + bias` with BF16 a [M, K], b [K, N] and an FP32 bias row [1, N], each loaded whole
// into Mat and moved into Left/Right/Bias, as InferTileMemorySpace places a matmul_bias.
ir::ProgramPtr BiasedKernel(int64_t M, int64_t K, int64_t N) {
  const auto bf16 = ir::DataType::BF16;
  auto a = testing::Tensor("a", {M, K}, bf16), b = testing::Tensor("b", {K, N}, bf16);
  auto bias = testing::Tensor("bias", {1, N}), out = testing::Tensor("out", {M, N});
  BodyBuilder body;
  auto a_mat = body.Load("a_mat", a, M, K), b_mat = body.Load("b_mat", b, K, N);
  auto bias_mat = body.Load("bias_mat", bias, 1, N);
  auto a_l = body.Move("a_l", a_mat, ir::MemorySpace::Left), b_r = body.Move("b_r", b_mat, ir::MemorySpace::Right);
  auto bias_bt = body.Move("bias_bt", bias_mat, ir::MemorySpace::Bias);
  body.Store(body.Def("c", Op("tile.matmul_bias", {a_l, b_r, bias_bt})), out);
  auto kernel = testing::KernelFunction(
      "mm", {a, b, bias, out},
      {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      std::move(body.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

// A K loop written in the kernel: `acc` [M, N] INT32 in L0C, carried through K / k_step iterations
// that each load [M, k_step] and [k_step, N] INT8 panels into Mat and accumulate their product
// (overwriting on the first step), then stored.
ir::ProgramPtr AccumulatingLoopKernel(int64_t M, int64_t K, int64_t N, int64_t k_step) {
  const auto i8 = ir::DataType::INT8, i32 = ir::DataType::INT32;
  auto a = testing::Tensor("a", {M, K}, i8), b = testing::Tensor("b", {K, N}, i8);
  auto out = testing::Tensor("out", {M, N}, i32);
  auto index = [](int64_t value) { return std::make_shared<ir::ConstInt>(value, ir::DataType::INDEX); };
  auto offsets = [](ir::ExprPtr row, ir::ExprPtr col) {
    return std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{std::move(row), std::move(col)});
  };
  BodyBuilder outer;
  auto acc = outer.Def("acc", OpWithKwargs("tile.create", {Ints({M, N})},
                                           {{"dtype", i32}, {"target_memory", ir::MemorySpace::Acc}}));
  auto kb = std::make_shared<ir::Var>("kb", std::make_shared<ir::ScalarType>(ir::DataType::INDEX));
  auto carried = std::make_shared<ir::Var>("acc_k", acc->type());
  BodyBuilder step;
  auto at = step.Def("at", OpWithKwargs("tile.load", {a, offsets(index(0), kb), Ints({M, k_step})},
                                        In(ir::MemorySpace::Mat)));
  auto bt = step.Def("bt", OpWithKwargs("tile.load", {b, offsets(kb, index(0)), Ints({k_step, N})},
                                        In(ir::MemorySpace::Mat)));
  auto first = ir::MakeBinary(ir::BinaryOp::Eq, kb, index(0), {});
  auto sum = step.Def("acc_next", Op("tile.matmul_acc", {carried, step.Move("at_l", at, ir::MemorySpace::Left),
                                                         step.Move("bt_r", bt, ir::MemorySpace::Right), *first}));
  step.stmts.push_back(std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{sum}));
  auto summed = std::make_shared<ir::Var>("acc_sum", acc->type());
  outer.stmts.push_back(std::make_shared<ir::ForStmt>(
      kb, index(0), index(K), index(k_step), std::vector<ir::IterArg>{{carried, acc}},
      std::make_shared<ir::SeqStmts>(std::move(step.stmts)), std::vector<ir::VarPtr>{summed},
      ir::ForKind::Sequential));
  outer.Store(summed, out);
  auto kernel = testing::KernelFunction("mm", {a, b, out},
                                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(outer.stmts), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
}

std::string KernelBody(const ir::Program& program) {
  const std::string text = ir::PrintProgram(program);
  return text.substr(text.find(":\n", text.find("def mm")) + 2);
}

TEST(AutoTileMatmulL0, AMatmulBeyondL0cAndL0aBecomesBlocksWithAKLoop) {
  // [256, 128] @ [128, 256] in FP32: the 256 KB result exceeds L0C (128 KB) and the 128 KB left
  // operand L0A (64 KB). Blocks of [128, 128] (64 KB, half of L0C) and k = 64 (32 KB of L0A each).
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, MatmulKernel(256, 128, 256));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[256, 128], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [256, 128], "
            "target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[128, 256], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 256], "
            "target_memory=pl.Mem.Mat)\n"
            "        for c_mi in pl.range(0, 256, 128):\n"
            "            for c_ni in pl.range(0, 256, 128):\n"
            "                a_mat_l0a: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, c_mi, 0, "
            "[128, 64], target_memory=pl.Mem.Left)\n"
            "                b_mat_l0b: pl.Tile[[64, 128], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, 0, c_ni, "
            "[64, 128], target_memory=pl.Mem.Right)\n"
            "                c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat_l0a, b_mat_l0b)\n"
            "                for c_ki, (c_1,) in pl.range(64, 128, 64, init_values=(c,)):\n"
            "                    a_mat_l0a_1: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, c_mi, "
            "c_ki, [128, 64], target_memory=pl.Mem.Left)\n"
            "                    b_mat_l0b_1: pl.Tile[[64, 128], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, c_ki, "
            "c_ni, [64, 128], target_memory=pl.Mem.Right)\n"
            "                    c_2: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_1, a_mat_l0a_1, "
            "b_mat_l0b_1)\n"
            "                    c_3: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(c_2)\n"
            "                pl.tile.store(c_3, [c_mi, c_ni], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, AFullKMatmulHasNoKLoop) {
  // K = 32 fits L0A/L0B with [128, 128] blocks: only the M/N grid remains.
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, MatmulKernel(256, 32, 256));
  ASSERT_TRUE(tiled);
  const std::string body = KernelBody(*tiled);
  EXPECT_THAT(body, ::testing::HasSubstr("pl.tile.extract(a_mat, c_mi, 0, [128, 32], target_memory=pl.Mem.Left)"));
  EXPECT_THAT(body, ::testing::Not(::testing::HasSubstr("c_ki")));
  EXPECT_THAT(body, ::testing::HasSubstr("pl.tile.store(c, [c_mi, c_ni], out)"));
}

TEST(AutoTileMatmulL0, AChainedProductBeyondL0cIsAssembledBlockByBlockIntoAMatScratch) {
  // bf16(a @ b) is [256, 256]: 256 KB in FP32, beyond L0C. Its [128, 128] blocks are narrowed and
  // assembled into a [256, 256] BF16 Mat tile (128 KB of L1), which the second matmul reads: that
  // one's [256, 256] BF16 left operand exceeds L0A, so it is tiled too (k = 64).
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, ChainedKernel(256, 32, 256));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[256, 32], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [256, "
            "32], target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[32, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, "
            "256], target_memory=pl.Mem.Mat)\n"
            "        e_mat: pl.Tile[[256, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(e, [0, 0], [256, "
            "64], target_memory=pl.Mem.Mat)\n"
            "        cb_mat: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.tile.create([256, 256], "
            "dtype=pl.BF16, target_memory=pl.Mem.Mat)\n"
            "        for c_mi, (cb_mat_1,) in pl.range(0, 256, 128, init_values=(cb_mat,)):\n"
            "            for c_ni, (cb_mat_2,) in pl.range(0, 256, 128, init_values=(cb_mat_1,)):\n"
            "                a_mat_l0a: pl.Tile[[128, 32], pl.BF16, "
            "pl.Mem.Left] = pl.tile.extract(a_mat, c_mi, 0, [128, 32], target_memory=pl.Mem.Left)\n"
            "                b_mat_l0b: pl.Tile[[32, 128], pl.BF16, "
            "pl.Mem.Right] = pl.tile.extract(b_mat, 0, c_ni, [32, 128], target_memory=pl.Mem.Right)\n"
            "                c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat_l0a, "
            "b_mat_l0b)\n"
            "                c_cast: pl.Tile[[128, 128], pl.BF16, pl.Mem.Acc] = pl.tile.cast(c, "
            "target_type=pl.BF16, mode=\"rint\")\n"
            "                cb_mat_3: pl.Tile[[256, 256], pl.BF16, "
            "pl.Mem.Mat] = pl.tile.assemble(cb_mat_2, c_cast, [c_mi, c_ni])\n"
            "                cb_mat_4: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.yield_(cb_mat_3)\n"
            "            cb_mat_5: pl.Tile[[256, 256], pl.BF16, pl.Mem.Mat] = pl.yield_(cb_mat_4)\n"
            "        cb_mat_l0a: pl.Tile[[256, 64], pl.BF16, pl.Mem.Left] = pl.tile.extract(cb_mat_5, "
            "0, 0, [256, 64], target_memory=pl.Mem.Left)\n"
            "        e_mat_l0b: pl.Tile[[64, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(e_mat, 0, "
            "0, [64, 64], target_memory=pl.Mem.Right)\n"
            "        d: pl.Tile[[256, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(cb_mat_l0a, e_mat_l0b)\n"
            "        for d_ki, (d_1,) in pl.range(64, 256, 64, init_values=(d,)):\n"
            "            cb_mat_l0a_1: pl.Tile[[256, 64], pl.BF16, "
            "pl.Mem.Left] = pl.tile.extract(cb_mat_5, 0, d_ki, [256, 64], target_memory=pl.Mem.Left)\n"
            "            e_mat_l0b_1: pl.Tile[[64, 64], pl.BF16, "
            "pl.Mem.Right] = pl.tile.extract(e_mat, d_ki, 0, [64, 64], target_memory=pl.Mem.Right)\n"
            "            d_2: pl.Tile[[256, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(d_1, "
            "cb_mat_l0a_1, e_mat_l0b_1)\n"
            "            d_3: pl.Tile[[256, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(d_2)\n"
            "        pl.tile.store(d_3, [0, 0], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, ATransposedRightOperandBeyondL0bIsSplitIntoColumnWindows) {
  // [64, 256] @ [128, 256].T in FP32: the 128 KB right operand exceeds L0B (64 KB). The [64, 128]
  // result (32 KB) stays one block; K steps of 64 take [128, 64] column windows of b (32 KB each).
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, TransposedRightKernel(64, 256, 128));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[64, 256], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 256], "
            "target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[128, 256], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 256], "
            "target_memory=pl.Mem.Mat)\n"
            "        a_mat_l0a: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, 0, 0, [64, 64], "
            "target_memory=pl.Mem.Left)\n"
            "        b_mat_l0b: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, 0, 0, [128, 64], "
            "target_memory=pl.Mem.Right)\n"
            "        c: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat_l0a, b_mat_l0b, "
            "b_trans=True)\n"
            "        for c_ki, (c_1,) in pl.range(64, 256, 64, init_values=(c,)):\n"
            "            a_mat_l0a_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, 0, c_ki, [64, "
            "64], target_memory=pl.Mem.Left)\n"
            "            b_mat_l0b_1: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, 0, c_ki, "
            "[128, 64], target_memory=pl.Mem.Right)\n"
            "            c_2: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_1, a_mat_l0a_1, "
            "b_mat_l0b_1, b_trans=True)\n"
            "            c_3: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(c_2)\n"
            "        pl.tile.store(c_3, [0, 0], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, AProductReadWholeKeepsItsShapeAndATransposedLeftOperandIsSplitIntoRowWindows) {
  // [512, 64].T @ [512, 64] in FP32: each 128 KB operand exceeds its 64 KB L0 buffer. The product is
  // read by the matmul_acc, so neither is split along M or N: each walks K in steps of 128, taking
  // [128, 64] row windows of a, the K loop's result becoming the product. The moves go with their
  // last reader.
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, TransposedLeftAccumulatingKernel(64, 512, 64));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [512, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [512, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "        a_mat_l0a: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, 0, 0, [128, 64], "
            "target_memory=pl.Mem.Left)\n"
            "        b_mat_l0b: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, 0, 0, [128, 64], "
            "target_memory=pl.Mem.Right)\n"
            "        c: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_mat_l0a, b_mat_l0b, a_trans=True)\n"
            "        for c_ki, (c_1,) in pl.range(128, 512, 128, init_values=(c,)):\n"
            "            a_mat_l0a_1: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, c_ki, 0, "
            "[128, 64], target_memory=pl.Mem.Left)\n"
            "            b_mat_l0b_1: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, c_ki, 0, "
            "[128, 64], target_memory=pl.Mem.Right)\n"
            "            c_2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_1, a_mat_l0a_1, "
            "b_mat_l0b_1, a_trans=True)\n"
            "            c_3: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(c_2)\n"
            "        a_mat_l0a_2: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, 0, 0, [128, 64], "
            "target_memory=pl.Mem.Left)\n"
            "        b_mat_l0b_2: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, 0, 0, [128, "
            "64], target_memory=pl.Mem.Right)\n"
            "        c2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_3, a_mat_l0a_2, b_mat_l0b_2, "
            "a_trans=True)\n"
            "        for c2_ki, (c2_1,) in pl.range(128, 512, 128, init_values=(c2,)):\n"
            "            a_mat_l0a_3: pl.Tile[[128, 64], pl.FP32, pl.Mem.Left] = pl.tile.extract(a_mat, c2_ki, 0, "
            "[128, 64], target_memory=pl.Mem.Left)\n"
            "            b_mat_l0b_3: pl.Tile[[128, 64], pl.FP32, pl.Mem.Right] = pl.tile.extract(b_mat, c2_ki, 0, "
            "[128, 64], target_memory=pl.Mem.Right)\n"
            "            c2_2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c2_1, a_mat_l0a_3, "
            "b_mat_l0b_3, a_trans=True)\n"
            "            c2_3: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.yield_(c2_2)\n"
            "        pl.tile.store(c2_3, [0, 0], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, ABiasedMatmulAddsEachBlocksWindowOfTheBiasRowOnItsFirstKStep) {
  // [128, 256] @ [256, 512] in BF16 plus a [1, 512] FP32 row: the 256 KB result exceeds L0C, the
  // 2 KB row the 1 KB Bias buffer. Blocks of [128, 128] (64 KB) each load their 512-byte window of
  // the row; k = 128 (32 KB of L0A).
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, BiasedKernel(128, 256, 512));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[128, 256], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [128, 256], "
            "target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[256, 512], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [256, 512], "
            "target_memory=pl.Mem.Mat)\n"
            "        for c_ni in pl.range(0, 512, 128):\n"
            "            bias_mat: pl.Tile[[1, 128], pl.FP32, pl.Mem.Mat] = pl.tile.load(bias, [0, c_ni], [1, 128], "
            "target_memory=pl.Mem.Mat)\n"
            "            bias_bt: pl.Tile[[1, 128], pl.FP32, pl.Mem.Bias] = pl.tile.move(bias_mat, "
            "target_memory=pl.Mem.Bias)\n"
            "            a_mat_l0a: pl.Tile[[128, 128], pl.BF16, pl.Mem.Left] = pl.tile.extract(a_mat, 0, 0, [128, "
            "128], target_memory=pl.Mem.Left)\n"
            "            b_mat_l0b: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(b_mat, 0, c_ni, "
            "[128, 128], target_memory=pl.Mem.Right)\n"
            "            c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_bias(a_mat_l0a, b_mat_l0b, "
            "bias_bt)\n"
            "            for c_ki, (c_1,) in pl.range(128, 256, 128, init_values=(c,)):\n"
            "                a_mat_l0a_1: pl.Tile[[128, 128], pl.BF16, pl.Mem.Left] = pl.tile.extract(a_mat, 0, "
            "c_ki, [128, 128], target_memory=pl.Mem.Left)\n"
            "                b_mat_l0b_1: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.extract(b_mat, c_ki, "
            "c_ni, [128, 128], target_memory=pl.Mem.Right)\n"
            "                c_2: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(c_1, a_mat_l0a_1, "
            "b_mat_l0b_1)\n"
            "                c_3: pl.Tile[[128, 128], pl.FP32, pl.Mem.Acc] = pl.yield_(c_2)\n"
            "            pl.tile.store(c_3, [0, c_ni], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, ABiasRowThatFitsBiasIsAddedWholeToEachRowBlock) {
  // [1040, 64] @ [64, 64] in BF16 plus a [1, 64] FP32 row: the 260 KB result exceeds L0C and the
  // 130 KB left operand L0A. 1040 = 65 x 16: blocks of [208, 64] (52 KB) keep every column, so the
  // 256-byte row stays whole in Bias, moved there once before the loop.
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, BiasedKernel(1040, 64, 64));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        a_mat: pl.Tile[[1040, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [1040, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "        b_mat: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "        bias_mat: pl.Tile[[1, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(bias, [0, 0], [1, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "        bias_bt: pl.Tile[[1, 64], pl.FP32, pl.Mem.Bias] = pl.tile.move(bias_mat, "
            "target_memory=pl.Mem.Bias)\n"
            "        for c_mi in pl.range(0, 1040, 208):\n"
            "            a_mat_l0a: pl.Tile[[208, 64], pl.BF16, pl.Mem.Left] = pl.tile.extract(a_mat, c_mi, 0, [208, "
            "64], target_memory=pl.Mem.Left)\n"
            "            b_mat_l0b: pl.Tile[[64, 64], pl.BF16, pl.Mem.Right] = pl.tile.extract(b_mat, 0, 0, [64, "
            "64], target_memory=pl.Mem.Right)\n"
            "            c: pl.Tile[[208, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_bias(a_mat_l0a, b_mat_l0b, "
            "bias_bt)\n"
            "            pl.tile.store(c, [c_mi, 0], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, AnAccumulatorLoopBeyondL0cRunsOncePerBlockOfIt) {
  // [272, 144] INT32 is 153 KB, beyond L0C: 272 = 17 x 16 and 144 = 3 x 48 leave [272, 48] blocks
  // (51 KB), each running the whole K loop on [272, 384] / [384, 48] windows of the panels, which
  // exceed L0A and L0B's halves and are split again into k = 96 steps.
  auto tiled = testing::RunOk({AutoTileMatmulL0()}, AccumulatingLoopKernel(272, 768, 144, 384));
  ASSERT_TRUE(tiled);
  EXPECT_EQ(KernelBody(*tiled),
            "        for acc_ni in pl.range(0, 144, 48):\n"
            "            acc: pl.Tile[[272, 48], pl.INT32, pl.Mem.Acc] = pl.tile.create([272, 48], dtype=pl.INT32, "
            "target_memory=pl.Mem.Acc)\n"
            "            for kb, (acc_k,) in pl.range(0, 768, 384, init_values=(acc,)):\n"
            "                at: pl.Tile[[272, 384], pl.INT8, pl.Mem.Mat] = pl.tile.load(a, [0, kb], [272, 384], "
            "target_memory=pl.Mem.Mat)\n"
            "                bt: pl.Tile[[384, 144], pl.INT8, pl.Mem.Mat] = pl.tile.load(b, [kb, 0], [384, 144], "
            "target_memory=pl.Mem.Mat)\n"
            "                at_l0a: pl.Tile[[272, 96], pl.INT8, pl.Mem.Left] = pl.tile.extract(at, 0, 0, [272, 96], "
            "target_memory=pl.Mem.Left)\n"
            "                bt_l0b: pl.Tile[[96, 48], pl.INT8, pl.Mem.Right] = pl.tile.extract(bt, 0, acc_ni, [96, "
            "48], target_memory=pl.Mem.Right)\n"
            "                acc_next: pl.Tile[[272, 48], pl.INT32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_k, at_l0a, "
            "bt_l0b, init_cond=kb == 0)\n"
            "                for acc_next_ki, (acc_next_1,) in pl.range(96, 384, 96, init_values=(acc_next,)):\n"
            "                    at_l0a_1: pl.Tile[[272, 96], pl.INT8, pl.Mem.Left] = pl.tile.extract(at, 0, "
            "acc_next_ki, [272, 96], target_memory=pl.Mem.Left)\n"
            "                    bt_l0b_1: pl.Tile[[96, 48], pl.INT8, pl.Mem.Right] = pl.tile.extract(bt, "
            "acc_next_ki, acc_ni, [96, 48], target_memory=pl.Mem.Right)\n"
            "                    acc_next_2: pl.Tile[[272, 48], pl.INT32, pl.Mem.Acc] = "
            "pl.tile.matmul_acc(acc_next_1, at_l0a_1, bt_l0b_1)\n"
            "                    acc_next_3: pl.Tile[[272, 48], pl.INT32, pl.Mem.Acc] = pl.yield_(acc_next_2)\n"
            "                acc_sum: pl.Tile[[272, 48], pl.INT32, pl.Mem.Acc] = pl.yield_(acc_next_3)\n"
            "            pl.tile.store(acc_sum, [0, acc_ni], out)\n"
            "        return out\n");
}

TEST(AutoTileMatmulL0, MatmulsThatFitOrStayOnChipAreLeftAlone) {
  auto fits = MatmulKernel(128, 64, 128);
  auto after = testing::RunOk({AutoTileMatmulL0()}, fits);
  ASSERT_TRUE(after);
  EXPECT_EQ(ir::PrintProgram(*after), ir::PrintProgram(*fits));
  // A result read by something other than a store needs the whole result: AllocateMemoryAddr
  // reports it if it does not fit.
  auto on_chip = MatmulKernel(256, 128, 256, /*moved=*/true, /*stored=*/false);
  after = testing::RunOk({AutoTileMatmulL0()}, on_chip);
  ASSERT_TRUE(after);
  EXPECT_EQ(ir::PrintProgram(*after), ir::PrintProgram(*on_chip));
}

TEST(AutoTileMatmulL0, AnOperandWithFewerValidElementsAlongKIsLeftWhole) {
  // a [128, 256] FP32 (128 KB, beyond L0A) holds data in its first 200 columns only: a K window
  // past them would add what the tile holds there into the sum, so the matmul is left alone.
  auto a = testing::Tensor("a", {128, 200}), b = testing::Tensor("b", {256, 64});
  auto out = testing::Tensor("out", {128, 64});
  BodyBuilder body;
  auto a_mat = body.LoadPart("a_mat", a, 128, 256, 128, 200), b_mat = body.Load("b_mat", b, 256, 64);
  auto c = body.Def("c", Op("tile.matmul", {body.Move("a_l", a_mat, ir::MemorySpace::Left),
                                            body.Move("b_r", b_mat, ir::MemorySpace::Right)}));
  body.Store(c, out);
  auto kernel = testing::KernelFunction("mm", {a, b, out},
                                        {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                                        std::move(body.stmts), out);
  auto program = std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "mm");
  auto after = testing::RunOk({AutoTileMatmulL0()}, program);
  ASSERT_TRUE(after);
  EXPECT_EQ(ir::PrintProgram(*after), ir::PrintProgram(*program));
}

TEST(AutoTileMatmulL0, RequiresMatmulOperandsInLeftAndRight) {
  auto result = testing::RunPipeline({AutoTileMatmulL0()}, MatmulKernel(256, 128, 256, /*moved=*/false));
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message, ::testing::HasSubstr("TileMemoryInferred"));
  EXPECT_THAT(result.error().message,
              ::testing::HasSubstr("tile.matmul reads pl.Tile[[256, 128], pl.FP32, pl.Mem.Mat]"));
}

// MatmulKernel(256, 128, 256) with the call of statement `index` rebuilt with no arguments, as only
// hand-built IR (or a JSON document, which the reader now refuses) can hold.
ir::ProgramPtr WithArgumentsDropped(size_t index) {
  auto program = MatmulKernel(256, 128, 256);
  const auto& kernel = program->functions()[0];
  auto stmts = kernel->body()->As<ir::SeqStmts>()->stmts();
  const ir::Call* call = nullptr;
  if (const auto* assign = stmts[index]->As<ir::AssignStmt>()) call = assign->value()->As<ir::Call>();
  if (const auto* eval = stmts[index]->As<ir::EvalStmt>()) call = eval->expr()->As<ir::Call>();
  auto bare = std::make_shared<ir::Call>(call->op(), std::vector<ir::ExprPtr>{}, call->kwargs(), call->type(),
                                         call->span());
  if (const auto* assign = stmts[index]->As<ir::AssignStmt>())
    stmts[index] = std::make_shared<ir::AssignStmt>(assign->var(), bare, assign->span());
  else
    stmts[index] = std::make_shared<ir::EvalStmt>(bare, stmts[index]->span());
  return std::make_shared<ir::Program>(
      "p", std::vector<ir::FunctionPtr>{kernel->WithBody(std::make_shared<ir::SeqStmts>(std::move(stmts)))}, "mm");
}

TEST(AutoTileMatmulL0, ACallWithTooFewArgumentsIsReportedNotReadPastItsEnd) {
  const std::vector<std::pair<size_t, std::string>> cases = {
      {2, "'tile.move' takes 1 arguments (tile), got 0"},
      {4, "'tile.matmul' takes 2 arguments (lhs, rhs), got 0"},
      {5, "'tile.store' takes 3 to 4 arguments (tile, offsets, output_tensor, shapes), got 0"}};
  for (const auto& [index, message] : cases) {
    for (bool verify : {false, true}) {
      PassManager manager(PassManagerOptions{.verify = verify});
      manager.Add(AutoTileMatmulL0());
      auto result = manager.Run(WithArgumentsDropped(index), PassContext{});
      ASSERT_FALSE(result) << message;
      EXPECT_EQ(result.error().message, message);
    }
  }
}

}  // namespace
}  // namespace pypto::passes
