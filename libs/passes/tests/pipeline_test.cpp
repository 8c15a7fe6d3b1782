// Each pass of the default pipeline on the hello-world program, checked against the exact text.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

ir::ProgramPtr RunPasses(std::vector<Pass> passes, ir::ProgramPtr program) {
  PassManager manager(PassManagerOptions{.verify = true});
  for (auto& pass : passes) manager.Add(std::move(pass));
  auto result = manager.Run(std::move(program), PassContext{});
  EXPECT_TRUE(result) << result.error().str();
  return result ? *result : nullptr;
}

constexpr const char* kSignature =
    "(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], "
    "c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n";

TEST(OutlineIncoreScopes, RegionBecomesKernelAndParentOrchestration) {
  auto program = RunPasses({OutlineIncoreScopes()}, testing::TileAddProgram());
  ASSERT_TRUE(program);
  std::string expected = std::string("@pl.program\nclass _jit_tile_add:\n") +
                         "    @pl.function(type=pl.FunctionType.InCore)\n"
                         "    def tile_add_incore_0" + kSignature +
                         "        tile_a: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 128])\n"
                         "        tile_b: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [128, 128])\n"
                         "        tile_c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(tile_a, tile_b)\n"
                         "        pl.tile.store(tile_c, [0, 0], c)\n"
                         "        return c\n"
                         "\n"
                         "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                         "    def tile_add" + kSignature +
                         "        c_1: pl.Tensor[[128, 128], pl.FP32] = self.tile_add_incore_0(a, b, c)\n"
                         "        return c_1\n";
  EXPECT_EQ(ir::PrintProgram(*program), expected);
}

TEST(OutlineIncoreScopes, InferredDirections) {
  auto program = RunPasses({OutlineIncoreScopes()}, testing::TileAddProgram());
  auto kernel = program->Find("tile_add_incore_0");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->param_directions(),
            (std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out}));
}

TEST(ExpandMixedKernel, VectorKernelBecomesAiv) {
  auto program = RunPasses({OutlineIncoreScopes(), ExpandMixedKernel()}, testing::TileAddProgram());
  EXPECT_EQ(program->Find("tile_add_incore_0")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("tile_add")->type(), ir::FunctionType::Orchestration);
}

TEST(DeriveCallDirections, CallSiteCarriesDirections) {
  auto program = RunPasses({OutlineIncoreScopes(), DeriveCallDirections()}, testing::TileAddProgram());
  auto text = ir::PrintFunction(*program->Find("tile_add"));
  EXPECT_NE(text.find("self.tile_add_incore_0(a, b, c, attrs={\"arg_directions\": [\"Input\", \"Input\", "
                      "\"OutputExisting\"]})"),
            std::string::npos)
      << text;
}

TEST(FlattenCallExpr, NestedCallsBecomeTemporaries) {
  auto a = testing::Tensor("a", {16, 16}), c = testing::Tensor("c", {16, 16});
  auto load = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 16})});
  auto twice = testing::Op("tile.add", {load, load});
  auto store = testing::Op("tile.store", {twice, testing::Ints({0, 0}), c});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{std::make_shared<ir::EvalStmt>(store)});
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{a, c}, std::vector<ir::ParamDirection>{},
                                           std::vector<ir::TypePtr>{}, body, ir::FunctionType::Opaque);
  auto program = RunPasses({FlattenCallExpr()}, std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]):\n"
            "    __tmp_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "    __tmp_v1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "    __tmp_v2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(__tmp_v0, __tmp_v1)\n"
            "    pl.tile.store(__tmp_v2, [0, 0], c)\n");
  EXPECT_FALSE(VerifyProperty(IRProperty::NoNestedCalls, ir::Program("p", {fn}, "f")));
}

TEST(DefaultPipeline, PassOrder) {
  std::vector<std::string> names;
  auto pipeline = DefaultPipeline();
  for (const auto& pass : pipeline.passes()) names.push_back(pass.name());
  EXPECT_EQ(names, (std::vector<std::string>{"UnrollLoops", "CtrlFlowTransform", "FuseCreateAssembleToSlice",
                                             "FlattenCallExpr", "SplitMixedScopes", "OutlineIncoreScopes",
                                             "FlattenTileNdTo2D", "LegalizeTileCast", "InferTileMemorySpace", "AutoTileMatmulL0", "ExpandMixedKernel",
                                             "NormalizeReturnOrder", "AllocateMemoryAddr", "DeriveCallDirections",
                                             "MaterializeRuntimeScopes", "ClassifyIterArgCarry"}));
}

TEST(DefaultPipeline, DumpCallbackSeesEveryPass) {
  std::vector<std::string> seen;
  PassManagerOptions options{.verify = true, .after_pass = [&](int slot, const std::string& name, const ir::Program&) {
    seen.push_back(std::to_string(slot) + ":" + name);
  }};
  ASSERT_TRUE(Lower(testing::TileAddProgram(), PassContext{}, options));
  EXPECT_EQ(seen, (std::vector<std::string>{"1:UnrollLoops", "2:CtrlFlowTransform", "3:FuseCreateAssembleToSlice",
                                            "4:FlattenCallExpr", "5:SplitMixedScopes", "6:OutlineIncoreScopes",
                                            "7:FlattenTileNdTo2D", "8:LegalizeTileCast", "9:InferTileMemorySpace",
                                            "10:AutoTileMatmulL0", "11:ExpandMixedKernel", "12:NormalizeReturnOrder",
                                            "13:AllocateMemoryAddr", "14:DeriveCallDirections",
                                            "15:MaterializeRuntimeScopes", "16:ClassifyIterArgCarry"}));
}

}  // namespace
}  // namespace pypto::passes
