"""Values carried across kernel loop iterations, and if/else inside kernels, checked against torch."""

import pytest
import torch

from pypto.language.parser import ParserTypeError, UndefinedVariableError
from pypto.runtime import RunConfig

KERNELS = """
import pypto.language as pl

ROWS = 128
HIDDEN = 256
ROW_TILE = 32
HIDDEN_TILE = 64
M = 32
K = 128
N = 48
K_TILE = 32


@pl.jit
def rms_norm(x: pl.Tensor[[ROWS, HIDDEN], pl.FP32], gamma: pl.Tensor[[1, HIDDEN], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, HIDDEN], pl.FP32]]):
    for r in pl.parallel(0, ROWS, ROW_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_norm_rows"):
            sq_sum = pl.full([1, ROW_TILE], dtype=pl.FP32, value=0.0)
            for hb in pl.range(HIDDEN // HIDDEN_TILE):
                h0 = hb * HIDDEN_TILE
                x_tile = x[r : r + ROW_TILE, h0 : h0 + HIDDEN_TILE]
                sq = pl.mul(x_tile, x_tile)
                sq_row = pl.row_sum(sq)
                sq_row = pl.reshape(sq_row, [1, ROW_TILE])
                sq_sum = pl.add(sq_sum, sq_row)
            mean_sq = pl.mul(sq_sum, 1.0 / HIDDEN)
            mean_sq = pl.add(mean_sq, 1e-6)
            inv_rms = pl.rsqrt(mean_sq)
            inv_rms = pl.reshape(inv_rms, [ROW_TILE, 1])
            for hb in pl.range(HIDDEN // HIDDEN_TILE):
                h0 = hb * HIDDEN_TILE
                x_tile = x[r : r + ROW_TILE, h0 : h0 + HIDDEN_TILE]
                gamma_tile = gamma[:, h0 : h0 + HIDDEN_TILE]
                normed = pl.row_expand_mul(x_tile, inv_rms)
                normed = pl.col_expand_mul(normed, gamma_tile)
                y[r : r + ROW_TILE, h0 : h0 + HIDDEN_TILE] = normed
    return y


@pl.jit
def branch_on_loop_var(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = x[i * 16 : i * 16 + 16, :]
            if i == 0:
                u = pl.mul(t, 2.0)
            else:
                u = pl.add(t, 1.0)
            y[i * 16 : i * 16 + 16, :] = u
    return y


@pl.jit
def gemm(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for kb in pl.range(K // K_TILE):
            k0 = kb * K_TILE
            a_mat = pl.load(a, [0, k0], [M, K_TILE], target_memory=pl.Mem.Mat)
            b_mat = pl.load(b, [k0, 0], [K_TILE, N], target_memory=pl.Mem.Mat)
            tile_a = pl.move(a_mat, target_memory=pl.Mem.Left)
            tile_b = pl.move(b_mat, target_memory=pl.Mem.Right)
            if kb == 0:
                acc = pl.matmul(tile_a, tile_b)
            else:
                acc = pl.matmul_acc(acc, tile_a, tile_b)
        c[0:M, 0:N] = acc
    return c


@pl.jit
def nested_sum(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        total = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            for j in pl.range(4):
                t = x[i * 16 : i * 16 + 16, j * 16 : j * 16 + 16]
                total = pl.add(total, t)
            total = pl.mul(total, 0.5)
        y[0:16, 0:16] = total
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("control_flow", KERNELS)
    return module


def test_rms_norm_accumulates_across_the_hidden_loop(kernels):
    torch.manual_seed(0)
    x, gamma, y = torch.randn(128, 256), torch.randn(1, 256), torch.zeros(128, 256)
    kernels.rms_norm(x, gamma, y, config=RunConfig())
    expected = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * gamma
    assert torch.allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_if_else_on_the_loop_variable(kernels):
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.branch_on_loop_var(x, y)
    expected = torch.cat([x[:16] * 2.0, x[16:] + 1.0])
    assert torch.allclose(y, expected)


def test_matmul_k_loop_starts_with_matmul_then_accumulates(kernels):
    torch.manual_seed(1)
    a, b, c = torch.randn(32, 128), torch.randn(128, 48), torch.zeros(32, 48)
    kernels.gemm(a, b, c)
    assert torch.allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_nested_loops_carry_one_value(kernels):
    x, y = torch.randn(64, 64), torch.zeros(16, 16)
    kernels.nested_sum(x, y)
    expected = torch.zeros(16, 16)
    for i in range(4):
        for j in range(4):
            expected = expected + x[i * 16 : i * 16 + 16, j * 16 : j * 16 + 16]
        expected = expected * 0.5
    assert torch.allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_the_printed_program_shows_the_carried_value(kernels):
    text = str(kernels.nested_sum.lower(torch.zeros(64, 64), torch.zeros(16, 16)))
    assert "in pl.range(4, init_values=(" in text
    assert "pl.yield_(" in text


ONE_BRANCH = """
import pypto.language as pl


@pl.jit
def kernel(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(2):
            t = x[0:16, 0:16]
            if i == 0:
                u = pl.mul(t, 2.0)
            y[0:16, 0:16] = u
    return y
"""


def test_a_value_assigned_in_one_branch_only_is_reported_where_it_is_read(write_kernel):
    module, path = write_kernel("one_branch", ONE_BRANCH)
    with pytest.raises(UndefinedVariableError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == (
        "'u' is assigned only in the if branch of the if at line 10 (line 11), so it has no value when the "
        "condition is false"
    )
    assert info.value.location == f"{path}:12:29"


TYPE_CHANGE = """
import pypto.language as pl


@pl.jit
def kernel(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for i in pl.range(2):
            acc = pl.row_sum(pl.add(acc, x[0:16, 0:16]))
        y[0:16, 0:1] = acc
    return y
"""


def test_a_carried_value_that_changes_type_is_an_error(write_kernel):
    module, path = write_kernel("type_change", TYPE_CHANGE)
    with pytest.raises(ParserTypeError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == (
        "'acc' is carried from one loop iteration to the next, but its type changes from "
        "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] to pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec]"
    )
    assert info.value.location == f"{path}:10:13"


# `n0` is a scalar of the first kernel; the second kernel's loop assigns its own `n0` before reading
# it, so the loop does not carry the first kernel's value in (decode_sparse_attn's proj_a / proj_b).
NAME_REUSED_BY_A_LATER_KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
           z: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
        n0 = 0
        y[:, n0 : n0 + 64] = pl.add(x[:, n0 : n0 + 64], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
        for nf in pl.range(2):
            n0 = nf * 32
            z[:, n0 : n0 + 32] = pl.mul(y[:, n0 : n0 + 32], 2.0)
    {after}
    return y, z
"""


def test_a_later_kernel_loop_reassigning_a_name_does_not_carry_the_earlier_kernels_value(write_kernel):
    module, _ = write_kernel("reused_name", NAME_REUSED_BY_A_LATER_KERNEL.format(after=""))
    x, y, z = torch.randn(16, 64), torch.zeros(16, 64), torch.zeros(16, 64)
    module.kernel(x, y, z)
    torch.testing.assert_close(y, x + 1.0)
    torch.testing.assert_close(z, (x + 1.0) * 2.0)


def test_reading_such_a_name_after_the_loop_says_why_it_has_no_value(write_kernel):
    after = "with pl.at(level=pl.Level.CORE_GROUP, name_hint='third'):\n        z[:, n0 : n0 + 32] = x[:, 0:32]"
    module, path = write_kernel("reused_name_read", NAME_REUSED_BY_A_LATER_KERNEL.format(after=after))
    with pytest.raises(UndefinedVariableError) as info:
        module.kernel(torch.zeros(16, 64), torch.zeros(16, 64), torch.zeros(16, 64))
    assert info.value.message == (
        "'n0' is assigned in the loop at line 12, and before it only inside an earlier kernel scope, so it has "
        "no value after the loop"
    )
    assert info.value.location == f"{path}:16:14"
