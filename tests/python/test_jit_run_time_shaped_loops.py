"""A tensor shaped at run time, created in an orchestration loop (docs/language.md, "One compile for every
extent"): qkv_proj_rope's per-tile scratch, `pl.create_tensor([padded, D])` with `padded` the ragged tile's
rows rounded up to whole sub-tiles. Each iteration's tensor has the shape that iteration computes, and the
kernels given it see that extent; the program compiles once for every token count (one disk-cache entry),
and every result equals torch's."""

import pytest
import torch
from test_jit_generic_forms import _compiled_once

KERNELS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
TILE = 32
SUB = 16


@pl.jit
def ragged_tiles(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    t_dim = pl.tensor.dim(x, 0)
    for base in pl.range(0, t_dim, TILE):
        rows = pl.min(TILE, t_dim - base)
        padded = ((rows + SUB - 1) // SUB) * SUB
        scratch = pl.create_tensor([padded, 64], dtype=pl.FP32)
        for r in pl.range(0, padded, SUB):
            valid = pl.min(SUB, rows - r)
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [base + r, 0], [SUB, 64], valid_shape=[valid, 64])
                pl.store(pl.mul(a, 2.0), [r, 0], scratch)
        # One kernel reads the whole scratch tensor, looping over the extent it has in this iteration.
        with pl.at(level=pl.Level.CORE_GROUP):
            for s in pl.range(0, pl.tensor.dim(scratch, 0), SUB):
                valid = pl.min(SUB, rows - s)
                b = pl.load(scratch, [s, 0], [SUB, 64], valid_shape=[valid, 64])
                pl.store(pl.add(b, 1.0), [base + s, 0], out)
    return out


@pl.jit
def ragged_tiles_last_first(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    # The ragged tile first, so the buffer grows; each iteration's tensor starts at its init_value.
    t_dim = pl.tensor.dim(x, 0)
    n_tiles = (t_dim + TILE - 1) // TILE
    for i in pl.range(n_tiles):
        base = (n_tiles - 1 - i) * TILE
        rows = pl.min(TILE, t_dim - base)
        padded = ((rows + SUB - 1) // SUB) * SUB
        acc = pl.create_tensor([padded, 64], dtype=pl.FP32, init_value=1.0)
        for r in pl.range(0, padded, SUB):
            valid = pl.min(SUB, rows - r)
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [base + r, 0], [SUB, 64], valid_shape=[valid, 64])
                c = pl.load(acc, [r, 0], [SUB, 64], valid_shape=[valid, 64])
                pl.store(pl.add(a, c), [r, 0], acc)
            with pl.at(level=pl.Level.CORE_GROUP):
                d = pl.load(acc, [r, 0], [SUB, 64], valid_shape=[valid, 64])
                pl.store(d, [base + r, 0], out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("run_time_shaped_loops", KERNELS)
    return module


def test_a_ragged_tile_loop_creates_a_rounded_scratch_per_tile(kernels, monkeypatch, tmp_path):
    """20 rows: one tile, scratch [32, 64]; 70: tiles of 32, 32 and 6 rows, scratch [32], [32], [16];
    45: 32 and 13 rows. The kernel reading the scratch loops over its extent in that iteration."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
            kernels.ragged_tiles(x, out)
            torch.testing.assert_close(out, x * 2 + 1)

        return run

    _compiled_once(kernels.ragged_tiles, monkeypatch, tmp_path, [call(20), call(70), call(45), call(20)])


def test_the_buffer_grows_and_each_iteration_starts_at_the_init_value(kernels, monkeypatch, tmp_path):
    """The ragged tile runs first: its [16, 64] tensor is smaller than the next iterations' [32, 64],
    which reuse and grow the one buffer; each starts at 1.0 again, not at what the last one left."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
            kernels.ragged_tiles_last_first(x, out)
            torch.testing.assert_close(out, x + 1)

        return run

    _compiled_once(kernels.ragged_tiles_last_first, monkeypatch, tmp_path, [call(70), call(13), call(96)])
