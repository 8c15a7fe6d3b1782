// The simulator's tile kernels (plugins/sim/src/kernels) timed alone, called as the executor calls
// them (sim_executor.cpp and compute_exec.cpp call exactly these functions on a core's arena), on
// 64-byte aligned tiles as the arenas are. bench/ratios.py runs this binary and prints each kernel
// next to numpy (or OpenBLAS) doing the same work, as ratios.
//
//   BM_Tile/add/<rows>x<cols>        BinaryF32(Add): c = a + b (a distinct result tile, as numpy's out=)
//   BM_Tile/exp/<rows>x<cols>        UnaryF32(Exp): c = exp(a)
//   BM_Tile/row_sum/<rows>x<cols>    RowReduceF32(Sum): [rows, cols] -> [rows] (pairwise)
//   BM_Tile/fill/<rows>x<cols>       FillF32: every element set to one value (tile.full, tile.expands)
//   BM_Tile/fill_plain/<rows>x<cols> the same fill as a plain std::fill_n loop built with this
//                                    binary's flags, which is what FillF32 was before it used Highway
//   BM_Tile/cast_<from>_<to>/<r>x<c> Convert between F32 and F16/BF16, tile.cast's default rounding
//                                    (to nearest even)
//   BM_Matmul/<in>/<n>               MatmulF32/F16/BF16: n x n x n, fp32 result; F16 and BF16 inputs
//                                    are widened to fp32 scratch, then multiplied by sgemm
//   BM_Matmul/i8/<n>                 MatmulI8: INT8 inputs, INT32 result, on sgemm in exact chunks
//   BM_Matmul/f32/<n>/threads:<T>    the fp32 kernel from T benchmark threads at once, each on its own
//                                    matrices, as simulated cores call it
//   BM_Sgemm/<n>                     the reference: cblas_sgemm itself, single-threaded, on the same
//                                    operands (the OpenBLAS the plugin links)
//
// Every benchmark checks its result once, before timing; a wrong result skips it with an error and
// makes the binary exit non-zero.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tile_ops.h"

namespace {

namespace sim = pypto::sim;

struct Size {
  size_t rows;
  size_t cols;
  size_t count() const { return rows * cols; }
};

std::string SizeName(Size size) { return std::to_string(size.rows) + "x" + std::to_string(size.cols); }

// A tile as the executor sees one: a 64-byte aligned range of an arena (core_memory.cpp aligns its
// arenas so), here one allocation per tile.
class Tile {
 public:
  explicit Tile(size_t bytes)
      : bytes_(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))) {
    std::memset(bytes_.get(), 0, bytes);
  }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(bytes_.get());
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> bytes_;
};

// a[i] = i % 97 - 48: small integers, exact in every type benchmarked (bf16 holds integers up to
// 256 exactly), so sums, casts and products with an identity matrix are exact too.
Tile Values(size_t count) {
  Tile tile(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) tile.as<float>()[i] = static_cast<float>(static_cast<int64_t>(i % 97) - 48);
  return tile;
}

// exp's inputs: spread over [-8, 8), where exp is neither tiny nor huge.
Tile ExpInputs(size_t count) {
  Tile tile(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) tile.as<float>()[i] = static_cast<float>(i % 1024) / 64.0f - 8.0f;
  return tile;
}

bool any_skipped = false;

void Skip(benchmark::State& state, const std::string& message) {
  any_skipped = true;
  state.SkipWithError(message.c_str());
}

// Elements per second, and the bytes the kernel reads and writes per element.
void SetThroughput(benchmark::State& state, size_t elements, size_t bytes_per_element) {
  const auto n = static_cast<int64_t>(elements);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<int64_t>(bytes_per_element));
}

void BM_Add(benchmark::State& state, Size size) {
  const size_t n = size.count();
  const Tile a = Values(n), b = ExpInputs(n), c(n * sizeof(float));
  sim::BinaryF32(sim::BinaryOp::Add, c.as<float>(), a.as<float>(), b.as<float>(), n);
  for (size_t i = 0; i < n; ++i)
    if (c.as<float>()[i] != a.as<float>()[i] + b.as<float>()[i])
      return Skip(state, "wrong sum at " + std::to_string(i));
  for (auto _ : state) {
    sim::BinaryF32(sim::BinaryOp::Add, c.as<float>(), a.as<float>(), b.as<float>(), n);
    benchmark::ClobberMemory();
  }
  SetThroughput(state, n, 3 * sizeof(float));
}

void BM_Exp(benchmark::State& state, Size size) {
  const size_t n = size.count();
  const Tile a = ExpInputs(n), c(n * sizeof(float));
  sim::UnaryF32(sim::UnaryOp::Exp, c.as<float>(), a.as<float>(), n);
  for (size_t i = 0; i < n; ++i) {
    const double want = std::exp(static_cast<double>(a.as<float>()[i]));
    if (std::fabs(c.as<float>()[i] - want) > 2e-7 * want) return Skip(state, "wrong exp at " + std::to_string(i));
  }
  for (auto _ : state) {
    sim::UnaryF32(sim::UnaryOp::Exp, c.as<float>(), a.as<float>(), n);
    benchmark::ClobberMemory();
  }
  SetThroughput(state, n, 2 * sizeof(float));
}

void BM_RowSum(benchmark::State& state, Size size) {
  const Tile src = Values(size.count()), dst(size.rows * sizeof(float));
  sim::RowReduceF32(sim::ReduceOp::Sum, dst.as<float>(), src.as<float>(), size.rows, size.cols);
  for (size_t r = 0; r < size.rows; ++r) {
    float want = 0;  // small integers: every order of summation is exact
    for (size_t c = 0; c < size.cols; ++c) want += src.as<float>()[r * size.cols + c];
    if (dst.as<float>()[r] != want) return Skip(state, "wrong row sum at row " + std::to_string(r));
  }
  for (auto _ : state) {
    sim::RowReduceF32(sim::ReduceOp::Sum, dst.as<float>(), src.as<float>(), size.rows, size.cols);
    benchmark::ClobberMemory();
  }
  SetThroughput(state, size.count(), sizeof(float));
}

// dst[i] = value through fill(dst, value, n): the kernel, or the plain loop it replaced.
template <void (*fill)(float*, float, size_t)>
void BM_Fill(benchmark::State& state, Size size) {
  const size_t n = size.count();
  const Tile dst(n * sizeof(float));
  fill(dst.as<float>(), 2.5f, n);
  for (size_t i = 0; i < n; ++i)
    if (dst.as<float>()[i] != 2.5f) return Skip(state, "wrong fill at " + std::to_string(i));
  for (auto _ : state) {
    fill(dst.as<float>(), 2.5f, n);
    benchmark::ClobberMemory();
  }
  SetThroughput(state, n, sizeof(float));
}

// Out of line, as the kernel is: the loop cannot be folded into the benchmark's.
[[gnu::noinline]] void PlainFill(float* dst, float value, size_t n) { std::fill_n(dst, n, value); }

// One conversion, from -> to. The source holds Values() in `from` (converted once, exactly); the
// check converts the result back and expects the values unchanged.
void BM_Cast(benchmark::State& state, sim::ElemType from, sim::ElemType to, Size size) {
  const size_t n = size.count();
  const Tile values = Values(n), src(n * sim::ElemSize(from)), dst(n * sim::ElemSize(to)), back(n * sizeof(float));
  constexpr auto kMode = sim::RoundMode::None;  // tile.cast's default: to nearest even between floats
  if (!sim::Convert(sim::ElemType::F32, from, src.as<void>(), values.as<void>(), n, kMode) ||
      !sim::Convert(from, to, dst.as<void>(), src.as<void>(), n, kMode) ||
      !sim::Convert(to, sim::ElemType::F32, back.as<void>(), dst.as<void>(), n, kMode)) {
    return Skip(state, "conversion refused");
  }
  if (std::memcmp(back.as<void>(), values.as<void>(), n * sizeof(float)) != 0) return Skip(state, "wrong cast");
  for (auto _ : state) {
    sim::Convert(from, to, dst.as<void>(), src.as<void>(), n, kMode);
    benchmark::ClobberMemory();
  }
  SetThroughput(state, n, sim::ElemSize(from) + sim::ElemSize(to));
}

enum class MatmulInput { F32, F16, BF16 };

const char* InputName(MatmulInput input) {
  switch (input) {
    case MatmulInput::F32: return "f32";
    case MatmulInput::F16: return "f16";
    case MatmulInput::BF16: return "bf16";
  }
  return "?";
}

// The operands of an n x n x n product in the input type: A = Values(), B the identity, so C must
// equal A exactly.
struct MatmulOperands {
  size_t n;
  Tile a, b, c;
  Tile a_f32 = Values(n * n);

  MatmulOperands(MatmulInput input, size_t n)
      : n(n), a(n * n * ElemBytes(input)), b(n * n * ElemBytes(input)), c(n * n * sizeof(float)) {
    Tile identity(n * n * sizeof(float));
    for (size_t i = 0; i < n; ++i) identity.as<float>()[i * n + i] = 1.0f;
    const sim::ElemType type = TypeOf(input);
    sim::Convert(sim::ElemType::F32, type, a.as<void>(), a_f32.as<void>(), n * n, sim::RoundMode::None);
    sim::Convert(sim::ElemType::F32, type, b.as<void>(), identity.as<void>(), n * n, sim::RoundMode::None);
  }
  static size_t ElemBytes(MatmulInput input) { return input == MatmulInput::F32 ? 4 : 2; }
  static sim::ElemType TypeOf(MatmulInput input) {
    return input == MatmulInput::F32 ? sim::ElemType::F32
           : input == MatmulInput::F16 ? sim::ElemType::F16
                                       : sim::ElemType::BF16;
  }
  bool Correct() const { return std::memcmp(c.as<void>(), a_f32.as<void>(), n * n * sizeof(float)) == 0; }
};

// What compute_exec.cpp's RunMatmul calls for each input type.
void RunMatmul(MatmulInput input, const MatmulOperands& m) {
  const size_t n = m.n;
  switch (input) {
    case MatmulInput::F32: return sim::MatmulF32(m.c.as<float>(), m.a.as<float>(), m.b.as<float>(), n, n, n, false);
    case MatmulInput::F16:
      return sim::MatmulF16(m.c.as<float>(), m.a.as<uint16_t>(), m.b.as<uint16_t>(), n, n, n, false);
    case MatmulInput::BF16:
      return sim::MatmulBF16(m.c.as<float>(), m.a.as<uint16_t>(), m.b.as<uint16_t>(), n, n, n, false);
  }
}

void SetFlops(benchmark::State& state, size_t n) {
  state.SetItemsProcessed(state.iterations() * 2 * static_cast<int64_t>(n * n * n));
}

// With several benchmark threads, each has its own operands: the kernel keeps OpenBLAS
// single-threaded, so T threads should take about as long per call as one while T <= cores.
void BM_Matmul(benchmark::State& state, MatmulInput input, size_t n) {
  const MatmulOperands m(input, n);
  RunMatmul(input, m);
  if (!m.Correct()) return Skip(state, "wrong matmul result");
  for (auto _ : state) {
    RunMatmul(input, m);
    benchmark::ClobberMemory();
  }
  SetFlops(state, n);
}

// MatmulI8 (INT8 inputs, INT32 result) on n x n x n: A's values cycle through the int8 range, B is
// the identity, so C must equal A widened exactly.
void BM_MatmulI8(benchmark::State& state, size_t n) {
  std::vector<int8_t> a(n * n), b(n * n, 0);
  std::vector<int32_t> c(n * n), want(n * n);
  for (size_t i = 0; i < n * n; ++i) want[i] = a[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 256) - 128);
  for (size_t i = 0; i < n; ++i) b[i * n + i] = 1;
  sim::MatmulI8(c.data(), a.data(), b.data(), n, n, n, false);
  if (c != want) return Skip(state, "wrong int8 matmul result");
  for (auto _ : state) {
    sim::MatmulI8(c.data(), a.data(), b.data(), n, n, n, false);
    benchmark::ClobberMemory();
  }
  SetFlops(state, n);
}

// The reference: OpenBLAS's sgemm called directly, one thread (set in main), C = A * B.
void BM_Sgemm(benchmark::State& state, size_t n) {
  const MatmulOperands m(MatmulInput::F32, n);
  const int ni = static_cast<int>(n);
  const auto sgemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, m.a.as<float>(), ni, m.b.as<float>(),
                ni, 0.0f, m.c.as<float>(), ni);
  };
  sgemm();
  if (!m.Correct()) return Skip(state, "wrong sgemm result");
  for (auto _ : state) {
    sgemm();
    benchmark::ClobberMemory();
  }
  SetFlops(state, n);
}

template <typename... Args>
benchmark::internal::Benchmark* Register(const std::string& name, Args&&... args) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)->Unit(benchmark::kMicrosecond);
}

void RegisterTileOps() {
  constexpr Size kTile{128, 128};
  Register("BM_Tile/add/" + SizeName(kTile), BM_Add, kTile);
  Register("BM_Tile/exp/" + SizeName(kTile), BM_Exp, kTile);
  for (Size size : {kTile, Size{64, 4096}}) Register("BM_Tile/row_sum/" + SizeName(size), BM_RowSum, size);
  Register("BM_Tile/fill/" + SizeName(kTile), BM_Fill<sim::FillF32>, kTile);
  Register("BM_Tile/fill_plain/" + SizeName(kTile), BM_Fill<PlainFill>, kTile);
  using T = sim::ElemType;
  const struct {
    const char* name;
    T from, to;
  } casts[] = {{"cast_f32_bf16", T::F32, T::BF16},
               {"cast_f32_f16", T::F32, T::F16},
               {"cast_bf16_f32", T::BF16, T::F32},
               {"cast_f16_f32", T::F16, T::F32}};
  for (const auto& cast : casts)
    Register(std::string("BM_Tile/") + cast.name + "/" + SizeName(kTile), BM_Cast, cast.from, cast.to, kTile);
}

void RegisterMatmul() {
  constexpr size_t kN = 128;
  const std::string n = std::to_string(kN);
  for (MatmulInput input : {MatmulInput::F32, MatmulInput::F16, MatmulInput::BF16})
    Register("BM_Matmul/" + std::string(InputName(input)) + "/" + n, BM_Matmul, input, kN);
  Register("BM_Matmul/i8/" + n, BM_MatmulI8, kN);
  Register("BM_Sgemm/" + n, BM_Sgemm, kN);
  // Wall time: with several threads, CPU time would add up every thread's.
  for (int threads : {2, 4})
    Register("BM_Matmul/f32/" + n, BM_Matmul, MatmulInput::F32, kN)->UseRealTime()->Threads(threads);
}

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // BM_Sgemm's reference is single-threaded, as the kernel's sgemm is
  RegisterTileOps();
  RegisterMatmul();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return any_skipped ? 1 : 0;
}
