// Where the cube's memories keep a matrix element. The cube moves data in fractals: 16 rows of one
// 32-byte block (C0 elements: 16 half, 8 float, 32 int8), 512 bytes. How fractals and their rows are
// ordered differs per memory, and a kernel that reads one of them back sees that order, so the
// library computes every cube instruction through these maps, never through a row-major copy:
//   L1 (NZ, "zN"): column blocks of C0 elements one after the other, each holding the matrix's rows
//     (padded to 16) of C0 elements: (r, c) at (c / C0) * rows_padded * C0 + r * C0 + c % C0.
//   L0A (zZ): fractals row-major over (row block, column block), rows of C0 within each.
//   L0B: B[K][N] as fractals row-major over (K block of C0, N block of 16), each holding 16 N-rows of
//     C0 K-elements (K contiguous): the layout a no-transpose load of K^T's NZ copy or a transposing
//     load of B's NZ copy produces.
//   L0C (NZ): 16 x 16 fractals column-block major, M padded to 16: (i, j) at
//     (j / 16) * m_padded * 16 + i * 16 + j % 16.
#ifndef PYPTO_SIM_ASCENDC_CUBE_LAYOUT_H_
#define PYPTO_SIM_ASCENDC_CUBE_LAYOUT_H_

#include <cstdint>

namespace AscendC::detail {

inline constexpr uint32_t kFractalRows = 16;
inline constexpr uint32_t kFractalBytes = 512;
inline constexpr uint32_t kC0Bytes = 32;

template <typename T>
inline constexpr uint32_t kC0 = kC0Bytes / sizeof(T);  // elements of one 32-byte block

inline constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline constexpr uint64_t RoundUp(uint64_t a, uint64_t b) { return CeilDiv(a, b) * b; }

// L0A: A[m][k] in zZ fractals; `k_blocks` is k rounded up to C0, in blocks.
template <typename T>
inline uint64_t L0aOffset(uint64_t i, uint64_t p, uint64_t k_blocks) {
  return ((i / kFractalRows) * k_blocks + p / kC0<T>) * kFractalRows * kC0<T> + (i % kFractalRows) * kC0<T> + p % kC0<T>;
}

// L0B: B[k][n]; `n_blocks` is n rounded up to 16, in blocks.
template <typename T>
inline uint64_t L0bOffset(uint64_t p, uint64_t j, uint64_t n_blocks) {
  return ((p / kC0<T>) * n_blocks + j / kFractalRows) * kFractalRows * kC0<T> + (j % kFractalRows) * kC0<T> + p % kC0<T>;
}

// L0C: C[m][n], with m padded to 16 (`m_padded`) per column block of 16.
inline uint64_t L0cOffset(uint64_t i, uint64_t j, uint64_t m_padded) {
  return (j / kFractalRows) * m_padded * kFractalRows + i * kFractalRows + j % kFractalRows;
}

}  // namespace AscendC::detail

#endif  // PYPTO_SIM_ASCENDC_CUBE_LAYOUT_H_
