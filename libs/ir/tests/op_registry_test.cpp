#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

TEST(OpRegistry, LoadDeducesAVecTile) {
  auto a = Tensor("a", {128, 256}, DataType::FP16);
  auto call = OpRegistry::Get().CreateCall("tile.load", {a, Ints({0, 128}), Ints({64, 128})}, {}, Span{"k.py", 3, 5});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[64, 128], pl.FP16, pl.Mem.Vec]");
}

TEST(OpRegistry, LoadOutsideTheTensorIsRejected) {
  auto a = Tensor("a", {128, 128});
  auto call = OpRegistry::Get().CreateCall("tile.load", {a, Ints({0, 64}), Ints({128, 128})}, {}, Span{"k.py", 3, 5});
  ASSERT_FALSE(call);
  EXPECT_EQ(call.error().str(),
            "k.py:3:5: error: region at offsets [0, 64] with shape [128, 128] is outside tensor pl.Tensor[[128, 128], "
            "pl.FP32] (dimension 1)\n  help: only a tile's valid region is read: to read the part of the window that "
            "lies in the tensor, give it as valid_shape=[128, 64] (pl.slice(tensor, shape, offsets, valid_shape=...) or "
            "pl.load(..., valid_shape=...)); the rest of the tile is then undefined");
}

// A window at an offset known only at run time that is longer than the tensor: the help spells the
// extent that stays inside as pl.min of the offset.
TEST(OpRegistry, ALoadLongerThanTheTensorAtARunTimeOffsetNamesTheValidShapeThatFits) {
  auto x = Tensor("x", {8, 256});
  auto t0 = std::make_shared<Var>("t0", std::make_shared<ScalarType>(DataType::INDEX));
  auto offsets = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{t0, std::make_shared<ConstInt>(0, DataType::INDEX)});
  auto call = OpRegistry::Get().CreateCall("tile.load", {x, offsets, Ints({16, 256})}, {}, Span{"k.py", 9, 17});
  ASSERT_FALSE(call);
  EXPECT_EQ(call.error().message,
            "region at offsets [?, 0] with shape [16, 256] is outside tensor pl.Tensor[[8, 256], pl.FP32] (dimension 0)");
  EXPECT_EQ(call.error().hint,
            "only a tile's valid region is read: to read the part of the window that lies in the tensor, give it as "
            "valid_shape=[pl.min(16, 8 - offset), 256] (pl.slice(tensor, shape, offsets, valid_shape=...) or "
            "pl.load(..., valid_shape=...)); the rest of the tile is then undefined");
}

TEST(OpRegistry, ASliceViewMayOverhangOnlyTheOutermostDimension) {
  auto table = Tensor("table", {32, 8}, DataType::INT32);
  auto wide = OpRegistry::Get().CreateCall("tensor.slice", {table, Ints({64, 8}), Ints({16, 0})}, {}, Span{});
  ASSERT_TRUE(wide) << wide.error().str();
  EXPECT_EQ((*wide)->type()->str(), "pl.Tensor[[64, 8], pl.INT32]");
  auto past = OpRegistry::Get().CreateCall("tensor.slice", {table, Ints({4, 8}), Ints({32, 0})}, {}, Span{});
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().message, "the slice at [32, 0] of shape [4, 8] is outside pl.Tensor[[32, 8], pl.INT32] "
                                  "(dimension 0)");
  auto inner = OpRegistry::Get().CreateCall("tensor.slice", {table, Ints({4, 16}), Ints({0, 0})}, {}, Span{});
  ASSERT_FALSE(inner);
  EXPECT_EQ(inner.error().message, "the slice at [0, 0] of shape [4, 16] is outside pl.Tensor[[32, 8], pl.INT32] "
                                   "(dimension 1)");
}

TEST(OpRegistry, PrefetchOpsPassTheirHandlesAlong) {
  auto a = Tensor("a", {1, 128});
  auto& registry = OpRegistry::Get();
  auto ctx = registry.CreateCall("prefetch.make_context", {}, {}, Span{});
  ASSERT_TRUE(ctx) << ctx.error().str();
  EXPECT_EQ((*ctx)->type()->str(), "pl.PrefetchAsyncContext");
  auto event = registry.CreateCall("prefetch.async_prefetch", {a, *ctx}, {}, Span{});
  ASSERT_TRUE(event) << event.error().str();
  EXPECT_EQ((*event)->type()->str(), "pl.AsyncEvent");
  auto session = registry.CreateCall("prefetch.session", {*ctx}, {}, Span{});
  ASSERT_TRUE(session) << session.error().str();
  EXPECT_EQ((*session)->type()->str(), "pl.AsyncSession");
  auto done = registry.CreateCall("prefetch.wait", {*event, *session}, {}, Span{});
  ASSERT_TRUE(done) << done.error().str();
  EXPECT_EQ((*done)->type()->str(), "pl.Scalar[pl.BOOL]");

  auto swapped = registry.CreateCall("prefetch.wait", {*session, *event}, {}, Span{"k.py", 9, 5});
  ASSERT_FALSE(swapped);
  EXPECT_EQ(swapped.error().str(),
            "k.py:9:5: error: the event of pl.prefetch.wait must be the result of pl.prefetch.async_prefetch, got "
            "pl.AsyncSession");
  auto tile_source = registry.CreateCall(
      "prefetch.async_prefetch", {testing::Op("tile.load", {a, Ints({0, 0}), Ints({1, 128})}), *ctx}, {}, Span{});
  ASSERT_FALSE(tile_source);
  EXPECT_EQ(tile_source.error().message,
            "the source of pl.prefetch.async_prefetch must be a tensor, got pl.Tile[[1, 128], pl.FP32, pl.Mem.Vec]");
}

TEST(OpRegistry, ElementwiseOperandsMustAgree) {
  auto a = Tensor("a", {128, 128});
  auto b = Tensor("b", {128, 128}, DataType::FP16);
  auto ta = testing::Op("tile.load", {a, Ints({0, 0}), Ints({128, 128})});
  auto tb = testing::Op("tile.load", {b, Ints({0, 0}), Ints({128, 128})});
  auto call = OpRegistry::Get().CreateCall("tile.add", {ta, tb}, {}, Span{});
  ASSERT_FALSE(call);
  EXPECT_EQ(call.error().message,
            "operands differ: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] and pl.Tile[[128, 128], pl.FP16, pl.Mem.Vec]");
}

TEST(OpRegistry, StoreDtypeMismatch) {
  auto a = Tensor("a", {16, 16});
  auto c = Tensor("c", {16, 16}, DataType::INT32);
  auto tile = testing::Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})});
  auto call = OpRegistry::Get().CreateCall("tile.store", {tile, Ints({0, 0}), c}, {}, Span{});
  ASSERT_FALSE(call);
  EXPECT_EQ(call.error().message, "cannot store a FP32 tile into a INT32 tensor");
}

// A [32, 64] tile whose rows merge the leading dimensions of a [2, 16, 64] window (FlattenTileNdTo2D's
// form) is stored into that window when shapes= names it; the window must still fit the tensor.
TEST(OpRegistry, AStoreOfAMergedTileNamesItsNdWindow) {
  auto y = Tensor("y", {3, 16, 64});
  auto x = Tensor("x", {32, 64});
  auto tile = testing::Op("tile.load", {x, Ints({0, 0}), Ints({32, 64})});
  auto stored = OpRegistry::Get().CreateCall("tile.store", {tile, Ints({1, 0, 0}), y, Ints({2, 16, 64})}, {}, Span{});
  ASSERT_TRUE(stored) << stored.error().str();
  auto outside = OpRegistry::Get().CreateCall("tile.store", {tile, Ints({2, 0, 0}), y, Ints({2, 16, 64})}, {}, Span{});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "region at offsets [2, 0, 0] with shape [2, 16, 64] is outside tensor pl.Tensor[[3, 16, 64], pl.FP32] "
            "(dimension 0)");
  // A window whose rows are not the tile's is no such store.
  auto other = OpRegistry::Get().CreateCall("tile.store", {tile, Ints({0, 0, 0}), y, Ints({3, 16, 64})}, {}, Span{});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message,
            "pl.store shapes=[3, 16, 64] is not a corner of the pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] tile");
}

TEST(OpRegistry, UnknownOpAndArity) {
  auto unknown = OpRegistry::Get().CreateCall("tile.frobnicate", {}, {}, Span{"k.py", 1, 1});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, DiagnosticKind::UnknownOperation);
  auto arity = OpRegistry::Get().CreateCall("tile.add", {}, {}, Span{});
  ASSERT_FALSE(arity);
  EXPECT_EQ(arity.error().message, "'tile.add' takes 2 arguments (lhs, rhs), got 0");
}

TEST(OpRegistry, CatalogDeclaresEffects) {
  const auto* store = OpRegistry::Get().Find("tile.store");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->writes_arg, 2);
  EXPECT_TRUE(OpRegistry::Get().Find("tile.add")->inplace_safe);
  EXPECT_FALSE(OpRegistry::Get().Find("tile.load")->inplace_safe);
}

}  // namespace
}  // namespace pypto::ir
