// Hand-written kernels in a @pl.program: `external_source=` on an AIV function with a `...` body, called
// inside `with pl.spmd(core_num=N):`. The declaration prints and parses back, survives lowering
// untouched, and malformed declarations are reported at the decorator or the body. A Group mixing
// hand-written and DSL members is refused at its `def`; a pl.InOut declared before a pl.Out (the
// single result is then the InOut) warns at the declaration and at each call binding another name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// A Group's members are all hand-written or all DSL; the error is at the Group's `def`.
TEST_F(ExternalDecl, GroupMixingHandWrittenAndDslKernelsIsRefusedAtItsDeclaration) {
  const std::string mixed = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC, external_source="kernels/write.cpp")
    def k_aic(self, out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(out, [0], [64])
        out = pl.store(t, [0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def k(self, out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        self.k_aic(out)
        out = self.k_aiv(out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = self.k(out)
        return out
)";
  EXPECT_EQ(Error(mixed),
            File() + ":14:5: error: group 'k' mixes a hand-written kernel ('k_aic', external_source=) with a DSL kernel "
                     "('k_aiv'): the members of a group are all hand-written or all DSL, since the compiler wires the "
                     "cross-core hand-over between DSL members and a hand-written source cannot take part in it\n"
                     "  help: give 'k_aiv' an external_source= too (both members may name one source), or write "
                     "'k_aic' in the DSL");
}

// The Python warnings issued while parsing `text`, in order.
std::vector<std::string> ParseWarnings(const std::string& text, const std::string& file) {
  pybind11::gil_scoped_acquire gil;
  auto warnings = pybind11::module_::import("warnings");
  auto catcher = warnings.attr("catch_warnings")(pybind11::arg("record") = true);
  pybind11::list record = catcher.attr("__enter__")();
  warnings.attr("simplefilter")("always");
  auto program = ParseProgramText(text, file);
  catcher.attr("__exit__")(pybind11::none(), pybind11::none(), pybind11::none());
  EXPECT_TRUE(program) << program.error().str();
  std::vector<std::string> messages;
  for (auto warning : record) messages.push_back(pybind11::str(warning.attr("message")).cast<std::string>());
  return messages;
}

// The seed's return-binding trap: `query: pl.InOut` before `out: pl.Out` makes the single result
// `query`; the Group's declaration warns (not its members), and so does the call binding `attn_out`.
TEST_F(ExternalDecl, InOutBeforeOutWarnsAtTheDeclarationAndAtTheCall) {
  const std::string params =
      "query: pl.InOut[pl.Tensor[[64], pl.FP32]], out: pl.Out[pl.Tensor[[64], pl.FP32]]";
  const std::string text = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC, external_source="kernels/write.cpp")
    def pa_aic(self, )" + params + R"() -> pl.Tensor[[64], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/write.cpp")
    def pa_aiv(self, )" + params + R"() -> pl.Tensor[[64], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.Group)
    def pa(self, )" + params + R"() -> pl.Tensor[[64], pl.FP32]:
        r = self.pa_aic(query, out)
        self.pa_aiv(query, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, )" + params + R"() -> pl.Tensor[[64], pl.FP32]:
        attn_out = self.pa(query, out)
        return attn_out
)";
  EXPECT_THAT(ParseWarnings(text, File()),
              ::testing::ElementsAre(
                  File() + ":19:9: `attn_out = pa(...)` binds 'attn_out' to 'query' (pl.InOut parameter 'query'), "
                           "not to 'out' (pl.Out parameter 'out'): a hand-written kernel returns its first "
                           "pl.Out/pl.InOut parameter; declare 'out' before 'query' in 'pa' so that the result is 'out'",
                  File() + ":12:5: hand-written kernel 'pa' returns its first pl.Out/pl.InOut parameter: the pl.InOut "
                           "parameter 'query', not the pl.Out parameter 'out' after it, so `x = pa(...)` binds "
                           "'query'; declare 'out' before 'query' so that the result is 'out'"));
}

// Binding the result to the returned argument's own name says what it gets: only the declaration warns.
TEST_F(ExternalDecl, BindingTheReturnedArgumentsOwnNameWarnsOnlyAtTheDeclaration) {
  const std::string text = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/write.cpp")
    def pa(self, q: pl.InOut[pl.Tensor[[64], pl.FP32]], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.InOut[pl.Tensor[[64], pl.FP32]], o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        q = self.pa(q, o)
        return q
)";
  EXPECT_THAT(ParseWarnings(text, File()),
              ::testing::ElementsAre(File() + ":4:5: hand-written kernel 'pa' returns its first pl.Out/pl.InOut "
                                              "parameter: the pl.InOut parameter 'q', not the pl.Out parameter 'o' "
                                              "after it, so `x = pa(...)` binds 'q'; declare 'o' before 'q' so that "
                                              "the result is 'o'"));
}

}  // namespace
}  // namespace pypto::frontend::testing
