// The MX formats against their definitions: every FP4, E4M3 and E5M2 code decoded from its sign,
// exponent and mantissa fields; encoding picks the nearer neighbour, ties to the even code, and
// saturates; FP4 packs two values a byte, low nibble first; and the MX product reads its scales in
// the cube's block orders.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/mx_formats.h"
#include "pypto/ir/mx_layout.h"

namespace pypto::sim {
namespace {

using ir::DataType;

TEST(MxFormats, Fp4CodesAreTheE2M1Values) {
  const float magnitudes[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t code = 0; code < 16; ++code) {
    const float want = code >= 8 ? -magnitudes[code - 8] : magnitudes[code];
    EXPECT_EQ(DecodeMx(DataType::FP4, code), want) << int(code);
    EXPECT_EQ(std::signbit(DecodeMx(DataType::FP4, code)), code >= 8) << int(code);
  }
}

TEST(MxFormats, Fp8CodesFollowTheirFields) {
  // E4M3FN: bias 7, subnormals below exponent 1, S.1111.111 NaN, no infinities; 448 the largest.
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, 0x7e), 448.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, 0xc4), -3.0f);
  EXPECT_TRUE(std::isnan(DecodeMx(DataType::FP8E4M3FN, 0x7f)));
  // E5M2: bias 15, the top exponent infinities and NaNs.
  EXPECT_EQ(DecodeMx(DataType::FP8E5M2, 0x3c), 1.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E5M2, 0x7b), 57344.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E5M2, 0xfc), -std::numeric_limits<float>::infinity());
  // E8M0: 2^(e - 127), 0xff NaN.
  EXPECT_EQ(DecodeMx(DataType::FP8E8M0, 127), 1.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E8M0, 130), 8.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(DecodeMx(DataType::FP8E8M0, 0xff)));
}

TEST(MxFormats, EncodingRoundsToTheNearerCodeTiesToEven) {
  for (DataType dtype : {DataType::FP4, DataType::FP8E4M3FN, DataType::FP8E5M2}) {
    const unsigned codes = dtype == DataType::FP4 ? 16 : 256;
    for (unsigned code = 0; code < codes; ++code) {
      const float value = DecodeMx(dtype, static_cast<uint8_t>(code));
      if (std::isfinite(value)) EXPECT_EQ(DecodeMx(dtype, EncodeMx(dtype, value)), value) << int(dtype) << " " << code;
    }
  }
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, 2.5f)), 2.0f);   // between codes 4 and 5: 4
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, 3.5f)), 4.0f);   // between 5 and 6: 6
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, 2.51f)), 3.0f);
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, -0.25f)), -0.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, EncodeMx(DataType::FP8E4M3FN, 1.0625f)), 1.0f);  // half an ulp
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, EncodeMx(DataType::FP8E4M3FN, 1.1875f)), 1.25f);
}

TEST(MxFormats, EncodingSaturatesAndKeepsNaN) {
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, 100.0f)), 6.0f);
  EXPECT_EQ(DecodeMx(DataType::FP4, EncodeMx(DataType::FP4, -std::numeric_limits<float>::infinity())), -6.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E4M3FN, EncodeMx(DataType::FP8E4M3FN, 1e6f)), 448.0f);
  EXPECT_EQ(DecodeMx(DataType::FP8E5M2, EncodeMx(DataType::FP8E5M2, -1e9f)), -57344.0f);
  EXPECT_TRUE(std::isnan(DecodeMx(DataType::FP8E4M3FN, EncodeMx(DataType::FP8E4M3FN, NAN))));
}

TEST(MxFormats, Fp4PacksTwoValuesAByteLowNibbleFirst) {
  const std::vector<float> values = {0.5f, -6.0f, 3.0f, 1.0f};
  std::vector<std::byte> packed(2, std::byte{0xee});
  EncodeMxArray(DataType::FP4, packed.data(), values);
  EXPECT_EQ(packed[0], std::byte{0xf1});  // -6 (0xf) over 0.5 (0x1)
  EXPECT_EQ(packed[1], std::byte{0x25});  // 1 (0x2) over 3 (0x5)
  EXPECT_EQ(DecodeMxArray(DataType::FP4, packed.data(), 4), values);
}

TEST(MxFormats, TheProductScalesEach32OfKByBothExponents) {
  constexpr size_t m = 16, k = 64, n = 16;
  std::vector<uint8_t> a(m * k, EncodeMx(DataType::FP8E4M3FN, 1.0f)), b(k * n, EncodeMx(DataType::FP8E4M3FN, 0.5f));
  // Left scales [16, 2] and right scales [2, 16], 2^0 everywhere but (3, 1) on the left (x4) and
  // (0, 5) on the right (x2), each stored where its block order puts it.
  std::vector<uint8_t> sa(m * 2, 127), sb(2 * n, 127);
  sa[ir::MxElementIndex(ir::TensorLayout::MX_A_ZZ, m, 2, 3, 1)] = 129;
  sb[ir::MxElementIndex(ir::TensorLayout::MX_B_NN, 2, n, 0, 5)] = 128;
  std::vector<float> c(m * n, 100.0f);
  MatmulMx(c.data(), a.data(), sa.data(), b.data(), sb.data(), m, k, n, /*accumulate=*/false);
  EXPECT_EQ(c[0], 32.0f);                   // 64 products of 0.5
  EXPECT_EQ(c[3 * n + 0], 16.0f + 64.0f);   // row 3: its second group x4
  EXPECT_EQ(c[0 * n + 5], 32.0f + 16.0f);   // column 5: its first group x2
  EXPECT_EQ(c[3 * n + 5], 32.0f + 64.0f);   // both: 16 x2 + 16 x4
  MatmulMx(c.data(), a.data(), sa.data(), b.data(), sb.data(), m, k, n, /*accumulate=*/true);
  EXPECT_EQ(c[0], 64.0f);
}

}  // namespace
}  // namespace pypto::sim
