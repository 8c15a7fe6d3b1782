"""The JIT cache keyed as upstream keys it: a ``pl.dynamic`` axis is None in the key, so calls with
different extents of it share one entry; each extent still runs code specialised for it."""

import pytest
import torch

KERNELS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
COLS = 64
CAP = 32
TILE = 16


@pl.jit
def copy_rows(a: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    rows = pl.tensor.dim(a, 0)
    for r0 in pl.parallel(0, CAP, TILE):
        valid = pl.max(pl.min(TILE, rows - r0), 0)
        with pl.at(level=pl.Level.CORE_GROUP):
            chunk = pl.slice(a, [TILE, COLS], [r0, 0], valid_shape=[valid, COLS])
            out = pl.assemble(out, chunk, [r0, 0])
    return out


@pl.jit
def add_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    # The model pattern: static tiles over the token dimension, the last one ragged.
    for r in pl.range(0, ROWS, TILE):
        rows = pl.min(TILE, ROWS - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            b = pl.load(y, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.add(a, b), [r, 0], out)
    return out


@pl.jit
def scale_bound(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    x.bind_dynamic(0, ROWS)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, COLS])
        pl.store(pl.mul(t, 2.0), [0, 0], out)
    return out


@pl.jit
def add_static(x: pl.Tensor[[16, COLS], pl.FP32], out: pl.Out[pl.Tensor[[16, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [16, COLS]), 1.0), [0, 0], out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("dynamic_cache_kernels", KERNELS)
    return module


def _copy(kernels, rows):
    a = torch.randn(rows, 64)
    out = torch.zeros(rows, 64)
    kernels.copy_rows(a, out)
    torch.testing.assert_close(out, a)


def test_one_entry_serves_every_extent_of_a_dynamic_axis(kernels):
    kernels.copy_rows.clear_cache()
    _copy(kernels, 32)
    assert len(kernels.copy_rows._cache) == 1
    _copy(kernels, 16)
    assert len(kernels.copy_rows._cache) == 1
    (key,) = kernels.copy_rows._cache
    shapes = dict(key[3])
    assert shapes["a"] == ((None, 64), "FP32")
    assert shapes["out"] == ((None, 64), "FP32")


def test_each_extent_is_compiled_once(kernels):
    kernels.copy_rows.clear_cache()
    first = kernels.copy_rows.compile(torch.zeros(32, 64), torch.zeros(32, 64))
    second = kernels.copy_rows.compile(torch.zeros(16, 64), torch.zeros(16, 64))
    assert first is not second
    assert kernels.copy_rows.compile(torch.zeros(32, 64), torch.zeros(32, 64)) is first
    assert len(kernels.copy_rows._cache.by_extent) == 2
    # Clearing the entries forgets the extents compiled under them.
    kernels.copy_rows._cache.clear()
    assert kernels.copy_rows.compile(torch.zeros(32, 64), torch.zeros(32, 64)) is not first


def test_bind_dynamic_makes_an_axis_dynamic_in_the_key(kernels):
    kernels.scale_bound.clear_cache()
    for rows in (16, 24):
        x = torch.randn(rows, 64)
        out = torch.zeros(16, 64)
        kernels.scale_bound(x, out)
        torch.testing.assert_close(out, 2 * x[:16])
    assert len(kernels.scale_bound._cache) == 1
    (key,) = kernels.scale_bound._cache
    assert dict(key[3])["x"] == ((None, 64), "FP32")
    # `out` has no dynamic axis: its extent stays in the key.
    assert dict(key[3])["out"] == ((16, 64), "FP32")


def test_a_static_axis_stays_in_the_key(kernels):
    kernels.add_static.clear_cache()
    x = torch.randn(16, 64)
    out = torch.zeros(16, 64)
    kernels.add_static(x, out)
    torch.testing.assert_close(out, x + 1)
    (key,) = kernels.add_static._cache
    assert dict(key[3])["x"] == ((16, 64), "FP32")


def test_three_token_counts_of_the_model_pattern(kernels, tmp_path, monkeypatch):
    """A ragged token loop called at three token counts (one below a tile, one ragged, one whole),
    then at the first again: every result is right, and today each new count compiles once and
    stores one disk-cache entry; the repeat compiles nothing. One compile for every extent (issue 30)
    is designed in docs/language.md ("One compile for every extent"); when it lands, the entries
    below become 1."""
    import pypto.jit

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    kernels.add_rows.clear_cache()
    for tokens in (7, 40, 96, 7):
        x, y, out = torch.randn(tokens, 64), torch.randn(tokens, 64), torch.zeros(tokens, 64)
        kernels.add_rows(x, y, out)
        torch.testing.assert_close(out, x + y)
    assert len(kernels.add_rows._cache) == 1
    assert len(kernels.add_rows._cache.by_extent) == 3
    assert pypto.jit.cache_info()["entries"] == 3
