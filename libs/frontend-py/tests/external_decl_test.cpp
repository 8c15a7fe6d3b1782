// Hand-written kernels in a @pl.program: `external_source=` on an AIV function with a `...` body, called
// inside `with pl.spmd(core_num=N):`. The declaration prints and parses back, survives lowering
// untouched, and malformed declarations are reported at the decorator or the body.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend_test_util.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend::testing {
namespace {

namespace fs = std::filesystem;

// A program file in a fresh directory, with the kernel source beside it in kernels/write.cpp.
class ExternalDecl : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pypto_external_decl_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "kernels");
    std::ofstream(dir_ / "kernels" / "write.cpp") << "// a kernel\n";
    EnsureInterpreter();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File() const { return (dir_ / "prog.py").string(); }
  std::string Source() const { return (dir_ / "kernels" / "write.cpp").string(); }

  static std::string Program(const std::string& decorator, const std::string& body = "...") {
    return R"(@pl.program
class P:
    )" + decorator + R"(
    def write(self, out: pl.InOut[pl.Tensor[[64], pl.FP32]], base: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
        )" + body + R"(

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.spmd(core_num=4):
            out = self.write(out, 0)
        return out
)";
  }

  std::string Error(const std::string& text) {
    pybind11::gil_scoped_acquire gil;
    auto program = ParseProgramText(text, File());
    return program ? std::string("parsed") : program.error().str();
  }

  fs::path dir_;
};

TEST_F(ExternalDecl, RelativeSourceIsResolvedAndRoundTrips) {
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(
      Program(R"(@pl.function(type=pl.FunctionType.AIV, external_source="kernels/write.cpp"))"), File());
  ASSERT_TRUE(program) << program.error().str();
  auto kernel = (*program)->Find("write");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(std::get<std::string>(kernel->attrs().at("external_source")), Source());
  const std::string text = ir::PrintProgram(**program);
  EXPECT_NE(text.find("external_source=\"" + Source() + "\")"), std::string::npos) << text;
  EXPECT_NE(text.find("with pl.spmd(core_num=4):\n            out"), std::string::npos) << text;
  EXPECT_EQ(RoundTripFailure(**program), "");
}

TEST_F(ExternalDecl, LoweringKeepsTheKernelAndTheLaunch) {
  pybind11::gil_scoped_acquire gil;
  auto program = ParseProgramText(
      Program("@pl.function(type=pl.FunctionType.AIV, external_source=\"" + Source() + "\")"), File());
  ASSERT_TRUE(program) << program.error().str();
  auto lowered = LowerForTest(*program);
  ASSERT_TRUE(lowered) << lowered.error().str();
  auto kernel = (*lowered)->Find("write");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->type(), ir::FunctionType::AIV);
  EXPECT_EQ(ir::PrintFunction(*kernel), ir::PrintFunction(*(*program)->Find("write")));
  const std::string text = ir::PrintProgram(**lowered);
  EXPECT_NE(text.find("with pl.spmd(core_num=4):"), std::string::npos) << text;
  EXPECT_EQ(RoundTripFailure(**lowered), "");
}

TEST_F(ExternalDecl, Errors) {
  EXPECT_NE(Error(Program(R"(@pl.function(type=pl.FunctionType.AIV, external_source="kernels/missing.cpp"))"))
                .find("kernels/missing.cpp"),
            std::string::npos);
  EXPECT_NE(Error(Program(R"(@pl.function(type=pl.FunctionType.InCore, external_source="kernels/write.cpp"))"))
                .find("only on AIC or AIV functions"),
            std::string::npos);
  EXPECT_NE(Error(Program(R"(@pl.function(type=pl.FunctionType.AIV, external_source="kernels/write.cpp"))",
                          "return out"))
                .find("has a body"),
            std::string::npos);
  EXPECT_NE(Error(Program(R"(@pl.function(type=pl.FunctionType.AIV))")).find("declares a hand-written kernel"),
            std::string::npos);
}

TEST_F(ExternalDecl, SpmdScopeHoldsOneKernelCall) {
  const std::string two_calls = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/write.cpp")
    def write(self, out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.spmd(core_num=2):
            out = self.write(out)
            out = self.write(out)
        return out
)";
  EXPECT_NE(Error(two_calls).find("exactly one kernel call"), std::string::npos) << Error(two_calls);
}

}  // namespace
}  // namespace pypto::frontend::testing
