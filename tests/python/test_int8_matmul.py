"""INT8 x INT8 -> INT32 matrix products on the simulator, against torch's integer matmul: one product,
a K loop of matmul_acc over weights kept as [N, K] (pypto-lib's quantized projections), sums past 2^24
(where an FP32 accumulator would round), a dequantizing cast to FP32 with a row scale in the same
scope, an INT32 product handed from the cube core to the vector core through a pipe, and split-K
partial products added atomically into an INT32 tensor."""

import pytest
import torch

import pypto.language as pl

KERNELS = '''
K_TILE = 128
K = 2048  # the K loop's inner dimension
DEQUANT_K = 512


@pl.jit
def product(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.matmul(a, b, out_dtype=pl.INT32)
    return out


@pl.jit
def left_transposed(at: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.matmul(at, b, a_trans=True, out_dtype=pl.INT32)
    return out


@pl.jit
def k_loop(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(K // K_TILE):
            k0 = kb * K_TILE
            if kb == 0:
                acc = pl.matmul(x[:, k0 : k0 + K_TILE], w[:, k0 : k0 + K_TILE], b_trans=True, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, x[:, k0 : k0 + K_TILE], w[:, k0 : k0 + K_TILE], b_trans=True)
        out[:, :] = acc
    return out


@pl.jit
def dequantized(x: pl.Tensor, w: pl.Tensor, scale: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(DEQUANT_K // K_TILE):
            k0 = kb * K_TILE
            if kb == 0:
                acc = pl.matmul(x[:, k0 : k0 + K_TILE], w[:, k0 : k0 + K_TILE], b_trans=True, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, x[:, k0 : k0 + K_TILE], w[:, k0 : k0 + K_TILE], b_trans=True)
        out[:, :] = pl.row_expand_mul(pl.cast(acc, target_type=pl.FP32, mode="none"), scale[:, 0:1])
    return out


@pl.jit
def split_k(x: pl.Tensor[[16, 512], pl.INT8], w: pl.Tensor[[512, 32], pl.INT8],
            out: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    for part in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            k0 = part * K_TILE
            partial = pl.matmul(x[:, k0 : k0 + K_TILE], w[k0 : k0 + K_TILE, :], out_dtype=pl.INT32)
            out = pl.assemble(out, partial, [0, 0], atomic=pl.AtomicType.Add)
    return out
'''


@pytest.fixture
def kernels(write_dsl):
    module, _ = write_dsl("int8_kernels", KERNELS)
    return module


def int8(*shape, low=-128, high=128):
    return torch.randint(low, high, shape, dtype=torch.int8)


def test_an_int8_product_is_exact(kernels):
    torch.manual_seed(0)
    a, b = int8(16, 64), int8(64, 32)
    out = torch.full((16, 32), -1, dtype=torch.int32)
    kernels.product(a, b, out)
    assert torch.equal(out, a.int() @ b.int())


def test_an_int8_left_operand_given_transposed(kernels):
    torch.manual_seed(1)
    at, b = int8(64, 16), int8(64, 32)
    out = torch.zeros(16, 32, dtype=torch.int32)
    kernels.left_transposed(at, b, out)
    assert torch.equal(out, at.int().T @ b.int())


def test_a_k_loop_over_int8_weights_stored_transposed(kernels):
    torch.manual_seed(2)
    x, w = int8(16, 2048), int8(32, 2048)
    out = torch.zeros(16, 32, dtype=torch.int32)
    kernels.k_loop(x, w, out)
    assert torch.equal(out, x.int() @ w.int().T)


def test_sums_past_two_to_the_24_stay_exact(kernels):
    # Values near +-127 of one sign per row of x: |sum| reaches 2048 * 127^2 ~ 2^25, where FP32 keeps
    # only even integers; the odd sums must come back as they are.
    torch.manual_seed(3)
    x = int8(16, 2048, low=120) * torch.tensor([1, -1] * 8, dtype=torch.int8)[:, None]
    w = int8(32, 2048, low=120)
    out = torch.zeros(16, 32, dtype=torch.int32)
    kernels.k_loop(x, w, out)
    want = x.long() @ w.long().T
    assert want.abs().min() > 2**24 and (want % 2 == 1).any()
    assert torch.equal(out.long(), want)


def test_an_int32_accumulator_is_dequantized_to_fp32_with_a_row_scale(kernels):
    torch.manual_seed(4)
    x, w = int8(16, 512), int8(32, 512)
    scale = torch.rand(16, 1) / 127
    out = torch.full((16, 32), float("nan"))
    kernels.dequantized(x, w, scale, out)
    assert torch.equal(out, (x.int() @ w.int().T).float() * scale)


def test_split_k_partial_products_are_added_atomically(kernels):
    torch.manual_seed(5)
    x, w = int8(16, 512), int8(512, 32)
    start = torch.randint(-1000, 1000, (16, 32), dtype=torch.int32)
    out = start.clone()
    kernels.split_k(x, w, out)
    assert torch.equal(out, start + x.int() @ w.int())


def test_an_atomic_int32_add_wraps_around_like_the_hardware(kernels):
    torch.manual_seed(7)
    x, w = int8(16, 512, low=100), int8(512, 32, low=100)
    start = torch.full((16, 32), 2**31 - 1_000_000, dtype=torch.int32)
    out = start.clone()
    kernels.split_k(x, w, out)
    want = start + x.int() @ w.int()  # int32 tensors wrap modulo 2^32 too
    assert (want < 0).all()
    assert torch.equal(out, want)


N = 16


@pl.program
class DequantizedOnTheVectorCore:
    """out = (a @ b) * s by rows: the INT32 product crosses to the vector core, which dequantizes it."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, 64], pl.INT8], b: pl.Tensor[[64, N], pl.INT8], s: pl.Tensor[[N, 1], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        ta = pl.load(a, [0, 0], [N, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right),
                      out_dtype=pl.INT32)
        pl.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, 64], pl.INT8], b: pl.Tensor[[64, N], pl.INT8], s: pl.Tensor[[N, 1], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        c = pl.tpop_from_aic(shape=[N, N], dtype=pl.INT32, split=0)
        r = pl.row_expand_mul(pl.cast(c, target_type=pl.FP32), pl.load(s, [0, 0], [N, 1]))
        pl.tfree_to_aic(c)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, 64], pl.INT8], b: pl.Tensor[[64, N], pl.INT8], s: pl.Tensor[[N, 1], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, s, out)
        out = self.vec(a, b, s, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, 64], pl.INT8], b: pl.Tensor[[64, N], pl.INT8], s: pl.Tensor[[N, 1], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, s, out)
        return out


@pytest.mark.filterwarnings("ignore:no .pto written for kernel")
def test_an_int32_product_crosses_to_the_vector_core_and_is_dequantized(tmp_path):
    from pypto.ir import compile

    compiled = compile(DequantizedOnTheVectorCore, output_dir=str(tmp_path / "build"))
    torch.manual_seed(6)
    a, b, s = int8(N, 64), int8(64, N), torch.rand(N, 1)
    out = torch.full((N, N), float("nan"))
    compiled(a, b, s, out)
    assert torch.equal(out, (a.int() @ b.int()).float() * s)
