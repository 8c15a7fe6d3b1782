// pl.spmd(..., sync_start=True) in its three forms, pl.system.syncall inside the kernel, and the
// rule that a hard syncall needs a co-started launch: source -> printed IR (which round-trips, as
// lowered too), and each diagnostic with its position.
#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

// Lines 1-9 of kFile: four blocks each write their row of `slots`, wait for all, then copy their
// neighbour's row into `y`.
constexpr const char* kNeighbours = R"(@pl.jit
def neighbours(x: pl.Tensor[[4, 16], pl.FP32], slots: pl.InOut[pl.Tensor[[4, 16], pl.FP32]], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
    with pl.spmd(4, sync_start=True, name_hint="nb"):
        b = pl.tile.get_block_idx()
        pl.store(pl.load(x, [b, 0], [1, 16]), [b, 0], slots)
        pl.system.syncall()
        pl.store(pl.load(slots, [(b + 1) % 4, 0], [1, 16]), [b, 0], y)
    return y
)";

std::string Parse(const std::string& source) {
  return ParseText(Request(source, {{"x", {4, 16}}, {"slots", {4, 16}}, {"y", {4, 16}}}));
}

// kNeighbours with `from` replaced by `to`.
std::string Edited(std::string_view from, std::string_view to) {
  std::string source = kNeighbours;
  const size_t at = source.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  source.replace(at, from.size(), to);
  return Parse(source);
}

TEST(SpmdSyncStart, ScopeFormKeepsSyncStartAndTheSyncall) {
  EXPECT_EQ(Parse(kNeighbours),
            "@pl.program\n"
            "class _jit_neighbours:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def neighbours(self, x: pl.Tensor[[4, 16], pl.FP32], slots: pl.InOut[pl.Tensor[[4, 16], pl.FP32]], "
            "y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:\n"
            "        with pl.spmd(4, sync_start=True, name_hint=\"nb\"):\n"
            "            b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
            "            pl.tile.store(pl.tile.load(x, [b, 0], [1, 16]), [b, 0], slots)\n"
            "            pl.system.syncall()\n"
            "            pl.tile.store(pl.tile.load(slots, [(b + 1) % 4, 0], [1, 16]), [b, 0], y)\n"
            "        return y\n");
}

TEST(SpmdSyncStart, LoopFormAndSyncallArguments) {
  const std::string printed = Edited("    with pl.spmd(4, sync_start=True, name_hint=\"nb\"):\n        b = pl.tile.get_block_idx()\n",
                                     "    for b in pl.spmd(4, sync_start=True):\n");
  EXPECT_NE(printed.find("        with pl.spmd(4, sync_start=True):\n"
                         "            b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"),
            std::string::npos)
      << printed;
  const std::string explicit_args =
      Edited("pl.system.syncall()", "pl.system.syncall(core_type=\"aiv\", mode=\"hard\", gm_workspace=None)");
  EXPECT_NE(explicit_args.find("            pl.system.syncall(core_type=\"aiv\", mode=\"hard\")\n"), std::string::npos)
      << explicit_args;
}

TEST(SpmdSyncStart, AsTidFormParses) {
  const std::string printed = Edited("name_hint=\"nb\"):", "name_hint=\"nb\") as tid:");
  EXPECT_NE(printed.find("        with pl.spmd(4, sync_start=True, name_hint=\"nb\") as tid:\n"), std::string::npos)
      << printed;
}

// A program calling a kernel in the dispatch form: the launch keyword sits on the call, and the
// printer writes it back as the `with` around it.
constexpr const char* kDispatch = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
        t: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [b, 0], [1, 16])
        pl.system.syncall()
        y_1: pl.Tensor[[4, 16], pl.FP32] = pl.tile.store(t, [b, 0], y)
        return y_1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        with pl.spmd(core_num=4, sync_start=True):
            y_1: pl.Tensor[[4, 16], pl.FP32] = self.k(x, y)
        return y_1
)";

TEST(SpmdSyncStart, DispatchFormRoundTrips) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(kDispatch, kFile);
  ASSERT_TRUE(program) << program.error().str();
  EXPECT_EQ(ir::PrintProgram(**program), kDispatch);
  EXPECT_EQ(RoundTripFailure(**program), "");
  auto lowered = LowerForTest(*program);
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(RoundTripFailure(**lowered), "");
}

TEST(SpmdSyncStart, AHardSyncallNeedsSyncStart) {
  EXPECT_EQ(Edited("sync_start=True, ", ""),
            "/src/kernels.py:6:9: error: a hard pl.system.syncall waits for every block of its launch, but this "
            "kernel is not launched with sync_start=True\n"
            "  help: launch it with pl.spmd(N, sync_start=True), so that all N blocks hold a core at once, or use "
            "mode=\"soft\" with a gm_workspace");
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  std::string dispatch = kDispatch;
  dispatch.replace(dispatch.find(", sync_start=True"), 17, "");
  auto program = ParseProgramText(dispatch, kFile);
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().str(),
            "/src/kernels.py:7:9: error: a hard pl.system.syncall waits for every block of its launch, but this "
            "kernel is not launched with sync_start=True\n"
            "  help: launch it with pl.spmd(N, sync_start=True), so that all N blocks hold a core at once, or use "
            "mode=\"soft\" with a gm_workspace");
}

TEST(SpmdSyncStart, SyncallArgumentsAreChecked) {
  EXPECT_EQ(Edited("pl.system.syncall()", "pl.system.syncall(mode=\"fast\")"),
            "/src/kernels.py:6:9: error: pl.system.syncall: mode=\"fast\" is not one of \"hard\", \"soft\"");
  EXPECT_EQ(Edited("pl.system.syncall()", "pl.system.syncall(mode=\"soft\")"),
            "/src/kernels.py:6:9: error: pl.system.syncall: a soft syncall needs gm_workspace\n"
            "  help: pass a zeroed pl.Tensor[[16], pl.INT32] as gm_workspace=, or use mode=\"hard\"");
  EXPECT_EQ(Edited("sync_start=True", "sync_start=1"),
            "/src/kernels.py:3:32: error: pl.spmd sync_start must be True or False");
}

}  // namespace
}  // namespace pypto::frontend::testing
