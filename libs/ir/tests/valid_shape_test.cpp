// A tile's valid shape: part of its type, printed only when it narrows the tile, compared through
// the variable binding by StructuralEqual, and carried along when variables are substituted.
#include <gtest/gtest.h>

#include "pypto/ir/function.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"

namespace pypto::ir {
namespace {

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX); }
ExprPtr List(std::vector<ExprPtr> elements) { return std::make_shared<TupleLiteral>(std::move(elements)); }

TEST(ValidShape, WholeTileIsTheDefaultAndIsNotPrinted) {
  TileType whole({64, 64}, DataType::FP32, MemorySpace::Vec, std::nullopt, {Index(64), Index(64)});
  EXPECT_FALSE(whole.has_partial_valid_shape());
  EXPECT_TRUE(whole.equals(TileType({64, 64}, DataType::FP32, MemorySpace::Vec)));
  EXPECT_EQ(whole.str(), "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]");
}

TEST(ValidShape, ANarrowerRegionIsPartOfTheType) {
  auto vlen = std::make_shared<Var>("vlen", std::make_shared<ScalarType>(DataType::INDEX));
  TileType ragged({64, 64}, DataType::FP32, MemorySpace::Vec, std::nullopt, {Index(64), vlen});
  EXPECT_TRUE(ragged.has_partial_valid_shape());
  EXPECT_EQ(ragged.str(), "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[64, vlen])]");
  EXPECT_FALSE(ragged.equals(TileType({64, 64}, DataType::FP32, MemorySpace::Vec)));
  EXPECT_TRUE(ragged.equals(*WithValidShape(ragged, ragged.valid_shape())));
  EXPECT_FALSE(WithValidShape(ragged, {})->has_partial_valid_shape());
}

// k(a, vlen, c): t = load(a, [0, 0], [64, 64], [64, vlen]); store(t, [0, 0], c)
FunctionPtr RaggedKernel() {
  auto tensor = std::make_shared<TensorType>(Shape{64, 64}, DataType::FP32);
  auto a = std::make_shared<Var>("a", tensor);
  auto c = std::make_shared<Var>("c", tensor);
  auto vlen = std::make_shared<Var>("vlen", std::make_shared<ScalarType>(DataType::INDEX));
  const auto& registry = OpRegistry::Get();
  auto load = registry.CreateCall("tile.load",
                                  {a, List({Index(0), Index(0)}), List({Index(64), Index(64)}), List({Index(64), vlen})},
                                  {}, {});
  EXPECT_TRUE(load) << load.error().str();
  auto t = std::make_shared<Var>("t", (*load)->type());
  auto store = registry.CreateCall("tile.store", {t, List({Index(0), Index(0)}), c}, {}, {});
  EXPECT_TRUE(store) << store.error().str();
  std::vector<StmtPtr> body = {std::make_shared<AssignStmt>(t, *load), std::make_shared<EvalStmt>(*store),
                               std::make_shared<ReturnStmt>(std::vector<ExprPtr>{c})};
  return std::make_shared<Function>("k", std::vector<VarPtr>{a, vlen, c},
                                    std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In,
                                                                ParamDirection::Out},
                                    std::vector<TypePtr>{tensor}, std::make_shared<SeqStmts>(body),
                                    FunctionType::InCore);
}

TEST(ValidShape, PrintedWithThePrintersNames) {
  std::string text = PrintFunction(*RaggedKernel());
  EXPECT_NE(text.find("t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[64, vlen])] = "
                      "pl.tile.load(a, [0, 0], [64, 64], [64, vlen])"),
            std::string::npos)
      << text;
}

TEST(ValidShape, StructuralEqualFollowsTheBinding) {
  EXPECT_EQ(StructuralDiff(*RaggedKernel(), *RaggedKernel()), std::nullopt);
}

// Outlining renames a scope's scalars into kernel parameters; a tile type naming one follows.
TEST(ValidShape, SubstitutionRetypesTilesThatNameAReplacedVariable) {
  auto kernel = RaggedKernel();
  const auto& vlen = kernel->params()[1];
  auto renamed = std::make_shared<Var>("n", vlen->type());
  auto body = SubstituteVars(kernel->body(), {{vlen.get(), renamed}});
  const auto& assign = *FlattenStmts(body)[0]->As<AssignStmt>();
  const auto* tile = assign.var()->type()->As<TileType>();
  ASSERT_TRUE(tile->has_partial_valid_shape());
  EXPECT_EQ(tile->valid_shape()[1], renamed);
}

}  // namespace
}  // namespace pypto::ir
