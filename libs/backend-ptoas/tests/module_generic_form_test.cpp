// ModuleOptions::generic_form: every pto op in MLIR's generic form, the rest of the module unchanged.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>

#include "kernel_builder.h"
#include "pto_op.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

std::string Emit(const ir::Function& kernel, ModuleOptions options) {
  options.generic_form = true;
  auto text = EmitModule(kernel, "a2a3", options);
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

std::string Buf(std::string_view loc, std::string_view dtype, int rows, int cols, std::string_view blayout,
                std::string_view slayout, int fractal = 512) {
  return fmt::format("!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout={}, slayout={}, "
                     "fractal={}, pad=0>",
                     loc, dtype, rows, cols, blayout, slayout, fractal);
}

// The shape and strides of make_tensor_view, and the offsets and sizes of partition_view, are operand
// groups: operand_segment_sizes says where each starts. Locations follow the op as in the custom form.
TEST(EmitModuleGenericForm, VectorAddKernel) {
  const std::string tb = Buf("vec", "f32", 32, 64, "row_major", "none_box");
  const std::string tv = "!pto.tensor_view<?x?xf32>", pv = "!pto.partition_tensor_view<32x64xf32>";
  const std::string view_types = "(!pto.ptr<f32>, index, index, index, index) -> " + tv;
  const std::string pview_types = "(" + tv + ", index, index, index, index) -> " + pv;
  const std::string alloc_types = "(i64, index, index) -> " + tb;
  const std::string segments = "{operand_segment_sizes = array<i32: 1, 2, 2>}";
  const std::string alloc_segments = "{operand_segment_sizes = array<i32: 1, 1, 1>}";
  // tload's four optional padding groups are empty, but PTOAS's definition counts them.
  const std::string load_segments = "{operand_segment_sizes = array<i32: 1, 1, 0, 0, 0, 0>}";
  const std::string view_attrs = "{layout = #pto.layout<nd>, operand_segment_sizes = array<i32: 1, 2, 2>}";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @vector_add(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
      "    %c32_index = arith.constant 32 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c8192_i64 = arith.constant 8192 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %a_view = \"pto.make_tensor_view\"(%arg0, %c32_index, %c64_index, %c64_index, %c1_index) " + view_attrs +
      " : " + view_types + " loc(\"k.py\":1:16)\n"
      "    %b_view = \"pto.make_tensor_view\"(%arg1, %c32_index, %c64_index, %c64_index, %c1_index) " + view_attrs +
      " : " + view_types + " loc(\"k.py\":1:19)\n"
      "    %out_view = \"pto.make_tensor_view\"(%arg2, %c32_index, %c64_index, %c64_index, %c1_index) " + view_attrs +
      " : " + view_types + " loc(\"k.py\":1:22)\n"
      "    %tile_a = \"pto.alloc_tile\"(%c0_i64, %c32_index, %c64_index) " + alloc_segments + " : " + alloc_types +
      " loc(\"k.py\":3:14)\n"
      "    %tile_b = \"pto.alloc_tile\"(%c8192_i64, %c32_index, %c64_index) " + alloc_segments + " : " + alloc_types +
      " loc(\"k.py\":4:14)\n"
      "    %tile_c = \"pto.alloc_tile\"(%c0_i64, %c32_index, %c64_index) " + alloc_segments + " : " + alloc_types +
      " loc(\"k.py\":5:14)\n"
      "    %a_pview = \"pto.partition_view\"(%a_view, %c0_index, %c0_index, %c32_index, %c64_index) " + segments +
      " : " + pview_types + " loc(\"k.py\":3:14)\n"
      "    \"pto.tload\"(%a_pview, %tile_a) " + load_segments + " : (" + pv + ", " + tb + ") -> () loc(\"k.py\":3:14)\n"
      "    %b_pview = \"pto.partition_view\"(%b_view, %c0_index, %c0_index, %c32_index, %c64_index) " + segments +
      " : " + pview_types + " loc(\"k.py\":4:14)\n"
      "    \"pto.tload\"(%b_pview, %tile_b) " + load_segments + " : (" + pv + ", " + tb + ") -> () loc(\"k.py\":4:14)\n"
      "    \"pto.tadd\"(%tile_a, %tile_b, %tile_c) : (" + tb + ", " + tb + ", " + tb + ") -> () loc(\"k.py\":5:14)\n"
      "    %out_pview = \"pto.partition_view\"(%out_view, %c0_index, %c0_index, %c32_index, %c64_index) " + segments +
      " : " + pview_types + " loc(\"k.py\":6:5)\n"
      "    \"pto.tstore\"(%tile_c, %out_pview) : (" + tb + ", " + pv + ") -> () loc(\"k.py\":6:5)\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*VectorAddKernel(), {}), expected);
}

TEST(EmitModuleGenericForm, MatmulKernel) {
  const std::string a_mat = Buf("mat", "f16", 16, 32, "col_major", "row_major");
  const std::string b_mat = Buf("mat", "f16", 32, 64, "col_major", "row_major");
  const std::string left = Buf("left", "f16", 16, 32, "col_major", "row_major");
  const std::string right = Buf("right", "f16", 32, 64, "row_major", "col_major");
  const std::string acc = Buf("acc", "f32", 16, 64, "col_major", "row_major", 1024);
  const std::string tv = "!pto.tensor_view<?x?xf16>";
  const std::string a_pv = "!pto.partition_tensor_view<16x32xf16>", b_pv = "!pto.partition_tensor_view<32x64xf16>",
                    c_pv = "!pto.partition_tensor_view<16x64xf16>";
  const std::string view = "{layout = #pto.layout<nd>, operand_segment_sizes = array<i32: 1, 2, 2>} : "
                           "(!pto.ptr<f16>, index, index, index, index) -> " + tv;
  const std::string alloc = "\"pto.alloc_tile\"(%c0_i64, ";
  const std::string load_segments = "{operand_segment_sizes = array<i32: 1, 1, 0, 0, 0, 0>}";
  const std::string move_segments = "{operand_segment_sizes = array<i32: 1, 1, 0, 0>}";
  const std::string alloc_attrs = " {operand_segment_sizes = array<i32: 1, 1, 1>} : (i64, index, index) -> ";
  const std::string pview =
      " {operand_segment_sizes = array<i32: 1, 2, 2>} : (" + tv + ", index, index, index, index) -> ";
  const std::string expected =
      "module attributes {pto.target_arch = \"a2a3\"} {\n"
      "  func.func @matmul(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f16>) "
      "attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {\n"
      "    %c16_index = arith.constant 16 : index\n"
      "    %c32_index = arith.constant 32 : index\n"
      "    %c1_index = arith.constant 1 : index\n"
      "    %c64_index = arith.constant 64 : index\n"
      "    %c0_i64 = arith.constant 0 : i64\n"
      "    %c1024_i64 = arith.constant 1024 : i64\n"
      "    %c0_index = arith.constant 0 : index\n"
      "    %a_view = \"pto.make_tensor_view\"(%arg0, %c16_index, %c32_index, %c32_index, %c1_index) " + view + "\n"
      "    %b_view = \"pto.make_tensor_view\"(%arg1, %c32_index, %c64_index, %c64_index, %c1_index) " + view + "\n"
      "    %c_view = \"pto.make_tensor_view\"(%arg2, %c16_index, %c64_index, %c64_index, %c1_index) " + view + "\n"
      "    %a_mat = " + alloc + "%c16_index, %c32_index)" + alloc_attrs + a_mat + "\n"
      "    %b_mat = \"pto.alloc_tile\"(%c1024_i64, %c32_index, %c64_index)" + alloc_attrs + b_mat + "\n"
      "    %a_left = " + alloc + "%c16_index, %c32_index)" + alloc_attrs + left + "\n"
      "    %b_right = " + alloc + "%c32_index, %c64_index)" + alloc_attrs + right + "\n"
      "    %acc = " + alloc + "%c16_index, %c64_index)" + alloc_attrs + acc + "\n"
      "    %acc2 = " + alloc + "%c16_index, %c64_index)" + alloc_attrs + acc + "\n"
      "    %a_pview = \"pto.partition_view\"(%a_view, %c0_index, %c0_index, %c16_index, %c32_index)" + pview + a_pv +
      "\n"
      "    \"pto.tload\"(%a_pview, %a_mat) " + load_segments + " : (" + a_pv + ", " + a_mat + ") -> ()\n"
      "    %b_pview = \"pto.partition_view\"(%b_view, %c0_index, %c0_index, %c32_index, %c64_index)" + pview + b_pv +
      "\n"
      "    \"pto.tload\"(%b_pview, %b_mat) " + load_segments + " : (" + b_pv + ", " + b_mat + ") -> ()\n"
      "    \"pto.tmov\"(%a_mat, %a_left) " + move_segments + " : (" + a_mat + ", " + left + ") -> ()\n"
      "    \"pto.tmov\"(%b_mat, %b_right) " + move_segments + " : (" + b_mat + ", " + right + ") -> ()\n"
      "    \"pto.tmatmul\"(%a_left, %b_right, %acc) : (" + left + ", " + right + ", " + acc + ") -> ()\n"
      "    \"pto.tmatmul.acc\"(%acc2, %a_left, %b_right, %acc2) : (" + acc + ", " + left + ", " + right + ", " + acc +
      ") -> ()\n"
      "    %c_pview = \"pto.partition_view\"(%c_view, %c0_index, %c0_index, %c16_index, %c64_index)" + pview + c_pv +
      "\n"
      "    \"pto.tstore\"(%acc2, %c_pview) : (" + acc + ", " + c_pv + ") -> ()\n"
      "    return\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(Emit(*MatmulKernel(), {.source_locations = false}), expected);
}

// The lines that are not pto ops (constants, loops, index arithmetic, the signature) are the custom
// form's, byte for byte; each pto op keeps its line.
TEST(EmitModuleGenericForm, OnlyPtoOpsChange) {
  auto custom = EmitModule(*ChunkedAddKernel(), "a5");
  auto generic = EmitModule(*ChunkedAddKernel(), "a5", {.generic_form = true});
  ASSERT_TRUE(custom && generic);
  std::istringstream custom_lines(*custom), generic_lines(*generic);
  std::string a, b;
  int pto_ops = 0;
  while (std::getline(custom_lines, a)) {
    ASSERT_TRUE(std::getline(generic_lines, b)) << "the generic form has fewer lines";
    if (a.find(" pto.") == std::string::npos) {
      EXPECT_EQ(a, b);
      continue;
    }
    ++pto_ops;
    EXPECT_NE(b.find("\"pto."), std::string::npos) << b;
  }
  EXPECT_FALSE(std::getline(generic_lines, b)) << "the generic form has more lines";
  // Three tensor views and three tiles; in the loop two loads and a store, each through a partition
  // view, and the add.
  EXPECT_EQ(pto_ops, 3 + 3 + 3 * 2 + 1);
}

// Attributes the custom syntax puts inside ins(...) or after outs(...) join the one dictionary.
TEST(PtoOpForms, AttributesInEveryPlacement) {
  PtoOp op{.name = "pto.tcvt",
           .groups = {{OperandSyntax::Ins, "", {{"%a", "A"}}}, {OperandSyntax::Outs, "", {{"%b", "B"}}}},
           .attrs = {{"rmode", "#pto<round_mode ROUND>"}},
           .attr_placement = AttrPlacement::InIns};
  EXPECT_EQ(CustomForm(op), "pto.tcvt ins(%a {rmode = #pto<round_mode ROUND>} : A) outs(%b : B)");
  EXPECT_EQ(GenericForm(op), "\"pto.tcvt\"(%a, %b) {rmode = #pto<round_mode ROUND>} : (A, B) -> ()");
  op.attr_placement = AttrPlacement::InInsAfterComma;
  EXPECT_EQ(CustomForm(op), "pto.tcvt ins(%a, {rmode = #pto<round_mode ROUND>} : A) outs(%b : B)");
  EXPECT_EQ(GenericForm(op), "\"pto.tcvt\"(%a, %b) {rmode = #pto<round_mode ROUND>} : (A, B) -> ()");
  op.attr_placement = AttrPlacement::AfterOperands;
  EXPECT_EQ(CustomForm(op), "pto.tcvt ins(%a : A) outs(%b : B) {rmode = #pto<round_mode ROUND>}");
  EXPECT_EQ(GenericForm(op), "\"pto.tcvt\"(%a, %b) {rmode = #pto<round_mode ROUND>} : (A, B) -> ()");
}

TEST(PtoOpForms, ResultsAndOperandGroups) {
  PtoOp view{.name = "pto.partition_view",
             .result = TypedValue{"%p", "P"},
             .groups = {{OperandSyntax::Source, "", {{"%v", "V"}}},
                        {OperandSyntax::List, "offsets", {{"%i", "index"}}},
                        {OperandSyntax::List, "sizes", {{"%n", "index"}}}}};
  EXPECT_EQ(CustomForm(view), "%p = pto.partition_view %v, offsets = [%i], sizes = [%n] : V -> P");
  EXPECT_EQ(GenericForm(view),
            "%p = \"pto.partition_view\"(%v, %i, %n) {operand_segment_sizes = array<i32: 1, 1, 1>} : (V, index, "
            "index) -> P");
}

}  // namespace
}  // namespace pypto::backend_ptoas
