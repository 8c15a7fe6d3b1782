// Loops and scalar expressions: kernels whose regions move with loop variables, decoded once and
// run through the plugin (or straight on an arena), against scalar references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include "core_memory.h"
#include "scalar_ops.h"
#include "sim_executor.h"
#include "sim_kernel.h"
#include "sim_test_util.h"

namespace simtest {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace sim = pypto::sim;
using ir::BinaryOp;

const ir::SocSpec& Soc() { return ir::Ascend910B(); }

std::vector<float> Pattern(size_t n, float scale, float bias) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = bias + scale * static_cast<float>((i * 37) % 1009);
  return v;
}

const std::vector<rt::ArgDirection> kInInOut = {rt::ArgDirection::Input, rt::ArgDirection::Input,
                                                rt::ArgDirection::OutputExisting};

// The lowered chunked add: for i in pl.range(start, stop, step): c[i*128 : i*128+128] = a[...] + b[...]
// over [512, 128] tensors, with the memory-allocated layout the compiler gives it.
ir::FunctionPtr ChunkedAdd(const std::string& name, ir::ExprPtr start, ir::ExprPtr stop, ir::ExprPtr step,
                           int64_t rows = 512, ir::ForKind kind = ir::ForKind::Sequential) {
  KernelBuilder k(name);
  auto a = k.Tensor("a", {rows, 128});
  auto b = k.Tensor("b", {rows, 128});
  auto c = k.Tensor("c", {rows, 128}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto i = k.For("i", std::move(start), std::move(stop), std::move(step), kind);
  auto ta = k.LoadAt("tile_a", a, Tuple({Mul(i, 128), Idx(0)}), {128, 128}, 0);
  auto tb = k.LoadAt("tile_b", b, Tuple({Mul(i, 128), Idx(0)}), {128, 128}, 65536);
  auto sum = k.Op("tile.add", "__tmp_v0", ta, tb, 0);
  k.StoreAt(sum, Tuple({Mul(i, 128), Idx(0)}), c, /*as_eval=*/true);
  k.EndFor();
  return k.Build();
}

std::vector<rt::PlanTensor> ChunkParams(uint32_t rows = 512) {
  return {{"a", PYPTO_RT_FLOAT32, {rows, 128}}, {"b", PYPTO_RT_FLOAT32, {rows, 128}},
          {"c", PYPTO_RT_FLOAT32, {rows, 128}}};
}

TEST(SimLoops, ChunkedAddMatchesScalarReference) {
  auto program = MakeProgram({ChunkedAdd("chunked_add_incore_0", Idx(0), Idx(4), Idx(1))});
  auto plan = SingleTaskPlan("chunked_add_incore_0", ChunkParams(), kInInOut);
  auto a = Pattern(512 * 128, 0.25f, -3.0f), b = Pattern(512 * 128, -0.5f, 7.0f);
  std::vector<float> c(512 * 128, -1.0f);
  auto result = Execute(*program, plan, {Dense(a, {512, 128}), Dense(b, {512, 128}), Dense(c, {512, 128})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t e = 0; e < c.size(); ++e) ASSERT_EQ(c[e], a[e] + b[e]) << "c[" << e / 128 << "][" << e % 128 << "]";
}

TEST(SimLoops, DecodesOnceIntoALoopWithSharedOffsets) {
  auto kernel = sim::DecodeKernel(*ChunkedAdd("chunked", Idx(0), Idx(4), Idx(1)), 0, rt::CoreType::AIV, Soc());
  ASSERT_TRUE(kernel) << kernel.error();
  ASSERT_EQ(kernel->code.size(), 6u);
  EXPECT_EQ(kernel->code[0].op, sim::Opcode::LoopBegin);
  EXPECT_EQ(kernel->code[0].loop.partner, 5u);
  EXPECT_EQ(kernel->code[5].op, sim::Opcode::LoopEnd);
  EXPECT_EQ(kernel->code[5].loop.partner, 0u);
  // `i * 128` is computed once per iteration, right before the first load, and reused.
  ASSERT_EQ(kernel->scalar_code.size(), 1u);
  EXPECT_EQ(kernel->code[1].scalar_count, 1u);
  EXPECT_EQ(kernel->scalar_code[0].op, sim::ScalarOp::Mul);
  EXPECT_EQ(kernel->scalar_code[0].a, sim::Operand::Reg(kernel->code[0].loop.var));
  EXPECT_EQ(kernel->scalar_code[0].b, sim::Operand::Imm(128));
  for (size_t n : {1, 2, 4}) {
    EXPECT_TRUE(kernel->code[n].dynamic);
    EXPECT_EQ(kernel->code[n].offset_regs[0], static_cast<int32_t>(kernel->scalar_code[0].dst));
    EXPECT_EQ(kernel->code[n].offset_regs[1], -1);
  }
  EXPECT_FALSE(kernel->code[3].dynamic);
}

// for i in range(4): for j in range(3): c[32i:, 32j:] = a[32i:, 32j:] * b[32i:, 32j:] - a[...]
TEST(SimLoops, NestedLoopsOverATileGrid) {
  constexpr int64_t kRows = 4 * 32, kCols = 3 * 32, kTile = 32 * 32 * 4;
  KernelBuilder k("grid");
  auto a = k.Tensor("a", {kRows, kCols});
  auto b = k.Tensor("b", {kRows, kCols});
  auto c = k.Tensor("c", {kRows, kCols}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto i = k.For("i", 4);
  auto row = k.Let("row", Mul(i, 32));
  auto j = k.For("j", 3);
  auto ta = k.LoadAt("ta", a, Tuple({row, Mul(j, 32)}), {32, 32}, 0);
  auto tb = k.LoadAt("tb", b, Tuple({Mul(i, 32), Mul(j, 32)}), {32, 32}, kTile);
  auto prod = k.Op("tile.mul", "prod", ta, tb, 2 * kTile);
  auto diff = k.Op("tile.sub", "diff", prod, ta, 2 * kTile);
  k.StoreAt(diff, Tuple({row, Mul(j, 32)}), c, /*as_eval=*/true);
  k.EndFor();
  k.EndFor();
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("grid",
                             {{"a", PYPTO_RT_FLOAT32, {kRows, kCols}}, {"b", PYPTO_RT_FLOAT32, {kRows, kCols}},
                              {"c", PYPTO_RT_FLOAT32, {kRows, kCols}}},
                             kInInOut);
  auto av = Pattern(kRows * kCols, 0.125f, -2.0f), bv = Pattern(kRows * kCols, -0.0625f, 1.5f);
  std::vector<float> cv(kRows * kCols, 0.0f);
  auto result = Execute(*program, plan, {Dense(av, {kRows, kCols}), Dense(bv, {kRows, kCols}),
                                         Dense(cv, {kRows, kCols})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t e = 0; e < cv.size(); ++e) ASSERT_EQ(cv[e], av[e] * bv[e] - av[e]) << "at " << e;

  // `row` and `i * 32` are the same value, computed once per outer iteration, before the inner loop.
  auto kernel = sim::DecodeKernel(*program->program->functions()[0], 0, rt::CoreType::AIV, Soc());
  ASSERT_TRUE(kernel) << kernel.error();
  ASSERT_EQ(kernel->scalar_code.size(), 2u);
  EXPECT_EQ(kernel->code[1].op, sim::Opcode::LoopBegin);
  EXPECT_EQ(kernel->code[1].scalar_count, 1u);  // row = i * 32
  EXPECT_EQ(kernel->code[2].scalar_count, 1u);  // j * 32
}

struct RangeCase {
  const char* name;
  int64_t start, stop, step;
  ir::ForKind kind = ir::ForKind::Sequential;
};

class SimLoopRanges : public ::testing::TestWithParam<RangeCase> {};

// Eight chunks of 16 rows; the loop adds the chunks that Python's range visits and leaves the rest.
TEST_P(SimLoopRanges, VisitExactlyThePythonRange) {
  const auto& param = GetParam();
  KernelBuilder k("ranges");
  auto a = k.Tensor("a", {128, 16});
  auto b = k.Tensor("b", {128, 16});
  auto c = k.Tensor("c", {128, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto i = k.For("i", Idx(param.start), Idx(param.stop), Idx(param.step), param.kind);
  auto ta = k.LoadAt("ta", a, Tuple({Mul(i, 16), Idx(0)}), {16, 16}, 0);
  auto tb = k.LoadAt("tb", b, Tuple({Mul(i, 16), Idx(0)}), {16, 16}, 1024);
  auto tc = k.Op("tile.add", "tc", ta, tb, 2048);
  k.StoreAt(tc, Tuple({Mul(i, 16), Idx(0)}), c, /*as_eval=*/true);
  k.EndFor();
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("ranges",
                             {{"a", PYPTO_RT_FLOAT32, {128, 16}}, {"b", PYPTO_RT_FLOAT32, {128, 16}},
                              {"c", PYPTO_RT_FLOAT32, {128, 16}}},
                             kInInOut);
  auto av = Pattern(128 * 16, 1.0f, 0.0f), bv = Pattern(128 * 16, 0.5f, 100.0f);
  std::vector<float> cv(128 * 16, -9.0f);
  auto result = Execute(*program, plan, {Dense(av, {128, 16}), Dense(bv, {128, 16}), Dense(cv, {128, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  std::vector<bool> visited(8, false);
  for (int64_t v = param.start; param.step > 0 ? v < param.stop : v > param.stop; v += param.step) visited[v] = true;
  for (size_t e = 0; e < cv.size(); ++e) {
    const size_t chunk = e / (16 * 16);
    ASSERT_EQ(cv[e], visited[chunk] ? av[e] + bv[e] : -9.0f) << param.name << ": chunk " << chunk;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranges, SimLoopRanges,
                         ::testing::Values(RangeCase{"all", 0, 8, 1}, RangeCase{"odd_from_1", 1, 4, 2},
                                           RangeCase{"stride3", 0, 8, 3}, RangeCase{"backwards", 7, -1, -2},
                                           RangeCase{"empty", 2, 2, 1}, RangeCase{"empty_backwards", 0, 5, -1},
                                           RangeCase{"single", 5, 6, 4},
                                           RangeCase{"parallel", 2, 8, 1, ir::ForKind::Parallel},
                                           RangeCase{"unroll", 0, 8, 2, ir::ForKind::Unroll},
                                           RangeCase{"pipeline", 1, 8, 2, ir::ForKind::Pipeline}),
                         [](const auto& info) { return std::string(info.param.name); });

// Loop bounds from scalar parameters (INT32, passed as its 32-bit pattern): range(n + 4, 8, step)
// with n = -2 and step = 3 visits chunks 2 and 5.
TEST(SimLoops, BoundsFromScalarParameters) {
  KernelBuilder k("param_bounds");
  auto a = k.Tensor("a", {128, 16});
  auto c = k.Tensor("c", {128, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto n = k.Scalar("n", ir::DataType::INT32);
  auto step = k.Scalar("step", ir::DataType::INDEX);
  auto i = k.For("i", Bin(BinaryOp::Add, n, Idx(4)), Idx(8), step);
  auto ta = k.LoadAt("ta", a, Tuple({Mul(i, 16), Idx(0)}), {16, 16}, 0);
  auto tc = k.Op("tile.add", "tc", ta, ta, 0);
  k.StoreAt(tc, Tuple({Mul(i, 16), Idx(0)}), c, /*as_eval=*/true);
  k.EndFor();
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("param_bounds", {{"a", PYPTO_RT_FLOAT32, {128, 16}}, {"c", PYPTO_RT_FLOAT32, {128, 16}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  const int32_t minus_two = -2;
  uint64_t n_bits = 0;
  std::memcpy(&n_bits, &minus_two, sizeof(minus_two));
  plan.plan.submits[0].args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar, .scalar = n_bits});
  plan.plan.submits[0].args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar, .scalar = 3});
  auto av = Pattern(128 * 16, 1.0f, 1.0f);
  std::vector<float> cv(128 * 16, 0.0f);
  auto result = Execute(*program, plan, {Dense(av, {128, 16}), Dense(cv, {128, 16})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t e = 0; e < cv.size(); ++e) {
    const size_t chunk = e / 256;
    ASSERT_EQ(cv[e], chunk == 2 || chunk == 5 ? 2 * av[e] : 0.0f) << "chunk " << chunk;
  }

  // A step that arrives as 0 stops the kernel before its first iteration.
  plan.plan.submits[0].args.back().scalar = 0;
  result = Execute(*program, plan, {Dense(av, {128, 16}), Dense(cv, {128, 16})});
  EXPECT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_THAT(result.message, AllOf(HasSubstr("KernelFailed"), HasSubstr("kernel 'param_bounds' instruction #0 (for)"),
                                    HasSubstr("the loop step is 0 (range(2, 8, 0))")));
}

TEST(SimScalarOps, FloorDivAndModFollowPython) {
  struct Case {
    int64_t a, b, div, mod;
  };
  // Python: a // b, a % b.
  for (const Case& c : {Case{7, 2, 3, 1}, Case{-7, 2, -4, 1}, Case{7, -2, -4, -1}, Case{-7, -2, 3, -1},
                        Case{-8, 2, -4, 0}, Case{8, -2, -4, 0}, Case{0, -5, 0, 0}, Case{-1, 128, -1, 127},
                        Case{5, 1, 5, 0}, Case{-5, -1, 5, 0}}) {
    int64_t div = 0, mod = 0;
    ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::FloorDiv, c.a, c.b, div));
    ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::FloorMod, c.a, c.b, mod));
    EXPECT_EQ(div, c.div) << c.a << " // " << c.b;
    EXPECT_EQ(mod, c.mod) << c.a << " % " << c.b;
  }
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t out = 42;
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::FloorDiv, kMin, -1, out));
  EXPECT_EQ(out, kMin);  // wraps like the multiplication would
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::FloorMod, kMin, -1, out));
  EXPECT_EQ(out, 0);
  out = 42;
  EXPECT_FALSE(sim::EvalScalar(sim::ScalarOp::FloorDiv, 3, 0, out));
  EXPECT_FALSE(sim::EvalScalar(sim::ScalarOp::FloorMod, 3, 0, out));
  EXPECT_EQ(out, 42);
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Min, -3, 2, out));
  EXPECT_EQ(out, -3);
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Ge, -3, 2, out));
  EXPECT_EQ(out, 0);
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Mul, std::numeric_limits<int64_t>::max(), 2, out));
  EXPECT_EQ(out, -2);  // wraps, no undefined behaviour
}

TEST(SimScalarOps, ShiftsFollowPythonAndRefuseCountsOutsideTheWord) {
  int64_t out = 0;
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Shl, 1, 10, out));
  EXPECT_EQ(out, 1024);
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Shl, 3, 62, out));
  EXPECT_EQ(out, std::numeric_limits<int64_t>::min() + (int64_t{1} << 62));  // wraps, no undefined behaviour
  ASSERT_TRUE(sim::EvalScalar(sim::ScalarOp::Shr, -7, 1, out));
  EXPECT_EQ(out, -4);  // arithmetic: -7 >> 1 == -4 in Python
  out = 42;
  EXPECT_FALSE(sim::EvalScalar(sim::ScalarOp::Shl, 1, 64, out));
  EXPECT_FALSE(sim::EvalScalar(sim::ScalarOp::Shr, 1, -1, out));
  EXPECT_EQ(out, 42);
}

TEST(SimScalarOps, TripCountFollowsPythonRange) {
  EXPECT_EQ(sim::TripCount(0, 4, 1), 4u);
  EXPECT_EQ(sim::TripCount(1, 4, 2), 2u);
  EXPECT_EQ(sim::TripCount(0, 8, 3), 3u);
  EXPECT_EQ(sim::TripCount(4, 4, 1), 0u);
  EXPECT_EQ(sim::TripCount(5, 0, 1), 0u);
  EXPECT_EQ(sim::TripCount(7, -1, -2), 4u);
  EXPECT_EQ(sim::TripCount(0, 5, -1), 0u);
  EXPECT_EQ(sim::TripCount(-3, 3, 4), 2u);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(sim::TripCount(kMin, kMax, 1), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(sim::TripCount(kMax, kMin, kMin), 2u);
}

// Negative loop values through // and %: for t in range(-4, 0), c chunk (-t - 1) = a chunk (t % 4),
// which reverses the four chunks; a truncating modulo would produce negative offsets.
TEST(SimLoops, FloorDivAndModOnNegativeLoopValues) {
  KernelBuilder k("reverse");
  auto a = k.Tensor("a", {64, 32});
  auto c = k.Tensor("c", {64, 32}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto t = k.For("t", Idx(-4), Idx(0));
  auto src_row = Mul(Bin(BinaryOp::FloorMod, t, Idx(4)), 16);
  auto col = Mul(Bin(BinaryOp::Add, Bin(BinaryOp::FloorDiv, t, Idx(4)), Idx(1)), 16);  // t // 4 == -1
  auto dst_row = Mul(Bin(BinaryOp::Sub, Bin(BinaryOp::Sub, Idx(0), t), Idx(1)), 16);
  auto ta = k.LoadAt("ta", a, Tuple({src_row, col}), {16, 32}, 0);
  auto tc = k.Op("tile.add", "tc", ta, ta, 0);
  k.StoreAt(tc, Tuple({dst_row, col}), c, /*as_eval=*/true);
  k.EndFor();
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("reverse", {{"a", PYPTO_RT_FLOAT32, {64, 32}}, {"c", PYPTO_RT_FLOAT32, {64, 32}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting});
  auto av = Pattern(64 * 32, 1.0f, 0.0f);
  std::vector<float> cv(64 * 32, 0.0f);
  auto result = Execute(*program, plan, {Dense(av, {64, 32}), Dense(cv, {64, 32})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (int r = 0; r < 64; ++r)
    for (int col_ = 0; col_ < 32; ++col_)
      ASSERT_EQ(cv[r * 32 + col_], 2 * av[((3 - r / 16) * 16 + r % 16) * 32 + col_]) << r << "," << col_;
}

TEST(SimLoops, OutOfBoundsOffsetFromALoopIsAKernelError) {
  // range(5) over four chunks: the fifth iteration reads past the view.
  auto program = MakeProgram({ChunkedAdd("chunked", Idx(0), Idx(5), Idx(1))});
  auto plan = SingleTaskPlan("chunked", ChunkParams(), kInInOut);
  auto a = Pattern(512 * 128, 1.0f, 0.0f), b = Pattern(512 * 128, 2.0f, 0.0f);
  std::vector<float> c(512 * 128, 0.0f);
  auto result = Execute(*program, plan, {Dense(a, {512, 128}), Dense(b, {512, 128}), Dense(c, {512, 128})});
  EXPECT_EQ(result.status, PYPTO_ERR_RUNTIME);
  EXPECT_EQ(result.message,
            "sim: fatal error 203 (KernelFailed): kernel 'chunked' instruction #1 (load) `tile_a = pl.tile.load(a, "
            "[i * 128, 0], [128, 128])` at kernels.py:3:5: out-of-bounds global read: region [512:640, 0:128] is "
            "outside the view of tensor 'a' (args[0]) with shape [512, 128]");
  // The four iterations before it ran.
  for (size_t e = 0; e < c.size(); ++e) ASSERT_EQ(c[e], a[e] + b[e]) << "at " << e;
}

TEST(SimLoops, NegativeOffsetFromALoopIsAKernelError) {
  // range(-1, 3): the first iteration writes above the view (decoder and executor, no runtime).
  KernelBuilder k("below");
  auto a = k.Tensor("a", {64, 16});
  auto c = k.Tensor("c", {64, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto i = k.For("i", Idx(-1), Idx(3));
  k.StoreAt(ta, Tuple({Mul(i, 16), Idx(0)}), c, /*as_eval=*/true);
  k.EndFor();
  auto kernel = sim::DecodeKernel(*k.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_TRUE(kernel) << kernel.error();
  std::vector<float> av(64 * 16, 1.0f), cv(64 * 16, 0.0f);
  auto ad = Dense(av, {64, 16}), cd = Dense(cv, {64, 16});
  sim::CoreMemory memory(Soc());
  auto result = RunDirect(*kernel, {&ad, &cd}, memory);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, rt::FatalCode::KernelFailed);
  EXPECT_EQ(result.error().message,
            "kernel 'below' instruction #2 (store) `pl.tile.store(ta, [i * 16, 0], c)` at kernels.py:4:5: "
            "out-of-bounds global write: region [-16:0, 0:16] is outside the view of tensor 'c' (args[1]) with "
            "shape [64, 16]");
  for (float v : cv) ASSERT_EQ(v, 0.0f);
}

TEST(SimLoops, ScalarDivisionByZeroAtRunTimeIsAKernelError) {
  // for i in range(2): c[(4 // (1 - i)) * 16 ...] — the second iteration divides by zero.
  KernelBuilder k("divzero");
  auto a = k.Tensor("a", {128, 16});
  auto c = k.Tensor("c", {128, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto i = k.For("i", 2);
  auto chunk = Bin(BinaryOp::FloorDiv, Idx(4), Bin(BinaryOp::Sub, Idx(1), i));
  k.StoreAt(ta, Tuple({Mul(chunk, 16), Idx(0)}), c, /*as_eval=*/true);
  k.EndFor();
  auto kernel = sim::DecodeKernel(*k.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_TRUE(kernel) << kernel.error();
  std::vector<float> av(128 * 16, 1.0f), cv(128 * 16, 0.0f);
  auto ad = Dense(av, {128, 16}), cd = Dense(cv, {128, 16});
  sim::CoreMemory memory(Soc());
  auto result = RunDirect(*kernel, {&ad, &cd}, memory);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, rt::FatalCode::KernelFailed);
  EXPECT_THAT(result.error().message, AllOf(HasSubstr("kernel 'divzero' instruction #2 (store)"),
                                            HasSubstr("integer division by zero in `4 // (1 - i)`")));
  for (int e = 0; e < 128 * 16; ++e) ASSERT_EQ(cv[e], e >= 64 * 16 && e < 80 * 16 ? 1.0f : 0.0f) << e;
}

pypto::expected<sim::DecodedKernel, std::string> DecodeLoop(ir::ExprPtr start, ir::ExprPtr stop, ir::ExprPtr step) {
  return sim::DecodeKernel(*ChunkedAdd("bad_loop", std::move(start), std::move(stop), std::move(step)), 0,
                           rt::CoreType::AIV, Soc());
}

TEST(SimLoops, BadLoopsAreDecodeErrors) {
  auto kernel = DecodeLoop(Idx(0), Idx(4), Idx(0));
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("kernels.py:2:5"), HasSubstr("kernel 'bad_loop'"),
                                    HasSubstr("the loop step is 0"), HasSubstr("for i in pl.range(0, 4, 0)")));

  kernel = DecodeLoop(Idx(0), std::make_shared<ir::ConstFloat>(4.0, ir::DataType::FP32), Idx(1));
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("kernels.py:2:5"), HasSubstr("the loop stop must be an integer"),
                                    HasSubstr("FP32")));

  auto flag = std::make_shared<ir::ConstBool>(true);
  kernel = DecodeLoop(flag, Idx(4), Idx(1));
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), HasSubstr("the loop start must be an integer"));

  // A true division yields a float, which offsets cannot be.
  KernelBuilder k("float_offset");
  auto a = k.Tensor("a", {64, 16});
  auto i = k.For("i", 4);
  auto offset = std::make_shared<ir::BinaryExpr>(BinaryOp::FloatDiv, i, Idx(2),
                                                 std::make_shared<ir::ScalarType>(ir::DataType::INDEX));
  k.LoadAt("ta", a, Tuple({Mul(offset, 16), Idx(0)}), {16, 16}, 0);
  k.EndFor();
  kernel = sim::DecodeKernel(*k.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("kernels.py:3:5"), HasSubstr("`i / 2` is a true division")));

  // The loop variable and scalars assigned in the body do not outlive the loop.
  KernelBuilder after("after_loop");
  auto y = after.Tensor("y", {64, 16});
  auto l = after.For("l", 4);
  auto off = after.Let("off", Mul(l, 16));
  after.EndFor();
  after.LoadAt("ty", y, Tuple({off, Idx(0)}), {16, 16}, 0);
  kernel = sim::DecodeKernel(*after.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("kernels.py:4:5"), HasSubstr("'off' is used before it is assigned")));

  // A region that cannot fit at any offset is refused when decoding (the op's type deduction
  // refuses it too, so the call is built directly).
  KernelBuilder wide("too_wide");
  auto x = wide.Tensor("x", {64, 16});
  auto j = wide.For("j", 4);
  wide.Custom(ir::OpRegistry::Get().Find("tile.load"), "tx", {x, Tuple({Mul(j, 16), Idx(0)}), Ints({16, 32})},
              KernelBuilder::TileAt({16, 32}, ir::DataType::FP32, 0));
  wide.EndFor();
  kernel = sim::DecodeKernel(*wide.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), HasSubstr("region at [j * 16, 0] of shape [16, 32] is outside tensor 'x'"));
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SimLoops, ListingShowsLoopsAndScalarCode) {
  auto program = MakeProgram({ChunkedAdd("chunked_add_incore_0", Idx(0), Idx(4), Idx(1))});
  pypto_rt_plan plan;
  plan.plan.params = ChunkParams();
  plan.plan.kernels = {{.func_id = 0, .name = "chunked_add_incore_0"}};
  const auto dir = std::filesystem::temp_directory_path() / ("pypto_sim_loops_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto* plugin = Plugin();
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(plugin->prepare("a2a3sim", program.get(), &plan, dir.c_str()), PYPTO_OK) << pypto_last_error_message();
  const std::string listing = ReadFile(dir / "sim" / "chunked_add_incore_0.txt");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(listing,
            "kernel chunked_add_incore_0 (func_id 0, AIV core, Ascend910B / a2a3)\n"
            "params (3 tensors, 0 scalars):\n"
            "  args[0] a: tensor FP32 [512, 128]\n"
            "  args[1] b: tensor FP32 [512, 128]\n"
            "  args[2] c: tensor FP32 [512, 128]\n"
            "registers (3 x int64):\n"
            "  r0   i  (loop variable)\n"
            "  r1   i  (iterations left)\n"
            "  r2   i * 128\n"
            "code (6 instructions, 1 scalar operation):\n"
            "    0: for   r0 in range(0, 4, 1), exits to #6\n"
            "       ; for i in pl.range(4)  @ kernels.py:2:5\n"
            "         r2 = r0 * 128            ; i * 128\n"
            "    1:   load  f32 Vec[0x00000, +65536] <- args[0][r2:r2+128, 0:128]  (16384 elements)\n"
            "         ; tile_a = pl.tile.load(a, [i * 128, 0], [128, 128])  @ kernels.py:3:5\n"
            "    2:   load  f32 Vec[0x10000, +65536] <- args[1][r2:r2+128, 0:128]  (16384 elements)\n"
            "         ; tile_b = pl.tile.load(b, [i * 128, 0], [128, 128])  @ kernels.py:4:5\n"
            "    3:   add   f32 Vec[0x00000, +65536] <- Vec[0x00000, +65536], Vec[0x10000, +65536]  (16384 elements)\n"
            "         ; __tmp_v0 = pl.tile.add(tile_a, tile_b)  @ kernels.py:5:5\n"
            "    4:   store f32 args[2][r2:r2+128, 0:128] <- Vec[0x00000, +65536]  (16384 elements)\n"
            "         ; pl.tile.store(__tmp_v0, [i * 128, 0], c)  @ kernels.py:6:5\n"
            "    5: endfor r0 += 1, back to #1 while r1 > 0\n"
            "       ; for i in pl.range(4)  @ kernels.py:2:5\n"
            "buffers:\n"
            "  Vec: 131072 of 188416 bytes used\n");
}

}  // namespace
}  // namespace simtest
