// Explicit task order in orchestration code (`as tid`, `deps=[...]`, pl.system.task_dummy and
// task_invalid): source -> printed IR (ParseText also checks the printer's round trip, parsed and
// lowered), and the diagnostics with their positions.
#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

std::string Parse(const std::string& body) { return ParseOrchestration(body); }

constexpr const char* kPrintedHeader = kPrintedOrchestrationHeader;

TEST(TaskOrder, AScopeNamesItsTaskIdAndWaitsForOthers) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"s1\") as first:\n"
                  "        y[0:8, :] = pl.add(x[0:8, :], 1.0)\n"
                  "    with pl.at(level=pl.Level.CORE_GROUP, deps=[first, None]) as second:\n"
                  "        y[8:16, :] = pl.add(x[8:16, :], 1.0)\n"
                  "    join = pl.system.task_dummy(deps=[first, second])\n"
                  "    with pl.spmd(2, deps=[join, pl.system.task_invalid()]):\n"
                  "        pl.store(pl.exp(pl.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"s1\") as first:\n"
                "            pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [8, 32]), 1.0), [0, 0], y)\n"
                "        with pl.at(level=pl.Level.CORE_GROUP, deps=[first]) as second:\n"
                "            pl.tile.store(pl.tile.adds(pl.tile.load(x, [8, 0], [8, 32]), 1.0), [8, 0], y)\n"
                "        join: pl.Scalar[pl.TASK_ID] = pl.system.task_dummy([first, second])\n"
                "        with pl.spmd(2, deps=[join, pl.system.task_invalid()]):\n"
                "            pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                "        return y\n");
}

// allow_early_resolve=True rides with the launch's order: printed on its header, parsed back.
TEST(TaskOrder, AllowEarlyResolveIsPartOfALaunchsOrder) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"s1\", allow_early_resolve=True) as first:\n"
                  "        y[0:8, :] = pl.add(x[0:8, :], 1.0)\n"
                  "    with pl.spmd(2, deps=[first], allow_early_resolve=True):\n"
                  "        pl.store(pl.exp(pl.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                  "    with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=False):\n"
                  "        y[8:16, :] = pl.add(x[8:16, :], 1.0)\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"s1\", allow_early_resolve=True) as first:\n"
                "            pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [8, 32]), 1.0), [0, 0], y)\n"
                "        with pl.spmd(2, deps=[first], allow_early_resolve=True):\n"
                "            pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                "            pl.tile.store(pl.tile.adds(pl.tile.load(x, [8, 0], [8, 32]), 1.0), [8, 0], y)\n"
                "        return y\n");
}

TEST(TaskOrder, AllowEarlyResolveIsTrueOrFalse) {
  EXPECT_EQ(Parse("    with pl.spmd(2, allow_early_resolve=None):\n"
                  "        pl.store(pl.exp(pl.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                  "    return y\n"),
            "/src/kernels.py:3:41: error: pl.spmd allow_early_resolve must be True or False");
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=x):\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:63: error: pl.at allow_early_resolve must be True or False");
}

TEST(TaskOrder, AnOrchestrationLoopCarriesATaskIdAcrossIterations) {
  EXPECT_EQ(Parse("    prev = pl.system.task_invalid()\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as t:\n"
                  "            y[:] = pl.add(x, 1.0)\n"
                  "        prev = t\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n"
                "        for i, (prev_1,) in pl.range(2, init_values=(prev,)):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, deps=[prev_1]) as t:\n"
                "                pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [16, 32]), 1.0), [0, 0], y)\n"
                "            prev_2: pl.Scalar[pl.TASK_ID] = t\n"
                "            prev_3: pl.Scalar[pl.TASK_ID] = pl.yield_(prev_2)\n"
                "        return y\n");
}

TEST(TaskOrder, DepsMustBeAListOfTaskIds) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:49: error: deps= takes TaskIds, but 'x' is pl.Tensor[[16, 32], pl.FP32]\n"
            "  help: bind a launch's TaskId with `with pl.at(...) as tid:` or `out, tid = pl.submit(...)`");
  EXPECT_EQ(Parse("    with pl.spmd(2, deps=3):\n"
                  "        pl.store(pl.exp(pl.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                  "    return y\n"),
            "/src/kernels.py:3:26: error: deps= takes a list of TaskIds, such as deps=[tid]");
}

TEST(TaskOrder, TaskIdsAreOrchestrationValues) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "        t = pl.system.task_dummy(deps=[])\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:4:13: error: pl.system.task_dummy orders tasks in orchestration code, not in a kernel");
  EXPECT_EQ(Parse("    join = pl.system.task_dummy([x])\n"
                  "    return y\n"),
            "/src/kernels.py:3:34: error: deps= takes TaskIds, but 'x' is pl.Tensor[[16, 32], pl.FP32]\n"
            "  help: bind a launch's TaskId with `with pl.at(...) as tid:` or `out, tid = pl.submit(...)`");
}

TEST(TaskOrder, ARegionsTaskIdIsNotVisibleInsideIt) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP, deps=[me]) as me:\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:49: error: name 'me' is not defined");
}

}  // namespace
}  // namespace pypto::frontend::testing
