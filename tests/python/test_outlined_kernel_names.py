"""Outlined kernels take their scope's name_hint; two scopes with one name (an inline helper called
twice, or two helpers that both say "kv_score_proj", as deepseek's attention layers do) become two
kernels, the later one numbered."""

import torch

import pypto.language as pl


# One inline helper called at two shapes: its scope is outlined twice, as `proj` and `proj_1`.
@pl.jit.inline
def projected(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
        out[:, :] = pl.matmul(x[:, :], w[:, :], out_dtype=pl.FP32)
    return out


@pl.jit
def two_projections(x: pl.Tensor[[16, 64], pl.FP32], w1: pl.Tensor[[64, 32], pl.FP32],
                    w2: pl.Tensor[[64, 48], pl.FP32], y1: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
                    y2: pl.Out[pl.Tensor[[16, 48], pl.FP32]]):
    y1 = projected(x, w1, y1)
    y2 = projected(x, w2, y2)
    return y1, y2


def test_two_scopes_with_one_name_become_two_kernels():
    x, w1, w2 = torch.randn(16, 64), torch.randn(64, 32), torch.randn(64, 48)
    y1, y2 = torch.zeros(16, 32), torch.zeros(16, 48)
    names = [f.name for f in two_projections.lower(x, w1, w2, y1, y2).functions.values()]
    assert names.count("proj") == 1 and names.count("proj_1") == 1, names
    two_projections(x, w1, w2, y1, y2)
    torch.testing.assert_close(y1, x @ w1, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(y2, x @ w2, rtol=1e-4, atol=1e-4)
