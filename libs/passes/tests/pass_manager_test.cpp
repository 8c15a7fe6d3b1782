// The property contract: a pass whose required property does not hold is refused with the
// verifier's reason, and verifiers reject programs that lack their property.
#include <gtest/gtest.h>

#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

TEST(PassManager, RefusesPassWhoseRequiredPropertyFails) {
  PassManager manager;
  manager.Add(DeriveCallDirections());
  auto result = manager.Run(testing::TileAddProgram(), PassContext{});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "pass DeriveCallDirections requires NoInCoreScopes: property NoInCoreScopes does not hold in "
            "function 'tile_add': a pl.at scope is not outlined");
  EXPECT_EQ(result.error().span.str(), "k.py:2:5");
}

TEST(PassManager, AllocationRequiresResolvedCoreTypes) {
  PassManager manager;
  manager.Add(OutlineIncoreScopes()).Add(AllocateMemoryAddr());
  auto result = manager.Run(testing::TileAddProgram(), PassContext{});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "pass AllocateMemoryAddr requires CoreTypesResolved: property CoreTypesResolved does not hold in "
            "function 'tile_add_incore_0': the kernel is still InCore");
}

// A pass that hands back the program as the frontend made it, with its pl.at scope, declaring
// `invalidated` as what it breaks.
Pass ScopeRestorer(PropertySet invalidated) {
  return Pass("ScopeRestorer", {}, {}, invalidated,
              [](const ir::ProgramPtr&, const PassContext&) -> ir::Result<ir::ProgramPtr> {
                return testing::TileAddProgram();
              });
}

TEST(PassManager, VerifyCatchesAPassBreakingAPropertyItDoesNotDeclare) {
  PassManager manager(PassManagerOptions{.verify = true});
  manager.Add(OutlineIncoreScopes()).Add(ScopeRestorer({}));
  auto result = manager.Run(testing::TileAddProgram(), PassContext{});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "after pass ScopeRestorer (it does not declare that it invalidates it): property NoInCoreScopes does "
            "not hold in function 'tile_add': a pl.at scope is not outlined");
  // Declared, the invalidation is the pass's contract: nothing is checked for that property.
  PassManager declared(PassManagerOptions{.verify = true});
  declared.Add(OutlineIncoreScopes()).Add(ScopeRestorer({IRProperty::NoInCoreScopes}));
  EXPECT_TRUE(declared.Run(testing::TileAddProgram(), PassContext{}));
  // Without verify the manager trusts the contracts.
  PassManager trusting;
  trusting.Add(OutlineIncoreScopes()).Add(ScopeRestorer({}));
  EXPECT_TRUE(trusting.Run(testing::TileAddProgram(), PassContext{}));
}

TEST(Verifiers, RejectProgramsLackingTheirProperty) {
  auto parsed = testing::TileAddProgram();
  EXPECT_FALSE(VerifyProperty(IRProperty::NoInCoreScopes, *parsed));
  EXPECT_TRUE(VerifyProperty(IRProperty::CoreTypesResolved, *parsed));  // no kernels yet

  PassManager outline;
  outline.Add(OutlineIncoreScopes());
  auto outlined = *outline.Run(parsed, PassContext{});
  EXPECT_TRUE(VerifyProperty(IRProperty::NoInCoreScopes, *outlined));
  EXPECT_FALSE(VerifyProperty(IRProperty::CoreTypesResolved, *outlined));
  EXPECT_FALSE(VerifyProperty(IRProperty::CallDirectionsDerived, *outlined));

  PassManager retype;
  retype.Add(ExpandMixedKernel());
  auto retyped = *retype.Run(outlined, PassContext{});
  auto holds = VerifyProperty(IRProperty::TileMemoryAllocated, *retyped);
  ASSERT_FALSE(holds);
  EXPECT_EQ(holds.error().message,
            "property TileMemoryAllocated does not hold in function 'tile_add_incore_0': tile 'tile_a' has no "
            "address");
}

TEST(Verifiers, TileMemoryAllocatedLooksInsideLoops) {
  using namespace ir;
  auto a = testing::Tensor("a", {16, 16});
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto load = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 16})}, 7);
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{testing::Assign(testing::Local("t", load), load)});
  auto index = [](int64_t v) { return std::make_shared<ConstInt>(v, DataType::INDEX); };
  auto loop = std::make_shared<ForStmt>(i, index(0), index(2), index(1), body, ForKind::Sequential);
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{a}, std::vector<ParamDirection>{},
                                           std::vector<TypePtr>{}, std::make_shared<SeqStmts>(std::vector<StmtPtr>{loop}),
                                           FunctionType::AIV);
  auto holds = VerifyProperty(IRProperty::TileMemoryAllocated, Program("p", {kernel}, "k"));
  ASSERT_FALSE(holds);
  EXPECT_EQ(holds.error().message, "property TileMemoryAllocated does not hold in function 'k': tile 't' has no address");
  EXPECT_EQ(holds.error().span.str(), "k.py:7:9");
}

TEST(PropertySet, PrintsNames) {
  PropertySet set{IRProperty::NoInCoreScopes, IRProperty::CallDirectionsDerived};
  EXPECT_EQ(set.str(), "{NoInCoreScopes, CallDirectionsDerived}");
}

}  // namespace
}  // namespace pypto::passes
