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
