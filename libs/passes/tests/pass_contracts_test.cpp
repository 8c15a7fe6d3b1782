// Every pass of the default pipeline, held to its contract: run alone on an input that lacks one of
// the properties it requires, it is refused with that property's verifier message; and stepping the
// pipeline one pass at a time over a small program gives the exact printed IR after each pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Ints;
using testing::Op;

// f(a, c): tile.store(tile.add(tile.load(a), tile.load(a)), c), with no scope: calls nest.
ir::ProgramPtr NestedCallsProgram() {
  auto a = testing::Tensor("a", {16, 16}), c = testing::Tensor("c", {16, 16});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})});
  auto store = Op("tile.store", {Op("tile.add", {load, load}), Ints({0, 0}), c});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{std::make_shared<ir::EvalStmt>(store)});
  auto f = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{a, c}, std::vector<ir::ParamDirection>{},
                                          std::vector<ir::TypePtr>{}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{f}, "f");
}

// An InCore kernel whose matmul reads tiles still in Vec: no scope left, placement not inferred.
ir::ProgramPtr UnplacedMatmulProgram() {
  auto a = testing::Tensor("a", {16, 16}), b = testing::Tensor("b", {16, 16}), c = testing::Tensor("c", {16, 16});
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, 3);
  auto load_b = Op("tile.load", {b, Ints({0, 0}), Ints({16, 16})}, 4);
  auto tile_a = testing::Local("tile_a", load_a), tile_b = testing::Local("tile_b", load_b);
  auto product = Op("tile.matmul", {tile_a, tile_b}, 5);
  auto acc = testing::Local("acc", product);
  auto store = Op("tile.store", {acc, Ints({0, 0}), c}, 6);
  auto kernel = testing::KernelFunction(
      "k", {a, b, c}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
      {testing::Assign(tile_a, load_a), testing::Assign(tile_b, load_b), testing::Assign(acc, product),
       std::make_shared<ir::EvalStmt>(store, store->span())},
      c);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

// f(a): for i in pl.range(4): if i == 1: break (nothing else: no calls, scopes or kernels).
ir::ProgramPtr BreakingLoopProgram() {
  auto a = testing::Tensor("a", {16, 16});
  auto i = testing::LoopVar("i", 2);
  auto jump = std::make_shared<ir::BreakStmt>(std::vector<ir::ExprPtr>{}, ir::Span{"k.py", 4, 13});
  auto branch = std::make_shared<ir::IfStmt>(testing::Binary(ir::BinaryOp::Eq, i, testing::Index(1)),
                                             std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{jump}), nullptr,
                                             std::vector<ir::VarPtr>{});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
      testing::Loop(i, testing::Index(0), testing::Index(4), testing::Index(1), {branch})});
  auto f = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{a}, std::vector<ir::ParamDirection>{},
                                          std::vector<ir::TypePtr>{}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{f}, "f");
}

// f(a): t = tile.load(a); t = tile.exp(t): `t` is assigned twice.
ir::ProgramPtr RedefiningProgram() {
  auto a = testing::Tensor("a", {16, 16});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, 3);
  auto t = testing::Local("t", load);
  auto exp = Op("tile.exp", {t}, 4);
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{testing::Assign(t, load), testing::Assign(t, exp)});
  auto f = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{a}, std::vector<ir::ParamDirection>{},
                                          std::vector<ir::TypePtr>{}, body, ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{f}, "f");
}

ir::ProgramPtr RunPasses(const std::vector<std::string>& names, ir::ProgramPtr program) {
  auto manager = PipelineOf(names, {.verify = true});
  EXPECT_TRUE(manager) << manager.error().str();
  auto result = manager->Run(std::move(program), PassContext{});
  EXPECT_TRUE(result) << result.error().str();
  return result ? *result : nullptr;
}

// k(a, out) returns the result of its store, not `out`; orch(x, y) calls it.
ir::ProgramPtr ReturnedAliasProgram() {
  auto a = testing::Tensor("a", {16, 16}), out = testing::Tensor("out", {16, 16});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})});
  auto t = testing::Local("t", load);
  auto store = Op("tile.store", {t, Ints({0, 0}), out});
  auto r = testing::Local("r", store);
  auto kernel = testing::KernelFunction("k", {a, out}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                                        {testing::Assign(t, load), testing::Assign(r, store)}, r);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  std::vector<ir::StmtPtr> stmts;
  auto y1 = testing::CallKernel(kernel, {x, y}, "y_1", stmts);
  stmts.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{y1}));
  auto body = std::make_shared<ir::SeqStmts>(std::move(stmts));
  auto entry = std::make_shared<ir::Function>(
      "orch", std::vector<ir::VarPtr>{x, y}, std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{y->type()}, body, ir::FunctionType::Orchestration);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, entry}, "orch");
}

// For each property: a program lacking it (and holding the others a pass may require with it), and
// the verifier's reason, which the refusal quotes.
struct Lacking {
  ir::ProgramPtr program;
  std::string reason;
};

std::map<IRProperty, Lacking> ProgramsLackingEachProperty() {
  return {
      {IRProperty::SSAForm,
       {RedefiningProgram(), "property SSAForm does not hold in function 'f': variable 't' is defined twice"}},
      {IRProperty::NoNestedCalls,
       {NestedCallsProgram(), "property NoNestedCalls does not hold in function 'f': a call has another call as "
                              "an argument"}},
      {IRProperty::NoInCoreScopes,
       {testing::TileAddProgram(16, 16), "property NoInCoreScopes does not hold in function 'tile_add': a pl.at "
                                         "scope is not outlined"}},
      {IRProperty::TileMemoryInferred,
       {UnplacedMatmulProgram(), "property TileMemoryInferred does not hold in function 'k': tile.matmul reads "
                                 "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] where the cube reads Left"}},
      {IRProperty::StructuredCtrlFlow,
       {BreakingLoopProgram(), "property StructuredCtrlFlow does not hold in function 'f': a 'break' is left"}},
      {IRProperty::CoreTypesResolved,
       {RunPasses({"OutlineIncoreScopes"}, testing::TileAddProgram(16, 16)),
        "property CoreTypesResolved does not hold in function 'tile_add_incore_0': the kernel is still InCore"}},
      {IRProperty::CallDirectionsDerived,
       {RunPasses({"OutlineIncoreScopes"}, testing::TileAddProgram(16, 16)),
        "property CallDirectionsDerived does not hold in function 'tile_add': a call has no direction for each "
        "argument"}},
      {IRProperty::ReturnParamsExplicit,
       {ReturnedAliasProgram(), "property ReturnParamsExplicit does not hold in function 'k': it returns r, which is "
                                "none of its pl.Out / pl.InOut parameters"}},
  };
}

TEST(PassContracts, EachPassIsRefusedAnInputLackingAPropertyItRequires) {
  const auto lacking = ProgramsLackingEachProperty();
  size_t checked = 0;
  const PassManager pipeline = DefaultPipeline();  // outlives the loop over its passes
  for (const auto& pass : pipeline.passes()) {
    for (IRProperty property : pass.required().items()) {
      SCOPED_TRACE(pass.name() + " requires " + std::string(IRPropertyName(property)));
      auto input = lacking.find(property);
      ASSERT_NE(input, lacking.end()) << "no test input lacks this property: add one above";
      PassManager manager;
      manager.Add(pass);
      auto result = manager.Run(input->second.program, PassContext{});
      ASSERT_FALSE(result);
      EXPECT_EQ(result.error().message, fmt::format("pass {} requires {}: {}", pass.name(), IRPropertyName(property),
                                                    input->second.reason));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 28u);  // the pipeline's (pass, required property) pairs; see pypto-opt --list-passes
}

// The pipeline stepped one pass at a time over a 16x16 add: what each pass changes, in full.
class PipelineStep : public ::testing::Test {
 protected:
  // The printed program after running the default pipeline up to and including `last`.
  static std::string After(const std::string& last) {
    std::vector<std::string> names;
    const PassManager pipeline = DefaultPipeline();
    for (const auto& pass : pipeline.passes()) {
      names.push_back(pass.name());
      if (pass.name() == last) break;
    }
    auto program = RunPasses(names, testing::TileAddProgram(16, 16));
    return program ? ir::PrintProgram(*program) : "";
  }
};

// The printed 16x16 add program with the kernel's type, its three tile types (memory annotations
// included) and what the orchestration's call carries after its arguments.
std::string AddProgram(const std::string& kernel_type, const std::string& tile_a, const std::string& tile_b,
                       const std::string& tile_c, const std::string& call_attrs = "", bool scoped = false) {
  const std::string signature =
      "(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], "
      "c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n";
  return "@pl.program\nclass _jit_tile_add:\n"
         "    @pl.function(type=pl.FunctionType." + kernel_type + ")\n"
         "    def tile_add_incore_0" + signature +
         "        tile_a: " + tile_a + " = pl.tile.load(a, [0, 0], [16, 16])\n"
         "        tile_b: " + tile_b + " = pl.tile.load(b, [0, 0], [16, 16])\n"
         "        tile_c: " + tile_c + " = pl.tile.add(tile_a, tile_b)\n"
         "        pl.tile.store(tile_c, [0, 0], c)\n"
         "        return c\n"
         "\n"
         "    @pl.function(type=pl.FunctionType.Orchestration)\n"
         "    def tile_add" + signature +
         + (scoped ? "        with pl.scope():\n    " : "") +
         "        c_1: pl.Tensor[[16, 16], pl.FP32] = self.tile_add_incore_0(a, b, c" + call_attrs + ")\n"
         "        return c_1\n";
}

const std::string kVecTile = "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]";

// The add's tiles are 2-D already: nothing to merge.
TEST_F(PipelineStep, FlattenTileNdTo2DLeavesA2DKernelAsItIs) {
  EXPECT_EQ(After("FlattenTileNdTo2D"), After("OutlineIncoreScopes"));
}

TEST_F(PipelineStep, InferTileMemorySpaceLeavesAVectorKernelInVec) {
  EXPECT_EQ(After("InferTileMemorySpace"), AddProgram("InCore", kVecTile, kVecTile, kVecTile));
}

TEST_F(PipelineStep, ExpandMixedKernelMakesTheVectorKernelAnAivFunction) {
  EXPECT_EQ(After("ExpandMixedKernel"), AddProgram("AIV", kVecTile, kVecTile, kVecTile));
}

// 1024 bytes a tile; the sum takes the buffer of its first operand, which dies at the add.
TEST_F(PipelineStep, AllocateMemoryAddrGivesEveryTileAnAddressInUb) {
  EXPECT_EQ(After("AllocateMemoryAddr"),
            AddProgram("AIV", "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]"));
}

// Outlining already returns the output parameter itself: nothing to change.
TEST_F(PipelineStep, NormalizeReturnOrderKeepsTheReturnedParameter) {
  EXPECT_EQ(After("NormalizeReturnOrder"), AddProgram("AIV", kVecTile, kVecTile, kVecTile));
}

TEST_F(PipelineStep, MaterializeRuntimeScopesWrapsTheOrchestrationBody) {
  EXPECT_EQ(After("MaterializeRuntimeScopes"),
            AddProgram("AIV", "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]",
                       ", attrs={\"arg_directions\": [\"Input\", \"Input\", \"OutputExisting\"]}", /*scoped=*/true));
}

// The add carries nothing through a loop: nothing to classify.
TEST_F(PipelineStep, ClassifyIterArgCarryLeavesALoopFreeOrchestration) {
  EXPECT_EQ(After("ClassifyIterArgCarry"), After("MaterializeRuntimeScopes"));
}

TEST_F(PipelineStep, DeriveCallDirectionsAnnotatesTheKernelCall) {
  EXPECT_EQ(After("DeriveCallDirections"),
            AddProgram("AIV", "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec]",
                       "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec]",
                       ", attrs={\"arg_directions\": [\"Input\", \"Input\", \"OutputExisting\"]}"));
}

}  // namespace
}  // namespace pypto::passes
