// `@pl.program` text: the printer's output parses back into the same program (print -> parse -> print
// gives the same text, and the programs are structurally equal), before and after lowering; programs
// written by hand print as written; malformed programs are reported at file:line:col.
//
// Every program the other frontend tests parse through ParseText is round-tripped too
// (frontend_test_util.h), as parsed and as lowered.
#include <gtest/gtest.h>

#include "frontend_test_util.h"
#include "pypto/ir/functor.h"

namespace pypto::frontend::testing {
namespace {

// The lowered program of a @pl.jit function, after checking that it and the frontend's program
// round-trip. Returns the lowered program's text, or the diagnostic.
std::string LoweredRoundTrip(const ParseRequest& request, const ir::SocSpec& soc = ir::Ascend910B()) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseJitFunction(request);
  if (!program) return program.error().str();
  EXPECT_EQ(RoundTripFailure(**program), "");
  auto lowered = LowerForTest(*program, soc);
  if (!lowered) return lowered.error().str();
  EXPECT_EQ(RoundTripFailure(**lowered), "");
  return ir::PrintProgram(**lowered);
}

// Parses `text` as a @pl.program at line 1 of kFile: its printed text, or the diagnostic.
std::string ProgramText(const std::string& text, int line_offset = 0) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(text, kFile, line_offset);
  if (!program) return program.error().str();
  EXPECT_EQ(RoundTripFailure(**program), "");
  return ir::PrintProgram(**program);
}

// ---- the programs of parser_test.cpp and op_catalog_test.cpp, lowered ------------------------------

constexpr const char* kTileAdd = R"(@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [64, 128])
        tile_b = pl.load(b, [0, 0], [64, 128])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], c)
    return c
)";

TEST(RoundTrip, HelloWorldLoweredKeepsMemRefsAndDirections) {
  std::string lowered = LoweredRoundTrip(Request(kTileAdd, {{"a", {64, 128}}, {"b", {64, 128}}, {"c", {64, 128}}}));
  EXPECT_EQ(lowered, R"(@pl.program
class _jit_tile_add:
    @pl.function(type=pl.FunctionType.AIV)
    def tile_add_incore_0(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        tile_a: pl.Tile[[64, 128], pl.FP32, pl.MemRef(0, 32768), pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128])
        tile_b: pl.Tile[[64, 128], pl.FP32, pl.MemRef(32768, 32768), pl.Mem.Vec] = pl.tile.load(b, [0, 0], [64, 128])
        tile_c: pl.Tile[[64, 128], pl.FP32, pl.MemRef(0, 32768), pl.Mem.Vec] = pl.tile.add(tile_a, tile_b)
        pl.tile.store(tile_c, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def tile_add(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.scope():
            c_1: pl.Tensor[[64, 128], pl.FP32] = self.tile_add_incore_0(a, b, c, attrs={"arg_directions": ["Input", "Input", "OutputExisting"]})
        return c_1
)");
}

TEST(RoundTrip, LoopsOfEveryKindWithComputedOffsets) {
  std::string lowered = LoweredRoundTrip(Request(R"(@pl.jit
def loops(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(64 // 32):
            ta = pl.load(a, [i * 32, 0], [32, 128])
            tb = pl.load(b, [i * 32, 0], [32, 128])
            pl.store(pl.add(ta, tb), [i * 32, 0], c)
        for j in pl.parallel(1, 4, 2):
            for k in pl.unroll(2):
                t = pl.load(a, [(j - 1) * 16 + k % 2, k * 64], [16, 64])
                pl.store(t, [j, 0], c)
        for p in pl.pipeline(0, 64, 32, stage=2):
            u = pl.load(b, [p, 0], [32, 128])
            pl.store(pl.mul(u, -0.5), [max(p, 0), 0], c)
    return c
)",
                                                 {{"a", {64, 128}}, {"b", {64, 128}}, {"c", {64, 128}}}));
  EXPECT_NE(lowered.find("for i in pl.range(2):"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("for j in pl.parallel(1, 4, 2):"), std::string::npos) << lowered;
  // UnrollLoops copies the pl.unroll body once per k, folding k into the offsets.
  EXPECT_EQ(lowered.find("pl.unroll"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("pl.tile.load(a, [(j - 1) * 16, 0], [16, 64])"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("pl.tile.load(a, [((j - 1) * 16) + 1, 64], [16, 64])"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("for p in pl.pipeline(0, 64, 32):"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("[max(p, 0), 0]"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("__tmp_v"), std::string::npos) << lowered;  // FlattenCallExpr's temporaries
}

// @pl.jit(auto_scope=False): the entry keeps only the scopes its author wrote, and the attribute
// prints as upstream's decorator keyword, which parses back, before lowering and after it.
TEST(RoundTrip, AutoScopeFalseSurvivesPrintingAndLowering) {
  auto request = Request(R"(@pl.jit(auto_scope=False)
def by_hand(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    for i in pl.range(2):
        with pl.scope():
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.store(pl.mul(pl.load(a, [i * 16, 0], [16, 64]), 2.0), [i * 16, 0], c)
    return c
)",
                         {{"a", {32, 64}}, {"c", {32, 64}}});
  request.auto_scope = false;
  std::string lowered = LoweredRoundTrip(request);
  EXPECT_NE(lowered.find("    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)\n"
                         "    def by_hand(self, "),
            std::string::npos)
      << lowered;
  // The hand-placed scope is the loop body's only one, and nothing wraps the function's body.
  EXPECT_NE(lowered.find(":\n        for i in pl.range(2):\n            with pl.scope():\n"), std::string::npos)
      << lowered;
  EXPECT_EQ(lowered.find("with pl.scope():\n                with pl.scope():"), std::string::npos) << lowered;
}

// A loop that breaks and continues while carrying a tile: the jumps print as `pl.break_(v)` /
// `pl.continue_(v)` with what they hand on, parse back to the same program, and are gone after lowering.
TEST(RoundTrip, BreakAndContinueWithCarriedValues) {
  auto request = Request(R"(@pl.jit
def jumps(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            if i >= 3:
                break
            if i == 1:
                continue
            acc = pl.add(acc, x[i * 32 : i * 32 + 32, :])
        y[:, :] = acc
    return y
)",
                         {{"x", {128, 32}}, {"y", {32, 32}}});
  EnsureInterpreter();
  {
    pybind11::gil_scoped_acquire gil;
    auto program = ParseJitFunction(request);
    ASSERT_TRUE(program) << program.error().str();
    EXPECT_EQ(RoundTripFailure(**program), "");
    const std::string text = ir::PrintProgram(**program);
    EXPECT_NE(text.find("                if i >= 3:\n"
                        "                    pl.break_(acc_1)\n"
                        "                if i == 1:\n"
                        "                    pl.continue_(acc_1)\n"),
              std::string::npos)
        << text;
  }
  const std::string lowered = LoweredRoundTrip(request);
  EXPECT_NE(lowered.find("if _break_flag_0_1 == 0:"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("pl.break_"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("continue"), std::string::npos) << lowered;
}

// An entry creating an intermediate and calling one @pl.jit.incore kernel twice (the kernel's
// source starting at line 20).
ParseRequest AddScalarDagRequest() {
  auto request = Request(R"(@pl.jit
def dag(a: pl.Tensor, f: pl.Out[pl.Tensor]):
    c = pl.create_tensor([16, 16], dtype=pl.FP32)
    c = add_scalar(a, 1.0, c)
    f = add_scalar(c, 2.0, f)
    return f
)",
                         {{"a", {16, 16}}, {"f", {16, 16}}});
  request.functions["add_scalar"] = Incore(R"(@pl.jit.incore
def add_scalar(x: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 16])
    r = pl.add(t, s)
    pl.store(r, [0, 0], out)
    return out
)",
                                           20);
  return request;
}

TEST(RoundTrip, IncoreKernelsCalledFromOrchestrationLowered) {
  auto request = AddScalarDagRequest();
  std::string lowered = LoweredRoundTrip(request);
  EXPECT_NE(lowered.find("self.add_scalar(a, 1.0, c, attrs={\"arg_directions\": [\"Input\", \"Scalar\", "
                         "\"OutputExisting\"]})"),
            std::string::npos)
      << lowered;
}

// pl.dump_tag is kept as the statement pl.tensor.dump_tag(t) in the orchestration, through lowering.
TEST(RoundTrip, DumpTagStaysInTheOrchestration) {
  auto request = Request(R"(@pl.jit
def tagged(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    pl.dump_tag(x)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
    return y
)",
                         {{"x", {16, 16}}, {"y", {16, 16}}});
  std::string lowered = LoweredRoundTrip(request);
  EXPECT_NE(lowered.find("        pl.tensor.dump_tag(x)\n"), std::string::npos) << lowered;
}

TEST(RoundTrip, CubeKernelLoweredForBothSocs) {
  auto request = Request(R"(@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="matmul_kernel"):
        a1 = pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        a0 = pl.move(a1, target_memory=pl.MemorySpace.Left)
        b0 = pl.move(b1, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a0, b0)
        acc = pl.matmul_acc(acc, a0, b0)
        pl.store(acc, [0, 0], c)
    return c
)",
                         {{"a", {16, 32}}, {"b", {32, 16}}, {"c", {16, 16}}});
  for (const ir::SocSpec* soc : {&ir::Ascend910B(), &ir::Ascend950()}) {
    std::string lowered = LoweredRoundTrip(request, *soc);
    EXPECT_NE(lowered.find("def matmul_kernel(self"), std::string::npos) << lowered;
    EXPECT_NE(lowered.find("@pl.function(type=pl.FunctionType.AIC)"), std::string::npos) << lowered;
    EXPECT_NE(lowered.find("pl.MemRef(0, 1024), pl.Mem.Acc] = pl.tile.matmul_acc(acc, a0, b0)"), std::string::npos)
        << lowered;
  }
}

TEST(RoundTrip, ScopeNameHintsAndSeveralOutputs) {
  std::string lowered = LoweredRoundTrip(Request(R"(@pl.jit
def two(a: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="both"):
        t = pl.load(a, [0, 0], [16, 16])
        e = pl.load(d, [0, 0], [16, 16])
        pl.store(t, [0, 0], c)
        pl.store(pl.add(t, e), [0, 0], d)
    return c
)",
                                                 {{"a", {16, 16}}, {"c", {16, 16}}, {"d", {16, 16}}}));
  EXPECT_NE(lowered.find("-> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:"), std::string::npos)
      << lowered;
  EXPECT_NE(lowered.find("        self.both(a, d, c, attrs={\"arg_directions\": [\"Input\", \"InOut\", "
                         "\"OutputExisting\"]})\n"),
            std::string::npos)
      << lowered;
}

// ---- programs written by hand -------------------------------------------------------------------

constexpr const char* kDag = R"(@pl.program
class _jit_dag:
    @pl.function(type=pl.FunctionType.Opaque)
    def dag(self, a: pl.Tensor[[16, 16], pl.FP32], f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)
        c_1: pl.Tensor[[16, 16], pl.FP32] = self.add_scalar(a, 1.0, c)
        f_1: pl.Tensor[[16, 16], pl.FP32] = self.add_scalar(c_1, 2.0, f)
        return f_1

    @pl.function(type=pl.FunctionType.InCore)
    def add_scalar(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, s)
        pl.tile.store(r, [0, 0], out)
        return out
)";

TEST(RoundTrip, TheFrontendsProgramParsesFromItsText) {
  EXPECT_EQ(ProgramText(kDag), kDag);
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(kDag, kFile);
  ASSERT_TRUE(program) << program.error().str();
  EXPECT_EQ((*program)->name(), "_jit_dag");
  EXPECT_EQ((*program)->entry_name(), "dag");
  auto kernel = (*program)->Find("add_scalar");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->type(), ir::FunctionType::InCore);
  EXPECT_EQ(kernel->param_directions()[2], ir::ParamDirection::Out);
  EXPECT_EQ(kernel->span().str(), "/src/kernels.py:11:5");
  // The same program as the frontend builds it from the @pl.jit source.
  auto request = AddScalarDagRequest();
  auto jit = ParseJitFunction(request);
  ASSERT_TRUE(jit) << jit.error().str();
  EXPECT_EQ(ir::StructuralDiff(**jit, **program), std::nullopt);
}

TEST(RoundTrip, MemRefsAndDirectionsAreRestored) {
  constexpr const char* kLowered = R"(@pl.program
class placed:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        pl.tile.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out_1: pl.Tensor[[16, 16], pl.FP32] = self.k(x, out, attrs={"arg_directions": ["Input", "OutputExisting"]})
        return out_1
)";
  EXPECT_EQ(ProgramText(kLowered), kLowered);
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(kLowered, kFile);
  ASSERT_TRUE(program) << program.error().str();
  EXPECT_EQ((*program)->entry_name(), "main");
  const auto& stmts = ir::FlattenStmts((*program)->Find("k")->body());
  const auto* tile = stmts[0]->As<ir::AssignStmt>()->var()->type()->As<ir::TileType>();
  ASSERT_TRUE(tile && tile->memref());
  EXPECT_EQ(*tile->memref(), (ir::TileMemRef{0, 1024}));
  const auto main_stmts = ir::FlattenStmts((*program)->Find("main")->body());
  const auto* call = main_stmts[0]->As<ir::AssignStmt>()->value()->As<ir::Call>();
  EXPECT_EQ(call->arg_directions(),
            (std::vector<ir::ArgDirection>{ir::ArgDirection::Input, ir::ArgDirection::OutputExisting}));
  // pl.adir spellings read the same.
  std::string adir = kLowered;
  adir.replace(adir.find("[\"Input\", \"OutputExisting\"]"), 27, "[pl.adir.input, pl.adir.output_existing]");
  auto same = ParseProgramText(adir, kFile);
  ASSERT_TRUE(same) << same.error().str();
  EXPECT_EQ(ir::PrintProgram(**same), kLowered);
}

TEST(RoundTrip, EveryPrintedForm) {
  // Function attributes, several return values, a call evaluated for its effect, scalar arithmetic
  // (min/max, comparisons, float division, negative and infinite floats), loops with bounds.
  constexpr const char* kForms = R"(@pl.program
class forms:
    @pl.function(type=pl.FunctionType.AIV, attrs={"core_num": 4, "label": "x", "split": False})
    def pair(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        m: pl.Scalar[pl.INDEX] = (min(n, 8)) * 2
        big: pl.Scalar[pl.BOOL] = n >= 4
        h: pl.Scalar[pl.FP32] = n / 2
        for i in pl.range(1, m, 2):
            t: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [(i - 1) // 2, 0], [8, 16])
            u: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.maximums(t, -float("inf"))
            v: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(u, -1.5)
            w: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([8, 16], dtype=pl.FP32, value=float("inf"))
            pl.tile.store(pl.tile.add(v, w), [max(i, 0), 0], c)
        return c, d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], d: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]):
        self.pair(a, 4, c, d, attrs={"arg_directions": ["Input", "Scalar", "OutputExisting", "InOut"]})
        r: tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]] = self.pair(a, 2, c, d)
        self.nothing()
        z: None = self.nothing()
        return

    @pl.function
    def nothing(self):
        pass
)";
  std::string expected = kForms;
  // The bare decorator prints with its default type.
  expected.replace(expected.find("@pl.function\n"), 13, "@pl.function(type=pl.FunctionType.Opaque)\n");
  EXPECT_EQ(ProgramText(kForms), expected);
}

TEST(RoundTrip, TheEntryIsTheFunctionNobodyCalls) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(R"(@pl.program
class p:
    @pl.function(type=pl.FunctionType.InCore)
    def unused(self):
        return

    @pl.function(type=pl.FunctionType.Opaque)
    def helper(self):
        return

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self):
        self.helper()
        return
)",
                                  kFile);
  ASSERT_TRUE(program) << program.error().str();
  EXPECT_EQ((*program)->entry_name(), "main");
}

TEST(RoundTrip, StructuralDiffNamesTheFirstDifference) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto parse = [](const std::string& text) {
    auto program = ParseProgramText(text, kFile);
    EXPECT_TRUE(program) << program.error().str();
    return *program;
  };
  const std::string base = R"(@pl.program
class p:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        u: pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        v: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.add(t, u)
        w: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.muls(v, 2.0)
        pl.tile.store(w, [0, 0], out)
        return out
)";
  auto variant = [&](const std::vector<std::pair<std::string, std::string>>& edits) {
    std::string text = base;
    for (const auto& [from, to] : edits) text.replace(text.find(from), from.size(), to);
    return ir::StructuralDiff(*parse(base), *parse(text)).value_or("");
  };
  EXPECT_EQ(ir::StructuralDiff(*parse(base), *parse(base)), std::nullopt);
  // Names are not compared; bindings are.
  EXPECT_EQ(variant({{"u: pl", "renamed: pl"}, {"add(t, u)", "add(t, renamed)"}}), "");
  EXPECT_EQ(variant({{"add(t, u)", "add(u, t)"}}),
            "function 'k': statement 2: 'tile.add' argument 0: 't' refers to another variable ('u')");
  EXPECT_EQ(variant({{"2.0", "3.0"}}),
            "function 'k': statement 3: 'tile.muls' argument 1: 2.0 (pl.Scalar[pl.FP32]) vs 3.0 (pl.Scalar[pl.FP32])");
  EXPECT_EQ(variant({{"MemRef(1024, 1024)", "MemRef(2048, 1024)"}}),
            "function 'k': statement 1: 'u' has type pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec] vs "
            "pl.Tile[[16, 16], pl.FP32, pl.MemRef(2048, 1024), pl.Mem.Vec]");
  EXPECT_EQ(variant({{"FunctionType.AIV", "FunctionType.InCore"}}), "function 'k': types differ: AIV vs InCore");
}

// ---- diagnostics --------------------------------------------------------------------------------

// A one-kernel program whose kernel body is `body` (from line 5 of kFile, 8 spaces in).
std::string KernelWith(const std::string& body,
                       const std::string& decorator = "@pl.function(type=pl.FunctionType.InCore)",
                       const std::string& params = "self, x: pl.Tensor[[16, 16], pl.FP32]") {
  return ProgramText("@pl.program\nclass p:\n    " + decorator + "\n    def k(" + params + "):\n" + body);
}

TEST(RoundTripDiagnostics, UnknownFunctionType) {
  EXPECT_EQ(KernelWith("        return\n", "@pl.function(type=pl.FunctionType.Kernel)"),
            "/src/kernels.py:3:23: error: unknown function type 'pl.FunctionType.Kernel'\n"
            "  help: function types: pl.FunctionType.{Opaque, Orchestration, InCore, AIC, AIV, Group, Spmd, Inline}");
  EXPECT_EQ(KernelWith("        return\n", "@pl.function(level=pl.Level.HOST)"),
            "/src/kernels.py:3:18: error: @pl.function argument 'level' is not supported yet");
}

TEST(RoundTripDiagnostics, AutoScopeIsABoolLiteral) {
  EXPECT_EQ(KernelWith("        return\n", "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=0)"),
            "/src/kernels.py:3:65: error: @pl.function(auto_scope=...) must be a bool literal (True or False)\n"
            "  help: write auto_scope=False to place the runtime scopes by hand");
}

// `carry=(...)`, as ClassifyIterArgCarry prints it: one known kind per carried value, with init_values.
TEST(RoundTripDiagnostics, CarryKindsOfALoop) {
  const std::string orchestration = "@pl.function(type=pl.FunctionType.Orchestration)";
  EXPECT_EQ(KernelWith("        for i, (n,) in pl.range(2, init_values=(0,), carry=(\"scalar\", \"alias\")):\n"
                       "            m = pl.yield_(n)\n        return\n",
                       orchestration),
            "/src/kernels.py:5:60: error: carry= takes a tuple of 1 carry kinds, one per value in init_values");
  EXPECT_EQ(KernelWith("        for i, (n,) in pl.range(2, init_values=(0,), carry=(\"copied\",)):\n"
                       "            m = pl.yield_(n)\n        return\n",
                       orchestration),
            "/src/kernels.py:5:61: error: a carry kind is one of \"scalar\", \"task_id\", \"task_id_array\", "
            "\"alias\", \"rebind\" or \"unclassified\"");
  EXPECT_EQ(KernelWith("        for i in pl.range(2, carry=(\"scalar\",)):\n            pass\n        return\n",
                       orchestration),
            "/src/kernels.py:5:36: error: pl.range(..., carry=...) needs init_values");
}

TEST(RoundTripDiagnostics, CallToAMissingFunction) {
  EXPECT_EQ(KernelWith("        self.missing(x)\n        return\n", "@pl.function(type=pl.FunctionType.Opaque)"),
            "/src/kernels.py:5:9: error: program 'p' has no function 'missing'\n  help: its functions: k");
}

TEST(RoundTripDiagnostics, MethodWithoutSelf) {
  EXPECT_EQ(KernelWith("        return\n", "@pl.function(type=pl.FunctionType.InCore)",
                       "x: pl.Tensor[[16, 16], pl.FP32]"),
            "/src/kernels.py:4:11: error: function 'k' must take 'self' as its first parameter\n"
            "  help: functions of a @pl.program are methods: def f(self, ...); call them as self.f(...)");
  EXPECT_EQ(KernelWith("        return\n", "@pl.function(type=pl.FunctionType.InCore)", ""),
            "/src/kernels.py:4:5: error: function 'k' must take 'self' as its first parameter\n"
            "  help: functions of a @pl.program are methods: def f(self, ...); call them as self.f(...)");
}

TEST(RoundTripDiagnostics, ClassContents) {
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    def k(self):\n        return\n"),
            "/src/kernels.py:3:5: error: method 'k' is not a @pl.function\n"
            "  help: decorate it with @pl.function(type=pl.FunctionType.<type>)");
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    N = 4\n"),
            "/src/kernels.py:3:5: error: a @pl.program class holds only @pl.function methods, not 'Assign' statements");
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    \"\"\"Nothing.\"\"\"\n"),
            "/src/kernels.py:2:1: error: program 'p' defines no @pl.function");
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    @pl.function\n    def k(self):\n        return\n\n"
                        "    @pl.function\n    def k(self):\n        return\n"),
            "/src/kernels.py:8:5: error: function 'k' is defined twice in program 'p'");
  EXPECT_EQ(ProgramText("def f():\n    pass\n"),
            "/src/kernels.py:1:1: error: expected exactly one class definition (a @pl.program)");
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    @staticmethod\n    def k(self):\n        return\n"),
            "/src/kernels.py:3:6: error: unsupported decorator 'staticmethod' on function 'k'\n"
            "  help: the functions of a @pl.program are decorated with @pl.function(...)");
}

TEST(RoundTripDiagnostics, PythonSyntaxErrorKeepsItsPosition) {
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    @pl.function\n    def k(self):\n        x = (\n", 10),
            "/src/kernels.py:15:13: error: '(' was never closed");
}

TEST(RoundTripDiagnostics, Annotations) {
  EXPECT_EQ(KernelWith("        return\n", "@pl.function", "self, x"),
            "/src/kernels.py:4:17: error: parameter 'x' is missing a type annotation");
  EXPECT_EQ(KernelWith("        return\n", "@pl.function", "self, x: pl.Tensor"),
            "/src/kernels.py:4:20: error: 'pl.Tensor' needs its shape and dtype here\n"
            "  help: write pl.Tensor[[16, 16], pl.FP32]");
  EXPECT_EQ(KernelWith("        return\n", "@pl.function", "self, s: pl.Out[pl.Scalar[pl.FP32]]"),
            "/src/kernels.py:4:20: error: scalar parameter 's' cannot be an output\n  help: return a tensor instead");
  EXPECT_EQ(KernelWith("        t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0), pl.Mem.Vec] = "
                       "pl.tile.load(x, [0, 0], [16, 16])\n"
                       "        return\n"),
            "/src/kernels.py:5:39: error: expected pl.MemRef(byte_offset, size) with two integer literals\n"
            "  help: named and slotted memrefs (pl.MemRef(\"name\")) are not supported yet");
  EXPECT_EQ(KernelWith("        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [16, 16])\n"
                       "        return\n"),
            "/src/kernels.py:5:12: error: 't' is declared pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] but the value "
            "assigned is pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]");
}

TEST(RoundTripDiagnostics, ReturnsMatchTheDeclaration) {
  EXPECT_EQ(KernelWith("        return x\n"),
            "/src/kernels.py:5:9: error: function 'k' returns pl.Tensor[[16, 16], pl.FP32] but declares nothing\n"
            "  help: annotate the return type: def f(self, ...) -> pl.Tensor[[shape], dtype]");
  EXPECT_EQ(ProgramText("@pl.program\nclass p:\n    @pl.function\n"
                        "    def k(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
                        "        return x\n"),
            "/src/kernels.py:5:9: error: function 'k' returns pl.Tensor[[16, 16], pl.FP32] but declares "
            "pl.Tensor[[8, 16], pl.FP32]");
}

constexpr const char* kCaller = R"(@pl.program
class p:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return x

    @pl.function
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[8, 8], pl.FP32]):
        CALL
        return
)";

std::string CallError(const std::string& call) {
  std::string text = kCaller;
  text.replace(text.find("CALL"), 4, call);
  return ProgramText(text);
}

TEST(RoundTripDiagnostics, CallsAreCheckedAgainstTheSignature) {
  EXPECT_EQ(CallError("self.k(x)"), "/src/kernels.py:9:9: error: k() is missing parameter 's'");
  EXPECT_EQ(CallError("self.k(x, 1.0, 2.0)"), "/src/kernels.py:9:9: error: k() takes 2 arguments, got 3");
  EXPECT_EQ(CallError("self.k(y, 1.0)"),
            "/src/kernels.py:9:9: error: k() parameter 'x' expects pl.Tensor[[16, 16], pl.FP32], got "
            "pl.Tensor[[8, 8], pl.FP32]");
  EXPECT_EQ(CallError("self.k(x, t=1.0)"), "/src/kernels.py:9:19: error: k() has no parameter 't'");
  EXPECT_EQ(CallError("self.k(x, 1.0, attrs={\"arg_directions\": [\"Input\", \"Sideways\"]})"),
            "/src/kernels.py:9:59: error: unknown argument direction\n"
            "  help: directions: \"Input\", \"Output\", \"InOut\", \"OutputExisting\", \"NoDep\", \"Scalar\"");
  EXPECT_EQ(CallError("self.k(x, 1.0, attrs={\"arg_directions\": [\"Input\"]})"),
            "/src/kernels.py:9:9: error: k() takes 2 arguments but has 1 arg_directions");
  EXPECT_EQ(CallError("self.k(x, 1.0, attrs={\"core\": 1})"),
            "/src/kernels.py:9:31: error: the only call attribute is \"arg_directions\"");
  EXPECT_EQ(CallError("helper(x)"),
            "/src/kernels.py:9:9: error: cannot call 'helper' in a @pl.program; only pl.* operations and the "
            "program's functions (self.<name>) are available");
}

TEST(RoundTripDiagnostics, KernelsDoNotCallFunctionsOrOpenScopes) {
  EXPECT_EQ(KernelWith("        self.k(x)\n        return\n"),
            "/src/kernels.py:5:9: error: function 'k' is called inside a kernel\n"
            "  help: call functions from an Opaque or Orchestration function, outside pl.at scopes");
  EXPECT_EQ(KernelWith("        with pl.at(level=pl.Level.CORE_GROUP):\n            pass\n        return\n",
                       "@pl.function(type=pl.FunctionType.AIV)"),
            "/src/kernels.py:5:14: error: a pl.at scope cannot appear inside a kernel\n"
            "  help: a kernel function is already one kernel");
}

// ---- loop-carried values and if/else ---------------------------------------------------------------

constexpr const char* kAccumulateWithBranch = R"(@pl.jit
def acc_if(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for i in pl.range(2):
            t = x[i * 16 : i * 16 + 16, :]
            if i == 0:
                u = pl.mul(t, 2.0)
            else:
                u = pl.exp(t)
            acc = pl.add(acc, u)
        y[0:16, 0:16] = acc
    return y
)";

// The carried tile, its next value and the loop's result share one buffer (MemRef(0, 1024)), as do
// the if's result and what each branch yields (MemRef(2048, 1024)).
TEST(RoundTrip, LoopCarriedTileAndIfResultsShareTheirBuffers) {
  std::string lowered = LoweredRoundTrip(Request(kAccumulateWithBranch, {{"x", {32, 16}}, {"y", {16, 16}}}));
  EXPECT_EQ(lowered.substr(0, lowered.find("\n\n")), R"(@pl.program
class _jit_acc_if:
    @pl.function(type=pl.FunctionType.AIV)
    def acc_if_incore_0(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for i, (acc_1,) in pl.range(2, init_values=(acc,)):
            t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 16])
            if i == 0:
                u: pl.Tile[[16, 16], pl.FP32, pl.MemRef(2048, 1024), pl.Mem.Vec] = pl.tile.muls(t, 2.0)
                u_1: pl.Tile[[16, 16], pl.FP32, pl.MemRef(2048, 1024), pl.Mem.Vec] = pl.yield_(u)
            else:
                u_2: pl.Tile[[16, 16], pl.FP32, pl.MemRef(2048, 1024), pl.Mem.Vec] = pl.tile.exp(t)
                u_1: pl.Tile[[16, 16], pl.FP32, pl.MemRef(2048, 1024), pl.Mem.Vec] = pl.yield_(u_2)
            acc_2: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.tile.add(acc_1, u_1)
            acc_3: pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec] = pl.yield_(acc_2)
        pl.tile.store(acc_3, [0, 0], y)
        return y)");
}

// The explicit forms, written by hand, parse and print back as written.
TEST(RoundTrip, ExplicitCarriesAndYieldsParse) {
  constexpr const char* kProgram = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        init: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for i, (a, b) in pl.range(4, init_values=(init, init)):
            if i < 2:
                n: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(a, 1.0)
                c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(n)
            else:
                c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(a)
            ra, rb = pl.yield_(c, b)
        pl.tile.store(ra, [0, 0], y)
        return y
)";
  EXPECT_EQ(ProgramText(kProgram), kProgram);
}

TEST(RoundTrip, ALoopYieldMustMatchItsCarries) {
  EXPECT_EQ(ProgramText(R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        init: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        for i, (a,) in pl.range(4, init_values=(init,)):
            s: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(a, a)
            r: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.yield_(s)
        return y
)"),
            "/src/kernels.py:8:13: error: 'a' is carried from one loop iteration to the next, but its type changes "
            "from pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] to pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec]\n"
            "  help: a loop-carried value keeps its shape, dtype and memory space in every iteration");
}

}  // namespace
}  // namespace pypto::frontend::testing
