// The frontend through its C ABI (which starts an embedded interpreter) and its C++ API.
#include <gtest/gtest.h>

#include <string>

#include "pypto-c/frontend.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/printer.h"

namespace {

constexpr const char* kTileAdd = R"(@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [64, 128])
        tile_b = pl.load(b, [0, 0], [64, 128])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], c)
    return c
)";

constexpr const char* kSpecs = R"({"a": {"shape": [64, 128], "dtype": "FP32"},
                                   "b": {"shape": [64, 128], "dtype": "FP32"},
                                   "c": {"shape": [64, 128], "dtype": "FP32"}})";

std::string Parse(const std::string& source, pypto_status expected = PYPTO_OK, int line_offset = 10) {
  pypto_ir_program* program = nullptr;
  pypto_status status = pypto_frontend_parse_jit(source.c_str(), "/src/kernels.py", line_offset, kSpecs, &program);
  EXPECT_EQ(status, expected) << pypto_last_error_message();
  if (status != PYPTO_OK) return pypto_last_error_message();
  char* text = nullptr;
  EXPECT_EQ(pypto_ir_program_print(program, &text), PYPTO_OK);
  std::string printed = text;
  pypto_string_free(text);
  pypto_ir_program_destroy(program);
  return printed;
}

TEST(Frontend, HelloWorldSpecialisedOnTheCallsTensors) {
  EXPECT_EQ(Parse(kTileAdd),
            "@pl.program\n"
            "class _jit_tile_add:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def tile_add(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], "
            "c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:\n"
            "        with pl.at(level=pl.Level.CORE_GROUP):\n"
            "            tile_a: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128])\n"
            "            tile_b: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [64, 128])\n"
            "            tile_c: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(tile_a, tile_b)\n"
            "            pl.tile.store(tile_c, [0, 0], c)\n"
            "        return c\n");
}

TEST(Frontend, UnknownOperationPointsAtTheCall) {
  std::string source = kTileAdd;
  source.replace(source.find("pl.add"), 6, "pl.frobnicate");
  // Line 6 of the snippet, shifted by the offset of 10; the call starts at column 18.
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE), "/src/kernels.py:16:18: error: unknown operation 'pl.frobnicate'");
}

TEST(Frontend, UndefinedName) {
  std::string source = kTileAdd;
  source.replace(source.find("tile_a, tile_b"), 6, "tile_z");
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE), "/src/kernels.py:16:25: error: name 'tile_z' is not defined");
}

TEST(Frontend, ShapeErrorsComeFromTheOpsTypeDeduction) {
  std::string source = kTileAdd;
  source.replace(source.find("[0, 0], [64, 128])\n        tile_b"), 7, "[8, 0],");
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE),
            "/src/kernels.py:14:18: error: pl.load: region at offsets [8, 0] with shape [64, 128] is outside tensor "
            "pl.Tensor[[64, 128], pl.FP32] (dimension 0)\n  help: only a tile's valid region is read: to read the part "
            "of the window that lies in the tensor, give it as valid_shape=[56, 128] (pl.slice(tensor, shape, offsets, "
            "valid_shape=...) or pl.load(..., valid_shape=...)); the rest of the tile is then undefined");
}

TEST(Frontend, PythonSyntaxErrorKeepsItsPosition) {
  EXPECT_EQ(Parse("@pl.jit\ndef f(a: pl.Tensor):\n    x = (\n", PYPTO_ERR_PARSE, 0),
            "/src/kernels.py:3:9: error: '(' was never closed");
}

TEST(Frontend, UnsupportedStatement) {
  std::string source = kTileAdd;
  source.replace(source.find("    return c"), 12, "    del c");
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE),
            "/src/kernels.py:18:5: error: 'Delete' statements are not supported in kernels yet");
}

constexpr const char* kChunked = R"(@pl.jit
def chunked(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(64 // 32):
            ta = pl.load(a, [i * 32, 0], [32, 128])
            tb = pl.load(b, [i * 32, 0], [32, 128])
            pl.store(pl.add(ta, tb), [i * 32, 0], c)
    return c
)";

TEST(Frontend, LoopsWithComputedOffsets) {
  std::string printed = Parse(kChunked);
  EXPECT_NE(printed.find("        with pl.at(level=pl.Level.CORE_GROUP):\n"
                         "            for i in pl.range(2):\n"
                         "                ta: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i * 32, 0], "
                         "[32, 128])\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("pl.tile.store(pl.tile.add(ta, tb), [i * 32, 0], c)"), std::string::npos) << printed;
}

// A name assigned before a kernel loop, reassigned in it and read after it is carried: after the
// loop it holds the last iteration's value.
TEST(Frontend, LoopReassignmentInAKernelIsCarried) {
  std::string source = kChunked;
  source.replace(source.find("        for i"), 0, "        ta = pl.load(a, [0, 0], [32, 128])\n");
  source.replace(source.find("    return c"), 0, "        pl.store(ta, [0, 0], c)\n");
  std::string printed = Parse(source);
  EXPECT_NE(printed.find("            for i, (ta_1,) in pl.range(2, init_values=(ta,)):\n"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("                ta_3: pl.Tile[[32, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(ta_2)\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("            pl.tile.store(ta_3, [0, 0], c)\n"), std::string::npos) << printed;
}

// Read neither by the body before it is reassigned nor after the loop, it is not carried.
TEST(Frontend, LoopReassignmentNothingReadsIsNotCarried) {
  std::string source = kChunked;
  source.replace(source.find("        for i"), 0, "        ta = pl.load(a, [0, 0], [32, 128])\n");
  std::string printed = Parse(source);
  EXPECT_NE(printed.find("            for i in pl.range(2):\n"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("pl.yield_("), std::string::npos) << printed;
}

TEST(Frontend, LoopsNeedPlRange) {
  std::string source = kChunked;
  source.replace(source.find("pl.range(64 // 32)"), 18, "range(2)");
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE),
            "/src/kernels.py:14:18: error: kernel loops iterate over pl.range(...), pl.parallel(...), pl.unroll(...) "
            "or pl.pipeline(...)");
}

TEST(Frontend, BadSpecsAreInvalidArguments) {
  pypto_ir_program* program = nullptr;
  EXPECT_EQ(pypto_frontend_parse_jit(kTileAdd, "k.py", 0, "{\"a\": {\"shape\": [1], \"dtype\": \"FP99\"}}", &program),
            PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_frontend_parse_jit: bad specs: parameter 'a': unknown dtype \"FP99\"");
  EXPECT_STREQ(pypto_frontend_version(), PYPTO_VERSION);
}

TEST(Frontend, PrintedProgramsParseBackThroughTheCApi) {
  const std::string printed = Parse(kTileAdd);
  pypto_ir_program* program = nullptr;
  ASSERT_EQ(pypto_frontend_parse_program(printed.c_str(), "printed.py", 0, &program), PYPTO_OK)
      << pypto_last_error_message();
  char* text = nullptr;
  ASSERT_EQ(pypto_ir_program_print(program, &text), PYPTO_OK);
  EXPECT_EQ(text, printed);
  pypto_string_free(text);
  pypto_ir_program_destroy(program);

  std::string broken = printed;
  broken.replace(broken.find("pl.tile.add"), 11, "pl.tile.frobnicate");
  EXPECT_EQ(pypto_frontend_parse_program(broken.c_str(), "printed.py", 100, &program), PYPTO_ERR_PARSE);
  EXPECT_STREQ(pypto_last_error_message(), "printed.py:108:63: error: unknown operation 'pl.tile.frobnicate'");
  EXPECT_EQ(pypto_frontend_parse_program(nullptr, "printed.py", 0, &program), PYPTO_ERR_INVALID_ARGUMENT);
}

}  // namespace

namespace pypto::frontend {
namespace {

// `n: pl.Scalar[pl.INT64] = 0`: the literal takes the declared integer dtype (in @pl.program bodies
// too, where the printer writes every annotation); one that does not fit is refused at the literal.
TEST(Frontend, AnIntegerLiteralTakesItsDeclaredDtype) {
  std::string source = kTileAdd;
  const std::string body = "    with pl.at(";
  source.replace(source.find(body), body.size(), "    n: pl.Scalar[pl.INT64] = 0\n    with pl.at(");
  EXPECT_NE(Parse(source).find("        n: pl.Scalar[pl.INT64] = 0\n"), std::string::npos) << Parse(source);
  source.replace(source.find("pl.INT64] = 0"), 13, "pl.INT8] = 300");
  EXPECT_EQ(Parse(source, PYPTO_ERR_PARSE), "/src/kernels.py:13:29: error: 300 does not fit in pl.INT8");
}

// Found by fuzz/printed_program_fuzzer and fuzz/build_dir_fuzzer (fuzz/regressions/): an integer
// literal beyond INT64 escaped the parser as pybind11's cast_error, without a location.
TEST(Frontend, AnIntegerLiteralBeyondInt64IsALocatedError) {
  constexpr const char* kHelp = "\n  help: integers in a program are INT64 at most: -9223372036854775808 to 9223372036854775807";
  EXPECT_EQ(Parse("@pl.jit\ndef f(x: pl.Tensor[[128, 128], pl.FP32]):\n    n = 99999999999999999999\n", PYPTO_ERR_PARSE),
            std::string("/src/kernels.py:13:9: error: integer literal 99999999999999999999 does not fit in 64 bits") + kHelp);
  const std::string printed =
      "@pl.program\n"
      "class P:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, x: pl.Tensor[[64, 329223372036854775807], pl.FP32]):\n"
      "        return x\n";
  pypto_ir_program* program = nullptr;
  EXPECT_EQ(pypto_frontend_parse_program(printed.c_str(), "printed.py", 0, &program), PYPTO_ERR_PARSE);
  EXPECT_EQ(std::string(pypto_last_error_message()),
            std::string("printed.py:4:35: error: integer literal 329223372036854775807 does not fit in 64 bits") + kHelp);
}

// Found probing fuzz/printed_program_fuzzer for depth limits (fuzz/regressions/printed_program): a
// sum of 1,500 terms (Python's parser takes some 3,000) exhausted the stack of the parser's
// recursive walk in a sanitized build.
TEST(Frontend, AnExpressionNestedTooDeeplyIsALocatedError) {
  std::string sum = "x";
  for (int i = 0; i < 1200; ++i) sum += " + x";
  EXPECT_EQ(Parse("@pl.jit\ndef f(x: pl.Tensor[[128, 128], pl.FP32]):\n    n = " + sum + "\n", PYPTO_ERR_PARSE),
            "/src/kernels.py:13:813: error: expression nested more than 1000 levels deep\n"
            "  help: split it into several statements, naming the parts");
}

}  // namespace
}  // namespace pypto::frontend
