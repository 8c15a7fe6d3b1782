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
            "pl.FP32] (dimension 1)");
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
