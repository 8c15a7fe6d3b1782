"""Kernels that hand tensor slices straight to pl.matmul: InferTileMemorySpace loads them into Mat
and moves them into Left/Right; the result accumulates in Acc and is stored from there."""

import pytest
import torch


GEMM_128 = """
import pypto.language as pl


@pl.jit
def mm(a: pl.Tensor[[128, 64], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
    for mb in pl.parallel(0, 128, 64):
        for nb in pl.parallel(0, 128, 64):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.create_tensor([64, 64], dtype=pl.FP32)
                tile_a = a[mb : mb + 64, 0:32]
                tile_b = b[0:32, nb : nb + 64]
                acc = pl.matmul(tile_a, tile_b)
                acc = pl.matmul_acc(acc, a[mb : mb + 64, 32:64], b[32:64, nb : nb + 64])
                c[mb : mb + 64, nb : nb + 64] = acc
    return c
"""

# M = N = K = 256 in 64-wide tiles, the K reduction unrolled by hand.
GEMM_256 = """
import pypto.language as pl

T = 64


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for mb in pl.parallel(0, 256, T):
        for nb in pl.parallel(0, 256, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.matmul(a[mb : mb + T, 0:64], b[0:64, nb : nb + T])
                acc = pl.matmul_acc(acc, a[mb : mb + T, 64:128], b[64:128, nb : nb + T])
                acc = pl.matmul_acc(acc, a[mb : mb + T, 128:192], b[128:192, nb : nb + T])
                acc = pl.matmul_acc(acc, a[mb : mb + T, 192:256], b[192:256, nb : nb + T])
                c[mb : mb + T, nb : nb + T] = acc
    return c
"""

EXPLICIT = """
import pypto.language as pl


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [0, 0], [32, 48], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(a1, target_memory=pl.Mem.Left), pl.move(b1, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c
"""

CUBE_TO_VECTOR = """
import pypto.language as pl


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a[0:64, 0:64], b[0:64, 0:64])
        c[0:64, 0:64] = pl.exp(acc)
    return c
"""

# The same inside a kernel loop: SplitMixedScopes splits only straight-line scopes.
CUBE_TO_VECTOR_IN_LOOP = """
import pypto.language as pl


@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(1):
            acc = pl.matmul(a[0:64, 0:64], b[0:64, 0:64])
            c[0:64, 0:64] = pl.exp(acc)
    return c
"""

USED_CREATED_TENSOR = """
import pypto.language as pl


@pl.jit
def mm(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        scratch = pl.create_tensor([64, 64], dtype=pl.FP32)
        scratch[:, :] = pl.mul(a, 2.0)
        pl.write(scratch, [0, 0], pl.read(a, [1, 1]))
        ones = pl.create_tensor([64, 64], dtype=pl.FP32, init_value=1.0, manual_dep=True)
        c[0:64, 0:64] = pl.add(pl.add(scratch, a), ones)
    return c
"""


def _close(actual, expected):
    torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-3)


def test_gemm_example_with_slices_as_matmul_operands(write_kernel):
    module, _ = write_kernel("gemm_128", GEMM_128)
    a, b = torch.randn(128, 64), torch.randn(64, 128)
    c = torch.zeros(128, 128)
    module.mm(a, b, c)
    _close(c, a @ b)


def test_placed_kernel_loads_into_mat_and_moves_into_l0(write_kernel):
    module, _ = write_kernel("gemm_128_ir", GEMM_128)
    text = str(module.mm.lower(torch.randn(128, 64), torch.randn(64, 128), torch.zeros(128, 128)))
    assert "pl.FunctionType.AIC" in text
    assert "target_memory=pl.Mem.Mat)" in text
    assert "pl.tile.move(tile_a, target_memory=pl.Mem.Left)" in text
    assert "pl.tile.move(tile_b, target_memory=pl.Mem.Right)" in text
    assert "tensor.create" not in text.split("def mm(")[0]  # the placeholder is gone from the kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_gemm_256_against_torch(write_kernel, dtype):
    module, _ = write_kernel(f"gemm_256_{str(dtype).split('.')[1]}", GEMM_256)
    a, b = torch.randn(256, 256).to(dtype), torch.randn(256, 256).to(dtype)
    c = torch.zeros(256, 256)  # FP32: the cube accumulates in FP32
    module.mm(a, b, c)
    _close(c, a.float() @ b.float())


def test_explicitly_placed_kernel_still_matches(write_kernel):
    module, _ = write_kernel("explicit", EXPLICIT)
    a, b = torch.randn(64, 32), torch.randn(32, 48)
    c = torch.zeros(64, 48)
    module.mm(a, b, c)
    _close(c, a @ b)


def test_matmul_result_feeding_vector_ops_runs_as_cube_then_vector_kernel(write_kernel):
    module, _ = write_kernel("cube_to_vector", CUBE_TO_VECTOR)
    a, b, c = torch.randn(64, 64) * 0.1, torch.randn(64, 64) * 0.1, torch.zeros(64, 64)
    module.mm(a, b, c)
    _close(c, torch.exp(a @ b))


def test_matmul_result_feeding_vector_ops_in_a_loop_runs_as_one_mixed_task(write_kernel):
    module, _ = write_kernel("cube_to_vector_loop", CUBE_TO_VECTOR_IN_LOOP)
    a, b, c = torch.randn(64, 64) * 0.1, torch.randn(64, 64) * 0.1, torch.zeros(64, 64)
    module.mm(a, b, c)
    _close(c, torch.exp(a @ b))


def test_a_tensor_created_inside_a_kernel_is_a_tile(write_kernel):
    module, _ = write_kernel("used_tensor", USED_CREATED_TENSOR)
    a, c = torch.randn(64, 64), torch.zeros(64, 64)
    module.mm(a, c)
    expected = 3 * a + 1
    expected[0, 0] = a[1, 1] + a[0, 0] + 1
    torch.testing.assert_close(c, expected, rtol=0, atol=0)


# pypto-lib's gemm form: the accumulator starts as a pl.create_tensor placeholder and the K loop
# chooses matmul or matmul_acc; the loop carries an Acc tile in place of the placeholder.
GEMM_K_LOOP = """
import pypto.language as pl

M, N, K, T = 128, 128, 256, 64


@pl.jit
def gemm(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for mb in pl.parallel(0, M, T):
        for nb in pl.parallel(0, N, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.create_tensor([T, T], dtype=pl.FP32)
                for kb in pl.range(K // T):
                    k0 = kb * T
                    tile_a = a[mb : mb + T, k0 : k0 + T]
                    tile_b = b[k0 : k0 + T, nb : nb + T]
                    if kb == 0:
                        acc = pl.matmul(tile_a, tile_b)
                    else:
                        acc = pl.matmul_acc(acc, tile_a, tile_b)
                c[mb : mb + T, nb : nb + T] = acc
    return c
"""


def test_k_loop_over_a_placeholder_accumulator_against_torch(write_kernel):
    module, _ = write_kernel("gemm_k_loop", GEMM_K_LOOP)
    a, b, c = torch.randn(128, 256), torch.randn(256, 128), torch.zeros(128, 128)
    module.gemm(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-3, atol=1e-3)
    kernel = next(f for f in module.gemm.lower(a, b, c).functions.values() if f.name == "gemm_tile")
    assert "pl.tile.create([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Acc)" in str(kernel)
