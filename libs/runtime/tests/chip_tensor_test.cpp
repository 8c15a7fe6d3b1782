#include "pypto/runtime/chip_tensor.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <vector>

namespace pypto::rt {
namespace {

TEST(ChipTensor, ElementSizesAndNames) {
  EXPECT_EQ(ElementSize(PYPTO_RT_FLOAT32), 4u);
  EXPECT_EQ(ElementSize(PYPTO_RT_FLOAT16), 2u);
  EXPECT_EQ(ElementSize(PYPTO_RT_BFLOAT16), 2u);
  EXPECT_EQ(ElementSize(PYPTO_RT_INT64), 8u);
  EXPECT_EQ(ElementSize(PYPTO_RT_UINT32), 4u);
  EXPECT_EQ(ElementSize(PYPTO_RT_BOOL), 1u);
  EXPECT_EQ(ElementSize(PYPTO_RT_FP8E4M3FN), 1u);
  EXPECT_EQ(ElementSize(PYPTO_RT_FP4E2M1), 1u);
  EXPECT_EQ(ElementSize(15), 0u);
  EXPECT_STREQ(DtypeName(PYPTO_RT_FLOAT32), "FLOAT32");
  EXPECT_STREQ(DtypeName(PYPTO_RT_BFLOAT16), "BFLOAT16");
  EXPECT_STREQ(DtypeName(200), "UNKNOWN");
}

TEST(ChipTensor, MakeExternalTensorIsContiguousRowMajor) {
  std::vector<uint16_t> data(24);
  const std::array<uint32_t, 3> shape = {2, 3, 4};
  const ChipTensor t = MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT16);
  EXPECT_EQ(t.buffer_addr, reinterpret_cast<uint64_t>(data.data()));
  EXPECT_EQ(t.buffer_size, 48u);
  EXPECT_EQ(t.owner_task_id, kInvalidTaskId);
  EXPECT_EQ(t.start_offset, 0u);
  EXPECT_EQ(t.version, 0);
  EXPECT_EQ(t.ndims, 3u);
  EXPECT_EQ(t.dtype, PYPTO_RT_FLOAT16);
  EXPECT_EQ(t.manual_dep, 0);
  EXPECT_EQ(t.is_contiguous, 1);
  EXPECT_EQ(t.shapes[0], 2u);
  EXPECT_EQ(t.shapes[1], 3u);
  EXPECT_EQ(t.shapes[2], 4u);
  EXPECT_EQ(t.strides[0], 12u);
  EXPECT_EQ(t.strides[1], 4u);
  EXPECT_EQ(t.strides[2], 1u);
  EXPECT_EQ(t.extent_elem_cache, 24u);

  const ByteRange bytes = ViewBytes(t);
  EXPECT_EQ(bytes.first, t.buffer_addr);
  EXPECT_EQ(bytes.last, t.buffer_addr + 48);
}

TEST(ChipTensor, EmptyDimensionKeepsPositiveStrides) {
  float data[1];
  const std::array<uint32_t, 2> shape = {0, 4};
  const ChipTensor t = MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32);
  EXPECT_EQ(t.strides[0], 4u);
  EXPECT_EQ(t.strides[1], 1u);
  EXPECT_EQ(t.buffer_size, 0u);
  EXPECT_EQ(t.extent_elem_cache, 0u);
  const ByteRange bytes = ViewBytes(t);
  EXPECT_EQ(bytes.first, bytes.last);
}

TEST(ChipTensor, MakeExternalTensorRefusesBadRankOrDtype) {
  float data[1];
  EXPECT_THROW(MakeExternalTensor(data, std::span<const uint32_t>(), PYPTO_RT_FLOAT32), std::invalid_argument);
  const std::array<uint32_t, 6> six = {1, 1, 1, 1, 1, 1};
  EXPECT_THROW(MakeExternalTensor(data, six, PYPTO_RT_FLOAT32), std::invalid_argument);
  const std::array<uint32_t, 1> one = {1};
  EXPECT_THROW(MakeExternalTensor(data, one, 99), std::invalid_argument);
}

// A 2x2 window at row 1, column 1 of a 4x4 float matrix.
ChipTensor Window(float* base) {
  const std::array<uint32_t, 2> shape = {4, 4};
  ChipTensor t = MakeExternalTensor(base, shape, PYPTO_RT_FLOAT32);
  t.start_offset = 5;
  t.shapes[0] = 2;
  t.shapes[1] = 2;
  t.is_contiguous = 0;
  return t;
}

TEST(ChipTensor, ViewBytesFollowsOffsetsAndStrides) {
  float data[16] = {};
  const ChipTensor view = Window(data);
  // Elements 5, 6, 9, 10: the range runs from element 5 to one past element 10.
  const ByteRange bytes = ViewBytes(view);
  EXPECT_EQ(bytes.first, view.buffer_addr + 5 * 4);
  EXPECT_EQ(bytes.last, view.buffer_addr + 11 * 4);
}

TEST(ChipTensor, DataPointerAddsStartOffset) {
  float data[16];
  for (int i = 0; i < 16; ++i) data[i] = static_cast<float>(i);
  const ChipTensor view = Window(data);
  EXPECT_EQ(DataPointer<float>(view), data + 5);
  EXPECT_EQ(DataPointer<float>(view)[view.strides[0]], 9.0f);
}

TEST(ChipTensor, ReshapedTensorKeepsTheBufferWithRowMajorStrides) {
  std::vector<float> data(24);
  const std::array<uint32_t, 3> shape = {2, 3, 4};
  ChipTensor t = MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32);
  t.start_offset = 0;
  const std::array<uint32_t, 2> flat = {6, 4};
  const ChipTensor r = ReshapedTensor(t, flat);
  EXPECT_EQ(r.buffer_addr, t.buffer_addr);
  EXPECT_EQ(r.buffer_size, t.buffer_size);
  EXPECT_EQ(r.ndims, 2u);
  EXPECT_EQ(r.shapes[0], 6u);
  EXPECT_EQ(r.shapes[1], 4u);
  EXPECT_EQ(r.shapes[2], 0u);
  EXPECT_EQ(r.strides[0], 4u);
  EXPECT_EQ(r.strides[1], 1u);
  EXPECT_EQ(r.extent_elem_cache, 24u);
  EXPECT_EQ(ViewBytes(r).first, ViewBytes(t).first);
  EXPECT_EQ(ViewBytes(r).last, ViewBytes(t).last);
}

TEST(ChipTensor, ReshapedTensorRefusesWindowsAndOtherCounts) {
  float data[16] = {};
  const std::array<uint32_t, 1> four = {4};
  EXPECT_THROW(ReshapedTensor(Window(data), four), std::invalid_argument);  // a 2x2 window of 4x4
  const std::array<uint32_t, 2> shape = {4, 4};
  const ChipTensor whole = MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32);
  const std::array<uint32_t, 2> wrong = {3, 5};
  try {
    ReshapedTensor(whole, wrong);
    FAIL() << "reshaped 16 elements to 15";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "ReshapedTensor: 16 elements cannot take a shape of 15");
  }
}

TEST(ChipTensor, AReshapeAxisOfUnknownExtentTakesWhatTheElementsLeave) {
  // codegen-orch's reshape to a dimension known when the program runs (a program compiled for every
  // extent) holds UINT32_MAX there: 5 tokens of [4, 16] are 5 rows of 64.
  std::vector<float> data(5 * 4 * 16);
  const std::array<uint32_t, 3> shape = {5, 4, 16};
  const ChipTensor t = MakeExternalTensor(data.data(), shape, PYPTO_RT_FLOAT32);
  const std::array<uint32_t, 2> rows = {UINT32_MAX, 64};
  const ChipTensor r = ReshapedTensor(t, rows);
  EXPECT_EQ(r.shapes[0], 5u);
  EXPECT_EQ(r.shapes[1], 64u);
  EXPECT_EQ(r.strides[0], 64u);
  const std::array<uint32_t, 2> uneven = {UINT32_MAX, 48};
  try {
    ReshapedTensor(t, uneven);
    FAIL() << "320 elements made rows of 48";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "ReshapedTensor: 320 elements do not divide into rows of 48");
  }
}

TEST(ChipTensor, SlicedTensorIsTheWindowWithTheBasesStrides) {
  float data[64];
  for (int i = 0; i < 64; ++i) data[i] = static_cast<float>(i);
  const std::array<uint32_t, 2> shape = {8, 8}, window = {2, 3}, at = {5, 4};
  const ChipTensor sliced = SlicedTensor(MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32), window, at);
  EXPECT_EQ(sliced.shapes[0], 2u);
  EXPECT_EQ(sliced.shapes[1], 3u);
  EXPECT_EQ(sliced.strides[0], 8u);
  EXPECT_EQ(sliced.is_contiguous, 0u);
  EXPECT_EQ(DataPointer<float>(sliced)[0], 44.0f);                  // row 5, column 4
  EXPECT_EQ(DataPointer<float>(sliced)[sliced.strides[0] + 2], 54.0f);  // row 6, column 6
  // A window of a window adds its offsets.
  const std::array<uint32_t, 2> one = {1, 1}, last = {1, 2};
  EXPECT_EQ(DataPointer<float>(SlicedTensor(sliced, one, last))[0], 54.0f);
}

TEST(ChipTensor, SlicedTensorRefusesAWindowOutsideTheTensor) {
  float data[16] = {};
  const std::array<uint32_t, 2> shape = {4, 4}, window = {2, 2}, rows = {4, 0}, columns = {0, 3};
  const ChipTensor tensor = MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32);
  try {
    SlicedTensor(tensor, window, rows);
    FAIL() << "sliced rows 4..6 of 4";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "SlicedTensor: the window [4, 6) of dimension 0 is outside its extent 4");
  }
  try {
    SlicedTensor(tensor, window, columns);  // columns 3..5 would alias the next row's first column
    FAIL() << "sliced columns 3..5 of 4";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "SlicedTensor: the window [3, 5) of dimension 1 is outside its extent 4");
  }
}

// Past the end of the outermost dimension lies the end of the buffer, which the simulator checks
// each access against; a block table's last window of n entries is such a slice.
TEST(ChipTensor, SlicedTensorMayRunPastTheEndOfTheOutermostDimension) {
  float data[16] = {};
  const std::array<uint32_t, 2> shape = {4, 4}, window = {2, 4}, at = {3, 0};
  const ChipTensor sliced = SlicedTensor(MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32), window, at);
  EXPECT_EQ(sliced.shapes[0], 2u);
  EXPECT_EQ(sliced.start_offset, 12u);
  EXPECT_EQ(sliced.buffer_size, 64u);
}

TEST(ChipTensor, TransposedTensorSwapsTwoAxesAndTheirStrides) {
  float data[24];
  for (int i = 0; i < 24; ++i) data[i] = static_cast<float>(i);
  const std::array<uint32_t, 2> shape = {4, 6};
  const ChipTensor transposed = TransposedTensor(MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32), 0, 1);
  EXPECT_EQ(transposed.shapes[0], 6u);
  EXPECT_EQ(transposed.shapes[1], 4u);
  EXPECT_EQ(transposed.strides[0], 1u);
  EXPECT_EQ(transposed.strides[1], 6u);
  EXPECT_EQ(transposed.is_contiguous, 0u);
  // Element [r, c] of the transpose is element [c, r] of the tensor; a window of it follows suit.
  EXPECT_EQ(DataPointer<float>(transposed)[5 * transposed.strides[0] + 3 * transposed.strides[1]], 23.0f);
  const std::array<uint32_t, 2> row = {1, 4}, at = {2, 0};
  const ChipTensor column = SlicedTensor(transposed, row, at);
  EXPECT_EQ(DataPointer<float>(column)[3 * column.strides[1]], 20.0f);  // tensor [3, 2]
  EXPECT_EQ(ViewBytes(column).last - ViewBytes(column).first, (3 * 6 + 1) * sizeof(float));
}

TEST(ChipTensor, TransposedTensorRefusesAnAxisOutsideTheRank) {
  float data[4] = {};
  const std::array<uint32_t, 2> shape = {2, 2};
  try {
    TransposedTensor(MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32), 0, 2);
    FAIL() << "swapped axis 2 of a matrix";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "TransposedTensor: axes 0 and 2 of a rank-2 tensor");
  }
}

TEST(ChipTensor, ByteRangeOverlap) {
  EXPECT_TRUE((ByteRange{0, 10}.overlaps(ByteRange{9, 20})));
  EXPECT_FALSE((ByteRange{0, 10}.overlaps(ByteRange{10, 20})));
  EXPECT_FALSE((ByteRange{5, 5}.overlaps(ByteRange{0, 10})));  // empty
  EXPECT_TRUE((ByteRange{2, 3}.overlaps(ByteRange{0, 10})));
}

}  // namespace
}  // namespace pypto::rt
