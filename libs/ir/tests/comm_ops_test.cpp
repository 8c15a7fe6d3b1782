// Type deduction of the communication ops of distributed kernels (comm.*: pld.rank / nranks,
// pld.system.notify / wait, pld.tensor.barrier, pld.tile.remote_load / remote_store): the results,
// the errors naming the argument at fault, and the printed calls (enums as pld members).
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::ir {
namespace {

const Span kAt{"k.py", 7, 5};

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), kAt);
}

ExprPtr Id(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX); }
ExprPtr List(std::vector<ExprPtr> elements) { return std::make_shared<TupleLiteral>(std::move(elements)); }
VarPtr Window(std::string name, Shape shape, DataType dtype) {
  return std::make_shared<Var>(std::move(name), std::make_shared<TensorType>(std::move(shape), dtype));
}
VarPtr Index(std::string name) { return std::make_shared<Var>(std::move(name), std::make_shared<ScalarType>(DataType::INT32)); }

std::string ErrorOf(const Result<CallPtr>& call) { return call ? "(no error)" : call.error().message; }

TEST(CommOps, RankAndRankCountAreInt32Scalars) {
  auto data = Window("data", {1, 64}, DataType::FP32);
  for (const char* op : {"comm.rank", "comm.nranks"}) {
    auto call = Create(op, {data});
    ASSERT_TRUE(call) << call.error().str();
    EXPECT_EQ((*call)->type()->str(), "pl.Scalar[pl.INT32]");
  }
  EXPECT_EQ(PrintExpr(*Create("comm.rank", {data})), "pl.comm.rank(data)");
  auto tile = std::make_shared<Var>("t", std::make_shared<TileType>(Shape{8, 8}, DataType::FP32, MemorySpace::Vec));
  EXPECT_EQ(ErrorOf(Create("comm.nranks", {tile})),
            "the comm context (a window tensor, pld.get_comm_ctx(window)) must be a tensor, got "
            "pl.Tile[[8, 8], pl.FP32, pl.Mem.Vec]");
}

TEST(CommOps, NotifyAndWaitAddressOneInt32SignalCell) {
  auto signal = Window("signal", {2, 1}, DataType::INT32);
  auto peer = Index("peer");
  auto notify = Create("comm.notify", {signal, peer, List({Id(1), Id(0)}), Id(1)}, {{"op", std::string("AtomicAdd")}});
  ASSERT_TRUE(notify) << notify.error().str();
  EXPECT_EQ((*notify)->type()->str(), UnknownType().str());
  EXPECT_EQ(PrintExpr(*notify), "pl.comm.notify(signal, peer, [1, 0], 1, op=pld.NotifyOp.AtomicAdd)");
  auto wait = Create("comm.wait", {signal, List({peer, Id(0)}), Id(1)}, {{"cmp", std::string("Ge")}});
  ASSERT_TRUE(wait) << wait.error().str();
  EXPECT_EQ(PrintExpr(*wait), "pl.comm.wait(signal, [peer, 0], 1, cmp=pld.WaitCmp.Ge)");

  auto data = Window("data", {2, 1}, DataType::FP32);
  EXPECT_EQ(ErrorOf(Create("comm.wait", {data, List({Id(0), Id(0)}), Id(1)}, {{"cmp", std::string("Ge")}})),
            "the signal is a window of INT32 cells, got pl.Tensor[[2, 1], pl.FP32]");
  EXPECT_EQ(ErrorOf(Create("comm.wait", {signal, List({Id(2), Id(0)}), Id(1)}, {{"cmp", std::string("Ge")}})),
            Create("tile.load", {signal, List({Id(2), Id(0)}), List({Id(1), Id(1)})}).error().message);
  EXPECT_EQ(ErrorOf(Create("comm.wait", {signal, List({Id(0)}), Id(1)}, {{"cmp", std::string("Ge")}})),
            "the signal cell needs 2 offsets, one per dimension of pl.Tensor[[2, 1], pl.INT32], got 1");
  auto bad_cmp = Create("comm.wait", {signal, List({Id(0), Id(0)}), Id(1)}, {{"cmp", std::string("Gte")}});
  EXPECT_EQ(ErrorOf(bad_cmp), "cmp=Gte is not a member of pld.WaitCmp");
  EXPECT_EQ(bad_cmp.error().hint, "members: Eq, Ne, Gt, Ge, Lt, Le");
  auto fp = std::make_shared<Var>("x", std::make_shared<ScalarType>(DataType::FP32));
  EXPECT_EQ(ErrorOf(Create("comm.notify", {signal, fp, List({Id(0), Id(0)}), Id(1)}, {{"op", std::string("Set")}})),
            "the peer must be an integer scalar, got pl.Scalar[pl.FP32]");
}

// A notify reads no tile: it runs on both members of a mixed kernel unless core_type names one
// (the frontend names "aiv" for a notify in a pl.split_aiv region).
TEST(CommOps, NotifyCoreTypeKeepsItOnOneMemberOfAMixedKernel) {
  auto signal = Window("signal", {2, 1}, DataType::INT32);
  const std::vector<ExprPtr> args = {signal, Id(1), List({Id(0), Id(0)}), Id(1)};
  auto shared = Create("comm.notify", args, {{"op", std::string("AtomicAdd")}});
  ASSERT_TRUE(shared) << shared.error().str();
  EXPECT_EQ(CallAffinity(**shared), CoreAffinity::Shared);
  auto lanes = Create("comm.notify", args, {{"op", std::string("AtomicAdd")}, {"core_type", std::string("aiv")}});
  ASSERT_TRUE(lanes) << lanes.error().str();
  EXPECT_EQ(CallAffinity(**lanes), CoreAffinity::Vector);
  EXPECT_EQ(PrintExpr(*lanes), "pl.comm.notify(signal, 1, [0, 0], 1, op=pld.NotifyOp.AtomicAdd, core_type=\"aiv\")");
  auto cube = Create("comm.notify", args, {{"op", std::string("Set")}, {"core_type", std::string("aic")}});
  ASSERT_TRUE(cube) << cube.error().str();
  EXPECT_EQ(CallAffinity(**cube), CoreAffinity::Cube);
  EXPECT_EQ(ErrorOf(Create("comm.notify", args, {{"op", std::string("Set")}, {"core_type", std::string("mix")}})),
            "core_type=\"mix\" is not \"aic\" or \"aiv\"");
}

TEST(CommOps, BarrierTakesOneCellPerRankAndReturnsTheSignal) {
  auto signal = Window("signal", {4, 1}, DataType::INT32);
  auto barrier = Create("comm.barrier", {signal});
  ASSERT_TRUE(barrier) << barrier.error().str();
  EXPECT_EQ((*barrier)->type()->str(), signal->type()->str());
  EXPECT_TRUE(Create("comm.barrier", {Window("flat", {4}, DataType::INT32)}));
  EXPECT_EQ(ErrorOf(Create("comm.barrier", {Window("wide", {4, 2}, DataType::INT32)})),
            "the barrier's signal is an INT32 window with one cell per rank ([nranks] or [nranks, 1]), got "
            "pl.Tensor[[4, 2], pl.INT32]");
}

TEST(CommOps, RemoteLoadIsAVecTileAndRemoteStoreSendsOne) {
  auto data = Window("data", {4, 64}, DataType::FP32);
  auto peer = Index("peer");
  auto load = Create("comm.remote_load", {data, peer, List({Id(2), Id(0)}), List({Id(2), Id(64)})});
  ASSERT_TRUE(load) << load.error().str();
  EXPECT_EQ((*load)->type()->str(), "pl.Tile[[2, 64], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(PrintExpr(*load), "pl.comm.remote_load(data, peer, [2, 0], [2, 64])");
  EXPECT_EQ(ErrorOf(Create("comm.remote_load", {data, peer, List({Id(3), Id(0)}), List({Id(2), Id(64)})})),
            Create("tile.load", {data, List({Id(3), Id(0)}), List({Id(2), Id(64)})}).error().message);

  auto tile = std::make_shared<Var>("t", std::make_shared<TileType>(Shape{2, 64}, DataType::FP32, MemorySpace::Vec));
  auto store = Create("comm.remote_store", {tile, data, peer, List({Id(0), Id(0)})});
  ASSERT_TRUE(store) << store.error().str();
  EXPECT_EQ(PrintExpr(*store), "pl.comm.remote_store(t, data, peer, [0, 0])");
  auto ints = Window("ints", {4, 64}, DataType::INT32);
  EXPECT_EQ(ErrorOf(Create("comm.remote_store", {tile, ints, peer, List({Id(0), Id(0)})})),
            "cannot store a FP32 tile into a INT32 window");
}

}  // namespace
}  // namespace pypto::ir
