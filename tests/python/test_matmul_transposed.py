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


@pl.jit
def right_transposed(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.matmul(x, w, out_dtype=pl.FP32, b_trans=True), [0, 0])
    return out


# pypto-lib's shared expert: 8 token rows in a 16-row tile (the cube's least), against 256 KB of
# weights stored transposed.
@pl.jit
def few_rows(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x_tile = pl.slice(x, [16, 512], [0, 0], valid_shape=[8, 512])
        out[0:16, 0:256] = pl.matmul(x_tile, w[0:256, 0:512], out_dtype=pl.FP32, b_trans=True)
    return out


BIG_K_TILE = 512


# pypto-lib's prefill projections: a K loop written in the kernel whose [128, 512] BF16 x window
# (128 KB) exceeds L0A and is read by two matmuls against weights stored transposed.
@pl.jit
def projections(x: pl.Tensor, wkv: pl.Tensor, wgate: pl.Tensor, kv: pl.Out[pl.Tensor], score: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(0, 1024 // BIG_K_TILE):
            k0 = kb * BIG_K_TILE
            x_tile = x[0:128, k0 : k0 + BIG_K_TILE]
            wkv_tile = wkv[0:32, k0 : k0 + BIG_K_TILE]
            wgate_tile = wgate[0:32, k0 : k0 + BIG_K_TILE]
            if k0 == 0:
                kv_acc = pl.matmul(x_tile, wkv_tile, out_dtype=pl.FP32, b_trans=True)
                score_acc = pl.matmul(x_tile, wgate_tile, out_dtype=pl.FP32, b_trans=True)
            else:
                kv_acc = pl.matmul_acc(kv_acc, x_tile, wkv_tile, b_trans=True)
                score_acc = pl.matmul_acc(score_acc, x_tile, wgate_tile, b_trans=True)
        kv[0:128, 0:32] = kv_acc
        score[0:128, 0:32] = score_acc
    return kv, score
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


# Operands and results beyond the cube's L0 buffers (64 KB L0A/L0B, 128 KB L0C): AutoTileMatmulL0
# splits them into blocks and K windows, taken from the transposed operands as they are stored.
@pytest.mark.parametrize("m,k,n", [(64, 256, 128), (256, 128, 256), (16, 1024, 64)])
def test_a_right_operand_given_transposed_beyond_l0(kernels, m, k, n):
    torch.manual_seed(4)
    x, w = torch.randn(m, k), torch.randn(n, k)
    out = torch.zeros(m, n)
    kernels.right_transposed(x, w, out)
    torch.testing.assert_close(out, x @ w.T, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("m,k,n", [(64, 512, 64), (256, 128, 256)])
def test_a_left_operand_given_transposed_beyond_l0(kernels, m, k, n):
    torch.manual_seed(5)
    xt, w = torch.randn(k, m), torch.randn(k, n)
    out = torch.zeros(m, n)
    kernels.left_transposed(xt, w, out)
    torch.testing.assert_close(out, xt.T @ w, rtol=1e-4, atol=1e-3)


def test_a_k_loop_whose_steps_exceed_l0_is_split_further(kernels):
    torch.manual_seed(6)
    x = torch.randn(128, 1024, dtype=torch.bfloat16)
    wkv, wgate = torch.randn(32, 1024, dtype=torch.bfloat16), torch.randn(32, 1024, dtype=torch.bfloat16)
    kv, score = torch.zeros(128, 32), torch.zeros(128, 32)
    kernels.projections(x, wkv, wgate, kv, score)
    torch.testing.assert_close(kv, x.float() @ wkv.float().T, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(score, x.float() @ wgate.float().T, rtol=1e-4, atol=1e-3)
    text = str(kernels.projections.lower(x, wkv, wgate, kv, score))
    # Each K step of 512 is walked in windows of 128 columns of x and of the transposed weights.
    assert "pl.tile.extract(wkv_tile, 0, kv_acc_ki, [32, 128], target_memory=pl.Mem.Right)" in text


def test_a_left_operand_with_fewer_valid_rows_against_weights_beyond_l0b(kernels):
    torch.manual_seed(7)
    x, w = torch.randn(8, 512, dtype=torch.bfloat16), torch.randn(256, 512, dtype=torch.bfloat16)
    out = torch.zeros(16, 256)
    kernels.few_rows(x, w, out)
    torch.testing.assert_close(out[:8], x.float() @ w.float().T, rtol=1e-4, atol=1e-3)
    # The rows beyond the valid 8 are computed as the whole matmul computes them; K is walked in windows.
    text = str(kernels.few_rows.lower(x, w, out))
    assert "pl.tile.extract(x_tile, 0, __tmp_v1_ki, [16, 64], target_memory=pl.Mem.Left)" in text
