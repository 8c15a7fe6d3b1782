// Tiles whose valid region is smaller than the tile: `pl.load(..., valid_shape=[r, c])`,
// `pl.tile.fillpad`, `pl.tile.set_validshape`. The valid shape is part of the tile's type, printed
// as `pl.TileView(valid_shape=[...])` only when it narrows the tile, and it round-trips through the
// printer before and after lowering (ParseText checks both).
#include <gtest/gtest.h>

#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

std::string Kernel(const std::string& params, const std::string& lines) {
  return ParseText(Request("@pl.jit\ndef k(a: pl.Tensor, " + params + "c: pl.Out[pl.Tensor]):\n" +
                               "    with pl.at(level=pl.Level.CORE_GROUP):\n" + lines + "    return c\n",
                           {{"a", {64, 64}}, {"c", {64, 64}}}));
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(ValidShape, ScalarParameterNarrowsTheLoadAndFillpadWidensIt) {
  std::string text = Kernel("vlen: pl.INDEX, ",
                            "        t = pl.load(a, [0, 0], [64, 64], valid_shape=[64, vlen])\n"
                            "        p = pl.tile.fillpad(t, pad_value=pl.PadValue.min)\n"
                            "        pl.store(p, [0, 0], c)\n");
  EXPECT_TRUE(Has(text, "t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[64, vlen])] = "
                        "pl.tile.load(a, [0, 0], [64, 64], [64, vlen])"))
      << text;
  EXPECT_TRUE(Has(text, "p: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad(t, pad_value=\"min\")")) << text;
}

TEST(ValidShape, ElementwiseAndReductionsKeepTheRegion) {
  std::string text = Kernel("vlen: pl.INDEX, ",
                            "        t = pl.load(a, [0, 0], [64, 64], valid_shape=[32, vlen])\n"
                            "        e = pl.exp(t)\n"
                            "        m = pl.row_max(e)\n"
                            "        pl.store(e, [0, 0], c)\n");
  EXPECT_TRUE(Has(text, "e: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[32, vlen])]")) << text;
  EXPECT_TRUE(Has(text, "m: pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[32, 1])]")) << text;
}

TEST(ValidShape, RaggedTailInALoop) {
  std::string text = Kernel("n: pl.INDEX, ",
                            "        for i in pl.range(0, n, 16):\n"
                            "            vlen = min(n - i, 16)\n"
                            "            t = pl.load(a, [0, i], [64, 16], valid_shape=[64, vlen])\n"
                            "            u = pl.tile.set_validshape(t, 64, vlen)\n"
                            "            pl.store(u, [0, i], c)\n");
  EXPECT_TRUE(Has(text, "pl.TileView(valid_shape=[64, vlen])] = pl.tile.set_validshape(t, 64, vlen)")) << text;
}

TEST(ValidShape, AWholeTileValidShapeIsNotPrinted) {
  std::string text = Kernel("", "        t = pl.load(a, [0, 0], [64, 64], valid_shape=[64, 64])\n"
                                "        pl.store(t, [0, 0], c)\n");
  EXPECT_TRUE(Has(text, "t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64], [64, 64])"))
      << text;
}

TEST(ValidShapeDiagnostics, RankMustMatchTheTile) {
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 64], valid_shape=[64])\n"),
            "/src/kernels.py:4:13: error: pl.load: the valid_shape of pl.load has 1 extents for a tile of rank 2 "
            "([64, 64])");
}

TEST(ValidShapeDiagnostics, AnExtentCannotWidenTheTile) {
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 32], valid_shape=[64, 48])\n"),
            "/src/kernels.py:4:13: error: pl.load: the valid_shape of pl.load extent 48 of dimension 1 is outside "
            "the tile's 32 (tile shape [64, 32])\n"
            "  help: a valid region can only narrow the tile");
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 64])\n"
                       "        u = pl.tile.set_validshape(t, 65, 8)\n"),
            "/src/kernels.py:5:13: error: pl.tile.set_validshape: the valid shape of tile.set_validshape extent 65 of "
            "dimension 0 is outside the tile's 64 (tile shape [64, 64])\n"
            "  help: a valid region can only narrow the tile");
}

TEST(ValidShapeDiagnostics, PadValueNamesAMode) {
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 64])\n"
                       "        p = pl.tile.fillpad(t, pad_value=pl.PadValue.lowest)\n"),
            "/src/kernels.py:5:42: error: 'pl.PadValue.lowest' is not a padding mode\n"
            "  help: pad values: pl.PadValue.zero, pl.PadValue.min, pl.PadValue.max");
}

// A @pl.program names the valid extents in the annotation; they are read in the function's scope.
TEST(ValidShape, ProgramAnnotationsRoundTrip) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  const std::string text = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], vlen: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[64, vlen])] = pl.tile.load(a, [0, 0], [64, 64], [64, vlen])
        p: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad(t, pad_value="max")
        c_1: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(p, [0, 0], c)
        return c_1
)";
  auto program = ParseProgramText(text, kFile, 0);
  ASSERT_TRUE(program) << program.error().str();
  EXPECT_EQ(RoundTripFailure(**program), "");
  EXPECT_EQ(ir::PrintProgram(**program), text);
}

}  // namespace
}  // namespace pypto::frontend::testing
