// LegalizeTileCast on small hand-built kernels: the chains it writes for casts the vector core lacks
// (printed IR), the casts it leaves alone, and its error for a cast no chain reaches.
#include <gtest/gtest.h>

#include "pypto/ir/native_casts.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using ir::DataType;
using testing::Ints;

// y = cast(load(x), to, mode="round"), over [16, 32] tiles.
ir::ProgramPtr CastKernel(DataType from, DataType to) {
  auto x = testing::Tensor("x", {16, 32}, from), y = testing::Tensor("y", {16, 32}, to);
  auto load = testing::Op("tile.load", {x, Ints({0, 0}), Ints({16, 32})}, 2);
  auto t = testing::Local("t", load);
  auto cast = testing::OpWithKwargs("tile.cast", {t}, {{"target_type", to}, {"mode", std::string("round")}}, 3);
  auto c = testing::Local("c", cast);
  auto store = testing::Op("tile.store", {c, Ints({0, 0}), y}, 4);
  auto kernel = testing::KernelFunction(
      "k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
      {testing::Assign(t, load), testing::Assign(c, cast), std::make_shared<ir::EvalStmt>(store)}, y);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

ir::Result<ir::ProgramPtr> Legalize(const ir::ProgramPtr& program, const ir::SocSpec& soc) {
  auto manager = PipelineOf({"FlattenCallExpr", "OutlineIncoreScopes", "LegalizeTileCast"}, {.verify = true});
  if (!manager) return pypto::unexpected(manager.error());
  return manager->Run(program, PassContext{.soc = &soc});
}

// The kernel body's cast lines as printed.
std::vector<std::string> CastLines(const ir::Program& program) {
  std::vector<std::string> lines;
  std::string text = ir::PrintProgram(program);
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = text.substr(start, end - start);
    if (line.find("pl.tile.cast(") != std::string::npos) lines.push_back(line.substr(line.find_first_not_of(' ')));
  }
  return lines;
}

TEST(LegalizeTileCast, Fp32ToInt8OnAscend910BGoesThroughFp16WithTheCastsMode) {
  auto legal = Legalize(CastKernel(DataType::FP32, DataType::INT8), ir::Ascend910B());
  ASSERT_TRUE(legal) << legal.error().str();
  EXPECT_EQ(CastLines(**legal),
            (std::vector<std::string>{
                "c_fp16: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.cast(t, target_type=pl.FP16, mode=\"round\")",
                "c: pl.Tile[[16, 32], pl.INT8, pl.Mem.Vec] = pl.tile.cast(c_fp16, target_type=pl.INT8, mode=\"round\")",
            }));
}

TEST(LegalizeTileCast, AnIntegerBecomesTheFloatOfItsWidthBeforeTheWidthChanges) {
  // On Ascend950 INT32 -> FP16 has two chains of two hops; the one through FP32 is taken.
  auto legal = Legalize(CastKernel(DataType::INT32, DataType::FP16), ir::Ascend950());
  ASSERT_TRUE(legal) << legal.error().str();
  auto lines = CastLines(**legal);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].substr(0, lines[0].find(" =")), "c_fp32: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
}

TEST(LegalizeTileCast, NativeCastsAreLeftAsTheyAre) {
  for (auto [from, to] : {std::pair{DataType::FP32, DataType::FP16}, std::pair{DataType::INT8, DataType::FP16}}) {
    ASSERT_TRUE(ir::IsNativeCast(ir::Ascend910B(), from, to));
    auto legal = Legalize(CastKernel(from, to), ir::Ascend910B());
    ASSERT_TRUE(legal) << legal.error().str();
    EXPECT_EQ(CastLines(**legal).size(), 1u);
  }
}

TEST(LegalizeTileCast, FloatWidthChangesGoThroughFp32OnAscend910B) {
  auto legal = Legalize(CastKernel(DataType::FP16, DataType::BF16), ir::Ascend910B());
  ASSERT_TRUE(legal) << legal.error().str();
  auto lines = CastLines(**legal);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("target_type=pl.FP32"), std::string::npos) << lines[0];
}

TEST(LegalizeTileCast, ACastThatOnlyALossyChainReachesIsAnErrorAtTheCast) {
  // INT8 -> FP32 on Ascend910B: INT8 converts only to FP16, which cannot hold every FP32 value.
  auto legal = Legalize(CastKernel(DataType::INT8, DataType::FP32), ir::Ascend910B());
  ASSERT_FALSE(legal);
  EXPECT_EQ(legal.error().str(),
            "k.py:3:9: error: Ascend910B cannot convert INT8 to FP32: no chain of its native conversions gets "
            "there without losing values\n"
            "  help: Ascend910B converts INT8 to FP16 directly");
}

TEST(LegalizeTileCast, ADtypeTheVectorCoreNeverConvertsIsNamed) {
  auto legal = Legalize(CastKernel(DataType::UINT16, DataType::FP32), ir::Ascend910B());
  ASSERT_FALSE(legal);
  EXPECT_EQ(legal.error().hint, "Ascend910B converts no UINT16 tile");
}

TEST(LegalizeTileCast, RequiresOutlinedKernels) {
  PassManager manager(PassManagerOptions{.verify = true});
  manager.Add(LegalizeTileCast());
  auto program = testing::TileAddProgram();
  auto legal = manager.Run(program, PassContext{});
  ASSERT_FALSE(legal);
  EXPECT_NE(legal.error().message.find("pass LegalizeTileCast requires"), std::string::npos) << legal.error().str();
}

}  // namespace
}  // namespace pypto::passes
