#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

std::vector<ir::TileMemRef> TileAddresses(const ir::Program& program, const std::string& kernel) {
  std::vector<ir::TileMemRef> memrefs;
  for (const auto& stmt : ir::FlattenStmts(program.Find(kernel)->body()))
    if (const auto* assign = stmt->As<ir::AssignStmt>())
      if (const auto* tile = assign->var()->type()->As<ir::TileType>()) memrefs.push_back(*tile->memref());
  return memrefs;
}

TEST(AllocateMemoryAddr, SumReusesTheDeadOperandsBuffer) {
  auto lowered = Lower(testing::TileAddProgram(), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(TileAddresses(**lowered, "tile_add_incore_0"),
            (std::vector<ir::TileMemRef>{{0, 65536}, {65536, 65536}, {0, 65536}}));
}

TEST(AllocateMemoryAddr, KernelTooLargeForUbIsAnErrorNamingEverything) {
  // Two 256x96 f32 operands are 96 KB each: together more than the 184 KB of usable UB.
  auto lowered = Lower(testing::TileAddProgram(256, 96), PassContext{});
  ASSERT_FALSE(lowered);
  EXPECT_EQ(lowered.error().message,
            "kernel 'tile_add_incore_0' does not fit in Vec: tile 'tile_b' (pl.Tile[[256, 96], pl.FP32, pl.Mem.Vec]) "
            "needs 98304 bytes while 98304 bytes are in use, and Ascend910B has 188416 bytes");
  EXPECT_EQ(lowered.error().span.str(), "k.py:4:9");
}

TEST(AllocateMemoryAddr, LargerUbOfAscend950Fits) {
  auto lowered = Lower(testing::TileAddProgram(256, 96), PassContext{.soc = &ir::Ascend950()});
  ASSERT_TRUE(lowered) << lowered.error().str();
}

}  // namespace
}  // namespace pypto::passes
