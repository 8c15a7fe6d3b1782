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

TEST(PropertySet, PrintsNames) {
  PropertySet set{IRProperty::NoInCoreScopes, IRProperty::CallDirectionsDerived};
  EXPECT_EQ(set.str(), "{NoInCoreScopes, CallDirectionsDerived}");
}

}  // namespace
}  // namespace pypto::passes
