// Type deduction of the synchronisation ops (pl.system.sync_set / sync_wait, set_ffts, sync_src /
// sync_dst, the barriers, cacheinvalid) and of the device queries orchestration code makes: the
// errors name the argument at fault, core_type pins an event op to its core, and the printed calls
// are the DSL's spellings (pipes as pl.PipeType members).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;

const Span kAt{"k.py", 4, 9};

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), kAt);
}

ExprPtr Id(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX); }

std::string ErrorOf(const Result<CallPtr>& call) { return call ? "(no error)" : call.error().message; }

TEST(SystemSyncOps, AnEventIsRaisedAndAwaitedOnAPipe) {
  auto set = Create("system.sync_set", {Id(4)},
                    {{"pipe", std::string("MTE3")}, {"ffts_mode", int64_t{2}}, {"core_type", std::string("aiv")}});
  ASSERT_TRUE(set) << set.error().str();
  EXPECT_EQ((*set)->type()->str(), UnknownType().str());
  EXPECT_EQ(PrintExpr(*set), "pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type=\"aiv\")");
  EXPECT_EQ(CallAffinity(**set), CoreAffinity::Vector);

  auto wait = Create("system.sync_wait", {Id(13)}, {{"pipe", std::string("MTE2")}, {"core_type", std::string("aic")}});
  ASSERT_TRUE(wait) << wait.error().str();
  EXPECT_EQ(PrintExpr(*wait), "pl.system.sync_wait(13, pipe=pl.PipeType.MTE2, core_type=\"aic\")");
  EXPECT_EQ(CallAffinity(**wait), CoreAffinity::Cube);

  // Without core_type an event op runs wherever its kernel does.
  auto shared = Create("system.sync_wait", {Id(0)}, {{"pipe", std::string("V")}});
  ASSERT_TRUE(shared) << shared.error().str();
  EXPECT_EQ(CallAffinity(**shared), CoreAffinity::Shared);
}

TEST(SystemSyncOps, AnEventIdKnownOnlyAtRunTimeIsAnInteger) {
  auto lane = std::make_shared<Var>("lane", std::make_shared<ScalarType>(DataType::INDEX));
  EXPECT_TRUE(Create("system.sync_set", {lane}, {{"pipe", std::string("V")}}));
  auto fp = std::make_shared<Var>("x", std::make_shared<ScalarType>(DataType::FP32));
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {fp}, {{"pipe", std::string("V")}})),
            "the event id must be an integer, got pl.Scalar[pl.FP32]");
}

TEST(SystemSyncOps, MisusedEventOpsAreRefused) {
  const Call::Kwargs pipe = {{"pipe", std::string("MTE3")}};
  auto reserved = Create("system.sync_set", {Id(14)}, pipe);
  EXPECT_EQ(ErrorOf(reserved), "event id 14 is out of range [0, 13]");
  EXPECT_EQ(reserved.error().hint, "ids 14 and 15 are reserved for the device");
  EXPECT_EQ(ErrorOf(Create("system.sync_wait", {Id(-1)}, pipe)),
            "event id -1 is out of range [0, 13]");
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {Id(1)}, {{"pipe", std::string("MTE4")}})),
            "pipe=\"MTE4\" is not a pipe");
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {Id(1)}, {{"pipe", std::string("V")}, {"ffts_mode", int64_t{3}}})),
            "ffts_mode=3 is not 0, 1 or 2");
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {Id(1)}, {{"pipe", std::string("V")}, {"core_type", std::string("mix")}})),
            "core_type=\"mix\" is not \"aic\" or \"aiv\"");
  EXPECT_EQ(ErrorOf(Create("system.sync_wait", {Id(1)}, {{"pipe", std::string("V")}, {"ffts_mode", int64_t{2}}})),
            "'system.sync_wait' has no attribute 'ffts_mode'");
  EXPECT_EQ(ErrorOf(Create("system.sync_wait", {Id(1)})), "'system.sync_wait' is missing attribute 'pipe'");
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {}, pipe)), "'system.sync_set' takes 1 arguments (event_id), got 0");
  EXPECT_EQ(ErrorOf(Create("system.sync_set", {Id(1)}, {{"pipe", int64_t{2}}})),
            "'system.sync_set' attribute 'pipe' must be a str, got 2");
}

TEST(SystemSyncOps, TheFftsWorkspaceIsAtLeast256Int64) {
  auto workspace = [](Shape shape, DataType dtype) {
    return std::make_shared<Var>("ws", std::make_shared<TensorType>(std::move(shape), dtype));
  };
  auto ok = Create("system.set_ffts", {workspace({256}, DataType::INT64)});
  ASSERT_TRUE(ok) << ok.error().str();
  EXPECT_EQ(PrintExpr(*ok), "pl.system.set_ffts(ws)");
  EXPECT_EQ(ErrorOf(Create("system.set_ffts", {workspace({128}, DataType::INT64)})),
            "the FFTS workspace must be a 1-D INT64 tensor of at least 256 elements, got pl.Tensor[[128], pl.INT64]");
  EXPECT_EQ(ErrorOf(Create("system.set_ffts", {workspace({256}, DataType::INT32)})),
            "the FFTS workspace must be a 1-D INT64 tensor of at least 256 elements, got pl.Tensor[[256], pl.INT32]");
  EXPECT_EQ(ErrorOf(Create("system.set_ffts", {})), "'system.set_ffts' takes 1 arguments (workspace), got 0");
}

TEST(SystemSyncOps, PipeFlagsNameTwoPipesAndAnEventOfTheCore) {
  auto flag = Create("system.sync_src", {},
                     {{"set_pipe", std::string("MTE2")}, {"wait_pipe", std::string("V")}, {"event_id", int64_t{7}}});
  ASSERT_TRUE(flag) << flag.error().str();
  EXPECT_EQ(PrintExpr(*flag), "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=7)");
  EXPECT_EQ(ErrorOf(Create("system.sync_dst", {},
                           {{"set_pipe", std::string("MTE2")}, {"wait_pipe", std::string("V")}, {"event_id", int64_t{8}}})),
            "event_id=8 is out of range [0, 7]");
  EXPECT_EQ(ErrorOf(Create("system.sync_dst", {},
                           {{"set_pipe", std::string("Q")}, {"wait_pipe", std::string("V")}, {"event_id", int64_t{0}}})),
            "set_pipe=\"Q\" is not a pipe");
}

TEST(SystemSyncOps, BarriersTakeNothing) {
  for (const char* op : {"system.bar_v", "system.bar_m", "system.bar_all", "system.fence", "system.cacheinvalid"}) {
    auto call = Create(op, {});
    ASSERT_TRUE(call) << op << ": " << call.error().str();
    EXPECT_EQ(PrintExpr(*call), fmt::format("pl.{}()", op));
    EXPECT_EQ(CallAffinity(**call), CoreAffinity::Shared) << op;
  }
  EXPECT_EQ(ErrorOf(Create("system.bar_v", {Id(1)})), "'system.bar_v' takes 0 arguments (), got 1");
}

TEST(SystemSyncOps, CacheInvalidOfARegionNamesOneExtentAndOffsetPerDimension) {
  auto tensor = std::make_shared<Var>("x", std::make_shared<TensorType>(Shape{16, 32}, DataType::FP32));
  auto region = Create("system.cacheinvalid", {tensor, Ints({1, 32}), Ints({0, 0})});
  ASSERT_TRUE(region) << region.error().str();
  EXPECT_EQ(PrintExpr(*region), "pl.system.cacheinvalid(x, [1, 32], [0, 0])");
  EXPECT_EQ(ErrorOf(Create("system.cacheinvalid", {tensor, Ints({1}), Ints({0, 0})})),
            "the shapes (1) and offsets (2) must have one entry per dimension of the tensor (2)");
  EXPECT_EQ(ErrorOf(Create("system.cacheinvalid", {tensor})),
            "the region form takes (tensor, shapes, offsets); without arguments it is all of global memory");
}

TEST(SystemSyncOps, DeviceQueriesAndTaskIdTests) {
  for (const char* op : {"system.available_cluster_count", "system.available_aiv_count"}) {
    auto call = Create(op, {});
    ASSERT_TRUE(call) << op << ": " << call.error().str();
    EXPECT_EQ((*call)->type()->str(), "pl.Scalar[pl.INT32]");
  }
  auto task = std::make_shared<Var>("t", std::make_shared<ScalarType>(DataType::TASK_ID));
  auto valid = Create("system.task_is_valid", {task});
  ASSERT_TRUE(valid) << valid.error().str();
  EXPECT_EQ((*valid)->type()->str(), "pl.Scalar[pl.BOOL]");
  EXPECT_EQ(PrintExpr(*valid), "pl.system.task_is_valid(t)");
  EXPECT_EQ(ErrorOf(Create("system.task_is_valid", {Id(3)})),
            "the value tested must be a TaskId, got pl.Scalar[pl.INDEX]");
}

}  // namespace
}  // namespace pypto::ir
