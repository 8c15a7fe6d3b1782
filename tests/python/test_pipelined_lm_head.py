"""A final RMSNorm and an LM head in one kernel, the weight pipelined over K as pypto-lib's qwen3
rms_lm_head writes it: the vector core normalises each K chunk of the hidden states, the cube
multiplies it by a [192, 512] BF16 weight chunk with b_trans=True.

The chunk takes 196,608 bytes: more than Ascend910B's UB (188,416) and well within L1. The K loop
reloads the chunk before the matmul reads it and nothing after the loop reads it, so the loop does
not carry it (the frontend once carried every name a loop rebinds; that carry counted as a
vector-side read, and the chunk was loaded into the AIV member's UB too, which it does not fit)."""

import torch

import pypto.language as pl

ROWS, HIDDEN, K_CHUNK, VOCAB_CHUNK = 16, 1024, 512, 192
EPS = 1e-6


@pl.jit
def rms_lm_head(hidden: pl.Tensor[[16, 1024], pl.BF16], gamma: pl.Tensor[[1, 1024], pl.FP32],
                weight: pl.Tensor[[192, 1024], pl.BF16], out: pl.Out[pl.Tensor[[16, 192], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lm_head"):
        sq_sum = pl.full([1, 16], dtype=pl.FP32, value=0.0)
        for kb in pl.range(2):
            x = pl.cast(pl.slice(hidden, [16, 512], [0, kb * 512]), target_type=pl.FP32)
            sq_sum = pl.add(sq_sum, pl.reshape(pl.row_sum(pl.mul(x, x)), [1, 16]))
        inv_rms = pl.reshape(pl.rsqrt(pl.add(pl.mul(sq_sum, 1.0 / 1024), EPS)), [16, 1])

        x = pl.cast(pl.slice(hidden, [16, 512], [0, 0]), target_type=pl.FP32)
        normed = pl.cast(pl.col_expand_mul(pl.row_expand_mul(x, inv_rms), pl.slice(gamma, [1, 512], [0, 0])),
                         target_type=pl.BF16)
        weight_chunk = pl.slice(weight, [192, 512], [0, 0])
        acc = pl.matmul(normed, weight_chunk, out_dtype=pl.FP32, b_trans=True)
        for kb in pl.pipeline(1, 2, stage=2):
            k0 = kb * 512
            x = pl.cast(pl.slice(hidden, [16, 512], [0, k0]), target_type=pl.FP32)
            normed = pl.cast(pl.col_expand_mul(pl.row_expand_mul(x, inv_rms), pl.slice(gamma, [1, 512], [0, k0])),
                             target_type=pl.BF16)
            weight_chunk = pl.slice(weight, [192, 512], [0, k0])
            acc = pl.matmul_acc(acc, normed, weight_chunk, b_trans=True)
        out = pl.assemble(out, acc, [0, 0])
    return out


def _inputs():
    torch.manual_seed(0)
    hidden = torch.randn(ROWS, HIDDEN).bfloat16()
    gamma = torch.rand(1, HIDDEN) + 0.5
    weight = (torch.randn(VOCAB_CHUNK, HIDDEN) * 0.05).bfloat16()
    return hidden, gamma, weight, torch.full((ROWS, VOCAB_CHUNK), float("nan"))


def _golden(hidden, gamma, weight):
    x = hidden.float()
    normed = (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * gamma).bfloat16()
    return normed.float() @ weight.float().T


def test_the_weight_chunk_lives_only_on_the_cube_side():
    program = rms_lm_head.lower(*_inputs())
    kernels = {f.name: f for f in program.functions.values() if f.function_type in ("AIC", "AIV")}
    assert sorted(kernels) == ["lm_head_aic", "lm_head_aiv"], sorted(kernels)
    aiv = str(kernels["lm_head_aiv"])
    assert "[192, 512]" not in aiv, aiv
    assert "pl.tile.load(weight, [0, k0], [192, 512], target_memory=pl.Mem.Mat)" in str(kernels["lm_head_aic"])


def test_rms_norm_then_a_pipelined_b_trans_lm_head_matches_torch():
    hidden, gamma, weight, out = _inputs()
    rms_lm_head(hidden, gamma, weight, out)
    torch.testing.assert_close(out, _golden(hidden, gamma, weight), rtol=2e-3, atol=2e-3)
