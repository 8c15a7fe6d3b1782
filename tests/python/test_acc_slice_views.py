"""Windows of a product that fills L0C: a band of whole rows sliced from an Acc tile is a view of it
(upstream's tile.slice is pto.subview), so a [128, 256] INT32 accumulator, all 128 KB of the
Ascend910B's L0C, can be read out band by band: dequantized on the vector core inside a loop (the
pattern of pypto-lib's quantized projections), or stored from the cube."""

import pytest
import torch

import pypto.language as pl

KERNELS = '''
M = 128
N = 256
K_TILE = 128
K = 256
BAND = 16
N_BLOCKS = 2  # column blocks of N, each a [M, N] product filling L0C


@pl.jit
def dequantized_by_bands(x: pl.Tensor, w: pl.Tensor, scale: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for nb in pl.range(N_BLOCKS):
            n0 = nb * N
            for kb in pl.range(K // K_TILE):
                k0 = kb * K_TILE
                if kb == 0:
                    acc = pl.matmul(x[:, k0 : k0 + K_TILE], w[k0 : k0 + K_TILE, n0 : n0 + N], out_dtype=pl.INT32)
                else:
                    acc = pl.matmul_acc(acc, x[:, k0 : k0 + K_TILE], w[k0 : k0 + K_TILE, n0 : n0 + N])
            for r in pl.range(0, M, BAND):
                band = pl.cast(acc[r : r + BAND, :], target_type=pl.FP32, mode="none")
                out[r : r + BAND, n0 : n0 + N] = pl.row_expand_mul(band, scale[r : r + BAND, :])
    return out


@pl.jit
def one_band_stored(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(x, w, out_dtype=pl.INT32)
        out[:, :] = acc[32 : 32 + BAND, :]
    return out


@pl.jit
def second_batch_of_a_batched_product(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _ in pl.range(1):  # the loop keeps the product and its window in one mixed kernel
            acc = pl.matmul(pl.load(x, [0, 0, 0], [2, 16, 32]), pl.load(w, [0, 0, 0], [2, 32, 64]))
            out[:, :, :] = acc[1:2, :, :]
    return out


@pl.jit
def lower_rows_of_every_batch(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _ in pl.range(1):
            acc = pl.matmul(pl.load(x, [0, 0, 0], [2, 16, 32]), pl.load(w, [0, 0, 0], [2, 32, 64]))
            out[:, :, :] = acc[:, 8:16, :]
    return out

'''


@pytest.fixture
def kernels(write_dsl):
    module, _ = write_dsl("acc_slice_views", KERNELS)
    return module


def int8(*shape):
    return torch.randint(-128, 128, shape, dtype=torch.int8)


def test_a_full_l0c_accumulator_is_dequantized_band_by_band_on_the_vector_core(kernels):
    torch.manual_seed(0)
    x, w = int8(128, 256), int8(256, 512)
    scale = torch.rand(128, 1) / 127
    out = torch.full((128, 512), float("nan"))
    kernels.dequantized_by_bands(x, w, scale, out)
    assert torch.equal(out, (x.int() @ w.int()).float() * scale)


def test_a_band_of_a_full_l0c_product_is_stored_from_the_cube(kernels):
    torch.manual_seed(1)
    x, w = int8(128, 128), int8(128, 256)
    out = torch.zeros(16, 256, dtype=torch.int32)
    kernels.one_band_stored(x, w, out)
    assert torch.equal(out, (x.int() @ w.int())[32:48])



# An N-d product (a batched matmul the kernel keeps N-d) is no matrix: a window at a batch offset, or
# one of some rows of every batch, is not where a view placed by its last two offsets would read
# (batch 0), so it is copied.
def test_a_window_at_a_batch_of_an_nd_product_reads_that_batch(kernels):
    torch.manual_seed(2)
    x, w = torch.randn(2, 16, 32), torch.randn(2, 32, 64)
    out = torch.full((1, 16, 64), float("nan"))
    kernels.second_batch_of_a_batched_product(x, w, out)
    torch.testing.assert_close(out, (x @ w)[1:2])


def test_a_window_of_some_rows_of_every_batch_of_an_nd_product(kernels):
    torch.manual_seed(3)
    x, w = torch.randn(2, 16, 32), torch.randn(2, 32, 64)
    out = torch.full((2, 8, 64), float("nan"))
    kernels.lower_rows_of_every_batch(x, w, out)
    torch.testing.assert_close(out, (x @ w)[:, 8:16])
