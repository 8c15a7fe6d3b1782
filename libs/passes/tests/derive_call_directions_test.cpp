// DeriveCallDirections: each kernel call site gets the direction of each argument (Input,
// OutputExisting, Scalar) from the kernel's parameters, in straight-line orchestration code and in
// loops; a call whose arguments do not match the kernel's parameters is refused at the call.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::RunOk;
using testing::RunPipeline;

TEST(DeriveCallDirections, CallSiteCarriesDirections) {
  auto program = RunOk({OutlineIncoreScopes(), DeriveCallDirections()}, testing::TileAddProgram());
  auto text = ir::PrintFunction(*program->Find("tile_add"));
  EXPECT_NE(text.find("self.tile_add_incore_0(a, b, c, attrs={\"arg_directions\": [\"Input\", \"Input\", "
                      "\"OutputExisting\"]})"),
            std::string::npos)
      << text;
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
  // The entry declared y In: a device skips its copy-back, so the promotion is recorded with the
  // kernel writing it, for the warning and the simulators.
  const auto& attrs = program->Find("orch")->attrs();
  ASSERT_TRUE(attrs.contains(ir::DeclaredInAttr("y")));
  EXPECT_EQ(std::get<std::string>(attrs.at(ir::DeclaredInAttr("y"))), "kernel_add_scalar");
  EXPECT_FALSE(attrs.contains(ir::DeclaredInAttr("x")));
}

TEST(DeriveCallDirections, OnlyTheEntryRecordsADeclaredInput) {
  // The same call from a function that is not the program's entry promotes without a record: its
  // callers pass their own tensors, which the device copies back as they declare them.
  auto kernel = testing::AddScalarKernel("kernel_add_scalar", 16, 16);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  auto two = std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32);
  auto program = CallWith(kernel, {x, y}, {x, two, y});
  program = std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, program->Find("orch")}, "other");
  auto result = RunOk({OutlineIncoreScopes(), DeriveCallDirections()}, program);
  ASSERT_TRUE(result);
  using P = ir::ParamDirection;
  EXPECT_EQ(result->Find("orch")->param_directions(), (std::vector<P>{P::In, P::Out}));
  EXPECT_TRUE(result->Find("orch")->attrs().empty());
}

TEST(DeriveCallDirections, IndexScalarsInLoopsGetScalar) {
  auto program =
      RunOk({FlattenCallExpr(), OutlineIncoreScopes(), DeriveCallDirections()}, testing::HelloWorldProgram());
  ASSERT_TRUE(program);
  struct Calls final : ir::IRVisitor {
    std::vector<std::vector<ir::ArgDirection>> seen;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!call->is_op_call()) seen.push_back(call->arg_directions());
      ir::IRVisitor::VisitCall(call);
    }
  } calls;
  calls.VisitStmt(program->Find("hello_world")->body());
  using D = ir::ArgDirection;
  EXPECT_EQ(calls.seen, (std::vector<std::vector<D>>{{D::Input, D::Scalar, D::Scalar, D::OutputExisting}}));
}

}  // namespace
}  // namespace pypto::passes
