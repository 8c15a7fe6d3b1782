"""pl.spmd(..., sync_start=True) with an in-kernel pl.system.syncall, run on a2a3sim against torch,
and the compile-time rule that a hard syncall needs a co-started launch."""

import pytest
import torch

from pypto.language.parser import InvalidOperationError

BLOCKS = 4
ROWS = 8  # rows per block

KERNELS = """
import pypto.language as pl

BLOCKS = 4
ROWS = 8


@pl.jit
def rotate_rows(x: pl.Tensor[[32, 64], pl.FP32], slots: pl.InOut[pl.Tensor[[32, 64], pl.FP32]],
                y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(BLOCKS, sync_start=True):
        # Every block publishes its rows, doubled; after the barrier it reads its neighbour's.
        mine = pl.load(x, [b * ROWS, 0], [ROWS, 64])
        pl.store(pl.mul(mine, 2.0), [b * ROWS, 0], slots)
        pl.system.syncall()
        theirs = pl.load(slots, [((b + 1) % BLOCKS) * ROWS, 0], [ROWS, 64])
        pl.store(pl.add(theirs, mine), [b * ROWS, 0], y)
    return y


@pl.jit
def unsynced(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    for b in pl.spmd(BLOCKS):
        t = pl.load(x, [b * ROWS, 0], [ROWS, 64])
        pl.system.syncall(core_type="aiv")
        pl.store(t, [b * ROWS, 0], y)
    return y


@pl.jit
def too_wide(workspace: pl.Tensor[[16], pl.INT32], x: pl.Tensor[[8, 64], pl.FP32]):
    for b in pl.spmd(50):
        t = pl.load(x, [0, 0], [8, 64])
        pl.system.syncall(mode="soft", gm_workspace=workspace)
    return x
"""


@pytest.fixture
def kernels(write_kernel):
    module, path = write_kernel("spmd_syncall", KERNELS)
    return module, path


def rotate_rows_reference(x):
    doubled = x * 2.0
    return torch.roll(doubled, shifts=-ROWS, dims=0) + x


def test_blocks_see_each_others_writes_after_the_barrier(kernels):
    module, _ = kernels
    torch.manual_seed(7)
    x = torch.randn(BLOCKS * ROWS, 64)
    slots = torch.zeros_like(x)
    y = torch.full_like(x, float("nan"))
    # ptoas cannot express the barrier yet: on a simulator that is a warning, and the run goes on.
    with pytest.warns(UserWarning, match="backend-ptoas does not lower pl.system.syncall"):
        module.rotate_rows(x, slots, y)
    torch.testing.assert_close(y, rotate_rows_reference(x))
    torch.testing.assert_close(slots, x * 2.0)


def test_a_hard_syncall_without_sync_start_is_a_compile_error(kernels):
    module, path = kernels
    x = torch.randn(BLOCKS * ROWS, 64)
    with pytest.raises(InvalidOperationError) as info:
        module.unsynced(x, torch.empty_like(x))
    error = info.value
    assert error.location == f"{path}:25:9"
    assert str(error) == (
        "error: a hard pl.system.syncall waits for every block of its launch, but this kernel is not launched with "
        "sync_start=True\n"
        f"  --> {path}:25:9\n"
        "   |\n"
        '25 |         pl.system.syncall(core_type="aiv")\n'
        "   |         ^^^^^^^^^^^^^^^^^\n"
        "  = help: launch it with pl.spmd(N, sync_start=True), so that all N blocks hold a core at once, or use "
        'mode="soft" with a gm_workspace'
    )


def test_a_barrier_that_can_never_complete_fails_the_run(kernels):
    """50 blocks on the 48 AIV cores of a2a3sim, not co-started: the first 48 wait at the barrier on every
    core, so blocks 48 and 49 can never start. The run fails at once, saying so, instead of hanging."""
    module, _ = kernels
    with pytest.raises(RuntimeError) as info:
        with pytest.warns(UserWarning, match="backend-ptoas does not lower pl.system.syncall"):
            module.too_wide(torch.zeros(16, dtype=torch.int32), torch.randn(8, 64))
    message = str(info.value)
    assert "fatal error 100 (SchedulerTimeout): task 0 (kernel 'too_wide_incore_0', func_id 0): the syncall among " \
        "its 50 blocks can never complete: 48 of 50 blocks arrived (block 0 on AIV core 0, " in message
    assert "block 47 on AIV core 47); block 48, 49 cannot start: no AIV core is free, all 48 are held by blocks " \
        "waiting at a barrier; launch it with pl.spmd(..., sync_start=True) and at most 48 blocks" in message
