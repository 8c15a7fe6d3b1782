"""The last two forms that made pypto-lib programs compile per extent (docs/language.md, "One compile for
every extent"): an inline helper whose annotation and argument disagree on which axes are known when it
compiles (flash_mtp's decode_compressor_ratio128 through rope_interleave.py), and a reshape to two
dimensions computed at run time (deepseek_v4_pro's decode_compressor_ratio128). Each program is called
at three extents, compiles once (one disk-cache entry, no fallback), and every result equals torch's."""

import pytest
import torch
from pypto.language.parser import InvalidOperationError
from test_jit_generic_forms import _compiled_once

KERNELS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
B = pl.dynamic("B")
BATCH = pl.dynamic("BATCH")
SEQ = pl.dynamic("SEQ")
TABLE_ROWS = 4
TILE = 16


@pl.jit.inline
def doubled_table(half: pl.Tensor[[TABLE_ROWS, 32], pl.FP32], full: pl.Tensor[[TABLE_ROWS, 32], pl.FP32]):
    # rope_interleave's pattern: a fixed annotation, passed a tensor whose rows are known at run time.
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(half, [0, 0], [TABLE_ROWS, 32])
        pl.store(pl.mul(t, 2.0), [0, 0], full)
    return full


@pl.jit.inline
def summed(a: pl.Tensor[[B, 32], pl.FP32], b: pl.Tensor[[B, 32], pl.FP32], out: pl.Tensor[[B, 32], pl.FP32]):
    # compressor_ratio128's pattern: B names the caller's unbound rows of `a`, and `b` was created at 4.
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.add(pl.load(a, [0, 0], [TABLE_ROWS, 32]), pl.load(b, [0, 0], [TABLE_ROWS, 32]))
        pl.store(s, [0, 0], out)
    return out


@pl.jit
def with_a_fixed_table(x: pl.Tensor[[ROWS, 32], pl.FP32], table: pl.Tensor[[B, 32], pl.FP32],
                       out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]], table_out: pl.Out[pl.Tensor[[B, 32], pl.FP32]]):
    full = pl.create_tensor([TABLE_ROWS, 32], dtype=pl.FP32)
    full = doubled_table(table, full)
    table_out = summed(table, full, table_out)
    for r in pl.range(0, pl.tensor.dim(x, 0), TILE):
        rows = pl.min(TILE, pl.tensor.dim(x, 0) - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, 32], valid_shape=[rows, 32])
            pl.store(pl.add(a, 1.0), [r, 0], out)
    return out, table_out


@pl.jit
def regrouped(x: pl.Tensor[[BATCH, SEQ, 64], pl.FP32], out: pl.Out[pl.Tensor[[BATCH, SEQ, 64], pl.FP32]]):
    # decode_compressor_ratio128's pattern: the tokens flattened, then viewed as [b, s, 64] again.
    b_dim = pl.tensor.dim(x, 0)
    s_dim = pl.tensor.dim(x, 1)
    x_flat = pl.reshape(x, [b_dim * s_dim, 64])
    x_again = pl.reshape(x_flat, [b_dim, s_dim, 64])
    for b in pl.range(b_dim):
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x_again, [b, 0, 0], [1, TILE, 64], valid_shape=[1, s_dim, 64])
            pl.store(pl.add(a, 3.0), [b, 0, 0], out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("generic_annotations", KERNELS)
    return module


def test_a_helper_annotation_fixes_an_axis_the_caller_has_at_run_time(kernels, monkeypatch, tmp_path):
    """The helper's body is compiled with its annotation's constant rows, and a helper naming B is given
    a tensor created at 4 rows; the token axis runs at three extents."""

    def call(rows):
        def run():
            x, table = torch.randn(rows, 32), torch.randn(4, 32)
            out, table_out = torch.zeros(rows, 32), torch.zeros(4, 32)
            kernels.with_a_fixed_table(x, table, out, table_out)
            torch.testing.assert_close(out, x + 1)
            torch.testing.assert_close(table_out, table * 3)

        return run

    _compiled_once(kernels.with_a_fixed_table, monkeypatch, tmp_path, [call(7), call(40), call(96), call(7)])


def test_a_helper_annotation_checks_the_extent_when_the_program_runs(kernels, monkeypatch, tmp_path):
    """Called with 3 table rows, the generic build stops at the helper's annotation, naming both shapes
    (a build per extent refuses the same call when it compiles)."""
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    kernels.with_a_fixed_table.clear_cache()
    kernels.with_a_fixed_table(torch.randn(8, 32), torch.randn(4, 32), torch.zeros(8, 32), torch.zeros(4, 32))
    with pytest.raises(InvalidOperationError) as failure:
        kernels.with_a_fixed_table(torch.randn(8, 32), torch.randn(3, 32), torch.zeros(8, 32), torch.zeros(3, 32))
    path = tmp_path / "generic_annotations.py"
    assert str(failure.value) == (
        "error: 'half' is taken as [4, 32] here, but the tensor it views is [3, 32] when the program runs\n"
        f"  --> {path}:13:25\n"
        "   |\n"
        "13 | def doubled_table(half: pl.Tensor[[TABLE_ROWS, 32], pl.FP32], full: pl.Tensor[[TABLE_ROWS, 32], pl.FP32]):\n"
        "   |                         ^^^^^^^^^\n"
        "  = help: pass a tensor of the shape written here, or write the axis as a pl.dynamic dimension"
    )


def test_a_reshape_to_two_dimensions_known_at_run_time(kernels, monkeypatch, tmp_path):
    """`pl.reshape(x_flat, [b_dim, s_dim, 64])`: the orchestration computes both dimensions in each run,
    and the kernel reading the view sees them."""

    def call(batch, seq):
        def run():
            x, out = torch.randn(batch, seq, 64), torch.zeros(batch, seq, 64)
            kernels.regrouped(x, out)
            torch.testing.assert_close(out, x + 3)

        return run

    _compiled_once(kernels.regrouped, monkeypatch, tmp_path, [call(4, 2), call(3, 16), call(7, 5), call(4, 2)])
