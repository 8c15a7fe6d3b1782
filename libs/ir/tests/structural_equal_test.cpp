#include "pypto/ir/structural_equal.h"

#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::TileAddProgram;
using testing::VectorDagProgram;

TEST(StructuralEqual, ProgramsBuiltTwiceAreEqualThoughTheirVariablesDiffer) {
  auto first = TileAddProgram(), second = TileAddProgram();
  EXPECT_NE(first->entry()->params()[0], second->entry()->params()[0]);
  EXPECT_EQ(StructuralDiff(*first, *second), std::nullopt);
  EXPECT_TRUE(StructuralEqual(*VectorDagProgram(), *VectorDagProgram()));
}

TEST(StructuralEqual, NamesTheFirstDifference) {
  EXPECT_EQ(StructuralDiff(*TileAddProgram(128, 128), *TileAddProgram(64, 128)),
            "function 'tile_add': parameter 0: 'a' has type pl.Tensor[[128, 128], pl.FP32] vs "
            "pl.Tensor[[64, 128], pl.FP32]");
  EXPECT_EQ(StructuralDiff(*TileAddProgram(128, 128, "tile.add"), *TileAddProgram(128, 128, "tile.mul")),
            "function 'tile_add': statement 0: in pl.at scope: statement 2: calls 'tile.add' vs 'tile.mul'");
  EXPECT_EQ(StructuralDiff(*TileAddProgram(), *VectorDagProgram()).has_value(), true);
}

TEST(StructuralEqual, UsesMustReferToCorrespondingBindings) {
  auto program = TileAddProgram();
  const auto& entry = *program->entry();
  // Swap the two tensor parameters in the body only: same text shape, different data flow.
  std::unordered_map<const Var*, VarPtr> swap = {{entry.params()[0].get(), entry.params()[1]},
                                                 {entry.params()[1].get(), entry.params()[0]}};
  auto swapped = entry.WithBody(SubstituteVars(entry.body(), swap));
  auto diff = StructuralDiff(entry, *swapped);
  ASSERT_TRUE(diff);
  EXPECT_NE(diff->find("'a' refers to another variable ('b')"), std::string::npos) << *diff;
}

TEST(StructuralEqual, NestedSequencesAreTheirStatements) {
  auto program = TileAddProgram();
  const auto& entry = *program->entry();
  auto stmts = FlattenStmts(entry.body());
  std::vector<StmtPtr> nested = {std::make_shared<SeqStmts>(std::vector<StmtPtr>(stmts.begin(), stmts.end() - 1)),
                                 stmts.back()};
  EXPECT_EQ(StructuralDiff(entry, *entry.WithBody(std::make_shared<SeqStmts>(nested))), std::nullopt);
}

// A runtime scope around the whole body of TileAddProgram's entry, manual or not.
FunctionPtr InRuntimeScope(bool manual) {
  auto program = TileAddProgram();
  const auto& entry = *program->entry();
  auto stmts = FlattenStmts(entry.body());
  auto ret = stmts.back();
  stmts.pop_back();
  std::vector<StmtPtr> body = {std::make_shared<RuntimeScopeStmt>(manual, std::make_shared<SeqStmts>(stmts)), ret};
  return entry.WithBody(std::make_shared<SeqStmts>(std::move(body)));
}

TEST(StructuralEqual, RuntimeScopesCompareTheirModeAndBody) {
  EXPECT_EQ(StructuralDiff(*InRuntimeScope(true), *InRuntimeScope(true)), std::nullopt);
  EXPECT_EQ(StructuralDiff(*InRuntimeScope(true), *InRuntimeScope(false)),
            "function 'tile_add': statement 0: runtime scope modes differ: manual vs auto");
}

TEST(StructuralEqual, ArrayTypesCompareExtentAndDtype) {
  const ArrayType four(DataType::TASK_ID, 4);
  EXPECT_TRUE(four.equals(ArrayType(DataType::TASK_ID, 4)));
  EXPECT_FALSE(four.equals(ArrayType(DataType::TASK_ID, 5)));
  EXPECT_FALSE(four.equals(ArrayType(DataType::INT32, 4)));
  EXPECT_EQ(four.str(), "pl.Array[4, pl.TASK_ID]");
  EXPECT_TRUE(IsTaskIdArray(four));
  EXPECT_FALSE(IsTaskId(four));
}

}  // namespace
}  // namespace pypto::ir
