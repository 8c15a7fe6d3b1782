"""A kernel that makes no progress ends the run with upstream's scheduler timeout (fatal error 100,
sub-class S1 running-stalled) and a diagnosis, within the timeout, even when it runs alone and every
other core is free; a kernel that is merely slow is waited for. The timeout is upstream's
SIMPLER_SCHEDULER_TIMEOUT_MS, lowered here so that each case takes about a second."""

import time

import pytest
import torch

# Spins on a flag in global memory that nothing ever sets: it writes nothing while it waits.
SPIN = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* flag_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  __gm__ int32_t* flag = reinterpret_cast<__gm__ int32_t*>(flag_tensor->buffer.addr) + flag_tensor->start_offset;
  __gm__ int32_t* out = reinterpret_cast<__gm__ int32_t*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
  }
  out[0] = 1;
}
"""

# Works for SLOW_MS, several timeouts, writing its output as it goes, then finishes.
SLOW = """
#include <chrono>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* flag_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  (void)flag_tensor;
  volatile __gm__ int32_t* out =
      reinterpret_cast<__gm__ int32_t*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const auto start = std::chrono::steady_clock::now();
  int32_t steps = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(SLOW_MS)) out[0] = ++steps;
  out[0] = 7;
}
"""

KERNELS = """
import pypto.language as pl


@pl.jit.extern(core_type="aiv", source="spin.cpp")
def spin_on_flag(flag: pl.Tensor[[8], pl.INT32],
                 out: pl.InOut[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]: ...


@pl.jit.extern(core_type="aiv", source="slow.cpp")
def slow_worker(flag: pl.Tensor[[8], pl.INT32],
                out: pl.InOut[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]: ...


@pl.jit
def lone_spinner(flag: pl.Tensor[[8], pl.INT32], out: pl.InOut[pl.Tensor[[8], pl.INT32]]):
    out = spin_on_flag(flag, out)
    return out


@pl.jit
def slow_but_alive(flag: pl.Tensor[[8], pl.INT32], out: pl.InOut[pl.Tensor[[8], pl.INT32]]):
    out = slow_worker(flag, out)
    return out
"""

TIMEOUT_MS = 400
SLOW_MS = 1500


@pytest.fixture
def kernels(write_kernel, tmp_path, monkeypatch):
    # Upstream's override of its 10 s default, read when the program's session opens.
    monkeypatch.setenv("SIMPLER_SCHEDULER_TIMEOUT_MS", str(TIMEOUT_MS))
    (tmp_path / "spin.cpp").write_text(SPIN)
    (tmp_path / "slow.cpp").write_text(SLOW.replace("SLOW_MS", str(SLOW_MS)))
    module, _ = write_kernel("stalled_kernel", KERNELS)
    return module


def _tensors():
    return torch.zeros(8, dtype=torch.int32), torch.zeros(8, dtype=torch.int32)


def test_a_lone_kernel_spinning_on_a_flag_nothing_sets_ends_with_the_scheduler_timeout(kernels):
    kernels.lone_spinner.compile(*_tensors())
    start = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        kernels.lone_spinner(*_tensors())
    took = time.monotonic() - start
    message = str(info.value)
    assert "fatal error 100 (SchedulerTimeout): no progress for " in message, message
    assert (
        " ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS), sub-class S1 (running-stalled): task 0 (kernel "
        "'spin_on_flag' on AIV core 0) is running and has changed neither its tensors nor its core's buffers, while "
        "no task started or finished; 24 of 24 AIC and 47 of 48 AIV cores are free, 0 ready tasks wait for one. A "
        "kernel that waits for a flag, a barrier or an event that nothing sets never returns: find the loop in it "
        "that waits and what should have ended it. A kernel that is merely slow keeps changing its buffers and is "
        "waited for; one that computes longer than the timeout without writing anything needs a larger "
        "SIMPLER_SCHEDULER_TIMEOUT_MS" in message
    ), message
    assert TIMEOUT_MS / 1000 <= took < TIMEOUT_MS / 1000 + 5, took


def test_a_slow_kernel_that_keeps_writing_is_waited_for(kernels):
    flag, out = _tensors()
    start = time.monotonic()
    kernels.slow_but_alive(flag, out)
    assert time.monotonic() - start >= SLOW_MS / 1000
    assert out[0].item() == 7
