// An entry that calls kernels defined as functions of their own (upstream's `@pl.jit.incore` kernels
// called from a `@pl.jit` entry), with pl.create_tensor intermediates and scalar literals.
#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::RunOk;
using testing::RunPipeline;

TEST(OutlineIncoreScopes, EntryCallingKernelsBecomesOrchestration) {
  auto original = testing::VectorDagProgram();
  auto program = RunOk({OutlineIncoreScopes()}, original);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("vector_dag")->type(), ir::FunctionType::Orchestration);
  // Nothing is outlined: the kernels stay as they are, in order.
  ASSERT_EQ(program->functions().size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(program->functions()[i], original->functions()[i]);
  EXPECT_EQ(program->Find("kernel_add_scalar")->type(), ir::FunctionType::InCore);
}

TEST(OutlineIncoreScopes, OpaqueFunctionWithoutKernelCallsStaysOpaque) {
  std::vector<ir::StmtPtr> body;
  auto t = testing::CreateTensor("t", 16, 16, body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{t}));
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{}, std::vector<ir::ParamDirection>{},
                                           std::vector<ir::TypePtr>{t->type()},
                                           std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  auto program = RunOk({OutlineIncoreScopes()}, std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("f")->type(), ir::FunctionType::Opaque);
}

// `s = pl.read(scales, [2])` in orchestration code, used only inside a region: the kernel reads it
// itself (scales becomes its parameter) and the orchestration keeps no read.
TEST(OutlineIncoreScopes, AnOrchestrationReadUsedByARegionIsReadByItsKernel) {
  using namespace ir;
  auto x = testing::Tensor("x", {16, 16}), scales = testing::Tensor("scales", {4}), y = testing::Tensor("y", {16, 16});
  auto read = testing::Op("tensor.read", {scales, testing::Ints({2})});
  auto s = testing::Local("s", read);
  auto load = testing::Op("tile.load", {x, testing::Ints({0, 0}), testing::Ints({16, 16})});
  auto t = testing::Local("t", load);
  auto scaled = testing::Op("tile.muls", {t, s});
  auto u = testing::Local("u", scaled);
  auto store = testing::Op("tile.store", {u, testing::Ints({0, 0}), y});
  auto region = std::make_shared<InCoreScopeStmt>(
      "scale", std::make_shared<SeqStmts>(std::vector<StmtPtr>{testing::Assign(t, load), testing::Assign(u, scaled),
                                                               std::make_shared<EvalStmt>(store)}));
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(s, read), region, std::make_shared<ReturnStmt>(std::vector<ExprPtr>{y})});
  auto f = std::make_shared<Function>("f", std::vector<VarPtr>{x, scales, y},
                                      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In,
                                                                  ParamDirection::Out},
                                      std::vector<TypePtr>{y->type()}, body, FunctionType::Opaque);
  auto program = RunOk({OutlineIncoreScopes()}, std::make_shared<Program>("p", std::vector<FunctionPtr>{f}, "f"));
  ASSERT_TRUE(program);
  EXPECT_EQ(PrintFunction(*program->Find("scale")),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def scale(self, scales: pl.Tensor[[4], pl.FP32], x: pl.Tensor[[16, 16], pl.FP32], y: "
            "pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    s: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [2])\n"
            "    t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])\n"
            "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(t, s)\n"
            "    pl.tile.store(u, [0, 0], y)\n"
            "    return y\n");
  EXPECT_EQ(PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def f(self, x: pl.Tensor[[16, 16], pl.FP32], scales: pl.Tensor[[4], pl.FP32], y: "
            "pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    y_1: pl.Tensor[[16, 16], pl.FP32] = self.scale(scales, x, y)\n"
            "    return y_1\n");
}

TEST(DefaultPipeline, VectorDagLowers) {
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes(), ExpandMixedKernel(), AllocateMemoryAddr(),
                        DeriveCallDirections()},
                       testing::VectorDagProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("kernel_add")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("kernel_add_scalar")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("kernel_mul")->type(), ir::FunctionType::AIV);
  // The literals as the printer spells them (the printer's concern, not this pass's).
  const std::string one = ir::PrintExpr(std::make_shared<ir::ConstFloat>(1.0, ir::DataType::FP32));
  const std::string two = ir::PrintExpr(std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32));
  EXPECT_EQ(
      ir::PrintFunction(*program->Find("vector_dag")),
      std::string("@pl.function(type=pl.FunctionType.Orchestration)\n") +
      "def vector_dag(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], "
      "f: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
      "    c: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    c_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add(a, b, c, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    d: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    d_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add_scalar(c_1, " + one + ", d, attrs={\"arg_directions\": "
      "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
      "    e: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    e_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add_scalar(c_1, " + two + ", e, attrs={\"arg_directions\": "
      "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
      "    g: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    g_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_mul(d_1, e_1, g, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    f_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add(g_1, c_1, f, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    return f_1\n");
}

TEST(DeriveCallDirections, ScalarArgumentsGetScalar) {
  auto program = RunOk({OutlineIncoreScopes(), DeriveCallDirections()}, testing::VectorDagProgram());
  ASSERT_TRUE(program);
  std::vector<std::vector<ir::ArgDirection>> seen;
  for (const auto& stmt : ir::FlattenStmts(program->Find("vector_dag")->body()))
    if (const auto* assign = stmt->As<ir::AssignStmt>())
      if (const auto* call = assign->value()->As<ir::Call>(); call && !call->is_op_call())
        seen.push_back(call->arg_directions());
  using D = ir::ArgDirection;
  EXPECT_EQ(seen, (std::vector<std::vector<D>>{{D::Input, D::Input, D::OutputExisting},
                                               {D::Input, D::Scalar, D::OutputExisting},
                                               {D::Input, D::Scalar, D::OutputExisting},
                                               {D::Input, D::Input, D::OutputExisting},
                                               {D::Input, D::Input, D::OutputExisting}}));
}

// The entry `orch(x, y)` calling `kernel` with the given arguments.
ir::ProgramPtr CallWith(const ir::FunctionPtr& kernel, const std::vector<ir::VarPtr>& params,
                        std::vector<ir::ExprPtr> args) {
  std::vector<ir::StmtPtr> body;
  auto call = std::make_shared<ir::Call>(kernel->name(), std::move(args), kernel->return_types()[0],
                                         ir::Span{"k.py", 7, 5});
  body.push_back(std::make_shared<ir::EvalStmt>(call, call->span()));
  std::vector<ir::ParamDirection> directions(params.size(), ir::ParamDirection::In);
  auto entry = std::make_shared<ir::Function>("orch", params, directions, std::vector<ir::TypePtr>{},
                                              std::make_shared<ir::SeqStmts>(std::move(body)),
                                              ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, entry}, "orch");
}

TEST(DeriveCallDirections, ArgumentCountMustMatch) {
  auto kernel = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  auto result = RunPipeline({OutlineIncoreScopes(), DeriveCallDirections()}, CallWith(kernel, {x, y}, {x, y}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "the call to 'kernel_add_scalar' passes 2 arguments, but it takes 3");
  EXPECT_EQ(result.error().span.line, 7);
}

TEST(DeriveCallDirections, TensorForScalarParameterIsRefused) {
  auto kernel = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  auto result = RunPipeline({OutlineIncoreScopes(), DeriveCallDirections()}, CallWith(kernel, {x, y}, {x, x, y}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "argument 1 of the call to 'kernel_add_scalar' is pl.Tensor[[16, 16], pl.FP32], but parameter 'scalar' "
            "is pl.Scalar[pl.FP32]");
}

TEST(DeriveCallDirections, ScalarForTensorParameterIsRefused) {
  auto kernel = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto y = testing::Tensor("y", {16, 16});
  auto one = std::make_shared<ir::ConstFloat>(1.0, ir::DataType::FP32);
  auto result = RunPipeline({OutlineIncoreScopes(), DeriveCallDirections()}, CallWith(kernel, {y}, {one, one, y}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "argument 0 of the call to 'kernel_add_scalar' is pl.Scalar[pl.FP32], but parameter 'a' is "
            "pl.Tensor[[16, 16], pl.FP32]");
}

TEST(DeriveCallDirections, AnInParameterAKernelWritesIsPromoted) {
  // kernel_add_scalar(a, scalar, out) writes its third argument: the entry's y, declared In.
  auto kernel = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  auto two = std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32);
  auto program = RunOk({OutlineIncoreScopes(), DeriveCallDirections()}, CallWith(kernel, {x, y}, {x, two, y}));
  ASSERT_TRUE(program);
  using P = ir::ParamDirection;
  EXPECT_EQ(program->Find("orch")->param_directions(), (std::vector<P>{P::In, P::Out}));
}

}  // namespace
}  // namespace pypto::passes
