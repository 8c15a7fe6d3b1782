// pl.spmd kernel scopes, @pl.jit.inline calls and pl.dynamic dimensions: source -> printed IR, and
// the diagnostics of each rule with its position.
#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

std::string ParseWith(ParseRequest request) { return ParseText(request); }

// Lines 1-9 of kFile: an entry whose T is a pl.dynamic dimension, launching one block per 8 rows.
constexpr const char* kRows = R"(@pl.jit
def rows(x: pl.Tensor[[T, 64], pl.FP32], y: pl.Out[pl.Tensor[[T, 64], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.spmd(n // 8, name_hint="rows_k", allow_early_resolve=True) as tid:
        b = pl.tile.get_block_idx()
        t = pl.load(x, [b * 8, 0], [8, 64])
        pl.store(pl.exp(t), [b * 8, 0], y)
    return y
)";

ParseRequest RowsRequest(int64_t t) {
  ParseRequest request = Request(kRows, {{"x", {t, 64}}, {"y", {t, 64}}});
  request.constants["T"] = DynamicDim{"T"};
  return request;
}

// kRows with `from` replaced by `to` (inserted before `from` when `insert`), parsed for T = 32.
std::string RowsEdited(std::string_view from, std::string_view to, bool insert = false) {
  auto request = RowsRequest(32);
  const size_t at = request.source.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  request.source.replace(at, insert ? 0 : from.size(), to);
  return ParseWith(request);
}

TEST(SpmdScope, KernelBodyIsAScopeLaunchedOnBlocks) {
  EXPECT_EQ(ParseWith(RowsRequest(32)),
            "@pl.program\n"
            "class _jit_rows:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def rows(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> "
            "pl.Tensor[[32, 64], pl.FP32]:\n"
            "        n: pl.Scalar[pl.INDEX] = 32\n"
            "        with pl.spmd(4, name_hint=\"rows_k\", allow_early_resolve=True) as tid:\n"
            "            b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
            "            t: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [b * 8, 0], [8, 64])\n"
            "            pl.tile.store(pl.tile.exp(t), [b * 8, 0], y)\n"
            "        return y\n");
}

TEST(SpmdScope, LoopFormBindsTheBlockIndex) {
  std::string source = kRows;
  source.replace(source.find("    with pl.spmd"), source.find("        t = ") - source.find("    with pl.spmd"),
                 "    for b in pl.spmd(n // 8):\n");
  const std::string printed = ParseWith([&] {
    auto request = RowsRequest(16);
    request.source = source;
    return request;
  }());
  EXPECT_NE(printed.find("        with pl.spmd(2):\n"
                         "            b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
                         "            t: pl.Tile[[8, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [b * 8, 0], [8, 64])\n"),
            std::string::npos)
      << printed;
}

TEST(SpmdScope, BlockCountIsAnOrchestrationScalar) {
  EXPECT_EQ(RowsEdited("n // 8", "pl.tile.get_block_idx()"),
            "/src/kernels.py:4:18: error: pl.spmd core_num must be computed from orchestration scalars; "
            "`pl.tile.get_block_idx()` calls 'tile.get_block_idx'");
  EXPECT_EQ(RowsEdited("n // 8", "pl.read(x, [0, 0])"),
            "/src/kernels.py:4:18: error: pl.spmd core_num must be an integer, got `pl.tensor.read(x, [0, 0])` of type "
            "pl.Scalar[pl.FP32]");
  EXPECT_EQ(RowsEdited("n // 8", "n - 33"), "/src/kernels.py:4:18: error: pl.spmd core_num must be at least 0, got -1");
  EXPECT_EQ(RowsEdited("allow_early_resolve=True", "predicate=None"),
            "/src/kernels.py:4:56: error: a dispatch predicate compares one tensor element with an integer: "
            "predicate=(t[i, j] > 0)");
}

TEST(SpmdScope, ABlockCountComputedAfterAnIfStaysAnExpression) {
  // `m` is one of two values after the if, so `m_2 // 8` is evaluated when the launch is submitted.
  EXPECT_NE(RowsEdited("    with pl.spmd(n // 8",
                       "    m = pl.cast(n, pl.INDEX)\n    if m > 16:\n        m = 16\n    with pl.spmd(m // 8")
                .find("        if m > 16:\n"
                      "            m_1: pl.Scalar[pl.INDEX] = 16\n"
                      "            m_2: pl.Scalar[pl.INDEX] = pl.yield_(m_1)\n"
                      "        else:\n"
                      "            m_2: pl.Scalar[pl.INDEX] = pl.yield_(m)\n"
                      "        with pl.spmd(m_2 // 8, name_hint=\"rows_k\", allow_early_resolve=True) as tid:\n"),
            std::string::npos);
  // A count that folds to 0 stays a launch, of no blocks.
  EXPECT_NE(RowsEdited("n // 8", "n - 32")
                .find("        with pl.spmd(pl.scalar.cast(0, target_type=pl.INDEX), name_hint=\"rows_k\", "
                      "allow_early_resolve=True) as tid:\n"),
            std::string::npos);
}

TEST(DynamicDims, TensorsSharingADimensionMustAgree) {
  auto request = RowsRequest(32);
  request.tensor_specs["y"] = TensorSpec{{16, 64}, ir::DataType::FP32};
  EXPECT_EQ(ParseWith(request),
            "/src/kernels.py:2:63: error: the dynamic dimension 'T' is 32 for parameter 'x' but 16 for parameter 'y'\n"
            "  help: tensors that share a pl.dynamic dimension must agree on its extent");
}

TEST(DynamicDims, BindDynamicChecksTheExtent) {
  EXPECT_EQ(RowsEdited("    n = ", "    x.bind_dynamic(1, T)\n", /*insert=*/true),
            "/src/kernels.py:3:5: error: axis 1 of 'x' is 64, but the dynamic dimension 'T' is 32 (from parameter "
            "'x')\n"
            "  help: tensors that share a pl.dynamic dimension must agree on its extent");
}

TEST(DynamicDims, AnUnboundDimensionCannotBeRead) {
  auto request = RowsRequest(32);
  request.source.replace(request.source.find("n = pl.tensor.dim(x, 0)"), 23, "n = M");
  request.constants["M"] = DynamicDim{"M"};
  EXPECT_EQ(ParseWith(request),
            "/src/kernels.py:3:9: error: the dynamic dimension 'M' is not bound to any parameter\n"
            "  help: annotate a tensor parameter with it (pl.Tensor[[M, ...], ...]) or call t.bind_dynamic(axis, M)");
}

TEST(DynamicDims, TensorDimAxisIsChecked) {
  EXPECT_EQ(RowsEdited("pl.tensor.dim(x, 0)", "pl.tensor.dim(x, 2)"),
            "/src/kernels.py:3:26: error: pl.tensor.dim axis must be an integer in [-2, 2) for "
            "pl.Tensor[[32, 64], pl.FP32]");
}

// Lines 1-6: an entry calling an inline helper (lines 11-16) that launches a scope and returns a
// value, and whose parameters repeat the entry's dynamic dimension.
constexpr const char* kInlineEntry = R"(@pl.jit
def entry(x: pl.Tensor[[T, 64], pl.FP32], y: pl.Out[pl.Tensor[[T, 64], pl.FP32]]):
    x.bind_dynamic(0, T)
    rows = double_rows(x, y)
    return y
)";
constexpr const char* kDoubleRows = R"(@pl.jit.inline
def double_rows(src: pl.Tensor[[T, 64], pl.FP32], dst: pl.Tensor[[T, 64], pl.FP32]):
    n = pl.tensor.dim(src, 0)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(src, [0, 0], [8, 64]), 1.0), [0, 0], dst)
    return n
)";

ParseRequest InlineRequest() {
  ParseRequest request = Request(kInlineEntry, {{"x", {8, 64}}, {"y", {8, 64}}});
  request.constants["T"] = DynamicDim{"T"};
  SubFunction helper = Incore(kDoubleRows, 11);
  helper.form = "inline";
  helper.constants["T"] = DynamicDim{"T"};
  request.functions["double_rows"] = helper;
  return request;
}

TEST(InlineCall, BodyIsSplicedIntoTheCaller) {
  EXPECT_EQ(ParseWith(InlineRequest()),
            "@pl.program\n"
            "class _jit_entry:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def entry(self, x: pl.Tensor[[8, 64], pl.FP32], y: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> "
            "pl.Tensor[[8, 64], pl.FP32]:\n"
            "        n: pl.Scalar[pl.INDEX] = 8\n"
            "        with pl.at(level=pl.Level.CORE_GROUP):\n"
            "            pl.tile.store(pl.tile.adds(pl.tile.load(x, [0, 0], [8, 64]), 1.0), [0, 0], y)\n"
            "        rows: pl.Scalar[pl.INDEX] = 8\n"
            "        return y\n");
}

TEST(InlineCall, ArgumentsAreCheckedAgainstTheAnnotations) {
  auto request = InlineRequest();
  request.source.replace(request.source.find("double_rows(x, y)"), 17, "double_rows(x, x, y)");
  EXPECT_EQ(ParseWith(request), "/src/kernels.py:4:12: error: double_rows() takes 2 arguments, got 3");
  request = InlineRequest();
  request.functions["double_rows"].source.replace(request.functions["double_rows"].source.find("[[T, 64]"), 8,
                                                  "[[T, 32]");
  EXPECT_EQ(ParseWith(request),
            "/src/kernels.py:12:22: error: parameter 'src' is annotated pl.Tensor[[T, 32], pl.FP32] but was passed a "
            "tensor of shape [8, 64] and dtype FP32");
}

TEST(InlineCall, RecursionIsAnError) {
  auto request = InlineRequest();
  auto& helper = request.functions["double_rows"].source;
  helper.replace(helper.find("    return n"), 0, "    double_rows(src, dst)\n");
  EXPECT_EQ(ParseWith(request), "/src/kernels.py:16:5: error: inline function 'double_rows' calls itself");
}

}  // namespace
}  // namespace pypto::frontend::testing
