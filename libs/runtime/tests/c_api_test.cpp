#include <gtest/gtest.h>

#include <cstring>

#include "pypto-c/runtime.h"

namespace {

TEST(RuntimeCApi, VersionAndDtypeSizes) {
  EXPECT_STREQ(pypto_runtime_version(), PYPTO_VERSION);
  EXPECT_EQ(pypto_rt_dtype_size(PYPTO_RT_FLOAT32), 4u);
  EXPECT_EQ(pypto_rt_dtype_size(PYPTO_RT_BFLOAT16), 2u);
  EXPECT_EQ(pypto_rt_dtype_size(PYPTO_RT_UINT64), 8u);
  EXPECT_EQ(pypto_rt_dtype_size(99), 0u);
}

TEST(RuntimeCApi, MakeExternalTensor) {
  float data[2][3] = {};
  const uint32_t shape[] = {2, 3};
  pypto_chip_tensor tensor;
  std::memset(&tensor, 0xff, sizeof tensor);
  ASSERT_EQ(pypto_rt_make_external_tensor(data, shape, 2, PYPTO_RT_FLOAT32, &tensor), PYPTO_OK);
  EXPECT_STREQ(pypto_last_error_message(), "");
  EXPECT_EQ(tensor.buffer_addr, reinterpret_cast<uint64_t>(data));
  EXPECT_EQ(tensor.buffer_size, 24u);
  EXPECT_EQ(tensor.owner_task_id, PYPTO_INVALID_TASK_ID);
  EXPECT_EQ(tensor.start_offset, 0u);
  EXPECT_EQ(tensor.ndims, 2u);
  EXPECT_EQ(tensor.shapes[0], 2u);
  EXPECT_EQ(tensor.shapes[1], 3u);
  EXPECT_EQ(tensor.strides[0], 3u);
  EXPECT_EQ(tensor.strides[1], 1u);
  EXPECT_EQ(tensor.extent_elem_cache, 6u);
  EXPECT_EQ(tensor.is_contiguous, 1);
  for (uint8_t byte : tensor.reserved) EXPECT_EQ(byte, 0);
}

TEST(RuntimeCApi, MakeExternalTensorErrors) {
  float data[4] = {};
  const uint32_t shape[] = {4, 1, 1, 1, 1, 1};
  pypto_chip_tensor tensor;
  EXPECT_EQ(pypto_rt_make_external_tensor(data, shape, 1, PYPTO_RT_FLOAT32, nullptr), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_rt_make_external_tensor: null argument");
  EXPECT_EQ(pypto_rt_make_external_tensor(nullptr, shape, 1, PYPTO_RT_FLOAT32, &tensor), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_rt_make_external_tensor: null argument");
  EXPECT_EQ(pypto_rt_make_external_tensor(data, shape, 6, PYPTO_RT_FLOAT32, &tensor), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_rt_make_external_tensor: ndims 6 is not in 1..5");
  EXPECT_EQ(pypto_rt_make_external_tensor(data, shape, 1, 42, &tensor), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_rt_make_external_tensor: unknown dtype 42");
  // A successful call clears the message.
  EXPECT_EQ(pypto_rt_make_external_tensor(data, shape, 1, PYPTO_RT_FLOAT32, &tensor), PYPTO_OK);
  EXPECT_STREQ(pypto_last_error_message(), "");
}

}  // namespace
