// The decoder and the executor without the runtime: what a kernel decodes to, what it refuses, and
// N-d regions run directly against a core's arena.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "core_memory.h"
#include "sim_executor.h"
#include "sim_kernel.h"
#include "sim_test_util.h"

namespace simtest {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace sim = pypto::sim;

const ir::SocSpec& Soc() { return ir::Ascend910B(); }

pypto::expected<sim::DecodedKernel, std::string> Decode(const ir::FunctionPtr& function) {
  return sim::DecodeKernel(*function, 3, rt::CoreType::AIV, Soc());
}

TEST(SimDecoder, ResolvesOperands) {
  KernelBuilder k("add");
  auto a = k.Tensor("a", {16, 16});
  auto b = k.Tensor("b", {16, 16});
  auto c = k.Tensor("c", {16, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto tb = k.Load("tb", b, {0, 0}, {16, 16}, 1024);
  auto tc = k.Op("tile.add", "tc", ta, tb, 0);
  k.Store(tc, {0, 0}, c);
  auto kernel = Decode(k.Build());
  ASSERT_TRUE(kernel) << kernel.error();
  EXPECT_EQ(kernel->func_id, 3);
  EXPECT_EQ(kernel->tensor_count, 3u);
  ASSERT_EQ(kernel->code.size(), 4u);
  const auto& code = kernel->code;
  EXPECT_EQ(code[0].op, sim::Opcode::Load);
  EXPECT_EQ(code[0].tensor_slot, 0u);
  EXPECT_EQ(code[0].dst.byte_offset, 0);
  EXPECT_EQ(code[0].dst.bytes, 1024);
  EXPECT_EQ(code[1].tensor_slot, 1u);
  EXPECT_EQ(code[1].dst.byte_offset, 1024);
  EXPECT_EQ(code[2].op, sim::Opcode::Add);
  EXPECT_EQ(code[2].kind, sim::ElemKind::F32);
  EXPECT_EQ(code[2].dst.byte_offset, 0);
  EXPECT_EQ(code[2].src1.byte_offset, 1024);
  EXPECT_EQ(code[2].num_elements, 256);
  EXPECT_EQ(code[3].op, sim::Opcode::Store);
  EXPECT_EQ(code[3].tensor_slot, 2u);
  EXPECT_EQ(kernel->high_water[static_cast<size_t>(ir::MemorySpace::Vec)], 2048);
  EXPECT_THAT(kernel->sources[0].text, HasSubstr("ta = pl.tile.load(a, [0, 0], [16, 16])"));
  EXPECT_EQ(kernel->sources[0].location, "kernels.py:2:5");
  EXPECT_THAT(kernel->Describe(2), AllOf(HasSubstr("kernel 'add' instruction #2"), HasSubstr("pl.tile.add(ta, tb)")));
  EXPECT_THAT(sim::FormatListing(*kernel, Soc()), HasSubstr("add   f32 Vec[0x00000, +1024] <- Vec[0x00000, +1024], "
                                                            "Vec[0x00400, +1024]"));
}

TEST(SimDecoder, TileWithoutAddressIsRefused) {
  KernelBuilder k("noaddr");
  auto a = k.Tensor("a", {16, 16});
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto function = k.Build();
  // Rebuild the load with an unallocated tile type.
  auto seq = function->body()->As<ir::SeqStmts>();
  auto load = seq->stmts()[0]->As<ir::AssignStmt>();
  auto bare = std::make_shared<ir::Var>("ta", std::make_shared<ir::TileType>(ir::Shape{16, 16}, ir::DataType::FP32,
                                                                             ir::MemorySpace::Vec));
  auto body = std::make_shared<ir::SeqStmts>(
      std::vector<ir::StmtPtr>{std::make_shared<ir::AssignStmt>(bare, load->value(), load->span())});
  auto kernel = Decode(function->WithBody(body));
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("noaddr"), HasSubstr("no buffer address"), HasSubstr("kernels.py:2:5")));
}

TEST(SimDecoder, TileOutsideTheBufferIsRefused) {
  KernelBuilder k("toobig");
  auto a = k.Tensor("a", {16, 16});
  k.Load("ta", a, {0, 0}, {16, 16}, 184 * 1024 - 512);
  auto kernel = Decode(k.Build());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("toobig"), HasSubstr("outside its 188416-byte capacity")));
}

TEST(SimDecoder, PartialOverlapIsRefused) {
  KernelBuilder k("overlap");
  auto a = k.Tensor("a", {16, 16});
  auto ta = k.Load("ta", a, {0, 0}, {16, 16}, 0);
  auto tb = k.Load("tb", a, {0, 0}, {16, 16}, 1024);
  k.Op("tile.mul", "tc", ta, tb, 512);
  auto kernel = Decode(k.Build());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("partially overlaps"), HasSubstr("tile.mul")));
}

TEST(SimDecoder, NonKernelsAndMisplacedKernelsAreRefused) {
  KernelBuilder orch("orch", ir::FunctionType::Orchestration);
  orch.Tensor("a", {16, 16});
  auto kernel = Decode(orch.Build());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), HasSubstr("not a kernel"));

  KernelBuilder cube("mm", ir::FunctionType::AIC);
  cube.Tensor("a", {16, 16});
  kernel = sim::DecodeKernel(*cube.Build(), 0, rt::CoreType::AIV, Soc());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("mm"), HasSubstr("AIC function but the plan runs it on an AIV core")));

  KernelBuilder vec("v");
  vec.Tensor("a", {16, 16});
  kernel = sim::DecodeKernel(*vec.Build(), 0, rt::CoreType::AIC, Soc());
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), HasSubstr("AIV function but the plan runs it on an AIC core"));
}

TEST(SimDecoder, FunctionCallsAreRefused) {
  KernelBuilder k("caller");
  auto a = k.Tensor("a", {16, 16});
  auto function = k.Build();
  auto call = std::make_shared<ir::Call>("helper", std::vector<ir::ExprPtr>{a}, a->type(), ir::Span{kFile, 9, 3});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{std::make_shared<ir::EvalStmt>(call)});
  auto kernel = Decode(function->WithBody(body));
  ASSERT_FALSE(kernel);
  EXPECT_THAT(kernel.error(), AllOf(HasSubstr("kernels.py:9:3"), HasSubstr("'helper'")));
}

// `t = pl.full(...); u = pl.col_expand(t, v)` in place: the broadcast overwrites every byte the fill
// wrote without reading them, so the fill is dropped (the loop around it renumbered); a fill whose
// tile the next op reads (row_expand_mul) stays. The kernel computes what the IR says either way.
TEST(SimDecoder, FillThatABroadcastOverwritesIsDropped) {
  const auto zero = std::make_shared<ir::ConstFloat>(0.0, ir::DataType::FP32, ir::Span{});
  const ir::Call::Kwargs fp32{{"dtype", ir::DataType::FP32}};
  const auto tile16 = KernelBuilder::TileAt({16, 16}, ir::DataType::FP32, 1024);
  KernelBuilder k("bcast");
  auto v = k.Tensor("v", {1, 16});
  auto s = k.Tensor("s", {16, 1});
  auto y = k.Tensor("y", {16, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto z = k.Tensor("z", {16, 16}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto tv = k.Load("tv", v, {0, 0}, {1, 16}, 0);
  auto ts = k.Load("ts", s, {0, 0}, {16, 1}, 64);
  k.For("i", 2);
  auto full = k.Call("tile.full", "full", {Ints({16, 16}), zero}, fp32, tile16);
  auto rows = k.Call("tile.col_expand", "rows", {full, tv}, {}, tile16);
  k.Store(rows, {0, 0}, y);
  k.EndFor();
  auto kept = k.Call("tile.full", "kept", {Ints({16, 16}), zero}, fp32, tile16);
  auto scaled = k.Call("tile.row_expand_mul", "scaled", {kept, ts}, {}, tile16);
  k.Store(scaled, {0, 0}, z);
  auto kernel = Decode(k.Build());
  ASSERT_TRUE(kernel) << kernel.error();
  const std::string listing = sim::FormatListing(*kernel, Soc());
  ASSERT_EQ(kernel->code.size(), 9u) << listing;
  EXPECT_EQ(kernel->code[2].op, sim::Opcode::LoopBegin) << listing;
  EXPECT_EQ(kernel->code[3].compute.kind, sim::ComputeKind::ColBroadcast) << listing;
  EXPECT_EQ(kernel->code[2].loop.partner, 5u) << listing;
  EXPECT_EQ(kernel->code[5].loop.partner, 2u) << listing;
  EXPECT_EQ(kernel->code[6].compute.kind, sim::ComputeKind::Fill) << listing;
  EXPECT_EQ(kernel->sources.size(), kernel->code.size());
  EXPECT_THAT(kernel->sources[3].text, HasSubstr("pl.tile.col_expand(full, tv)"));

  std::vector<float> vv(16), sv(16, 3.0f), yv(256, -1.0f), zv(256, -1.0f);
  for (size_t i = 0; i < vv.size(); ++i) vv[i] = static_cast<float>(i) + 0.5f;
  auto vd = View(vv.data(), 64, {1, 16}, {16, 1}, 0);
  auto sd = View(sv.data(), 64, {16, 1}, {1, 1}, 0);
  auto yd = View(yv.data(), 1024, {16, 16}, {16, 1}, 0);
  auto zd = View(zv.data(), 1024, {16, 16}, {16, 1}, 0);
  sim::CoreMemory memory(Soc());
  auto result = RunDirect(*kernel, {&vd, &sd, &yd, &zd}, memory);
  ASSERT_TRUE(result) << result.error().message;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      ASSERT_EQ(yv[r * 16 + c], vv[c]) << r << "," << c;
      ASSERT_EQ(zv[r * 16 + c], 0.0f) << r << "," << c;
    }
}

// A 3-d region whose two inner dimensions are contiguous, and a 1-d one, straight on an arena.
TEST(SimExecutor, RunsNdRegionsOnAnArena) {
  KernelBuilder k("nd");
  auto x = k.Tensor("x", {4, 6, 8});
  auto y = k.Tensor("y", {40});
  auto z = k.Tensor("z", {4, 6, 8}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto tx = k.Load("tx", x, {1, 2, 0}, {2, 3, 8}, 0);
  auto ty = k.Load("ty", y, {4}, {48 - 12}, 4096);
  (void)ty;
  auto tw = k.Op("tile.add", "tw", tx, tx, 8192);
  k.Store(tw, {2, 3, 0}, z);
  auto kernel = Decode(k.Build());
  ASSERT_TRUE(kernel) << kernel.error();

  std::vector<float> xv(4 * 6 * 8), yv(40), zv(4 * 6 * 8, -1.0f);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  for (size_t i = 0; i < yv.size(); ++i) yv[i] = 100.0f + static_cast<float>(i);
  auto xd = View(xv.data(), xv.size() * 4, {4, 6, 8}, {48, 8, 1}, 0);
  auto yd = View(yv.data(), yv.size() * 4, {40}, {1}, 0);
  auto zd = View(zv.data(), zv.size() * 4, {4, 6, 8}, {48, 8, 1}, 0);
  sim::CoreMemory memory(Soc());
  auto result = RunDirect(*kernel, {&xd, &yd, &zd}, memory);
  ASSERT_TRUE(result) << result.error().message;

  const auto* ub = reinterpret_cast<const float*>(memory.Access(ir::MemorySpace::Vec, 0, 0));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < 8; ++l) ASSERT_EQ(ub[(i * 3 + j) * 8 + l], xv[(1 + i) * 48 + (2 + j) * 8 + l]);
  for (int i = 0; i < 36; ++i) ASSERT_EQ(ub[1024 + i], yv[4 + i]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      for (int l = 0; l < 8; ++l) {
        const bool inside = i >= 2 && i < 4 && j >= 3 && j < 6;
        const float expected = inside ? 2 * xv[(i - 1) * 48 + (j - 1) * 8 + l] : -1.0f;
        ASSERT_EQ(zv[i * 48 + j * 8 + l], expected) << i << "," << j << "," << l;
      }

  // The same kernel against a view too small for its regions.
  auto small = View(xv.data(), xv.size() * 4, {2, 6, 8}, {48, 8, 1}, 0);
  result = RunDirect(*kernel, {&small, &yd, &zd}, memory);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, rt::FatalCode::KernelFailed);
  EXPECT_THAT(result.error().message,
              AllOf(HasSubstr("kernel 'nd' instruction #0"), HasSubstr("region [1:3, 2:5, 0:8] is outside the view"),
                    HasSubstr("'x'")));
}

}  // namespace
}  // namespace simtest
