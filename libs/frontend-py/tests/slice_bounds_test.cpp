// Slices whose bounds are computed, `x[:, ki * 16:(ki + 1) * 16]` or `x[:, c0:c1]` after
// `c1 = c0 + 32`: the size is known at compile time when the bounds differ by a constant, seen
// through the scalars they were computed from. And `t[a:b, :] = u` into a window of a tile, which is
// `t = pl.tile.assemble(t, u, [a, 0])`. ParseText also checks that each program round-trips through
// the printer, as parsed and as lowered.
#include <gtest/gtest.h>

#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

// A kernel over a [64, 128] input `a` and output `c`, with the given scalar parameters and body
// (line 4 of kFile is the body's first line).
std::string Kernel(const std::string& params, const std::string& lines) {
  return ParseText(Request("@pl.jit\ndef k(a: pl.Tensor, " + params + "c: pl.Out[pl.Tensor]):\n" +
                               "    with pl.at(level=pl.Level.CORE_GROUP):\n" + lines + "    return c\n",
                           {{"a", {64, 128}}, {"c", {64, 128}}}));
}

// The printed kernel's body: the lines after `with pl.at(...)`, up to its return.
std::string Body(const std::string& printed) {
  const std::string scope = "        with pl.at(level=pl.Level.CORE_GROUP):\n";
  const size_t begin = printed.find(scope);
  const size_t end = printed.find("        return c\n");
  if (begin == std::string::npos || end == std::string::npos) return printed;
  return printed.substr(begin + scope.size(), end - begin - scope.size());
}

TEST(SliceBounds, BoundsScaledByALoopVariable) {
  EXPECT_EQ(Body(Kernel("", "        for ki in pl.range(8):\n"
                            "            c[:, ki * 16:(ki + 1) * 16] = pl.exp(a[:, ki * 16:(ki + 1) * 16])\n")),
            "            for ki in pl.range(8):\n"
            "                pl.tile.store(pl.tile.exp(pl.tile.load(a, [0, ki * 16], [64, 16])), [0, ki * 16], c)\n");
}

TEST(SliceBounds, BoundsOffsetFromOneScalar) {
  EXPECT_EQ(Body(Kernel("", "        for h in pl.range(2):\n"
                            "            q_col = h * 64\n"
                            "            c[0:1, q_col + 32:q_col + 64] = pl.neg(a[0:1, q_col + 8:q_col + 40])\n")),
            "            for h in pl.range(2):\n"
            "                q_col: pl.Scalar[pl.INDEX] = h * 64\n"
            "                pl.tile.store(pl.tile.neg(pl.tile.load(a, [0, q_col + 8], [1, 32])), [0, q_col + 32], "
            "c)\n");
}

// `c1` is read through its definition: c1 - c0 = (c0 + 32) - c0.
TEST(SliceBounds, BoundsNamedByEarlierScalars) {
  EXPECT_EQ(Body(Kernel("base: pl.INDEX, ", "        c0 = base + 16\n"
                                            "        c1 = c0 + 32\n"
                                            "        c[0:8, c0:c1] = a[8:16, c0:c1]\n")),
            "            c0: pl.Scalar[pl.INDEX] = base + 16\n"
            "            c1: pl.Scalar[pl.INDEX] = c0 + 32\n"
            "            pl.tile.store(pl.tile.load(a, [8, c0], [8, 32]), [0, c0], c)\n");
}

// A part that is not affine (`base // 4`) is compared as a whole: both bounds hold the same one.
TEST(SliceBounds, BoundsSharingADivision) {
  EXPECT_EQ(Body(Kernel("base: pl.INDEX, ", "        lo = base // 4 * 16\n"
                                            "        hi = (base // 4 + 1) * 16\n"
                                            "        c[0:1, lo:hi] = a[0:1, 0:16]\n")),
            "            lo: pl.Scalar[pl.INDEX] = (base // 4) * 16\n"
            "            hi: pl.Scalar[pl.INDEX] = ((base // 4) + 1) * 16\n"
            "            pl.tile.store(pl.tile.load(a, [0, 0], [1, 16]), [0, lo], c)\n");
}

// The definitions are those of the variables the bounds read, in a loop too: `hi` was computed from
// the `lo` of the iteration's start, and `lo` then moves on by 8, so the slice `lo:hi` is 8 wide
// (not 16, which reading `hi` as "lo + 16" by name would give).
TEST(SliceBounds, AReassignedScalarIsReadAsTheValueItHadThen) {
  EXPECT_EQ(Body(Kernel("base: pl.INDEX, ", "        lo = base * 2\n"
                                            "        for i in pl.range(4):\n"
                                            "            hi = lo + 16\n"
                                            "            lo = lo + 8\n"
                                            "            c[0:1, lo:hi] = a[0:1, lo:hi]\n")),
            "            lo: pl.Scalar[pl.INDEX] = base * 2\n"
            "            for i, (lo_1,) in pl.range(4, init_values=(lo,)):\n"
            "                hi: pl.Scalar[pl.INDEX] = lo_1 + 16\n"
            "                lo_2: pl.Scalar[pl.INDEX] = lo_1 + 8\n"
            "                pl.tile.store(pl.tile.load(a, [0, lo_2], [1, 8]), [0, lo_2], c)\n"
            "                lo_3: pl.Scalar[pl.INDEX] = pl.yield_(lo_2)\n");
}

// A slice of a value that has no name of its own is a window of it too.
TEST(SliceBounds, AComputedTileIsSliced) {
  EXPECT_EQ(Body(Kernel("", "        t = pl.load(a, [0, 0], [64, 128])\n"
                            "        pl.store(pl.exp(t)[16:32, 64:], [0, 0], c)\n")),
            "            t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128])\n"
            "            pl.tile.store(pl.tile.slice(pl.tile.exp(t), [16, 64], [16, 64]), [0, 0], c)\n");
}

TEST(SliceBoundsDiagnostics, OnlyANamedValueIsAssignedInto) {
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 128])\n"
                       "        pl.exp(t)[0:16, :] = pl.load(a, [0, 0], [16, 128])\n"),
            "/src/kernels.py:5:9: error: only a tensor or tile named by a variable can be assigned into\n"
            "  help: give the value a name first");
}

TEST(SliceBoundsDiagnostics, ASizeThatVariesIsAnError) {
  EXPECT_EQ(Kernel("", "        for i in pl.range(4):\n"
                       "            lo = i * 16\n"
                       "            hi = i * 32\n"
                       "            c[0:1, lo:hi] = a[0:1, 0:16]\n"),
            "/src/kernels.py:7:20: error: the slice lo:hi must have a size known at compile time\n"
            "  help: write it as start:start + SIZE with a constant SIZE");
}

TEST(TileWindowAssign, RowsAssembledInALoopAreCarried) {
  EXPECT_EQ(Body(Kernel("", "        acc = pl.full([64, 128], dtype=pl.FP32, value=0.0)\n"
                            "        for r in pl.range(4):\n"
                            "            acc[r * 16:(r + 1) * 16, :] = pl.exp(a[r * 16:r * 16 + 16, :])\n"
                            "        pl.store(acc, [0, 0], c)\n")),
            "            acc: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 128], dtype=pl.FP32, "
            "value=0.0)\n"
            "            for r, (acc_1,) in pl.range(4, init_values=(acc,)):\n"
            "                acc_2: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(acc_1, "
            "pl.tile.exp(pl.tile.load(a, [r * 16, 0], [16, 128])), [r * 16, 0])\n"
            "                acc_3: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_2)\n"
            "            pl.tile.store(acc_3, [0, 0], c)\n");
}

TEST(TileWindowAssign, AColumnWindowAtAConstantOffset) {
  EXPECT_EQ(Body(Kernel("", "        t = pl.load(a, [0, 0], [64, 128])\n"
                            "        t[:, 64:] = pl.load(a, [0, 0], [64, 64])\n"
                            "        pl.store(t, [0, 0], c)\n")),
            "            t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128])\n"
            "            t_1: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(t, "
            "pl.tile.load(a, [0, 0], [64, 64]), [0, 64])\n"
            "            pl.tile.store(t_1, [0, 0], c)\n");
}

// Assigned in one branch of an if, the window's tile is merged after it like any reassigned name.
TEST(TileWindowAssign, InABranch) {
  EXPECT_EQ(Body(Kernel("n: pl.INDEX, ", "        t = pl.full([64, 128], dtype=pl.FP32, value=0.0)\n"
                                         "        if n > 0:\n"
                                         "            t[0:16, :] = pl.load(a, [0, 0], [16, 128])\n"
                                         "        pl.store(t, [0, 0], c)\n")),
            "            t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.full([64, 128], dtype=pl.FP32, "
            "value=0.0)\n"
            "            if n > 0:\n"
            "                t_1: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(t, "
            "pl.tile.load(a, [0, 0], [16, 128]), [0, 0])\n"
            "                t_2: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(t_1)\n"
            "            else:\n"
            "                t_2: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(t)\n"
            "            pl.tile.store(t_2, [0, 0], c)\n");
}

TEST(TileWindowAssignDiagnostics, TheWindowAndTheTileMustHaveOneShape) {
  EXPECT_EQ(Kernel("", "        t = pl.load(a, [0, 0], [64, 128])\n"
                       "        t[0:16, :] = pl.load(a, [0, 0], [16, 64])\n"),
            "/src/kernels.py:5:9: error: the window of 't' has shape [16, 128] but the tile assigned to it has "
            "shape [16, 64]\n"
            "  help: slice the window to the assigned tile's shape");
}

}  // namespace
}  // namespace pypto::frontend::testing
