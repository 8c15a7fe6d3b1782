"""The JIT cache keyed as upstream keys it: a ``pl.dynamic`` axis is None in the key, so calls with
different extents of it share one entry. A bare ``pl.dynamic`` name on any axis is compiled once
for every extent; other dynamic axes (scaled, bound in the body) are compiled per extent under the
entry, as is a program whose generic build fails."""

import pytest
import torch
from pypto.language.parser import ParserTypeError

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


def test_one_build_serves_every_extent_of_a_bare_dynamic_axis(kernels):
    kernels.copy_rows.clear_cache()
    first = kernels.copy_rows.compile(torch.zeros(32, 64), torch.zeros(32, 64))
    assert kernels.copy_rows.compile(torch.zeros(16, 64), torch.zeros(16, 64)) is first
    assert len(kernels.copy_rows._cache.by_extent) == 1
    # Clearing the entries forgets the build.
    kernels.copy_rows._cache.clear()
    assert kernels.copy_rows.compile(torch.zeros(32, 64), torch.zeros(32, 64)) is not first


def test_each_extent_of_a_bound_axis_is_compiled_once(kernels):
    # bind_dynamic is compiled per extent: the body names the axis, not the annotation.
    kernels.scale_bound.clear_cache()
    first = kernels.scale_bound.compile(torch.zeros(32, 64), torch.zeros(16, 64))
    second = kernels.scale_bound.compile(torch.zeros(16, 64), torch.zeros(16, 64))
    assert first is not second
    assert kernels.scale_bound.compile(torch.zeros(32, 64), torch.zeros(16, 64)) is first
    assert len(kernels.scale_bound._cache.by_extent) == 2
    kernels.scale_bound._cache.clear()
    assert kernels.scale_bound.compile(torch.zeros(32, 64), torch.zeros(16, 64)) is not first


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
    then at the first again: every result is right, and the program is compiled once, for every
    extent of ROWS (docs/language.md, "One compile for every extent"): one build, one disk-cache
    entry; the repeat compiles nothing."""
    import pypto.jit
    from pypto.jit import decorator

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    compiles = []
    compile_once = decorator._core.compile
    monkeypatch.setattr(decorator._core, "compile", lambda *a, **k: compiles.append(1) or compile_once(*a, **k))
    kernels.add_rows.clear_cache()
    for tokens in (7, 40, 96, 7):
        x, y, out = torch.randn(tokens, 64), torch.randn(tokens, 64), torch.zeros(tokens, 64)
        kernels.add_rows(x, y, out)
        torch.testing.assert_close(out, x + y)
    assert len(compiles) == 1
    assert kernels.add_rows._cache.fallback == {}
    assert len(kernels.add_rows._cache.by_extent) == 1
    assert pypto.jit.cache_info()["entries"] == 1
    # The build directory records the token axis as dynamic.
    (compiled,) = kernels.add_rows._cache.by_extent.values()
    assert {p.name: p.shape for p in compiled.parameters}["x"] == (None, 64)


FALLBACKS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
COLS = pl.dynamic("COLS")
TILE = 16


@pl.jit
def double_rows(x: pl.Tensor[[ROWS * 2, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS * 2, 64], pl.FP32]]):
    for r in pl.range(0, ROWS * 2, TILE):
        rows = pl.min(TILE, ROWS * 2 - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.add(a, a), [r, 0], out)
    return out


@pl.jit
def add_cols(x: pl.Tensor[[16, COLS], pl.FP32], out: pl.Out[pl.Tensor[[16, COLS], pl.FP32]]):
    for c in pl.range(0, COLS, TILE):
        cols = pl.min(TILE, COLS - c)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, c], [16, TILE], valid_shape=[16, cols])
            pl.store(pl.add(a, 1.0), [0, c], out)
    return out


@pl.jit
def add_pair(x: pl.Tensor[[ROWS, 64], pl.FP32], y: pl.Tensor[[ROWS, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    for r in pl.range(0, ROWS, TILE):
        rows = pl.min(TILE, ROWS - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            b = pl.load(y, [r, 0], [TILE, 64], valid_shape=[rows, 64])
            pl.store(pl.add(a, b), [r, 0], out)
    return out
"""


@pytest.fixture
def fallbacks(write_kernel):
    return write_kernel("dynamic_fallbacks", FALLBACKS)


def test_a_scaled_dimension_is_compiled_per_extent(fallbacks):
    """`ROWS * 2` needs the extent: each extent is its own build, as before, and both are right."""
    module, _ = fallbacks
    module.double_rows.clear_cache()
    for rows in (24, 40):
        x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
        module.double_rows(x, out)
        torch.testing.assert_close(out, x + x)
    assert len(module.double_rows._cache.by_extent) == 2


def test_an_inner_dynamic_axis_is_compiled_once(fallbacks):
    """An inner axis is generic too: the kernel's view takes its row stride from the run-time extent
    (more forms in test_jit_inner_dynamic.py)."""
    from pypto.jit import decorator

    module, _ = fallbacks
    module.add_cols.clear_cache()
    for cols in (20, 48):
        x, out = torch.randn(16, cols), torch.zeros(16, cols)
        module.add_cols(x, out)
        torch.testing.assert_close(out, x + 1)
    assert [extents for _, extents in module.add_cols._cache.by_extent] == [decorator._GENERIC]


def test_tensors_sharing_a_dimension_must_agree_at_each_call(fallbacks):
    """The generic build serves 40 rows; a call whose `y` has 39 is reported at y's annotation."""
    module, path = fallbacks
    module.add_pair.clear_cache()
    x, y, out = torch.randn(40, 64), torch.randn(40, 64), torch.zeros(40, 64)
    module.add_pair(x, y, out)
    torch.testing.assert_close(out, x + y)
    with pytest.raises(ParserTypeError) as info:
        module.add_pair(x, torch.randn(39, 64), out)
    assert info.value.message == "the dynamic dimension 'ROWS' is 40 for parameter 'x' but 39 for parameter 'y'"
    assert info.value.location == f"{path}:30:63"


def test_explain_names_each_build_and_why_it_is_not_generic(kernels, fallbacks, monkeypatch, capsys):
    """PYPTO_JIT_EXPLAIN=1: one stderr line per build (not per call), generic or per-extent with the
    extents, and for a per-extent build the place in the program that rules the generic one out."""
    module, path = fallbacks
    monkeypatch.setenv("PYPTO_JIT_EXPLAIN", "1")
    kernels.add_rows.clear_cache()
    module.double_rows.clear_cache()
    for rows in (24, 40, 24):
        kernels.add_rows(torch.randn(rows, 64), torch.randn(rows, 64), torch.zeros(rows, 64))
        module.double_rows(torch.randn(rows, 64), torch.zeros(rows, 64))
    lines = capsys.readouterr().err.splitlines()
    kernel_file = kernels.__file__
    why = f"generic build not used: {path}:10: axis 0 of 'x' is a dimension expression (ROWS * 2)"
    assert lines == [
        f"pypto jit: add_rows ({kernel_file}:21): generic",
        f"pypto jit: double_rows ({path}:9): per-extent x[0]=24, out[0]=24; {why}",
        f"pypto jit: double_rows ({path}:9): per-extent x[0]=40, out[0]=40; {why}",
    ]
