// Running a list of passes over a test program, with the property verifiers on.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "pypto/passes/pass_manager.h"

namespace pypto::testing {

inline ir::Result<ir::ProgramPtr> RunPipeline(std::vector<passes::Pass> passes, ir::ProgramPtr program) {
  passes::PassManager manager(passes::PassManagerOptions{.verify = true});
  for (auto& pass : passes) manager.Add(std::move(pass));
  return manager.Run(std::move(program), passes::PassContext{});
}

// The lowered program; a failure fails the test and yields null.
inline ir::ProgramPtr RunOk(std::vector<passes::Pass> passes, ir::ProgramPtr program) {
  auto result = RunPipeline(std::move(passes), std::move(program));
  EXPECT_TRUE(result) << result.error().str();
  return result ? *result : nullptr;
}

}  // namespace pypto::testing
