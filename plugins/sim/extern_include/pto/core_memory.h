// Where a tile's bytes live: the local memory of the core running the kernel. TASSIGN gives a tile an
// address, a byte offset into the buffer of its TileType (Vec: UB, Mat: L1, Left: L0A, Right: L0B,
// Acc: L0C, Bias: the bias table), and two tiles assigned the same address share their bytes, as on
// the device (ptoas reuses UB that way: a float tile and the bfloat16 tile converted in place).
//
// The buffers are the simulator's own for the core (the UB of a vector core; L1, L0A, L0B, L0C and the
// bias table of a cube core), handed over through pypto_sim_bind_core before each kernel_entry
// (pypto_sim_core.h) and zeroed between runs like those of the simulator's generated kernels. Built
// without that handshake (an older simulator, a test outside it), each kernel thread owns one set,
// sized as libs/ir/src/soc.cpp sizes them (Ascend910B for a2a3, Ascend950 for a5), the UB at its
// physical size: the reserved top that generated kernels avoid is a hand-written kernel's to use.
// Contents do not outlive a task on the device, and kernels must not rely on them doing so here.
#ifndef PYPTO_SIM_PTO_CORE_MEMORY_H_
#define PYPTO_SIM_PTO_CORE_MEMORY_H_

#include <cstdint>
#include <memory>

#include "pto/types.h"
#if __has_include("pypto_sim_bind.h")
#include "pypto_sim_bind.h"  // the simulator's bind hook, one definition for every kernel library
#define PYPTO_SIM_PTO_HAS_CORE 1
namespace pto::sim {
inline const PyptoSimCore* BoundCore() { return pypto_sim::BoundCore(); }
}  // namespace pto::sim
#endif

namespace pto::sim {

struct LocalBuffer {
  unsigned char* base = nullptr;
  int64_t bytes = 0;
  const char* name = "";
};

#if defined(__DAV_C310__)
constexpr int64_t kUbBytes = 248 * 1024, kL1Bytes = 512 * 1024, kL0aBytes = 64 * 1024, kL0bBytes = 64 * 1024,
                  kL0cBytes = 256 * 1024, kBiasBytes = 4 * 1024;
#else
constexpr int64_t kUbBytes = 192 * 1024, kL1Bytes = 512 * 1024, kL0aBytes = 64 * 1024, kL0bBytes = 64 * 1024,
                  kL0cBytes = 128 * 1024, kBiasBytes = 1024;
#endif

// This thread's own buffer of `bytes`, allocated zeroed on first use.
template <int kSpace>
unsigned char* ThreadBuffer(int64_t bytes) {
  thread_local std::unique_ptr<unsigned char[]> buffer;
  if (!buffer) buffer.reset(new unsigned char[static_cast<size_t>(bytes)]());
  return buffer.get();
}

// The simulator's buffer for `type` on the bound core, or {} when it handed over none.
inline LocalBuffer BoundBuffer(TileType type) {
#ifdef PYPTO_SIM_PTO_HAS_CORE
  const PyptoSimCore* core = BoundCore();
  if (!core) return {};
  if (type == TileType::Vec) return {core->ub, core->ub_bytes, "UB"};
  if (core->abi < 2) return {};
  switch (type) {
    case TileType::Mat: return {core->l1, core->l1_bytes, "L1"};
    case TileType::Left: return {core->l0a, core->l0a_bytes, "L0A"};
    case TileType::Right: return {core->l0b, core->l0b_bytes, "L0B"};
    case TileType::Acc: return {core->l0c, core->l0c_bytes, "L0C"};
    case TileType::Bias: return {core->bias, core->bias_bytes, "the bias table"};
    default: break;
  }
#endif
  (void)type;
  return {};
}

inline LocalBuffer BufferOf(TileType type) {
  if (const LocalBuffer bound = BoundBuffer(type); bound.base) return bound;
  switch (type) {
    case TileType::Vec: return {ThreadBuffer<0>(kUbBytes), kUbBytes, "UB"};
    case TileType::Mat: return {ThreadBuffer<1>(kL1Bytes), kL1Bytes, "L1"};
    case TileType::Left: return {ThreadBuffer<2>(kL0aBytes), kL0aBytes, "L0A"};
    case TileType::Right: return {ThreadBuffer<3>(kL0bBytes), kL0bBytes, "L0B"};
    case TileType::Acc: return {ThreadBuffer<4>(kL0cBytes), kL0cBytes, "L0C"};
    case TileType::Bias: return {ThreadBuffer<5>(kBiasBytes), kBiasBytes, "the bias table"};
    default: return {};
  }
}

}  // namespace pto::sim

#endif  // PYPTO_SIM_PTO_CORE_MEMORY_H_
