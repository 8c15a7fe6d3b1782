#include "pypto/backend_ptoas/kernel_wrapper.h"

#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pypto/ir/dynamic_extent.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

constexpr std::string_view kHeader =
    "#include <cstdint>\n"
    "\n"
    "// ccec knows the address-space and core qualifiers; the CPU simulator build needs them spelled out.\n"
    "#ifndef __gm__\n"
    "#define __gm__\n"
    "#endif\n"
    "#ifndef __aicore__\n"
    "#if defined(__CPU_SIM)\n"
    "#define __aicore__\n"
    "#else\n"
    "#define __aicore__ [aicore]\n"
    "#endif\n"
    "#endif\n"
    "\n"
    "#include <pto/pto-inst.hpp>\n"
    "#include \"tensor.h\"\n"
    "\n"
    "using namespace pto;\n";

TEST(PreprocessPtoasOutput, DropsWhatTheWrapperProvidesAndRenames) {
  const std::string ptoas =
      "#include \"pto/pto-inst.hpp\"\n"
      "#include <cstdint>\n"
      "#include <pto/common/constants.hpp>\n"
      "using namespace pto;\n"
      "__global__ AICORE void vector_add(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {\n"
      "  set_ffts_base_addr(ffts);\n"
      "  using T = Tensor;  GlobalTensor<float> g;\n"
      "}\n"
      "AICORE inline void helper() {}\n";
  EXPECT_EQ(PreprocessPtoasOutput(ptoas),
            "#include <pto/common/constants.hpp>\n"
            "static __aicore__ void vector_add(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {\n"
            "  using T = ChipTensor;  GlobalTensor<float> g;\n"
            "}\n"
            "__aicore__ inline void helper() {}\n");
}

TEST(PreprocessPtoasOutput, ExternCEntryBecomesStatic) {
  EXPECT_EQ(PreprocessPtoasOutput("extern \"C\" __global__ AICORE void k() {}"), "static __aicore__ void k() {}");
}

TEST(EmitKernelWrapper, TensorsFirstThenScalars) {
  auto scale = ScalarParam("scale", ir::DataType::FP32, {});
  auto x = TensorParam("x", {16, 16}, {}, ir::DataType::BF16);
  auto rows = ScalarParam("rows", ir::DataType::INDEX, {});
  auto out = TensorParam("out", {16, 16}, {}, ir::DataType::FP32);
  auto kernel = Kernel("scaled_copy", {scale, x, rows, out},
                       {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                       {});
  auto wrapper = EmitKernelWrapper(*kernel, "AICORE void scaled_copy(__gm__ bfloat16_t* v1, __gm__ float* v2, "
                                            "float v3, int64_t v4) {}\n");
  ASSERT_TRUE(wrapper) << wrapper.error();
  EXPECT_EQ(*wrapper,
            "// Kernel 'scaled_copy': ptoas output behind the runtime's kernel_entry ABI.\n" + std::string(kHeader) +
                "\n"
                "// ---- ptoas output ----\n"
                "static __aicore__ void scaled_copy(__gm__ bfloat16_t* v1, __gm__ float* v2, float v3, int64_t v4) {}\n"
                "// ---- end of ptoas output ----\n"
                "\n"
                "extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args) {\n"
                "#if !defined(__CPU_SIM)\n"
                "  set_atomic_none();\n"
                "#endif\n"
                "  __gm__ ChipTensor* x_desc = reinterpret_cast<__gm__ ChipTensor*>(args[0]);\n"
                "  __gm__ bfloat16_t* x = reinterpret_cast<__gm__ bfloat16_t*>(x_desc->buffer.addr) + "
                "x_desc->start_offset;\n"
                "  __gm__ ChipTensor* out_desc = reinterpret_cast<__gm__ ChipTensor*>(args[1]);\n"
                "  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_desc->buffer.addr) + out_desc->start_offset;\n"
                "  union { uint64_t raw; float value; } scale_bits;\n"
                "  scale_bits.raw = static_cast<uint64_t>(args[2]);\n"
                "  float scale = scale_bits.value;\n"
                "  union { uint64_t raw; int64_t value; } rows_bits;\n"
                "  rows_bits.raw = static_cast<uint64_t>(args[3]);\n"
                "  int64_t rows = rows_bits.value;\n"
                "  scaled_copy(x, out, scale, rows);\n"
                "}\n");
}

// A dynamic axis's extent goes after the scalars, read off the task's tensor descriptor.
TEST(EmitKernelWrapper, PassesTheExtentOfADynamicAxisAfterTheScalars) {
  auto x = TensorParam("x", {ir::kDynamicExtent, 16}, {});
  auto r = ScalarParam("r", ir::DataType::INDEX, {});
  auto kernel = Kernel("k", {x, r}, {ir::ParamDirection::InOut, ir::ParamDirection::In}, {});
  auto wrapper = EmitKernelWrapper(*kernel);
  ASSERT_TRUE(wrapper) << wrapper.error();
  EXPECT_NE(wrapper->find("  k(x, r, static_cast<int64_t>(x_desc->shapes[0]));\n"), std::string::npos) << *wrapper;
}

TEST(EmitKernelWrapper, LocalNamesAvoidKeywordsAndCollisions) {
  auto args = TensorParam("args", {8}, {});
  auto keyword = TensorParam("new", {8}, {});
  auto desc = ScalarParam("args_desc", ir::DataType::INT32, {});
  auto kernel = Kernel("k", {args, keyword, desc},
                       {ir::ParamDirection::In, ir::ParamDirection::Out, ir::ParamDirection::In}, {});
  auto wrapper = EmitKernelWrapper(*kernel);
  ASSERT_TRUE(wrapper) << wrapper.error();
  const std::string entry = wrapper->substr(wrapper->find("extern \"C\""));
  EXPECT_EQ(entry,
            "extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args) {\n"
            "#if !defined(__CPU_SIM)\n"
            "  set_atomic_none();\n"
            "#endif\n"
            "  __gm__ ChipTensor* args_1_desc = reinterpret_cast<__gm__ ChipTensor*>(args[0]);\n"
            "  __gm__ float* args_1 = reinterpret_cast<__gm__ float*>(args_1_desc->buffer.addr) + "
            "args_1_desc->start_offset;\n"
            "  __gm__ ChipTensor* p_new_desc = reinterpret_cast<__gm__ ChipTensor*>(args[1]);\n"
            "  __gm__ float* p_new = reinterpret_cast<__gm__ float*>(p_new_desc->buffer.addr) + "
            "p_new_desc->start_offset;\n"
            "  union { uint64_t raw; int32_t value; } args_desc_bits;\n"
            "  args_desc_bits.raw = static_cast<uint64_t>(args[2]);\n"
            "  int32_t args_desc = args_desc_bits.value;\n"
            "  k(args_1, p_new, args_desc);\n"
            "}\n");
}

TEST(EmitKernelWrapper, RejectsTypesWithoutAKernelType) {
  auto x = TensorParam("x", {8}, At(2, 3), ir::DataType::INT4);
  auto kernel = Kernel("k", {x}, {ir::ParamDirection::In}, {});
  auto wrapper = EmitKernelWrapper(*kernel);
  ASSERT_FALSE(wrapper);
  EXPECT_EQ(wrapper.error(), "k.py:2:3: element type INT4 has no C++ kernel type in backend-ptoas");
}

}  // namespace
}  // namespace pypto::backend_ptoas
