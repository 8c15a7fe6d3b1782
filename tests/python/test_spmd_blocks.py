"""The blocks of an SPMD launch run side by side, up to the cores of their type, as on a device; a
launch whose blocks wait for each other without sync_start ends with upstream's scheduler timeout
(fatal error 100) and the diagnosis, never a hang.

The hand-written kernel below is a home-made barrier: each block raises its flag in global memory,
then spins until every block's flag is up. On a2a3sim's 48 AIV cores, 48 blocks all hold a core and
pass it; 49 blocks without sync_start cannot (the 49th waits for a core the spinning blocks never
give back), which is the deadlock the seed's section 1 describes; sync_start=True refuses more blocks
than cores and, at 48, starts them together."""

import time

import pytest
import torch

SPIN = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* flag_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  __gm__ int32_t* flags = reinterpret_cast<__gm__ int32_t*>(flag_tensor->buffer.addr) + flag_tensor->start_offset;
  __gm__ int32_t* out = reinterpret_cast<__gm__ int32_t*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int32_t block = get_block_idx(args);
  const int32_t blocks = get_block_num(args);
  __atomic_store_n(&flags[block], 1, __ATOMIC_RELEASE);
  int32_t seen = 0;
  for (int32_t b = 0; b < blocks; ++b) {
    while (__atomic_load_n(&flags[b], __ATOMIC_ACQUIRE) == 0) {
    }
    ++seen;
  }
  out[block] = seen;
}
"""

KERNELS = """
import pypto.language as pl


@pl.jit.extern(core_type="aiv", source="spin.cpp")
def spin_barrier(out: pl.InOut[pl.Tensor[[64], pl.INT32]],
                 flags: pl.InOut[pl.Tensor[[64], pl.INT32]]) -> pl.Tensor[[64], pl.INT32]: ...


@pl.jit
def waves(flags: pl.InOut[pl.Tensor[[64], pl.INT32]], out: pl.Out[pl.Tensor[[64], pl.INT32]]):
    with pl.spmd(49):
        out = spin_barrier(out, flags)
    return out


@pl.jit
def side_by_side(flags: pl.InOut[pl.Tensor[[64], pl.INT32]], out: pl.Out[pl.Tensor[[64], pl.INT32]]):
    with pl.spmd(48):
        out = spin_barrier(out, flags)
    return out


@pl.jit
def co_started(flags: pl.InOut[pl.Tensor[[64], pl.INT32]], out: pl.Out[pl.Tensor[[64], pl.INT32]]):
    with pl.spmd(48, sync_start=True):
        out = spin_barrier(out, flags)
    return out
"""

TIMEOUT_MS = 1500


@pytest.fixture
def kernels(write_kernel, tmp_path, monkeypatch):
    # Upstream's override of its 10 s default, read when the program's session opens.
    monkeypatch.setenv("SIMPLER_SCHEDULER_TIMEOUT_MS", str(TIMEOUT_MS))
    (tmp_path / "spin.cpp").write_text(SPIN)
    module, _ = write_kernel("spmd_blocks", KERNELS)
    return module


def _run(kernel):
    flags = torch.zeros(64, dtype=torch.int32)
    out = torch.full((64,), -1, dtype=torch.int32)
    kernel(flags, out)
    return out


@pytest.mark.parametrize("name", ["side_by_side", "co_started"])
def test_blocks_that_all_hold_a_core_pass_a_barrier_among_them(kernels, name):
    out = _run(getattr(kernels, name))
    expected = torch.full((64,), -1, dtype=torch.int32)
    expected[:48] = 48
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_blocks_waiting_for_a_block_without_a_core_end_with_the_scheduler_timeout(kernels):
    kernels.waves.compile(torch.zeros(64, dtype=torch.int32), torch.zeros(64, dtype=torch.int32))
    start = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        _run(kernels.waves)
    took = time.monotonic() - start
    message = str(info.value)
    assert "fatal error 100 (SchedulerTimeout): task 0 (kernel 'spin_barrier', func_id 0): no progress for " in message
    assert (
        " ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS): 48 of its 49 blocks hold all 48 AIV cores and none "
        "returns (block 0-47 on AIV core 0-47), while block 48 waits for a core. Blocks of one launch that wait for "
        "each other (a barrier, or a flag in global memory) deadlock when not all of them hold a core at once: "
        "without sync_start the runtime starts blocks in waves, as cores free ('CCE Extern Kernel Programming', "
        "section 1). Launch it with pl.spmd(..., sync_start=True) and at most 48 blocks, so that every block holds "
        "a core at the same time" in message
    ), message
    assert TIMEOUT_MS / 1000 <= took < TIMEOUT_MS / 1000 + 10, took
