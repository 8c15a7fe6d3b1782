// Op-call diagnostics: each names the problem and points at the call (file:line:col), with a hint
// where one helps.
#include <gtest/gtest.h>

#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

// Parses `lines` as the body of a pl.at scope starting on line 4, after `t = pl.load(...)` on line 4;
// returns the diagnostic (or the printed program when there is none).
std::string ErrorIn(const std::string& lines) {
  return ParseText(Request("@pl.jit\ndef k(a: pl.Tensor, c: pl.Out[pl.Tensor]):\n"
                           "    with pl.at(level=pl.Level.CORE_GROUP):\n"
                           "        t = pl.load(a, [0, 0], [16, 16])\n" +
                               lines + "    return c\n",
                           {{"a", {16, 16}}, {"c", {16, 16}}}));
}

TEST(OpDiagnostics, LoadTargetMustBeVecOrMat) {
  EXPECT_EQ(ErrorIn("        u = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Left)\n"),
            "/src/kernels.py:5:13: error: pl.load: a load copies into Vec or Mat, not Left\n"
            "  help: load into Mat, then pl.move the tile into Left or Right");
}

TEST(OpDiagnostics, UnknownMemorySpaceListsTheKnownOnes) {
  EXPECT_EQ(ErrorIn("        u = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Shared)\n"),
            "/src/kernels.py:5:56: error: 'pl.Mem.Shared' is not a memory space\n"
            "  help: memory spaces: Vec, Mat, Left, Right, Acc, Bias");
}

TEST(OpDiagnostics, AttributesMustBeCompileTimeValuesOfTheirKind) {
  EXPECT_EQ(ErrorIn("        u = pl.create_tile([16, 16], dtype=3)\n"),
            "/src/kernels.py:5:44: error: 'pl.create_tile' argument 'dtype' must be a dtype known at compile time");
  EXPECT_EQ(ErrorIn("        u = pl.create_tile([16, 16])\n"),
            "/src/kernels.py:5:13: error: 'pl.create_tile' is missing argument 'dtype'");
}

// Vec, Mat and Acc operands are placed by InferTileMemorySpace; a tile already in the other L0
// buffer cannot be.
TEST(OpDiagnostics, MatmulOperandsMustBeInL0OrPlaceable) {
  EXPECT_EQ(ErrorIn("        r = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)\n"
                    "        v = pl.matmul(r, t)\n"),
            "/src/kernels.py:6:13: error: pl.matmul: the left operand of tile.matmul must be in Left, got "
            "pl.Tile[[16, 16], pl.FP32, pl.Mem.Right]\n"
            "  help: pl.move(tile, target_memory=pl.Mem.Left) puts it there");
}

TEST(OpDiagnostics, RowReductionsNeedTheirScratchTile) {
  EXPECT_EQ(ErrorIn("        m: pl.Tile[[16, 1], pl.FP32] = pl.tile.row_sum(t)\n"),
            "/src/kernels.py:5:40: error: 'pl.tile.row_sum' is missing argument 'tmp_tile'");
}

// The unified spelling creates the scratch tile upstream's lowering would (pl.tile.row_sum does not).
TEST(OpDiagnostics, UnifiedRowReductionsCreateTheirScratchTile) {
  const std::string printed = ErrorIn("        m = pl.row_sum(t)\n");
  EXPECT_NE(printed.find("m: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(t, pl.tile.create([16, 16], "
                         "dtype=pl.FP32, target_memory=pl.Mem.Vec))"),
            std::string::npos)
      << printed;
}

TEST(OpDiagnostics, DeclaredTypeMustMatchTheValue) {
  EXPECT_EQ(ErrorIn("        tmp = pl.create_tile([16, 16], dtype=pl.FP32)\n"
                    "        m: pl.Tile[[1, 16], pl.FP32] = pl.row_sum(t, tmp)\n"),
            "/src/kernels.py:6:12: error: 'm' is declared pl.Tile[[1, 16], pl.FP32] but the value assigned is "
            "pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec]");
}

TEST(OpDiagnostics, BroadcastVectorsMustMatchTheTile) {
  EXPECT_EQ(ErrorIn("        u = pl.row_expand_add(t, t)\n"),
            "/src/kernels.py:5:13: error: pl.row_expand_add: tile.row_expand_add broadcasts a [16, 1] FP32 vector "
            "across pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec], got pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]\n"
            "  help: a row vector comes from a row reduction such as pl.row_sum");
}

TEST(OpDiagnostics, ReshapeKeepsTheElementCount) {
  EXPECT_EQ(ErrorIn("        u = pl.reshape(t, [3, 5])\n"),
            "/src/kernels.py:5:13: error: pl.reshape: cannot reshape pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] to "
            "[3, 5]: 256 elements against 15");
}

TEST(OpDiagnostics, ArgumentsAreCheckedByCountAndName) {
  EXPECT_EQ(ErrorIn("        u = pl.exp(t, t, t)\n"),
            "/src/kernels.py:5:13: error: 'pl.exp' takes at most 1 argument, got 3");
  EXPECT_EQ(ErrorIn("        u = pl.exp(t, flavour=1)\n"),
            "/src/kernels.py:5:31: error: 'pl.exp' has no argument 'flavour' (arguments: tile)");
}

TEST(OpDiagnostics, CastModesAreKnown) {
  EXPECT_EQ(ErrorIn("        u = pl.cast(t, pl.FP16, mode=\"sideways\")\n"),
            "/src/kernels.py:5:13: error: pl.cast: unknown cast mode \"sideways\"\n"
            "  help: modes: none, rint, round, floor, ceil, trunc, odd");
}

TEST(OpDiagnostics, MovesFollowTheHardwarePaths) {
  EXPECT_EQ(ErrorIn("        u = pl.move(t, target_memory=pl.Mem.Left)\n"),
            "/src/kernels.py:5:13: error: pl.move: cannot move a tile from Vec to Left\n"
            "  help: moves go Mat -> Left/Right/Bias/Mat/LeftScale/RightScale, Acc -> Mat/Vec, Vec -> Vec/Mat");
}

TEST(OpDiagnostics, KernelCallsCheckEachParameter) {
  auto request = Request(R"(@pl.jit
def dag(a: pl.Tensor, f: pl.Out[pl.Tensor]):
    f = scale(a, a, f)
    return f
)",
                         {{"a", {16, 16}}, {"f", {16, 16}}});
  request.functions["scale"] = Incore(R"(@pl.jit.incore
def scale(x: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 16])
    pl.store(pl.mul(t, s), [0, 0], out)
    return out
)",
                                      10);
  EXPECT_EQ(ParseText(request),
            "/src/kernels.py:3:9: error: scale() parameter 's' expects pl.Scalar[pl.FP32], got "
            "pl.Tensor[[16, 16], pl.FP32]");
  request.source = "@pl.jit\ndef dag(a: pl.Tensor, f: pl.Out[pl.Tensor]):\n    f = scale(a, 1.0)\n    return f\n";
  EXPECT_EQ(ParseText(request), "/src/kernels.py:3:9: error: scale() is missing parameter 'out'");
}

TEST(OpDiagnostics, AnIncoreFunctionIsAlreadyAKernel) {
  auto request = Request("@pl.jit\ndef dag(a: pl.Tensor, f: pl.Out[pl.Tensor]):\n    f = k(a, f)\n    return f\n",
                         {{"a", {16, 16}}, {"f", {16, 16}}});
  request.functions["k"] = Incore(R"(@pl.jit.incore
def k(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
    return out
)",
                                  10);
  EXPECT_EQ(ParseText(request),
            "/src/kernels.py:12:10: error: a pl.at scope cannot appear inside a kernel\n"
            "  help: a @pl.jit.incore function is already one kernel");
}

TEST(OpDiagnostics, ElementWritesCheckIndicesAndValue) {
  EXPECT_EQ(ErrorIn("        pl.write(t, [0], pl.read(t, [0, 0]))\n"),
            "/src/kernels.py:5:9: error: pl.write: an element of pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] has 2 indices, got "
            "1");
  EXPECT_EQ(ErrorIn("        pl.write(t, [0, 0], 1)\n"),
            "/src/kernels.py:5:9: error: pl.write: the value is INDEX but the elements of pl.Tile[[16, 16], pl.FP32, "
            "pl.Mem.Vec] are FP32\n"
            "  help: convert the value first: pl.cast(value, pl.FP32)");
  EXPECT_EQ(ErrorIn("        s = pl.read(t, [0, 1.5])\n"),
            "/src/kernels.py:5:13: error: pl.read: element indices are integers, got pl.Scalar[pl.FP32]");
}

TEST(OpDiagnostics, CreateTensorInitValueMustFitTheDtype) {
  EXPECT_EQ(ParseOrchestration("    u = pl.create_tensor([16, 16], dtype=pl.BF16, init_value=1.0)\n    return y\n"),
            "/src/kernels.py:3:9: error: pl.create_tensor: a BF16 tensor can only start as zeros, got init_value=1.0\n"
            "  help: use init_value=0, or a FP32 tensor");
  EXPECT_EQ(ParseOrchestration("    u = pl.create_tensor([16, 16], dtype=pl.INT8, init_value=300)\n    return y\n"),
            "/src/kernels.py:3:9: error: pl.create_tensor: init_value=300.0 is not a INT8 value");
}

// Inside a kernel a created tensor is a Vec tile: pl.create_tile, or pl.full with its init_value.
TEST(OpDiagnostics, CreateTensorInAKernelIsATile) {
  EXPECT_EQ(ErrorIn("        u = pl.create_tensor([16, 16], dtype=pl.FP32, manual_dep=True)\n"
                    "        v = pl.create_tensor([16, 16], dtype=pl.FP32, init_value=-2.5)\n"
                    "        pl.store(pl.add(u, v), [0, 0], c)\n"),
            "@pl.program\n"
            "class _jit_k:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> "
            "pl.Tensor[[16, 16], pl.FP32]:\n"
            "        with pl.at(level=pl.Level.CORE_GROUP):\n"
            "            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "            u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.FP32)\n"
            "            v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=-2.5)\n"
            "            pl.tile.store(pl.tile.add(u, v), [0, 0], c)\n"
            "        return c\n");
}

// In orchestration code pl.slice of a tensor is the load the kernels using it will make;
// OutlineIncoreScopes moves it into them (or reports a slice the orchestration itself uses).
TEST(OpDiagnostics, SliceOfATensorInOrchestrationIsTheLoadOfItsRegion) {
  EXPECT_EQ(ParseOrchestration("    v = pl.slice(x, [8, 32], [8, 0])\n    return y\n"),
            std::string(kPrintedOrchestrationHeader) +
                "        v: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [8, 0], [8, 32])\n"
                "        return y\n");
}

}  // namespace
}  // namespace pypto::frontend::testing
