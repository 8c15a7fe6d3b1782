// The part of pto-isa's host build a hand-written kernel for the simulator may rely on: the device
// keywords as no-ops and the cache and pipeline maintenance calls, which have nothing to do on a host
// whose memory is coherent and whose "pipelines" run in program order. PTO_CPUSTUB_HPP is the guard
// pto-isa's CPU stub defines; kernels test it to know they are built for a CPU.
#ifndef PTO_CPUSTUB_HPP
#define PTO_CPUSTUB_HPP

#include <cstdint>

#include "pto/address_spaces.h"

template <typename... Args>
inline void dcci(Args&&...) {}
template <typename... Args>
inline void pipe_barrier(Args&&...) {}
template <typename... Args>
inline void set_flag(Args&&...) {}
template <typename... Args>
inline void wait_flag(Args&&...) {}
template <typename... Args>
inline void dsb(Args&&...) {}

#endif  // PTO_CPUSTUB_HPP
