// Helpers for the kernel tests: the lengths and shapes every kernel is run over, seeded random data,
// bit-level float access, and the error of a float result in units in the last place.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace kerneltest {

// Around and away from every vector width (4, 8, 16 float lanes), plus an empty array.
inline constexpr size_t kLengths[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 129, 1000};

// [rows, cols] shapes with ragged rows.
inline constexpr std::pair<size_t, size_t> kShapes[] = {{1, 1}, {1, 7}, {3, 33}, {7, 1}, {16, 16}, {64, 129}, {33, 65}};

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::vector<float> Uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<int32_t> UniformInt(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

// |got - exact| in units of the float spacing at `exact` (subnormal spacing below FLT_MIN). A
// correctly rounded result is within 0.5. Infinite or NaN `got` matching `exact` (as a float) is 0.
inline double UlpError(float got, double exact) {
  const float rounded = static_cast<float>(exact);
  if (std::isnan(exact)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : std::numeric_limits<double>::infinity();
  const int e = std::max(std::ilogb(std::fabs(exact)), -126);
  const double ulp = std::ldexp(1.0, e - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

// Equal values, or both NaN (which == would reject).
inline bool SameFloat(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace kerneltest
