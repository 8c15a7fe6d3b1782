// The comparison and selection kernels against plain loops: the packed predicate mask's bit order and
// zeroed row padding, NaN operands, selection of raw elements of any width; the remainder kernels
// against std::fmod and C's %; and the widening of narrow integers that their arithmetic runs through.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compute_exec.h"
#include "kernels/compare.h"
#include "kernels/elementwise.h"
#include "kernels/valid_region.h"

namespace simtest {
namespace {

namespace sim = pypto::sim;

bool Bit(const std::vector<uint8_t>& mask, size_t row_bytes, size_t r, size_t c) {
  return (mask[r * row_bytes + c / 8] >> (c % 8)) & 1u;
}

TEST(Compare, PacksOneBitPerElementLeastSignificantFirst) {
  constexpr size_t kRows = 3, kCols = 19, kRowBytes = 32;
  std::vector<float> a(kRows * kCols), b(kRows * kCols);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    b[i] = static_cast<float>(static_cast<int>(i % 3) - 1);
  }
  a[4] = std::numeric_limits<float>::quiet_NaN();
  const sim::CmpOp ops[] = {sim::CmpOp::Eq, sim::CmpOp::Ne, sim::CmpOp::Lt,
                            sim::CmpOp::Le, sim::CmpOp::Gt, sim::CmpOp::Ge};
  for (sim::CmpOp op : ops) {
    std::vector<uint8_t> mask(kRows * kRowBytes, 0xAB);
    sim::CompareF32(op, mask.data(), kRowBytes, a.data(), b.data(), kRows, kCols);
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t c = 0; c < kCols; ++c) {
        const float x = a[r * kCols + c], y = b[r * kCols + c];
        const bool expected = op == sim::CmpOp::Eq   ? x == y
                              : op == sim::CmpOp::Ne ? x != y
                              : op == sim::CmpOp::Lt ? x < y
                              : op == sim::CmpOp::Le ? x <= y
                              : op == sim::CmpOp::Gt ? x > y
                                                     : x >= y;
        EXPECT_EQ(Bit(mask, kRowBytes, r, c), expected) << static_cast<int>(op) << " at " << r << ", " << c;
      }
      for (size_t byte = 3; byte < kRowBytes; ++byte) EXPECT_EQ(mask[r * kRowBytes + byte], 0) << byte;
      EXPECT_EQ(mask[r * kRowBytes + 2] >> 3, 0);  // bits past column 18
    }
    // The NaN element (row 0, column 4) is only ever unequal.
    EXPECT_EQ(Bit(mask, kRowBytes, 0, 4), op == sim::CmpOp::Ne);
  }
}

TEST(Compare, ScalarFormAndIntegers) {
  const std::vector<int32_t> a = {-3, 7, 7, 8, INT32_MIN, INT32_MAX, 0, 7, 9};
  std::vector<uint8_t> mask(2, 0xFF);
  sim::CompareScalarI32(sim::CmpOp::Ge, mask.data(), 2, a.data(), 7, 1, a.size());
  EXPECT_EQ(mask[0], 0b10101110);
  EXPECT_EQ(mask[1], 0b1);
}

TEST(Select, PicksRawElementsByTheMaskBits) {
  constexpr size_t kRows = 2, kCols = 10, kRowBytes = 4;
  std::vector<uint8_t> mask = {0b01010101, 0b10, 0, 0, 0b11110000, 0b01, 0, 0};
  std::vector<int16_t> lhs(kRows * kCols), rhs(kRows * kCols), dst(kRows * kCols);
  for (size_t i = 0; i < lhs.size(); ++i) {
    lhs[i] = static_cast<int16_t>(i);
    rhs[i] = static_cast<int16_t>(-1 - static_cast<int>(i));
  }
  sim::SelectByMask(dst.data(), mask.data(), kRowBytes, lhs.data(), rhs.data(), kRows, kCols, sizeof(int16_t));
  for (size_t r = 0; r < kRows; ++r)
    for (size_t c = 0; c < kCols; ++c)
      EXPECT_EQ(dst[r * kCols + c], Bit(mask, kRowBytes, r, c) ? lhs[r * kCols + c] : rhs[r * kCols + c]);
}

TEST(Fmod, FloatsAreExactAndIntegersTruncate) {
  const std::vector<float> a = {7.5f, -7.5f, 1e30f, -0.0f, 3.0f};
  const std::vector<float> b = {2.0f, 2.0f, 3.0f, 1.0f, -0.7f};
  std::vector<float> dst(a.size());
  sim::BinaryF32(sim::BinaryOp::Fmod, dst.data(), a.data(), b.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(dst[i], std::fmod(a[i], b[i])) << i;
  EXPECT_TRUE(std::signbit(dst[3]));
  const std::vector<int32_t> x = {7, -7, 7, -7, INT32_MIN};
  const std::vector<int32_t> y = {3, 3, -3, -3, -1};
  std::vector<int32_t> out(x.size());
  ASSERT_TRUE(sim::BinaryI32(sim::BinaryOp::Fmod, out.data(), x.data(), y.data(), x.size()));
  EXPECT_EQ(out, (std::vector<int32_t>{1, -1, 1, -1, 0}));
  EXPECT_FALSE(sim::BinaryScalarI32(sim::BinaryOp::Fmod, out.data(), x.data(), 0, x.size()));
}

TEST(WidenInts, SignOrZeroExtendsAndNarrowsToTheLowBits) {
  const std::vector<int16_t> narrow = {-32768, -1, 0, 32767};
  const auto* bytes = reinterpret_cast<const std::byte*>(narrow.data());
  EXPECT_EQ(sim::WidenInts(sim::Widen::I16, bytes, 8), (std::vector<int32_t>{-32768, -1, 0, 32767}));
  EXPECT_EQ(sim::WidenInts(sim::Widen::U16, bytes, 8), (std::vector<int32_t>{32768, 65535, 0, 32767}));
  std::vector<int8_t> out(3);
  sim::NarrowInts(sim::Widen::I8, reinterpret_cast<std::byte*>(out.data()), {128, -129, 300});
  EXPECT_EQ(out, (std::vector<int8_t>{-128, 127, 44}));
}

TEST(FillPadExpand, CopiesTheValidCornerIntoALargerTile) {
  constexpr size_t kSrcRows = 3, kSrcCols = 5, kRows = 4, kCols = 7;
  std::vector<int32_t> src(kSrcRows * kSrcCols);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<int32_t>(i);
  std::vector<int32_t> dst(kRows * kCols, 0);
  sim::FillPadExpand(dst.data(), src.data(), kRows, kCols, kSrcCols, 2, 4, sizeof(int32_t), 0xFFFFFFFFu);
  for (size_t r = 0; r < kRows; ++r)
    for (size_t c = 0; c < kCols; ++c)
      EXPECT_EQ(dst[r * kCols + c], r < 2 && c < 4 ? src[r * kSrcCols + c] : -1) << r << ", " << c;
}

TEST(SelectScalarByMask, KeepsTheSourceWhereTheBitIsSetAndWritesTheScalarsLowBytesElsewhere) {
  // Two rows of 10 UINT16 elements; the mask's rows are 4 bytes apart (a wider carrier counts bytes).
  constexpr size_t kRows = 2, kCols = 10, kRowBytes = 4;
  std::vector<uint16_t> src(kRows * kCols);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(100 + i);
  const std::vector<uint8_t> mask = {0xAA, 0x02, 0, 0, 0x01, 0x00, 0, 0};
  std::vector<uint16_t> dst(src.size());
  sim::SelectScalarByMask(dst.data(), mask.data(), kRowBytes, src.data(), 0xFFFF8007u, kRows, kCols,
                          sizeof(uint16_t));
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t c = 0; c < kCols; ++c) {
      const bool set = (mask[r * kRowBytes + c / 8] >> (c % 8)) & 1u;
      EXPECT_EQ(dst[r * kCols + c], set ? src[r * kCols + c] : 0x8007u) << r << ", " << c;
    }
  }
}

}  // namespace
}  // namespace simtest
