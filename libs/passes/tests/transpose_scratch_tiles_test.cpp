// TransposeScratchTiles through the whole pipeline: a transpose without a tmp_tile gets a scratch
// tile that AllocateMemoryAddr places among the kernel's tiles (printed IR with addresses), the
// program's own tmp_tile is kept, and a kernel with no room for the scratch does not fit.
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

// def k(x, y):
//     s = pl.load(x, [0, 0], [rows, cols])        # line 2
//     [w = pl.tile.create([rows, cols], FP32)]    # line 3, with_tmp
//     t = pl.transpose(s, 0, 1[, w])              # line 4
//     pl.store(t, [0, 0], y)                      # line 5
ir::ProgramPtr TransposeKernel(int64_t rows, int64_t cols, bool with_tmp = false) {
  auto x = testing::Tensor("x", {rows, cols}), y = testing::Tensor("y", {cols, rows});
  auto load = testing::Op("tile.load", {x, Ints({0, 0}), Ints({rows, cols})}, 2);
  auto s = testing::Local("s", load);
  std::vector<ir::StmtPtr> body = {testing::Assign(s, load)};
  std::vector<ir::ExprPtr> args = {s};
  if (with_tmp) {
    auto create = testing::OpWithKwargs("tile.create", {Ints({rows, cols})}, {{"dtype", DataType::FP32}}, 3);
    auto w = testing::Local("w", create);
    body.push_back(testing::Assign(w, create));
    args.push_back(w);
  }
  auto transpose =
      testing::OpWithKwargs("tile.transpose", args, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, 4);
  auto t = testing::Local("t", transpose);
  body.push_back(testing::Assign(t, transpose));
  body.push_back(std::make_shared<ir::EvalStmt>(testing::Op("tile.store", {t, Ints({0, 0}), y}, 5)));
  auto kernel = testing::KernelFunction("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out}, body, y);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

// The printed lines of the kernel's body that create or transpose a tile.
std::vector<std::string> TransposeLines(const ir::Program& program) {
  std::vector<std::string> lines;
  const std::string text = ir::PrintProgram(program);
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    if (line.find("pl.tile.create(") != std::string::npos || line.find("pl.tile.transpose(") != std::string::npos)
      lines.push_back(line.substr(line.find_first_not_of(' ')));
  }
  return lines;
}

TEST(TransposeScratchTiles, ATransposeGetsAScratchTileLikeItsSourcePlacedWithTheOthers) {
  auto lowered = Lower(TransposeKernel(16, 32), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(TransposeLines(**lowered),
            (std::vector<std::string>{
                "t_tmp: pl.Tile[[16, 32], pl.FP32, pl.MemRef(2048, 2048), pl.Mem.Vec] = "
                "pl.tile.create([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)",
                "t: pl.Tile[[32, 16], pl.FP32, pl.MemRef(4096, 2048), pl.Mem.Vec] = "
                "pl.tile.transpose(s, axis1=0, axis2=1, tmp_tile=t_tmp)",
            }))
      << ir::PrintProgram(**lowered);
}

TEST(TransposeScratchTiles, TheProgramsOwnTmpTileIsKept) {
  auto lowered = Lower(TransposeKernel(16, 32, /*with_tmp=*/true), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(TransposeLines(**lowered),
            (std::vector<std::string>{
                "w: pl.Tile[[16, 32], pl.FP32, pl.MemRef(2048, 2048), pl.Mem.Vec] = "
                "pl.tile.create([16, 32], dtype=pl.FP32)",
                "t: pl.Tile[[32, 16], pl.FP32, pl.MemRef(4096, 2048), pl.Mem.Vec] = "
                "pl.tile.transpose(s, axis1=0, axis2=1, tmp_tile=w)",
            }))
      << ir::PrintProgram(**lowered);
}

// def k(x, y, z):                                # x: [256, 160]
//     a = pl.load(x, [0, 0], [128, 160])           # 80 KB
//     b = pl.load(x, [128, 0], [128, 160])         # 80 KB: UB holds 160 KB here
//     pl.store(pl.add(a, b), [0, 0], z)
//     s = pl.load(x, [0, 0], [64, 128])            # 32 KB, where a was
//     pl.store(pl.transpose(s, 0, 1), [0, 0], y)
ir::ProgramPtr TransposeAfterAPeakKernel() {
  testing::KernelBuilder k;
  auto x = testing::Tensor("x", {256, 160}), z = testing::Tensor("z", {128, 160}), y = testing::Tensor("y", {128, 64});
  auto a = k.Load("a", x, 0, 0, 128, 160, 2);
  auto b = k.Load("b", x, 128, 0, 128, 160, 3);
  auto c = k.Let("c", testing::Op("tile.add", {a, b}, 4));
  k.Eval(testing::Op("tile.store", {c, Ints({0, 0}), z}, 4));
  auto s = k.Load("s", x, 0, 0, 64, 128, 5);
  auto t = k.Let("t", testing::OpWithKwargs("tile.transpose", {s}, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, 6));
  k.Eval(testing::Op("tile.store", {t, Ints({0, 0}), y}, 6));
  return k.Program({x, z, y}, y);
}

// The scratch is a tile like any other: it takes bytes free at the transpose (UB's peak was earlier),
// and is free again after it. Past every tile the kernel ever holds (160 KB) there would be no room.
TEST(TransposeScratchTiles, TheScratchTakesBytesFreeAtTheTranspose) {
  auto lowered = Lower(TransposeAfterAPeakKernel(), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(TransposeLines(**lowered),
            (std::vector<std::string>{
                "t_tmp: pl.Tile[[64, 128], pl.FP32, pl.MemRef(32768, 32768), pl.Mem.Vec] = "
                "pl.tile.create([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)",
                "t: pl.Tile[[128, 64], pl.FP32, pl.MemRef(65536, 32768), pl.Mem.Vec] = "
                "pl.tile.transpose(s, axis1=0, axis2=1, tmp_tile=t_tmp)",
            }))
      << ir::PrintProgram(**lowered);
}

// Source and result take 128 KB of the 184 KB of UB: with the 64 KB scratch the device's transpose
// also needs (placed first, beside the source) there is no room left for the result.
TEST(TransposeScratchTiles, AKernelWithNoRoomForTheScratchDoesNotFit) {
  auto lowered = Lower(TransposeKernel(64, 256), PassContext{});
  ASSERT_FALSE(lowered);
  EXPECT_EQ(lowered.error().message,
            "kernel 'k' does not fit in UB (Vec): tile 't' (pl.Tile[[256, 64], pl.FP32, pl.Mem.Vec]) needs 65536 "
            "bytes while 131072 bytes are in use, and Ascend910B has 188416 bytes");
  EXPECT_EQ(lowered.error().span.str(), "k.py:4:9");
}

}  // namespace
}  // namespace pypto::passes
