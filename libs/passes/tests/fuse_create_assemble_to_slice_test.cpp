// FuseCreateAssembleToSlice: a fresh tensor that kernels fill and an orchestration pl.assemble copies
// whole into a window of another becomes that window, when nothing else touches it in between.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Index;
using testing::RunOk;

// The copy scope the frontend makes of `out = pl.assemble(out, tmp, [row, 0])` (line `line`).
ir::StmtPtr CopyScope(const ir::VarPtr& tmp, const ir::VarPtr& out, ir::ExprPtr row, int line) {
  auto load = testing::Op("tile.load", {tmp, testing::Ints({0, 0}), testing::Ints({16, 32})}, line);
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{row, Index(0)});
  auto store = testing::Op("tile.store", {load, offsets, out}, line);
  return testing::Scope("assemble", {std::make_shared<ir::EvalStmt>(store, store->span())}, line);
}

//   for i in pl.range(4):                                   # line 3
//       tmp = pl.create_tensor([16, 32])
//       with pl.at(name_hint="scale"): tmp = 2 * x[i * 16 : i * 16 + 16]   (line 5)
//       [with pl.at(name_hint="peek"): y = <peeked>[0:16] + 1]              (line 7, when `peeked`: out or tmp)
//       out = pl.assemble(out, tmp, [i * 16, 0])             # line 9
// With `through_view`, the kernel writes a reshape of tmp instead (`flat = pl.reshape(tmp, [16, 32])`,
// line 4, as an inlined function reshapes its output parameter), and a peek at tmp reads that view.
// `after`: a kernel after the assemble reads tmp into y, or writes tmp again (line 11).
enum class Peek { Nothing, Out, Tmp };
enum class After { Nothing, ReadsTmp, WritesTmp };

ir::ProgramPtr FillThenAssembleProgram(Peek peek, bool through_view = false, After after = After::Nothing) {
  auto x = testing::Tensor("x", {64, 32}), out = testing::Tensor("out", {64, 32}), y = testing::Tensor("y", {16, 32});
  auto i = testing::LoopVar("i", 3);
  std::vector<ir::StmtPtr> body;
  auto tmp = testing::CreateTensor("tmp", 16, 32, body);
  ir::VarPtr filled = tmp;
  if (through_view) {
    filled = testing::Tensor("flat", {16, 32});
    body.push_back(testing::Assign(filled, testing::Op("tensor.reshape", {tmp, testing::Ints({16, 32})}, 4)));
  }
  auto row = testing::Binary(ir::BinaryOp::Mul, i, Index(16));
  body.push_back(testing::Scope(
      "scale", testing::ScalarTileRegion(x, filled, row, Index(0), 16, 32, "tile.muls", 2.0, 6), 5));
  if (peek != Peek::Nothing) {
    const ir::VarPtr& peeked = peek == Peek::Out ? out : filled;
    body.push_back(testing::Scope(
        "peek", testing::ScalarTileRegion(peeked, y, Index(0), Index(0), 16, 32, "tile.adds", 1.0, 8), 7));
  }
  body.push_back(CopyScope(tmp, out, row, 9));
  if (after == After::ReadsTmp)
    body.push_back(testing::Scope(
        "peek", testing::ScalarTileRegion(tmp, y, Index(0), Index(0), 16, 32, "tile.adds", 1.0, 12), 11));
  if (after == After::WritesTmp)
    body.push_back(testing::Scope(
        "rescale", testing::ScalarTileRegion(x, tmp, row, Index(0), 16, 32, "tile.muls", 3.0, 12), 11));
  auto loop = testing::Loop(i, Index(0), Index(4), Index(1), std::move(body));
  auto fn = std::make_shared<ir::Function>(
      "f", std::vector<ir::VarPtr>{x, out, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{loop, std::make_shared<ir::ReturnStmt>(
                                                                        std::vector<ir::ExprPtr>{})}),
      ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f");
}

TEST(FuseCreateAssembleToSlice, TheCreatedTensorBecomesTheWindowAndTheCopyGoes) {
  auto program = RunOk({FuseCreateAssembleToSlice()}, FillThenAssembleProgram(Peek::Nothing));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]], "
            "y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
            "    for i in pl.range(4):\n"
            "        tmp: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(out, [16, 32], [i * 16, 0])\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"scale\"):\n"
            "            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
            "            pl.tile.store(pl.tile.muls(t, 2.0), [i * 16, 0], tmp)\n"
            "    return\n");
  // Nothing is left to fuse on a second run.
  auto again = RunOk({FuseCreateAssembleToSlice()}, program);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Find("f"), program->Find("f"));
}

// A kernel between them reads `out`: writing the window early would change what it reads. Or it
// reads `tmp`, which would then hold the window's old contents instead of a fresh tensor's.
TEST(FuseCreateAssembleToSlice, ATensorReadInBetweenKeepsTheCopy) {
  for (Peek peek : {Peek::Out, Peek::Tmp}) {
    auto input = FillThenAssembleProgram(peek);
    auto program = RunOk({FuseCreateAssembleToSlice()}, input);
    ASSERT_TRUE(program);
    EXPECT_EQ(program->Find("f"), input->Find("f")) << (peek == Peek::Out ? "out" : "tmp");
  }
}

// An inlined function reshapes the created tensor and its kernel stores into the view: still only
// writes, so the create becomes the window (the reshape stays, now of the window).
TEST(FuseCreateAssembleToSlice, AKernelWritingAViewOfTheTensorStillFuses) {
  auto program = RunOk({FuseCreateAssembleToSlice()}, FillThenAssembleProgram(Peek::Nothing, true));
  ASSERT_TRUE(program);
  const std::string text = ir::PrintFunction(*program->Find("f"));
  EXPECT_NE(text.find("tmp: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(out, [16, 32], [i * 16, 0])\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("name_hint=\"assemble\""), std::string::npos) << text;
}

// A kernel reading the view reads tmp: the copy stays.
TEST(FuseCreateAssembleToSlice, AKernelReadingAViewOfTheTensorKeepsTheCopy) {
  auto input = FillThenAssembleProgram(Peek::Tmp, true);
  auto program = RunOk({FuseCreateAssembleToSlice()}, input);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("f"), input->Find("f"));
}

// A kernel after the assemble reading tmp reads the window instead, which holds the same values: the
// create still becomes the window. One writing tmp again would now write out: the copy stays.
TEST(FuseCreateAssembleToSlice, ATensorOnlyReadAfterTheCopyStillFuses) {
  auto program = RunOk({FuseCreateAssembleToSlice()}, FillThenAssembleProgram(Peek::Nothing, false, After::ReadsTmp));
  ASSERT_TRUE(program);
  const std::string text = ir::PrintFunction(*program->Find("f"));
  EXPECT_NE(text.find("tmp: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.slice(out, [16, 32], [i * 16, 0])\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("name_hint=\"assemble\""), std::string::npos) << text;
  EXPECT_NE(text.find("name_hint=\"peek\""), std::string::npos) << text;

  auto input = FillThenAssembleProgram(Peek::Nothing, false, After::WritesTmp);
  auto kept = RunOk({FuseCreateAssembleToSlice()}, input);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->Find("f"), input->Find("f"));
}

//   for i in pl.range(2):                                              # line 3
//       tmp = pl.create_tensor(shape, dtype=pl.FP32, init_value=0.5)    # line 4
//       with pl.at(name_hint="scale"): tmp[i * 16 : i * 16 + 16] = 2 * x[i * 16 : i * 16 + 16]   (line 5, rank 2)
//       out = pl.assemble(out, tmp, [i * shape[0], 0, ...])              # line 9
// The kernel writes only part of tmp; the rest must still read 0.5 in out after the assemble.
ir::ProgramPtr StartingValueThenAssembleProgram(const ir::Shape& shape) {
  ir::Shape out_shape = shape;
  out_shape[0] *= 2;
  auto x = testing::Tensor("x", {32, 32}), out = testing::Tensor("out", out_shape);
  auto i = testing::LoopVar("i", 3);
  std::vector<ir::ExprPtr> dims, zeros;
  for (int64_t dim : shape) {
    dims.push_back(Index(dim));
    zeros.push_back(Index(0));
  }
  auto create = testing::OpWithKwargs("tensor.create", {std::make_shared<ir::TupleLiteral>(dims)},
                                 {{"dtype", ir::DataType::FP32}, {"init_value", 0.5}}, 4);
  auto tmp = testing::Local("tmp", create);
  std::vector<ir::StmtPtr> body{testing::Assign(tmp, create)};
  auto row = testing::Binary(ir::BinaryOp::Mul, i, Index(16));
  if (shape.size() == 2)
    body.push_back(testing::Scope("scale", testing::ScalarTileRegion(x, tmp, row, Index(0), 16, 32, "tile.muls", 2.0, 6),
                                  5));
  auto load = testing::Op("tile.load", {tmp, std::make_shared<ir::TupleLiteral>(zeros),
                                        std::make_shared<ir::TupleLiteral>(dims)}, 9);
  std::vector<ir::ExprPtr> offsets = zeros;
  offsets[0] = testing::Binary(ir::BinaryOp::Mul, i, Index(shape[0]));
  auto store = testing::Op("tile.store", {load, std::make_shared<ir::TupleLiteral>(offsets), out}, 9);
  body.push_back(testing::Scope("assemble", {std::make_shared<ir::EvalStmt>(store, store->span())}, 9));
  auto loop = testing::Loop(i, Index(0), Index(2), Index(1), std::move(body));
  auto fn = std::make_shared<ir::Function>(
      "f", std::vector<ir::VarPtr>{x, out}, std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out},
      std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{loop, std::make_shared<ir::ReturnStmt>(
                                                                        std::vector<ir::ExprPtr>{})}),
      ir::FunctionType::Opaque);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f");
}

// A starting value fuses too: the window holds out's contents, so a fill kernel sets the value in it
// before the kernels write their part.
TEST(FuseCreateAssembleToSlice, AStartingValueIsFilledIntoTheWindow) {
  auto input = StartingValueThenAssembleProgram({32, 32});
  EXPECT_EQ(ir::PrintFunction(*input->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):\n"
            "    for i in pl.range(2):\n"
            "        tmp: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.create([32, 32], dtype=pl.FP32, init_value=0.5)\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"scale\"):\n"
            "            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
            "            pl.tile.store(pl.tile.muls(t, 2.0), [i * 16, 0], tmp)\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"assemble\"):\n"
            "            pl.tile.store(pl.tile.load(tmp, [0, 0], [32, 32]), [i * 32, 0], out)\n"
            "    return\n");
  auto program = RunOk({FuseCreateAssembleToSlice()}, input);
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):\n"
            "    for i in pl.range(2):\n"
            "        tmp: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.slice(out, [32, 32], [i * 32, 0])\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"fill\"):\n"
            "            fill_block: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([32, 32], dtype=pl.FP32, "
            "value=0.5)\n"
            "            pl.tile.store(fill_block, [0, 0], tmp)\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"scale\"):\n"
            "            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 32])\n"
            "            pl.tile.store(pl.tile.muls(t, 2.0), [i * 16, 0], tmp)\n"
            "    return\n");
}

// A window bigger than UB ([2, 128, 256] FP32, 256 KiB) is filled a block of at most 64 KiB at a time:
// [64, 256] tiles of its last two dimensions, looped over the others.
TEST(FuseCreateAssembleToSlice, AStartingValueBiggerThanUBIsFilledBlockByBlock) {
  auto program = RunOk({FuseCreateAssembleToSlice()}, StartingValueThenAssembleProgram({2, 128, 256}));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 128, 256], pl.FP32]]):\n"
            "    for i in pl.range(2):\n"
            "        tmp: pl.Tensor[[2, 128, 256], pl.FP32] = pl.tensor.slice(out, [2, 128, 256], [i * 2, 0, 0])\n"
            "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"fill\"):\n"
            "            for fill_0 in pl.range(2):\n"
            "                for fill_1 in pl.range(0, 128, 64):\n"
            "                    fill_block: pl.Tile[[64, 256], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 256], "
            "dtype=pl.FP32, value=0.5)\n"
            "                    pl.tile.store(fill_block, [fill_0, fill_1, 0], tmp)\n"
            "    return\n");
}

}  // namespace
}  // namespace pypto::passes
