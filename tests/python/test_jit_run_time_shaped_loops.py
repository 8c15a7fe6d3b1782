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


@pl.jit
def ragged_tiles_then_a_read(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    # Orchestration code reads what the kernels wrote: the run allocates its tensors there, so the
    # scratch tensor cannot take each iteration's shape; the program is compiled per extent.
    t_dim = pl.tensor.dim(x, 0)
    for base in pl.range(0, t_dim, TILE):
        rows = pl.min(TILE, t_dim - base)
        padded = ((rows + SUB - 1) // SUB) * SUB
        scratch = pl.create_tensor([padded, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [base, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.mul(a, 2.0), [0, 0], scratch)
        with pl.at(level=pl.Level.CORE_GROUP):
            b = pl.load(scratch, [0, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.add(b, 1.0), [base, 0], out)
    if pl.read(out, [0, 0]) > 1.0e30:
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.load(x, [0, 0], [SUB, 64], valid_shape=[1, 64])
            pl.store(c, [0, 0], out)
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


def test_a_read_of_what_tasks_wrote_keeps_the_per_extent_build(kernels, monkeypatch, capsys):
    """With an element read of a tensor the kernels write, the generic build is refused at the create,
    naming the read; the per-extent builds run, right at each token count."""
    monkeypatch.setenv("PYPTO_JIT_EXPLAIN", "1")
    for rows in (20, 45):
        x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
        kernels.ragged_tiles_then_a_read(x, out)
        torch.testing.assert_close(out, x * 2 + 1)
    said = capsys.readouterr().err
    assert "per-extent x[0]=20, out[0]=20; generic build not used: " in said, said
    assert ("'scratch' has a shape computed when the program runs and is created in a loop, and orchestration "
            "code reads an element of 'out' (") in said, said
