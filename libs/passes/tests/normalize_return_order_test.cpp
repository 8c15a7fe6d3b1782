// NormalizeReturnOrder: a kernel returns its output parameter itself, whatever alias of it the
// program wrote; a return that is no output parameter is refused at the return.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Ints;
using testing::Op;

// k(a, out): `r = pl.tile.store(t, [0, 0], out); return <returned(a, r)>`, called by an orchestration.
ir::ProgramPtr StoreResultProgram(bool return_input = false) {
  auto a = testing::Tensor("a", {16, 16}), out = testing::Tensor("out", {16, 16});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})});
  auto t = testing::Local("t", load);
  auto store = Op("tile.store", {t, Ints({0, 0}), out});
  auto r = testing::Local("r", store);
  auto kernel = testing::KernelFunction("k", {a, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                                        {testing::Assign(t, load), testing::Assign(r, store)}, return_input ? a : r);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  std::vector<ir::StmtPtr> body;
  auto y1 = testing::CallKernel(kernel, {x, y}, "y_1", body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{y1}));
  auto entry = std::make_shared<ir::Function>(
      "orch", std::vector<ir::VarPtr>{x, y}, std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{y->type()}, std::make_shared<ir::SeqStmts>(std::move(body)),
      ir::FunctionType::Orchestration);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, entry}, "orch");
}

TEST(NormalizeReturnOrder, TheResultOfAStoreBecomesTheParameter) {
  auto program = testing::RunOk({NormalizeReturnOrder()}, StoreResultProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("k")),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> "
            "pl.Tensor[[16, 16], pl.FP32]:\n"
            "    t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "    r: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [0, 0], out)\n"
            "    return out\n");
}

TEST(NormalizeReturnOrder, AnExplicitReturnIsKept) {
  auto input = testing::TileAddProgram(16, 16);
  auto outlined = testing::RunOk({OutlineIncoreScopes()}, input);
  ASSERT_TRUE(outlined);
  auto program = testing::RunOk({NormalizeReturnOrder()}, outlined);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("tile_add_incore_0"), outlined->Find("tile_add_incore_0"));
}

TEST(NormalizeReturnOrder, ReturningAnInputIsRefused) {
  auto result = testing::RunPipeline({NormalizeReturnOrder()}, StoreResultProgram(/*return_input=*/true));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "'k' returns a value that is none of its pl.Out / pl.InOut parameters");
}

TEST(ReturnParamsExplicit, VerifierRejectsAReturnedAlias) {
  auto holds = VerifyProperty(IRProperty::ReturnParamsExplicit, *StoreResultProgram());
  ASSERT_FALSE(holds);
  EXPECT_EQ(holds.error().message,
            "property ReturnParamsExplicit does not hold in function 'k': it returns r, which is none of its "
            "pl.Out / pl.InOut parameters");
}

}  // namespace
}  // namespace pypto::passes
