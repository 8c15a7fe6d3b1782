// Orchestration loops whose kernel scopes update a tensor in place (`t = pl.assemble(t, ...)`,
// `t[a:b, :] = u`): the loop carries nothing, since every iteration writes into the one tensor, and
// after the loop the tensor's name still means that buffer. A tensor rebound to another buffer that the
// next iteration reads is carried. And comparisons of compile-time constants, which fold so
// that an `if` on them keeps only the branch it takes.
#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

std::string Parse(const std::string& body) { return ParseOrchestration(body); }

// The orchestration after OutlineIncoreScopes and the rest of the default pipeline: the kernel calls
// that stay in the loop, and what the code after the loop reads.
std::string Lowered(const std::string& body) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program =
      ParseJitFunction(Request(std::string(kOrchestrationHeader) + body, {{"x", {16, 32}}, {"y", {16, 32}}}));
  if (!program) return program.error().str();
  auto lowered = LowerForTest(*program);
  if (!lowered) return lowered.error().str();
  auto orchestration = (*lowered)->Find("f");
  return orchestration ? ir::PrintFunction(*orchestration) : "no orchestration";
}

constexpr const char* kPrintedHeader = kPrintedOrchestrationHeader;

// Lowered, the kernel writes t (OutputExisting) in every iteration, and the scope after the loop reads
// t itself: the version the call binds inside the loop names the same buffer.
TEST(InPlaceLoop, AssembleIntoATensorInAScopeInARange) {
  const char* body =
      "    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
      "    for i in pl.range(2):\n"
      "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"fill\"):\n"
      "            t = pl.assemble(t, pl.exp(x[i * 8:(i + 1) * 8, :]), [i * 8, 0])\n"
      "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"use\"):\n"
      "        y[:, :] = pl.add(t[:, :], 1.0)\n"
      "    return y\n";
  EXPECT_EQ(Parse(body), std::string(kPrintedHeader) +
                "        t: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
                "        for i in pl.range(2):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"fill\"):\n"
                "                pl.tile.store(pl.tile.exp(pl.tile.load(x, [i * 8, 0], [8, 32])), [i * 8, 0], t)\n"
                "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"use\"):\n"
                "            pl.tile.store(pl.tile.adds(pl.tile.load(t, [0, 0], [16, 32]), 1.0), [0, 0], y)\n"
                "        return y\n");
  EXPECT_EQ(Lowered(body),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def f(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
            "pl.Tensor[[16, 32], pl.FP32]:\n"
            "    with pl.scope():\n"
            "        t: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
            "        for i in pl.range(2):\n"
            "            with pl.scope():\n"
            "                t_1: pl.Tensor[[16, 32], pl.FP32] = self.fill(x, i, t, attrs={\"arg_directions\": "
            "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
            "        y_1: pl.Tensor[[16, 32], pl.FP32] = self.use(t, y, attrs={\"arg_directions\": [\"Input\", "
            "\"OutputExisting\"]})\n"
            "    return y_1\n");
}

TEST(InPlaceLoop, AssembleIntoATensorInAScopeInAParallelLoop) {
  const char* body =
      "    for i in pl.parallel(2):\n"
      "        with pl.at(level=pl.Level.CORE_GROUP):\n"
      "            for h in pl.range(2):\n"
      "                y = pl.assemble(y, pl.exp(x[i * 8:(i + 1) * 8, h * 16:(h + 1) * 16]), [i * 8, h * 16])\n"
      "    return y\n";
  EXPECT_EQ(Parse(body), std::string(kPrintedHeader) +
                "        for i in pl.parallel(2):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                for h in pl.range(2):\n"
                "                    pl.tile.store(pl.tile.exp(pl.tile.load(x, [i * 8, h * 16], [8, 16])), "
                "[i * 8, h * 16], y)\n"
                "        return y\n");
  // The kernel loop updates y in place, so it carries nothing, and the kernel writes y (OutputExisting).
  EXPECT_EQ(Lowered(body),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def f(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
            "pl.Tensor[[16, 32], pl.FP32]:\n"
            "    with pl.scope():\n"
            "        for i in pl.parallel(2):\n"
            "            with pl.scope():\n"
            "                y_1: pl.Tensor[[16, 32], pl.FP32] = self.f_incore_0(x, i, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
            "    return y\n");
}

TEST(InPlaceLoop, SliceAssignmentInAScopeInARange) {
  EXPECT_EQ(Parse("    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "            y[i * 8:(i + 1) * 8, :] = pl.neg(x[i * 8:(i + 1) * 8, :])\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        for i in pl.range(2):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                pl.tile.store(pl.tile.neg(pl.tile.load(x, [i * 8, 0], [8, 32])), [i * 8, 0], y)\n"
                "        return y\n");
}

// Updates under a kernel `if` in a pl.spmd scope: both paths leave the same tensor, so the if merges
// nothing and y is still y after it.
TEST(InPlaceLoop, AssembleUnderABranchInAnSpmdScope) {
  EXPECT_EQ(Parse("    for i in pl.range(2):\n"
                  "        with pl.spmd(2):\n"
                  "            b = pl.tile.get_block_idx()\n"
                  "            if b == i:\n"
                  "                y = pl.assemble(y, pl.exp(x[b * 8:(b + 1) * 8, :]), [b * 8, 0])\n"
                  "            else:\n"
                  "                y = pl.assemble(y, pl.neg(x[b * 8:(b + 1) * 8, :]), [b * 8, 0])\n"
                  "            y[b * 8:b * 8 + 1, :] = pl.abs(x[b * 8:b * 8 + 1, :])\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        for i in pl.range(2):\n"
                "            with pl.spmd(2):\n"
                "                b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
                "                if b == i:\n"
                "                    pl.tile.store(pl.tile.exp(pl.tile.load(x, [b * 8, 0], [8, 32])), [b * 8, 0], y)\n"
                "                else:\n"
                "                    pl.tile.store(pl.tile.neg(pl.tile.load(x, [b * 8, 0], [8, 32])), [b * 8, 0], y)\n"
                "                pl.tile.store(pl.tile.abs(pl.tile.load(x, [b * 8, 0], [1, 32])), [b * 8, 0], y)\n"
                "        return y\n");
}

// A loop that chains its launches carries the TaskId and nothing else: y is updated in place.
TEST(InPlaceLoop, AssembleInALoopThatCarriesATaskId) {
  EXPECT_EQ(Parse("    prev = pl.system.task_invalid()\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as t:\n"
                  "            y = pl.assemble(y, pl.exp(x[i * 8:(i + 1) * 8, :]), [i * 8, 0])\n"
                  "        prev = t\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n"
                "        for i, (prev_1,) in pl.range(2, init_values=(prev,)):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, deps=[prev_1]) as t:\n"
                "                pl.tile.store(pl.tile.exp(pl.tile.load(x, [i * 8, 0], [8, 32])), [i * 8, 0], y)\n"
                "            prev_2: pl.Scalar[pl.TASK_ID] = t\n"
                "            prev_3: pl.Scalar[pl.TASK_ID] = pl.yield_(prev_2)\n"
                "        return y\n");
}

// `t` takes the buffer of `u` in the first iteration, which the next one reads: the loop carries `t`
// (ClassifyIterArgCarry later makes it a rebind carry).
TEST(InPlaceLoop, ATensorReboundToAnotherBufferIsCarried) {
  EXPECT_EQ(Parse("    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    u = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "            t = pl.assemble(u, pl.exp(t[0:8, :]), [i * 8, 0])\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        t: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
                "        u: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
                "        for i, (t_1,) in pl.range(2, init_values=(t,)):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                t_2: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(pl.tile.exp(pl.tile.load(t_1, [0, 0], "
                "[8, 32])), [i * 8, 0], u)\n"
                "            t_3: pl.Tensor[[16, 32], pl.FP32] = pl.yield_(t_2)\n"
                "        return y\n");
  // Not read by the body, `t` is not carried; after the loop it has no single value.
  EXPECT_EQ(Parse("    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    u = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "            t = pl.assemble(u, pl.exp(x[0:8, :]), [i * 8, 0])\n"
                  "    return t\n"),
            "/src/kernels.py:8:12: error: 't' is reassigned in each iteration of the orchestration loop at line 5, "
            "so it has no single value after the loop\n  help: give the loop's value a name of its own");
  // In a loop that carries a TaskId, read after the loop: carried alongside it, after the loop `t`
  // names `y`.
  EXPECT_EQ(Parse("    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    prev = pl.system.task_invalid()\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as tid:\n"
                  "            t = pl.assemble(y, pl.exp(x[0:8, :]), [i * 8, 0])\n"
                  "        prev = tid\n"
                  "    return t\n"),
            std::string(kPrintedHeader) +
                "        t: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
                "        prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n"
                "        for i, (t_1, prev_1) in pl.range(2, init_values=(t, prev)):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, deps=[prev_1]) as tid:\n"
                "                t_2: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], "
                "[8, 32])), [i * 8, 0], y)\n"
                "            prev_2: pl.Scalar[pl.TASK_ID] = tid\n"
                "            t_3, prev_3 = pl.yield_(t_2, prev_2)\n"
                "        return t_3\n");
  // Read by nothing, it is not carried: the loop carries the TaskId alone.
  EXPECT_EQ(Parse("    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    prev = pl.system.task_invalid()\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as tid:\n"
                  "            t = pl.assemble(y, pl.exp(x[0:8, :]), [i * 8, 0])\n"
                  "        prev = tid\n"
                  "    return y\n"),
            std::string(kPrintedHeader) +
                "        t: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.create([16, 32], dtype=pl.FP32)\n"
                "        prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n"
                "        for i, (prev_1,) in pl.range(2, init_values=(prev,)):\n"
                "            with pl.at(level=pl.Level.CORE_GROUP, deps=[prev_1]) as tid:\n"
                "                t_1: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], "
                "[8, 32])), [i * 8, 0], y)\n"
                "            prev_2: pl.Scalar[pl.TASK_ID] = tid\n"
                "            prev_3: pl.Scalar[pl.TASK_ID] = pl.yield_(prev_2)\n"
                "        return y\n");
}

// A carried tensor keeps its type: one that changes shape from one iteration to the next is refused at
// its new value.
TEST(InPlaceLoop, ACarriedTensorChangingTypeIsRefused) {
  EXPECT_EQ(Parse("    t = pl.create_tensor([16, 32], dtype=pl.FP32)\n"
                  "    for i in pl.range(2):\n"
                  "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                  "            y = pl.assemble(y, pl.exp(t[0:8, :]), [i * 8, 0])\n"
                  "        t = pl.reshape(t, [32, 16])\n"
                  "    return y\n"),
            "/src/kernels.py:7:9: error: 't' is carried from one loop iteration to the next, but its type changes "
            "from pl.Tensor[[16, 32], pl.FP32] to pl.Tensor[[32, 16], pl.FP32]\n"
            "  help: a loop-carried value keeps its shape, dtype and memory space in every iteration");
}

// `PAD > COLS` on module constants folds to False: the branch's zero-width pl.full is never built.
TEST(ConstantCompare, AnIfOnConstantsKeepsTheBranchItTakes) {
  auto request = Request(
      "@pl.jit\n"
      "def f(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
      "    with pl.at(level=pl.Level.CORE_GROUP):\n"
      "        y[:, 0:COLS] = pl.exp(x[:, 0:COLS])\n"
      "        if PAD > COLS:\n"
      "            y[:, COLS:PAD] = pl.full([16, PAD - COLS], dtype=pl.FP32, value=0.0)\n"
      "        if PAD >= COLS:\n"
      "            y[0:1, :] = pl.neg(x[0:1, :])\n"
      "    return y\n",
      {{"x", {16, 32}}, {"y", {16, 32}}});
  request.constants["PAD"] = int64_t{32};
  request.constants["COLS"] = int64_t{32};
  EXPECT_EQ(ParseText(request), std::string(kPrintedHeader) +
                "        with pl.at(level=pl.Level.CORE_GROUP):\n"
                "            pl.tile.store(pl.tile.exp(pl.tile.load(x, [0, 0], [16, 32])), [0, 0], y)\n"
                "            pl.tile.store(pl.tile.neg(pl.tile.load(x, [0, 0], [1, 32])), [0, 0], y)\n"
                "        return y\n");
}

}  // namespace
}  // namespace pypto::frontend::testing
