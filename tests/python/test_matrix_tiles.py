"""Tiles of rank above 2 whose leading dimensions are 1 ([1, 1, M, N] blocks of 4-D tensors, as
pypto-lib's models use): reductions, row broadcasts, fillpad and a transposed matmul see the matrix of
their last two dimensions, on the simulator against torch."""

from pathlib import Path

import pytest
import torch
from conftest import kernels_fixture

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl

HEADS = 2
ROWS = 32


@pl.jit
def row_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for h in pl.range(HEADS):
            for r in pl.range(0, ROWS, 16):
                t = pl.load(x, [h, 0, r, 0], [1, 1, 16, 64])
                m = pl.row_max(t)
                e = pl.exp(pl.row_expand_sub(t, m))
                s = pl.row_sum(e)
                pl.store(pl.row_expand_div(e, s), [h, 0, r, 0], y)
    return y


@pl.jit
def ragged_row_sum(x: pl.Tensor, vlen: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0, 0], [1, 1, 16, 64], valid_shape=[1, 1, 16, vlen])
        p = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        pl.store(pl.row_sum(p), [0, 0, 0, 0], out)
    return out


@pl.jit
def scale_rows(x: pl.Tensor, s: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0, 0], [1, 1, 16, 64])
        pl.store(pl.row_expand_mul(t, pl.load(s, [0, 0], [16, 1])), [0, 0, 0, 0], y)
    return y


@pl.jit
def scores(q: pl.Tensor, k: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for h in pl.range(HEADS):
            q_tile = pl.load(q, [h, 0, 0, 0], [1, 1, 16, 64])
            k_tile = pl.load(k, [h, 0, 0, 0], [1, 1, 32, 64])
            s = pl.matmul(q_tile, k_tile, b_trans=True, out_dtype=pl.FP32)
            pl.store(s, [h, 0, 0, 0], out)
    return out


SEQ = 64


@pl.jit
def qk_then_softmax(q: pl.Tensor, k: pl.Tensor, ctx_len: pl.Scalar[pl.INDEX], raw: pl.Out[pl.Tensor],
                    exp_out: pl.Out[pl.Tensor], mi: pl.Out[pl.Tensor], li: pl.Out[pl.Tensor]):
    # decode_4d's attention stages: per KV block, scores = q k^T; then a softmax of each block's
    # valid columns, its row max and sum kept as [1, Q] rows.
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
        for sb in pl.range(3):
            s = pl.matmul(q, k[sb : sb + 1, :, :, :], b_trans=True, out_dtype=pl.FP32)
            pl.store(s, [sb, 0, 0, 0], raw)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax"):
        for sb in pl.range(3):
            valid_len = pl.min(SEQ, ctx_len - sb * SEQ)
            sv = pl.slice(raw, [1, 1, 16, SEQ], [sb, 0, 0, 0], valid_shape=[1, 1, 16, valid_len])
            sc = pl.mul(pl.fillpad(sv, pad_value=pl.PadValue.min), 0.5)
            m = pl.row_max(sc)
            e = pl.cast(pl.exp(pl.row_expand_sub(sc, m)), target_type=pl.BF16)
            pl.store(e, [sb, 0, 0, 0], exp_out)
            pl.store(pl.reshape(m, [1, 16]), [sb, 0], mi)
            pl.store(pl.reshape(pl.row_sum(pl.cast(e, target_type=pl.FP32)), [1, 16]), [sb, 0], li)
    return raw, exp_out, mi, li


GROUPS = 2


@pl.jit
def grouped_projection(x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[GROUPS, 32, 64], pl.BF16],
                       out: pl.Out[pl.Tensor[[16, GROUPS * 32], pl.FP32]]):
    # deepseek's grouped output projection: a 2-D activation times one group's [1, N, K] weight
    # slice (transposed); the [1, 16, 32] product is assembled into the 2-D output.
    for g in pl.range(GROUPS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
            acc = pl.matmul(x[:, 0:32], w[g : g + 1, :, 0:32], b_trans=True, out_dtype=pl.FP32)
            acc = pl.matmul_acc(acc, x[:, 32:64], w[g : g + 1, :, 32:64], b_trans=True)
            out = pl.assemble(out, acc, [0, g * 32])
    return out
'''


kernels = kernels_fixture("matrix_tile_kernels.py", KERNELS)


def test_a_softmax_over_the_rows_of_4d_blocks(kernels):
    x = torch.randn(2, 1, 32, 64)
    y = torch.zeros(2, 1, 32, 64)
    kernels.row_softmax(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)


def test_the_reduction_keeps_the_leading_ones_in_its_type_until_tiles_are_flattened(kernels):
    x, y = torch.randn(2, 1, 32, 64), torch.zeros(2, 1, 32, 64)
    compiled = kernels.row_softmax.compile(x, y, config=RunConfig(platform="a2a3sim", dump_passes=True))
    dumps = Path(compiled.output_dir) / "passes_dump"
    assert "m: pl.Tile[[1, 1, 16, 1], pl.FP32" in (dumps / "00_frontend.py").read_text()
    # FlattenTileNdTo2D merges the leading dimensions into rows for the 2-D PTO tiles.
    assert "m: pl.Tile[[16, 1], pl.FP32" in str(kernels.row_softmax.lower(x, y))


def test_a_2d_row_vector_scales_a_4d_block(kernels):
    # pypto-lib's decode_4d scales [1, 1, B, H] hidden states by an [B, 1] inverse RMS this way.
    x, s = torch.randn(1, 1, 16, 64), torch.randn(16, 1)
    y = torch.zeros(1, 1, 16, 64)
    kernels.scale_rows(x, s, y)
    torch.testing.assert_close(y, x * s)


@pytest.mark.parametrize("vlen", [64, 23])
def test_a_4d_load_with_a_valid_shape_is_padded_then_summed(kernels, vlen):
    x = torch.randn(1, 1, 16, 64)
    out = torch.full((1, 1, 16, 1), -7.0)
    kernels.ragged_row_sum(x, vlen, out)
    torch.testing.assert_close(out, x[..., :vlen].sum(dim=-1, keepdim=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_matmul_of_4d_blocks_with_b_trans(kernels, dtype):
    torch.manual_seed(5)
    q, k = torch.randn(2, 1, 16, 64, dtype=dtype), torch.randn(2, 1, 32, 64, dtype=dtype)
    out = torch.zeros(2, 1, 16, 32)
    kernels.scores(q, k, out)
    torch.testing.assert_close(out, q.float() @ k.float().transpose(-1, -2), rtol=1e-4, atol=1e-3)


def test_decode_style_scores_then_a_softmax_of_the_valid_columns(kernels):
    torch.manual_seed(7)
    q, k = torch.randn(1, 1, 16, 128, dtype=torch.bfloat16), torch.randn(3, 1, 64, 128, dtype=torch.bfloat16)
    raw, exp_out = torch.zeros(3, 1, 16, 64), torch.zeros(3, 1, 16, 64, dtype=torch.bfloat16)
    mi, li = torch.zeros(3, 16), torch.zeros(3, 16)
    kernels.qk_then_softmax(q, k, 150, raw, exp_out, mi, li)
    scores = (q.float() @ k.float().transpose(-1, -2)) * 0.5
    scores = scores.masked_fill(torch.arange(3 * 64).reshape(3, 1, 1, 64) >= 150, float("-inf"))
    m = scores.amax(dim=-1)
    e = torch.exp(scores - m[..., None]).bfloat16()
    torch.testing.assert_close(mi, m[:, 0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(exp_out, e, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(li, e.float().sum(dim=-1)[:, 0], rtol=1e-4, atol=1e-3)


def test_a_2d_operand_times_a_3d_slice_is_assembled_into_a_2d_tensor(kernels):
    torch.manual_seed(11)
    x, w = torch.randn(16, 64, dtype=torch.bfloat16), torch.randn(2, 32, 64, dtype=torch.bfloat16)
    out = torch.full((16, 64), float("nan"))
    kernels.grouped_projection(x, w, out)
    expected = torch.cat([x.float() @ w[g].float().T for g in range(2)], dim=1)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-3)
