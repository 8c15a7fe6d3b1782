"""Forms of dynamic programs that compile once for every extent (docs/language.md, "One compile for
every extent"), beyond a bare pl.dynamic name on an entry's outermost axis: each program here is called
at three extents, compiles once (one disk-cache entry, no fallback), and every result equals torch's.
The .pto of each generic kernel passes pto-check (the autouse fixture in conftest.py checks every module
a test writes)."""

from pathlib import Path

import pytest
import torch
from pto_dialect import assert_conforms

KERNELS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
BATCH = pl.dynamic("BATCH")
N = pl.dynamic("N")
TILE = 16


@pl.jit.inline
def add_rows_of(src: pl.Tensor[[N, 64], pl.FP32], dst: pl.Tensor[[N, 64], pl.FP32], value: pl.Scalar[pl.FP32]):
    for r in pl.range(0, N, TILE):
        rows = pl.min(TILE, N - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(src, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.add(a, value), [r, 0], dst)
    return dst


@pl.jit
def two_dynamic_dims(x: pl.Tensor[[ROWS, 64], pl.FP32], y: pl.Tensor[[BATCH, 64], pl.FP32],
                     x_out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]], y_out: pl.Out[pl.Tensor[[BATCH, 64], pl.FP32]]):
    # The inline helper's own name N labels ROWS at the first call and BATCH at the second.
    x_out = add_rows_of(x, x_out, 1.0)
    y_out = add_rows_of(y, y_out, 2.0)
    return x_out, y_out


@pl.jit
def flat_rows(x: pl.Tensor[[ROWS, 4, 16], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 4, 16], pl.FP32]]):
    # hc_post's pattern: the token axis stays outermost, the axes after it are merged.
    t_dim = pl.tensor.dim(x, 0)
    x_flat = pl.reshape(x, [t_dim, 64])
    out_flat = pl.reshape(out, [t_dim, 64])
    for r in pl.range(0, t_dim, TILE):
        rows = pl.min(TILE, t_dim - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x_flat, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.mul(a, 3.0), [r, 0], out_flat)
    return out


@pl.jit
def through_scratch(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    # decode_swa's pattern: an intermediate as long as the token axis, filled by one kernel, read by another.
    t_dim = pl.tensor.dim(x, 0)
    scratch = pl.create_tensor([t_dim, 64], dtype=pl.FP32)
    for r in pl.range(0, t_dim, TILE):
        rows = pl.min(TILE, t_dim - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.mul(a, 2.0), [r, 0], scratch)
    for r in pl.range(0, pl.tensor.dim(scratch, 0), TILE):
        rows = pl.min(TILE, t_dim - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            b = pl.load(scratch, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.add(b, 1.0), [r, 0], out)
    return out


@pl.jit
def from_a_filled_tensor(x: pl.Tensor[[ROWS, 64], pl.FP32], y: pl.Tensor[[BATCH, 64], pl.FP32],
                         x_out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]], y_out: pl.Out[pl.Tensor[[BATCH, 64], pl.FP32]]):
    # A created tensor handed to the helper: N takes the extent it was created with (rmsnorm of x_mixed).
    t_dim = pl.tensor.dim(x, 0)
    filled = pl.create_tensor([t_dim, 64], dtype=pl.FP32, init_value=0.5)
    x_out = add_rows_of(filled, x_out, 1.0)
    y_out = add_rows_of(y, y_out, 2.0)
    return x_out, y_out


@pl.jit.inline
def negate_all(src: pl.Tensor, dst: pl.Tensor):
    # No dimension named: the rows are read off the tensor (prefill_indexer's idx_kv_cache_out).
    for r in pl.range(0, pl.tensor.dim(src, 0), TILE):
        rows = pl.min(TILE, pl.tensor.dim(src, 0) - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(src, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.neg(a), [r, 0], dst)
    return dst


@pl.jit
def negated(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    out = negate_all(x, out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("generic_forms", KERNELS)
    return module


def _compiled_once(fn, monkeypatch, tmp_path, calls):
    """Runs each call of ``calls`` (a function of nothing) twice over and checks that ``fn`` compiled
    once, generically, into one disk-cache entry."""
    import pypto.jit
    from pypto.jit import decorator

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    compiles = []
    compile_once = decorator._core.compile
    monkeypatch.setattr(decorator._core, "compile", lambda *a, **k: compiles.append(1) or compile_once(*a, **k))
    fn.clear_cache()
    for call in calls:
        call()
    assert fn._cache.fallback == {}
    assert len(compiles) == 1
    assert list(fn._cache.by_extent) == [(key, decorator._GENERIC) for key in fn._cache]
    assert pypto.jit.cache_info()["entries"] == 1
    # The one set of kernels: each .pto passes pto-check (the PTO dialect's op table).
    (compiled,) = fn._cache.by_extent.values()
    assert list(Path(compiled.output_dir).rglob("*.pto"))
    assert_conforms(compiled.output_dir)


def test_an_inline_helper_names_each_unbound_dimension_it_is_passed(kernels, monkeypatch, tmp_path):
    """The entry passes two dimensions unbound (ROWS, BATCH); the helper's own name takes the run-time
    extent of the tensor each call passes it."""

    def call(rows, batch):
        def run():
            x, y = torch.randn(rows, 64), torch.randn(batch, 64)
            x_out, y_out = torch.zeros(rows, 64), torch.zeros(batch, 64)
            kernels.two_dynamic_dims(x, y, x_out, y_out)
            torch.testing.assert_close(x_out, x + 1)
            torch.testing.assert_close(y_out, y + 2)

        return run

    # The last call repeats the first extents: the run's plan kept for them (driver) is right too.
    calls = [call(7, 20), call(40, 3), call(96, 33), call(7, 20)]
    _compiled_once(kernels.two_dynamic_dims, monkeypatch, tmp_path, calls)


def test_a_reshape_keeps_the_run_time_extent_of_the_token_axis(kernels, monkeypatch, tmp_path):
    """`pl.reshape(x, [t_dim, 64])` with t_dim read from x's dynamic axis is a view whose outermost
    extent is known when the program runs (the runtime's reshape infers it from the element count)."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 4, 16), torch.zeros(rows, 4, 16)
            kernels.flat_rows(x, out)
            torch.testing.assert_close(out, x * 3)

        return run

    _compiled_once(kernels.flat_rows, monkeypatch, tmp_path, [call(5), call(40), call(17)])


def test_a_tensor_created_as_long_as_the_token_axis(kernels, monkeypatch, tmp_path):
    """`pl.create_tensor([t_dim, 64])` with t_dim read from the token axis: the plan allocates it at each
    run's extent (ShapeStep), and the kernels that write and read it see that extent."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
            kernels.through_scratch(x, out)
            torch.testing.assert_close(out, x * 2 + 1)

        return run

    # Again at 9 rows: the plan kept for that extent allocates the tensor at 9 rows.
    _compiled_once(kernels.through_scratch, monkeypatch, tmp_path, [call(9), call(48), call(33), call(9)])


def test_a_created_tensor_passed_to_a_helper_and_filled_at_each_extent(kernels, monkeypatch, tmp_path):
    """A tensor created at the token axis's extent with init_value, passed to an inline helper whose own
    name labels it: the helper's loop runs over the created extent, and the runtime fills the tensor
    at each run's shape."""

    def call(rows, batch):
        def run():
            x, y = torch.randn(rows, 64), torch.randn(batch, 64)
            x_out, y_out = torch.zeros(rows, 64), torch.zeros(batch, 64)
            kernels.from_a_filled_tensor(x, y, x_out, y_out)
            torch.testing.assert_close(x_out, torch.full((rows, 64), 1.5))
            torch.testing.assert_close(y_out, y + 2)

        return run

    calls = [call(7, 20), call(40, 3), call(96, 33), call(7, 20)]
    _compiled_once(kernels.from_a_filled_tensor, monkeypatch, tmp_path, calls)


def test_a_helper_reads_the_extent_of_a_tensor_it_names_no_dimension_for(kernels, monkeypatch, tmp_path):
    """`pl.tensor.dim(src, 0)` in a helper whose parameter is a bare pl.Tensor: the entry's run-time
    extent of the tensor passed, whatever the helper calls it."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
            kernels.negated(x, out)
            torch.testing.assert_close(out, -x)

        return run

    _compiled_once(kernels.negated, monkeypatch, tmp_path, [call(3), call(64), call(50)])
