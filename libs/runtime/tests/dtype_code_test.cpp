// The one map from IR dtypes to the runtime's element-type codes.
#include "pypto/runtime/dtype_code.h"

#include <gtest/gtest.h>

#include "pypto/runtime/chip_tensor.h"

namespace pypto::rt {
namespace {

using ir::DataType;

TEST(RuntimeDtypeCode, EachCodeHoldsElementsOfTheDtypesWidth) {
  for (DataType dtype : {DataType::FP32, DataType::FP16, DataType::BF16, DataType::INT8, DataType::INT16,
                         DataType::INT32, DataType::INT64, DataType::UINT8, DataType::UINT16, DataType::UINT32,
                         DataType::UINT64, DataType::FP8E4M3FN, DataType::FP8E8M0}) {
    auto code = RuntimeDtypeCode(dtype);
    ASSERT_TRUE(code) << ir::DataTypeName(dtype);
    EXPECT_EQ(ElementSize(*code) * 8, static_cast<size_t>(ir::DataTypeBits(dtype))) << ir::DataTypeName(dtype);
  }
}

TEST(RuntimeDtypeCode, AnIndexIsA64BitInteger) {
  EXPECT_EQ(RuntimeDtypeCode(DataType::INDEX), std::optional<uint8_t>(PYPTO_RT_INT64));
  EXPECT_EQ(RuntimeDtypeCode(DataType::FP32), std::optional<uint8_t>(PYPTO_RT_FLOAT32));
  EXPECT_EQ(RuntimeDtypeCode(DataType::BF16), std::optional<uint8_t>(PYPTO_RT_BFLOAT16));
}

TEST(RuntimeDtypeCode, ADtypeTheRuntimeLacksHasNone) {
  EXPECT_EQ(RuntimeDtypeCode(DataType::FP64), std::nullopt);
  EXPECT_EQ(RuntimeDtypeCode(DataType::TASK_ID), std::nullopt);
}

}  // namespace
}  // namespace pypto::rt
