"""Model-style kernels: pl.dynamic dimensions, @pl.jit.inline helpers and pl.spmd kernel scopes,
checked against torch (the constructs of pypto-lib's DeepSeek-V4 RMSNorm, written small)."""

import pytest
import torch

from pypto.language.parser import ParserTypeError

KERNELS = """
import pypto.language as pl

T = pl.dynamic("T")
D = 512
D_TILE = 128
T_TILE = 8
D_SPLIT = 2
EPS = 1e-6


@pl.jit.inline
def rms_norm(x: pl.Tensor[[T, D], pl.BF16], w: pl.Tensor[[D], pl.BF16], out: pl.Tensor[[T, D], pl.BF16]):
    t_dim = pl.tensor.dim(x, 0)
    # Each block sums the whole row, then normalises its own D // D_SPLIT columns.
    with pl.spmd((t_dim // T_TILE) * D_SPLIT, name_hint="rms_norm", allow_early_resolve=True) as tid:
        blk = pl.tile.get_block_idx()
        row_block = pl.tile.get_block_idx() // D_SPLIT  # a call inside arithmetic is hoisted
        part = blk - row_block * D_SPLIT
        r0 = row_block * T_TILE
        sq_sum = pl.full([1, T_TILE], dtype=pl.FP32, value=0.0)
        for db in pl.pipeline(D // D_TILE, stage=2):
            d0 = db * D_TILE
            chunk = pl.cast(x[r0 : r0 + T_TILE, d0 : d0 + D_TILE], target_type=pl.FP32)
            sq_sum = pl.add(sq_sum, pl.reshape(pl.row_sum(pl.mul(chunk, chunk)), [1, T_TILE]))
        inv = pl.rsqrt(pl.add(pl.mul(sq_sum, 1.0 / D), EPS), high_precision=True)
        inv_t = pl.reshape(inv, [T_TILE, 1])
        chunks = (D // D_TILE) // D_SPLIT
        for cb in pl.pipeline(chunks, stage=2):
            d0 = (part * chunks + cb) * D_TILE
            chunk = pl.cast(x[r0 : r0 + T_TILE, d0 : d0 + D_TILE], target_type=pl.FP32)
            w_chunk = pl.cast(pl.reshape(w[d0 : d0 + D_TILE], [1, D_TILE]), pl.FP32)
            y = pl.col_expand_mul(pl.row_expand_mul(chunk, inv_t), w_chunk)
            out[r0 : r0 + T_TILE, d0 : d0 + D_TILE] = pl.cast(y, target_type=pl.BF16, mode="rint")
    return tid


@pl.jit
def rms_norm_test(x: pl.Tensor[[T, D], pl.BF16], w: pl.Tensor[[D], pl.BF16],
                  out: pl.Out[pl.Tensor[[T, D], pl.BF16]]):
    x.bind_dynamic(0, T)
    out.bind_dynamic(0, T)
    rms_norm(x, w, out)
    return out


@pl.jit.inline
def row_count(a: pl.Tensor[[T, 64], pl.FP32]):
    return pl.tensor.dim(a, 0), pl.tensor.dim(a, 1)


@pl.jit
def exp_rows(a: pl.Tensor[[T, 64], pl.FP32], b: pl.Out[pl.Tensor[[T, 64], pl.FP32]]):
    rows, cols = row_count(a)
    for blk in pl.spmd(rows // 16):
        t = pl.load(a, [blk * 16, 0], [16, cols])
        pl.store(pl.exp(t), [blk * 16, 0], b)
    return b
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("model_style", KERNELS)
    return module


def rms_norm_reference(x, w, eps=1e-6, d_tile=128):
    xf = x.float()
    sq_sum = torch.zeros(xf.shape[0], 1)
    for d0 in range(0, xf.shape[1], d_tile):  # the kernel's chunk order
        chunk = xf[:, d0 : d0 + d_tile]
        sq_sum += (chunk * chunk).sum(dim=-1, keepdim=True)
    inv = torch.rsqrt(sq_sum * (1.0 / xf.shape[1]) + eps)
    return (xf * inv * w.float()).to(torch.bfloat16)


@pytest.mark.parametrize("tokens", [8, 40])
def test_dynamic_rms_norm_against_torch(kernels, tokens):
    torch.manual_seed(tokens)
    x = (torch.randn(tokens, 512) - 0.5).to(torch.bfloat16)
    w = (torch.randn(512) * 0.1 + 1.0).to(torch.bfloat16)
    out = torch.full((tokens, 512), float("nan"), dtype=torch.bfloat16)
    kernels.rms_norm_test(x, w, out)
    expected = rms_norm_reference(x, w)
    # bf16 rounding of a differently ordered row sum may differ by one unit in the last place.
    torch.testing.assert_close(out.float(), expected.float(), rtol=1.0 / 128, atol=1e-4)


def test_one_build_serves_every_token_count(kernels):
    # T is a bare pl.dynamic name on the outermost axis: compiled once for every extent (issue 30).
    x8, x16 = torch.randn(8, 512).to(torch.bfloat16), torch.randn(16, 512).to(torch.bfloat16)
    w = torch.ones(512, dtype=torch.bfloat16)
    first = kernels.rms_norm_test.compile(x8, w, torch.empty_like(x8))
    assert kernels.rms_norm_test.compile(x16, w, torch.empty_like(x16)) is first
    assert kernels.rms_norm_test._cache.fallback == {}


def test_spmd_loop_and_inline_tuple_return(kernels):
    a = torch.randn(48, 64)
    b = torch.zeros(48, 64)
    kernels.exp_rows(a, b)
    torch.testing.assert_close(b, torch.exp(a))


def test_tensors_sharing_a_dynamic_dimension_must_agree(kernels):
    x = torch.randn(16, 512).to(torch.bfloat16)
    with pytest.raises(ParserTypeError, match="the dynamic dimension 'T' is 16 for parameter 'x' but 8 for "
                       "parameter 'out'"):
        kernels.rms_norm_test(x, torch.ones(512, dtype=torch.bfloat16), torch.empty(8, 512, dtype=torch.bfloat16))


def test_out_on_an_inline_parameter_warns(write_kernel):
    module, path = write_kernel(
        "inline_out",
        """
import pypto.language as pl

@pl.jit.inline
def fill(dst: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.full([16, 64], dtype=pl.FP32, value=2.0), [0, 0], dst)
    return dst

@pl.jit
def entry(y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    y = fill(y)
    return y
""",
    )
    y = torch.zeros(16, 64)
    with pytest.warns(DeprecationWarning, match=f"{path}:5:15: pl.Out/pl.InOut on parameter 'dst' of an inline "
                      "function has no effect"):
        module.entry(y)
    assert torch.equal(y, torch.full((16, 64), 2.0))


def test_high_precision_takes_a_bool(write_kernel):
    module, path = write_kernel(
        "rsqrt_flag",
        """
import pypto.language as pl

@pl.jit
def entry(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.rsqrt(pl.load(x, [0, 0], [16, 64]), high_precision=1), [0, 0], y)
    return y
""",
    )
    with pytest.raises(ParserTypeError, match="pl.rsqrt high_precision= must be True or False") as error:
        module.entry(torch.ones(16, 64), torch.zeros(16, 64))
    assert f"{path}:7:" in str(error.value)
