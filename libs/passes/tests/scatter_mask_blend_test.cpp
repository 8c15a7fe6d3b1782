// ScatterMaskBlend through the whole pipeline: a mask scatter into a loaded tile becomes a scatter
// into zeros blended with that tile by a select, every new tile placed by AllocateMemoryAddr; a
// scatter into a tile.full of zero is left as it is.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "kernel_builder.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using ir::DataType;
using testing::Ints;

// def k(x, z, y):
//     d = pl.load(x, [0, 0], [8, 16])  |  d = pl.full([8, 16], dtype, 0.0)   # line 2
//     s = pl.load(z, [0, 0], [8, 8])                                        # line 3
//     r = pl.tile.scatter_mask(d, s, mask_pattern=P0101)                     # line 4
//     pl.store(r, [0, 0], y)                                                 # line 5
ir::ProgramPtr ScatterKernel(bool into_zeros, DataType dtype = DataType::FP32) {
  testing::KernelBuilder k;
  auto x = testing::Tensor("x", {8, 16}, dtype), z = testing::Tensor("z", {8, 8}, dtype);
  auto y = testing::Tensor("y", {8, 16}, dtype);
  auto d = into_zeros ? k.Let("d", testing::OpWithKwargs(
                                       "tile.full", {Ints({8, 16}), std::make_shared<ir::ConstFloat>(0.0, dtype)},
                                       {{"dtype", dtype}}, 2))
                      : k.Load("d", x, 0, 0, 8, 16, 2);
  auto s = k.Load("s", z, 0, 0, 8, 8, 3);
  auto r = k.Let("r", testing::OpWithKwargs("tile.scatter_mask", {d, s}, {{"mask_pattern", int64_t{1}}}, 4));
  k.Eval(testing::Op("tile.store", {r, Ints({0, 0}), y}, 5));
  return k.Program({x, z, y}, y);
}

// The printed statements of the kernel from the scatter's line on, without their types.
std::vector<std::string> BlendLines(const ir::Program& program) {
  std::vector<std::string> lines;
  const std::string text = ir::PrintProgram(program);
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = text.substr(start, end - start);
    const size_t name = line.find_first_not_of(' ');
    const size_t colon = line.find(": pl.Tile[");
    const size_t eq = line.find(" = pl.tile.");
    if (name == std::string::npos || colon == std::string::npos || eq == std::string::npos) continue;
    if (line.find("pl.tile.load(") != std::string::npos) continue;
    lines.push_back(line.substr(name, colon - name) + line.substr(eq));
  }
  return lines;
}

TEST(ScatterMaskBlend, AScatterIntoALoadedTileIsBlendedWithIt) {
  auto lowered = Lower(ScatterKernel(false), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(BlendLines(**lowered),
            (std::vector<std::string>{
                "r_lanes_zero = pl.tile.full([8, 16], dtype=pl.FP32, value=0.0)",
                "r_lanes = pl.tile.scatter_mask(r_lanes_zero, s, mask_pattern=1)",
                "r_ones = pl.tile.full([8, 8], dtype=pl.FP32, value=1.0)",
                "r_mask_zero = pl.tile.full([8, 16], dtype=pl.FP32, value=0.0)",
                "r_mask = pl.tile.scatter_mask(r_mask_zero, r_ones, mask_pattern=1)",
                "r_pred = pl.tile.cmps(r_mask, 0.0, cmp_type=1)",
                "r_sel_tmp = pl.tile.create([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)",
                "r = pl.tile.sel(r_pred, r_lanes, d, r_sel_tmp)",
            }))
      << ir::PrintProgram(**lowered);
  // Every tile of the blend has its address.
  EXPECT_EQ(ir::PrintProgram(**lowered).find("pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec]"), std::string::npos);
}

// A 16-bit destination marks its lanes in FP16, a compare of floats whatever the tile holds.
TEST(ScatterMaskBlend, ABf16ScatterMarksItsLanesInFp16) {
  auto lowered = Lower(ScatterKernel(false, DataType::BF16), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  const auto lines = BlendLines(**lowered);
  ASSERT_EQ(lines.size(), 8u) << ir::PrintProgram(**lowered);
  EXPECT_EQ(lines[0], "r_lanes_zero = pl.tile.full([8, 16], dtype=pl.BF16, value=0.0)");
  EXPECT_EQ(lines[2], "r_ones = pl.tile.full([8, 8], dtype=pl.FP16, value=1.0)");
}

TEST(ScatterMaskBlend, AScatterIntoZerosIsKept) {
  auto lowered = Lower(ScatterKernel(true), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(BlendLines(**lowered), (std::vector<std::string>{
                                       "d = pl.tile.full([8, 16], dtype=pl.FP32, value=0.0)",
                                       "r = pl.tile.scatter_mask(d, s, mask_pattern=1)",
                                   }))
      << ir::PrintProgram(**lowered);
}

}  // namespace
}  // namespace pypto::passes
