"""pl.matmul / pl.matmul_acc with an operand given transposed (b_trans=True: the right operand as
[N, K], as pypto-lib's models keep their weights; a_trans=True: the left as [K, M]), against torch."""

import pytest
import torch

KERNELS = '''
import pypto.language as pl

K_TILE = 32


@pl.jit
def weights_transposed(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(0, 128 // K_TILE):
            k0 = kb * K_TILE
            x_tile = x[0:16, k0 : k0 + K_TILE]
            w_tile = w[0:64, k0 : k0 + K_TILE]
            if k0 == 0:
                acc = pl.matmul(x_tile, w_tile, out_dtype=pl.FP32, b_trans=True)
            else:
                acc = pl.matmul_acc(acc, x_tile, w_tile, b_trans=True)
        out[0:16, 0:64] = acc
    return out


@pl.jit
def left_transposed(xt: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.matmul(xt, w, a_trans=True), [0, 0])
    return out
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("transposed_kernels", KERNELS)
    return module


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_k_loop_over_weights_stored_transposed(kernels, dtype):
    torch.manual_seed(3)
    x, w = torch.randn(16, 128, dtype=dtype), torch.randn(64, 128, dtype=dtype)
    out = torch.zeros(16, 64)
    kernels.weights_transposed(x, w, out)
    torch.testing.assert_close(out, x.float() @ w.float().T, rtol=1e-4, atol=1e-3)


def test_a_left_operand_given_transposed(kernels):
    xt, w = torch.randn(32, 16), torch.randn(32, 48)
    out = torch.zeros(16, 48)
    kernels.left_transposed(xt, w, out)
    torch.testing.assert_close(out, xt.T @ w, rtol=1e-4, atol=1e-4)


def test_the_flag_is_kept_on_the_matmul(kernels):
    x, w, out = torch.randn(16, 128), torch.randn(64, 128), torch.zeros(16, 64)
    text = str(kernels.weights_transposed.lower(x, w, out))
    assert "pl.tile.matmul(x_tile_left, w_tile_right, out_dtype=pl.FP32, b_trans=True)" in text
    assert "pl.tile.matmul_acc(acc_1, x_tile_left_1, w_tile_right_1, b_trans=True)" in text
