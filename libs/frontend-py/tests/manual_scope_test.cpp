// Runtime scopes (`with pl.manual_scope():`, `with pl.scope(mode=...)`) and TaskId arrays
// (pl.array.create, `tids[i] = t`, `deps=[tids]`, `tids[i]`): source -> printed IR (ParseText also
// checks the printer's round trip, parsed and lowered), and the diagnostics with their positions.
#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

std::string Parse(const std::string& body) { return ParseOrchestration(body); }

constexpr const char* kPrintedHeader = kPrintedOrchestrationHeader;

TEST(ManualScope, ALoopOfLaunchesRecordsItsTaskIdsForOneConsumer) {
  EXPECT_EQ(Parse("    with pl.manual_scope():\n"
                  "        tids = pl.array.create(4, pl.TASK_ID)\n"
                  "        for i in pl.range(4):\n"
                  "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"part\") as t:\n"
                  "                y[i * 4 : i * 4 + 4, :] = pl.add(x[i * 4 : i * 4 + 4, :], 1.0)\n"
                  "            tids[i] = t\n"
                  "        first = tids[0]\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP, deps=[tids, first]):\n"
                  "            y[0:4, :] = pl.add(x[0:4, :], 2.0)\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
                "            tids: pl.Array[4, pl.TASK_ID] = pl.array.create(4, dtype=pl.TASK_ID)\n"
                "            for i, (tids_1,) in pl.range(4, init_values=(tids,)):\n"
                "                with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"part\") as t:\n"
                "                    pl.tile.store(pl.tile.adds(pl.tile.load(x, [i * 4, 0], [4, 32]), 1.0), "
                "[i * 4, 0], y)\n"
                "                tids_2: pl.Array[4, pl.TASK_ID] = pl.array.update_element(tids_1, i, t)\n"
                "                tids_3: pl.Array[4, pl.TASK_ID] = pl.yield_(tids_2)\n"
                "            first: pl.Scalar[pl.TASK_ID] = pl.array.get_element(tids_3, 0)\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, deps=[tids_3, first]):\n"
                "                pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [4, 32]), 2.0), [0, 0], y)\n"
                "        return y\n");
}

TEST(ManualScope, ScopeModesPrintAsUpstreamDoes) {
  EXPECT_EQ(Parse("    with pl.scope():\n"
                  "        with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
                  "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "                y[:] = pl.add(x, 1.0)\n"
                  "    with pl.scope(mode=pl.ScopeMode.AUTO):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "            y[:] = pl.add(x, 2.0)\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        with pl.scope():\n"
                "            with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
                "                with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                    pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [16, 32]), 1.0), [0, 0], y)\n"
                "        with pl.scope():\n"
                "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [16, 32]), 2.0), [0, 0], y)\n"
                "        return y\n");
}

TEST(ManualScope, IsOrchestrationCode) {
  EXPECT_EQ(Parse("    with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "        with pl.manual_scope():\n"
                  "            y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:4:14: error: pl.manual_scope() cannot appear inside a kernel\n"
            "  help: runtime scopes order the launches of orchestration code; open it around the pl.at scopes or "
            "kernel calls instead");
}

TEST(ManualScope, DoesNotNest) {
  EXPECT_EQ(Parse("    with pl.manual_scope():\n"
                  "        with pl.manual_scope():\n"
                  "            y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:4:14: error: pl.manual_scope() cannot be nested inside another manual scope\n"
            "  help: a manual scope already covers everything inside it; remove the inner one");
  EXPECT_EQ(Parse("    with pl.manual_scope():\n"
                  "        for i in pl.range(2):\n"
                  "            with pl.scope(mode=pl.ScopeMode.AUTO):\n"
                  "                y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:5:18: error: an AUTO scope (pl.scope()) cannot be nested inside a manual scope\n"
            "  help: end the manual scope first, or order these launches with deps= instead");
}

TEST(ManualScope, SpellingMistakes) {
  EXPECT_EQ(Parse("    with pl.manual_scope(name=\"a\"):\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:10: error: pl.manual_scope() takes no arguments");
  EXPECT_EQ(Parse("    with pl.scope(mode=pl.ScopeMode.SOMETIMES):\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:24: error: unknown scope mode 'pl.ScopeMode.SOMETIMES'\n"
            "  help: use pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL");
  EXPECT_EQ(Parse("    with pl.manual_scope() as s:\n"
                  "        y[:] = pl.add(x, 1.0)\n"
                  "    return y\n"),
            "/src/kernels.py:3:31: error: pl.manual_scope() binds no name\n"
            "  help: remove the `as ...`; launches inside bind their TaskIds with `as tid` or pl.submit");
}

TEST(ManualScope, TaskIdArrayMistakes) {
  EXPECT_EQ(Parse("    tids = pl.array.create(2, pl.FP32)\n"
                  "    return y\n"),
            "/src/kernels.py:3:12: error: pl.array.create: arrays hold integers, BOOL or TaskIds, not FP32\n"
            "  help: use pl.TASK_ID for the TaskIds of launches");
  EXPECT_EQ(Parse("    tids = pl.array.create(2, pl.TASK_ID)\n"
                  "    tids[2] = pl.system.task_invalid()\n"
                  "    return y\n"),
            "/src/kernels.py:4:5: error: index 2 is out of range for pl.Array[2, pl.TASK_ID]");
  EXPECT_EQ(Parse("    tids = pl.array.create(2, pl.TASK_ID)\n"
                  "    tids[0] = 1\n"
                  "    return y\n"),
            "/src/kernels.py:4:15: error: pl.Array[2, pl.TASK_ID] holds pl.TASK_ID elements, got pl.Scalar[pl.INDEX]");
}

}  // namespace
}  // namespace pypto::frontend::testing
