"""Inner dynamic axes compile once for every extent (docs/language.md, "One compile for every extent"):
a `pl.dynamic` name on any axis of an entry's parameter is passed unbound, the kernels view the tensor
with strides computed from its run-time extents, and one build serves every call. Each program is
called at three extents: one compile, one disk-cache entry, every result equal to torch's, and each
.pto passes pto-check."""

import pytest
import torch
from test_jit_generic_forms import _compiled_once

KERNELS = """
import pypto.language as pl

REQUESTS = pl.dynamic("REQUESTS")
MAX_BLOCKS = pl.dynamic("MAX_BLOCKS")
TOKENS = pl.dynamic("TOKENS")
SEQ = pl.dynamic("SEQ")
POOL = 8
TILE = 16


@pl.jit
def sum_blocks(table: pl.Tensor[[REQUESTS, MAX_BLOCKS], pl.INT32], pool: pl.Tensor[[POOL, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[REQUESTS, 64], pl.FP32]]):
    # A paged-attention block table: each request's kernel reads its own row, MAX_BLOCKS entries long.
    blocks = pl.tensor.dim(table, 1)
    for b in pl.range(REQUESTS):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.full([1, 64], dtype=pl.FP32, value=0.0)
            for j in pl.range(blocks):
                block = pl.cast(pl.read(table, [b, j]), pl.INDEX)
                acc = pl.add(acc, pl.load(pool, [block, 0], [1, 64]))
            pl.store(acc, [b, 0], out)
    return out


@pl.jit
def scale_columns(x: pl.Tensor[[TOKENS, SEQ], pl.FP32], out: pl.Out[pl.Tensor[[TOKENS, SEQ], pl.FP32]]):
    # Both axes dynamic: ragged tiles along each, the row stride being SEQ.
    for r in pl.range(0, TOKENS, TILE):
        rows = pl.min(TILE, TOKENS - r)
        for c in pl.range(0, SEQ, TILE):
            cols = pl.min(TILE, SEQ - c)
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [r, c], [TILE, TILE], valid_shape=[rows, cols])
                pl.store(pl.mul(a, 2.0), [r, c], out)
    return out


@pl.jit
def add_heads(x: pl.Tensor[[TOKENS, SEQ, 32], pl.FP32], out: pl.Out[pl.Tensor[[TOKENS, SEQ, 32], pl.FP32]]):
    # [B_DYN, S_DYN, D]: the middle axis dynamic, so the token stride is SEQ * 32, computed at run time.
    for t in pl.range(TOKENS):
        for s in pl.range(SEQ):
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [t, s, 0], [1, 1, 32])
                pl.store(pl.add(a, 1.0), [t, s, 0], out)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("inner_dynamic", KERNELS)
    return module


def test_a_block_table_with_a_dynamic_row_length(kernels, monkeypatch, tmp_path):
    """[REQUESTS, MAX_BLOCKS] read element by element in a kernel: the view's row stride is MAX_BLOCKS."""

    def call(requests, max_blocks):
        def run():
            table = torch.randint(0, 8, (requests, max_blocks), dtype=torch.int32)
            pool, out = torch.randn(8, 64), torch.zeros(requests, 64)
            kernels.sum_blocks(table, pool, out)
            torch.testing.assert_close(out, pool[table.long()].sum(dim=1))

        return run

    calls = [call(2, 3), call(5, 7), call(3, 12), call(2, 3)]
    _compiled_once(kernels.sum_blocks, monkeypatch, tmp_path, calls)


def test_a_matrix_dynamic_along_both_axes(kernels, monkeypatch, tmp_path):
    def call(tokens, seq):
        def run():
            x, out = torch.randn(tokens, seq), torch.zeros(tokens, seq)
            kernels.scale_columns(x, out)
            torch.testing.assert_close(out, x * 2)

        return run

    _compiled_once(kernels.scale_columns, monkeypatch, tmp_path, [call(7, 20), call(33, 5), call(16, 48)])


def test_a_dynamic_middle_axis(kernels, monkeypatch, tmp_path):
    def call(tokens, seq):
        def run():
            x, out = torch.randn(tokens, seq, 32), torch.zeros(tokens, seq, 32)
            kernels.add_heads(x, out)
            torch.testing.assert_close(out, x + 1)

        return run

    _compiled_once(kernels.add_heads, monkeypatch, tmp_path, [call(2, 3), call(3, 5), call(1, 4)])
