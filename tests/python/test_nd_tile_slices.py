"""pl.slice of a kernel's rank-3 and rank-4 tile at offsets computed when the kernel runs (the block
index, a loop variable), along each axis (issue 31). Merged into rows, such a window is not one
rectangle of the tile ([32, 1, 64] of [128, 4, 64] takes every 4th row), so FlattenTileNdTo2D keeps
these kernels N-d and the simulator copies the window row by row from its origin in every dimension.
It used to read the rows of the merged tile from the last two offsets alone: wrong numbers, no error.
A window that leaves the tile at run time stops the kernel at the slice."""

import pytest
import torch
from conftest import kernels_fixture

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit
def block_windows(x: pl.Tensor[[128, 4, 64], pl.FP32], out: pl.Out[pl.Tensor[[128, 4, 64], pl.FP32]]):
    with pl.spmd(16, name_hint="copy"):
        idx = pl.tile.get_block_idx()
        t0 = (idx // 4) * 32
        lane = idx % 4
        t = pl.load(x, [0, 0, 0], [128, 4, 64])
        s = pl.slice(t, [32, 1, 64], [t0, lane, 0])
        pl.store(s, [t0, lane, 0], out)
    return out


@pl.jit
def subscript_windows(x: pl.Tensor[[64, 4, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 4, 32], pl.FP32]]):
    with pl.spmd(8, name_hint="copy"):
        idx = pl.tile.get_block_idx()
        t0 = (idx // 4) * 32
        lane = idx % 4
        t = pl.load(x, [0, 0, 0], [64, 4, 32])
        pl.store(pl.exp(t[t0 : t0 + 32, lane : lane + 1, 0:32]), [t0, lane, 0], out)
    return out


@pl.jit
def axis_windows(x: pl.Tensor[[8, 4, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [8, 4, 64])
        for i in pl.range(4):
            for j in pl.range(2):
                for k in pl.range(2):
                    s = pl.slice(t, [2, 2, 32], [i * 2, j * 2, k * 32])
                    pl.store(pl.add(s, 1.0), [i * 2, j * 2, k * 32], out)
    return out


@pl.jit
def rank4_windows(x: pl.Tensor[[2, 3, 4, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0, 0], [2, 3, 4, 64])
        for b in pl.range(2):
            for h in pl.range(3):
                for r in pl.range(0, 4, 2):
                    s = pl.slice(t, [1, 1, 2, 64], [b, h, r, 0])
                    pl.store(pl.mul(s, 2.0), [b, h, r, 0], out)
    return out


@pl.jit
def rank4_middle_axes(x: pl.Tensor[[2, 3, 4, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 1, 2, 64], pl.FP32]],
                      h: pl.Scalar[pl.INDEX], r: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0, 0], [2, 3, 4, 64])
        pl.store(pl.slice(t, [2, 1, 2, 64], [0, h, r, 0]), [0, 0, 0, 0], out)
    return out


@pl.jit
def overlapping_windows(x: pl.Tensor[[64, 4, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 4, 32], pl.FP32]]):
    with pl.spmd(4, name_hint="copy"):
        idx = pl.tile.get_block_idx()
        t = pl.load(x, [0, 0, 0], [64, 4, 32])
        s = pl.slice(t, [32, 1, 32], [idx * 16, idx, 0])
        pl.store(s, [0, idx, 0], out)
    return out
'''

kernels = kernels_fixture("nd_tile_slices.py", KERNELS)

SIM = RunConfig(platform="a2a3sim")


def test_each_block_slices_its_window_of_a_rank3_tile(kernels):
    torch.manual_seed(31)
    x, out = torch.randn(128, 4, 64), torch.full((128, 4, 64), float("nan"))
    kernels.block_windows(x, out, config=SIM)
    torch.testing.assert_close(out, x, rtol=0, atol=0)


def test_a_subscript_window_of_a_rank3_tile_feeds_an_op(kernels):
    torch.manual_seed(32)
    x, out = torch.randn(64, 4, 32), torch.full((64, 4, 32), float("nan"))
    kernels.subscript_windows(x, out, config=SIM)
    torch.testing.assert_close(out, torch.exp(x))


def test_windows_at_loop_offsets_along_every_axis_of_a_rank3_tile(kernels):
    torch.manual_seed(33)
    x, out = torch.randn(8, 4, 64), torch.full((8, 4, 64), float("nan"))
    kernels.axis_windows(x, out, config=SIM)
    torch.testing.assert_close(out, x + 1.0)


def test_windows_at_loop_offsets_of_a_rank4_tile(kernels):
    torch.manual_seed(34)
    x, out = torch.randn(2, 3, 4, 64), torch.full((2, 3, 4, 64), float("nan"))
    kernels.rank4_windows(x, out, config=SIM)
    torch.testing.assert_close(out, x * 2.0)


@pytest.mark.parametrize("h, r", [(0, 0), (1, 2), (2, 1)])
def test_a_window_across_the_batch_of_a_rank4_tile_at_scalar_offsets(kernels, h, r):
    torch.manual_seed(35)
    x, out = torch.randn(2, 3, 4, 64), torch.full((2, 1, 2, 64), float("nan"))
    kernels.rank4_middle_axes(x, out, h, r, config=SIM)
    torch.testing.assert_close(out, x[:, h : h + 1, r : r + 2, :], rtol=0, atol=0)


def test_a_window_leaving_the_tile_at_run_time_stops_the_kernel_at_the_slice(kernels):
    x, out = torch.randn(64, 4, 32), torch.zeros(32, 4, 32)
    with pytest.raises(RuntimeError) as info:
        kernels.overlapping_windows(x, out, config=SIM)
    message = str(info.value)
    assert f"{kernels.path}:66:" in message, message
    assert "the [32, 1, 32] window at [48, 3, 0] is outside the [64, 4, 32] tile" in message, message
