#include "kernels/integer_ops.h"

#include <type_traits>

namespace pypto::sim {
namespace {

template <typename T>
constexpr int kBits = static_cast<int>(sizeof(T) * 8);

template <typename T>
bool ShiftsAllOut(T count) {
  if constexpr (std::is_signed_v<T>) return count < 0 || count >= kBits<T>;
  return count >= kBits<T>;
}

template <typename T>
T ShiftLeft(T x, T count) {
  using U = std::make_unsigned_t<T>;
  if (ShiftsAllOut(count)) return 0;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) << count));
}

// Arithmetic for signed T (C++20 defines >> of a negative value as floor division by 2^count).
template <typename T>
T ShiftRight(T x, T count) {
  if (ShiftsAllOut(count)) {
    if constexpr (std::is_signed_v<T>) return x < 0 ? static_cast<T>(-1) : 0;
    return 0;
  }
  return static_cast<T>(x >> count);
}

// y != 0. The truncated remainder moved into the divisor's sign; x rem -1 is 0 (INT_MIN % -1 traps).
template <typename T>
T FloorRemainder(T x, T y) {
  if constexpr (std::is_signed_v<T>) {
    if (y == -1) return 0;
    const T r = static_cast<T>(x % y);
    return r != 0 && ((r < 0) != (y < 0)) ? static_cast<T>(r + y) : r;
  } else {
    return static_cast<T>(x % y);
  }
}

template <typename T>
bool Apply(IntegerOp op, T* dst, const T* a, const T* b, T s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T x = a[i], y = b ? b[i] : s;
    switch (op) {
      case IntegerOp::And: dst[i] = static_cast<T>(x & y); break;
      case IntegerOp::Or: dst[i] = static_cast<T>(x | y); break;
      case IntegerOp::Xor: dst[i] = static_cast<T>(x ^ y); break;
      case IntegerOp::Shl: dst[i] = ShiftLeft(x, y); break;
      case IntegerOp::Shr: dst[i] = ShiftRight(x, y); break;
      case IntegerOp::Rem:
        if (y == 0) return false;
        dst[i] = FloorRemainder(x, y);
        break;
    }
  }
  return true;
}

template <typename T>
bool ApplyAs(IntegerOp op, void* dst, const void* a, const void* b, int64_t s, size_t n) {
  return Apply<T>(op, static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T>(s),
                  n);
}

}  // namespace

bool IntegerBinary(IntegerOp op, IntegerType type, void* dst, const void* a, const void* b, int64_t s, size_t n) {
  switch (type.bytes) {
    case 1: return type.is_signed ? ApplyAs<int8_t>(op, dst, a, b, s, n) : ApplyAs<uint8_t>(op, dst, a, b, s, n);
    case 2: return type.is_signed ? ApplyAs<int16_t>(op, dst, a, b, s, n) : ApplyAs<uint16_t>(op, dst, a, b, s, n);
    case 4: return type.is_signed ? ApplyAs<int32_t>(op, dst, a, b, s, n) : ApplyAs<uint32_t>(op, dst, a, b, s, n);
    default: return type.is_signed ? ApplyAs<int64_t>(op, dst, a, b, s, n) : ApplyAs<uint64_t>(op, dst, a, b, s, n);
  }
}

}  // namespace pypto::sim
