"""Values that cross kernel scopes, as upstream's tensor-level scopes let them: a tile computed in one
pl.at and read by orchestration code or a later orchestration loop (which may update it in place) is a
tensor the first kernel writes; a matmul result assembled into a vector tile is moved there first; a
tile slice may narrow its valid part with valid_shape=. Each runs on the simulator against torch."""

import torch

from pypto.language.parser import ParserTypeError
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def read_by_later_scopes(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    y = pl.create_tensor([8, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        y = pl.exp(t)
    for b in pl.parallel(8):
        with pl.at(level=pl.Level.CORE_GROUP):
            row = pl.mul(y[b : b + 1, :], 2.0)
            y = pl.assemble(y, row, [b, 0])
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.add(pl.load(y, [0, 0], [8, 64]), 1.0), [0, 0])
    return out


@pl.jit
def reshaped_by_orchestration(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[4, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.mul(pl.load(x, [0, 0], [8, 64]), 2.0)
    flat = pl.reshape(y, [4, 128])
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.add(pl.load(flat, [0, 0], [4, 128]), 1.0), [0, 0])
    return out


@pl.jit
def rebound_before_read(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        out = pl.assemble(out, pl.neg(t), [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(out, [0, 0], [8, 64])
        out = pl.assemble(out, pl.mul(t, 3.0), [0, 0])
    return out


@pl.jit
def matmul_into_vector_tile(a: pl.Tensor[[16, 32], pl.BF16], b: pl.Tensor[[32, 128], pl.BF16],
                            out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 128], dtype=pl.FP32, value=0.0)
        for c in pl.range(0, 128, 64):
            part = pl.matmul(a, b[:, c : c + 64], out_dtype=pl.FP32)
            acc = pl.assemble(acc, part, [0, c])
        out = pl.assemble(out, acc, [0, 0])
    return out


@pl.jit
def narrowed_slice(x: pl.Tensor[[8, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
                   out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        window = pl.slice(t, [8, 32], [0, 16], valid_shape=[8, n])
        out = pl.assemble(out, pl.fillpad(window, pad_value=pl.PadValue.zero), [0, 0])
    return out


@pl.jit
def slice_valid_shape_too_wide(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        out = pl.assemble(out, pl.slice(t, [8, 32], [0, 0], valid_shape=[8, 40]), [0, 0])
    return out


# deepseek_v3_2's prefill: a row statistic computed once, reshaped into a column inside each scope of a
# later loop (the tile was handed over as a tensor; the reshape is the tile's).
@pl.jit
def reshaped_in_later_scopes(x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        scale = pl.reshape(pl.row_sum(pl.load(x, [0, 0], [8, 64])), [1, 8])
    for c in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            part = pl.row_expand_mul(pl.load(x, [0, c], [8, 32]), pl.reshape(scale, [8, 1]))
            out = pl.assemble(out, part, [0, c])
    return out
'''

kernels = kernels_fixture("scope_results.py", KERNELS)


def test_a_tile_read_after_its_scope_is_a_tensor_the_kernel_writes(kernels):
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    kernels.read_by_later_scopes(x, out)
    torch.testing.assert_close(out, torch.exp(x) * 2 + 1)


def test_a_tile_orchestration_code_reshapes_is_a_tensor(kernels):
    x = torch.randn(8, 64)
    out = torch.zeros(4, 128)
    kernels.reshaped_by_orchestration(x, out)
    torch.testing.assert_close(out, (x * 2 + 1).reshape(4, 128))


def test_a_tile_reshaped_inside_later_scopes_is_loaded_whole(kernels):
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    kernels.reshaped_in_later_scopes(x, out)
    torch.testing.assert_close(out, x * x.sum(dim=1, keepdim=True), rtol=1e-4, atol=1e-4)


def test_a_name_rebound_in_the_next_scope_is_not_stored(kernels):
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    kernels.rebound_before_read(x, out)
    torch.testing.assert_close(out, -x * 3)
    lowered = kernels.rebound_before_read.lower(x, out)
    assert "tensor.create" not in str(lowered), "t is rebound before any read, so no tensor is made for it"


def test_a_matmul_result_assembled_into_a_vector_tile(kernels):
    a = torch.randn(16, 32).to(torch.bfloat16)
    b = torch.randn(32, 128).to(torch.bfloat16)
    out = torch.zeros(16, 128)
    kernels.matmul_into_vector_tile(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_a_tile_slice_narrows_its_valid_part(kernels):
    x = torch.randn(8, 64)
    out = torch.full((8, 32), 7.0)
    kernels.narrowed_slice(x, 5, out)
    expected = torch.zeros(8, 32)
    expected[:, :5] = x[:, 16:21]
    torch.testing.assert_close(out, expected)


def test_a_slice_valid_shape_wider_than_the_slice_is_refused(kernels):
    x = torch.randn(8, 64)
    try:
        kernels.slice_valid_shape_too_wide(x, torch.zeros(8, 32))
    except ParserTypeError as error:
        message = str(error)
    else:
        raise AssertionError("a valid_shape wider than the slice was accepted")
    assert "the valid_shape of a tile slice" in message
    assert "scope_results.py:67:" in message
