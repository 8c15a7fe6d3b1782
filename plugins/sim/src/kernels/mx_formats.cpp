#include "kernels/mx_formats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "pypto/ir/mx_layout.h"

namespace pypto::sim {
namespace {

// A sign-magnitude minifloat: exponent and mantissa widths, and which codes are not finite.
struct Format {
  int exp_bits, man_bits;
  bool nan_at_top;  // E4M3FN: only S.1111.111 is NaN, no infinities
  bool ieee_top;    // E5M2: the top exponent holds infinities and NaNs
};

constexpr Format kE2M1{2, 1, false, false}, kE4M3{4, 3, true, false}, kE5M2{5, 2, false, true};

const Format* FormatOf(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP4: return &kE2M1;
    case ir::DataType::FP8E4M3FN: return &kE4M3;
    case ir::DataType::FP8E5M2: return &kE5M2;
    default: return nullptr;
  }
}

int Bias(const Format& f) { return (1 << (f.exp_bits - 1)) - 1; }

// The magnitude of a positive code; NaN or infinity where the format says so.
float Magnitude(const Format& f, unsigned code) {
  const unsigned exp = code >> f.man_bits, man = code & ((1u << f.man_bits) - 1);
  const unsigned top = (1u << f.exp_bits) - 1;
  if (f.nan_at_top && exp == top && man == (1u << f.man_bits) - 1) return std::numeric_limits<float>::quiet_NaN();
  if (f.ieee_top && exp == top)
    return man == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (exp == 0) return std::ldexp(static_cast<float>(man), 1 - Bias(f) - f.man_bits);
  return std::ldexp(static_cast<float>(man + (1u << f.man_bits)), static_cast<int>(exp) - Bias(f) - f.man_bits);
}

// The finite magnitudes of a format, by code (increasing with it).
std::vector<float> FiniteMagnitudes(const Format& f) {
  std::vector<float> values;
  for (unsigned code = 0; code < (1u << (f.exp_bits + f.man_bits)); ++code) {
    const float value = Magnitude(f, code);
    if (!std::isfinite(value)) break;
    values.push_back(value);
  }
  return values;
}

const std::vector<float>& Table(const Format& f) {
  static const std::array<std::vector<float>, 3> tables = {FiniteMagnitudes(kE2M1), FiniteMagnitudes(kE4M3),
                                                           FiniteMagnitudes(kE5M2)};
  return tables[&f == &kE2M1 ? 0 : &f == &kE4M3 ? 1 : 2];
}

uint8_t NanCode(const Format& f) {
  if (f.nan_at_top) return 0x7f;
  if (f.ieee_top) return 0x7f;  // S.11111.11
  return 0;
}

uint8_t Encode(const Format& f, float value) {
  const unsigned sign = std::signbit(value) ? 1u << (f.exp_bits + f.man_bits) : 0;
  if (std::isnan(value)) return NanCode(f);
  const auto& table = Table(f);
  const float magnitude = std::fabs(value);
  if (magnitude >= table.back()) return static_cast<uint8_t>(sign | (table.size() - 1));  // saturate
  // The first code at or above the magnitude, and the one below it: the nearer, ties to even.
  const size_t above = static_cast<size_t>(std::lower_bound(table.begin(), table.end(), magnitude) - table.begin());
  size_t code = above;
  if (above > 0) {
    const float up = table[above] - magnitude, down = magnitude - table[above - 1];
    if (down < up || (down == up && (above - 1) % 2 == 0)) code = above - 1;
  }
  return static_cast<uint8_t>(sign | code);
}

}  // namespace

bool IsMxFormat(ir::DataType dtype) { return FormatOf(dtype) != nullptr; }

float DecodeMx(ir::DataType dtype, uint8_t code) {
  if (dtype == ir::DataType::FP8E8M0)
    return code == 0xff ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(code) - 127);
  const Format* f = FormatOf(dtype);
  if (!f) return 0;
  const unsigned sign_bit = 1u << (f->exp_bits + f->man_bits);
  const float magnitude = Magnitude(*f, code & (sign_bit - 1));
  return (code & sign_bit) ? -magnitude : magnitude;
}

uint8_t EncodeMx(ir::DataType dtype, float value) {
  const Format* f = FormatOf(dtype);
  return f ? Encode(*f, value) : 0;
}

std::vector<float> DecodeMxArray(ir::DataType dtype, const std::byte* src, size_t n) {
  std::vector<float> values(n);
  const auto* bytes = reinterpret_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t code = dtype == ir::DataType::FP4 ? (bytes[i / 2] >> (4 * (i % 2))) & 0xf : bytes[i];
    values[i] = DecodeMx(dtype, code);
  }
  return values;
}

void EncodeMxArray(ir::DataType dtype, std::byte* dst, const std::vector<float>& values) {
  auto* bytes = reinterpret_cast<uint8_t*>(dst);
  if (dtype != ir::DataType::FP4) {
    for (size_t i = 0; i < values.size(); ++i) bytes[i] = EncodeMx(dtype, values[i]);
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t nibble = EncodeMx(dtype, values[i]);
    const unsigned shift = 4 * (i % 2);
    bytes[i / 2] = static_cast<uint8_t>((bytes[i / 2] & ~(0xf << shift)) | (nibble << shift));
  }
}

void MatmulMx(float* dst, const uint8_t* a, const uint8_t* a_scale, const uint8_t* b, const uint8_t* b_scale, size_t m,
              size_t k, size_t n, bool accumulate) {
  const auto groups = static_cast<int64_t>(k / 32);
  const auto rows = static_cast<int64_t>(m), cols = static_cast<int64_t>(n);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float sum = accumulate ? dst[i * cols + j] : 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        const float scale =
            DecodeMx(ir::DataType::FP8E8M0, a_scale[ir::MxElementIndex(ir::TensorLayout::MX_A_ZZ, rows, groups, i, g)]) *
            DecodeMx(ir::DataType::FP8E8M0, b_scale[ir::MxElementIndex(ir::TensorLayout::MX_B_NN, groups, cols, g, j)]);
        for (int64_t kk = g * 32; kk < (g + 1) * 32; ++kk) {
          const float x = DecodeMx(ir::DataType::FP8E4M3FN, a[i * static_cast<int64_t>(k) + kk]);
          const float y = DecodeMx(ir::DataType::FP8E4M3FN, b[kk * cols + j]);
          sum += x * y * scale;
        }
      }
      dst[i * cols + j] = sum;
    }
  }
}

}  // namespace pypto::sim
