"""Atomic-add stores into FP16, BF16, INT16 and INT8 tensors on the simulator, against torch: a
half-precision sum is formed in FP32 and rounded once, integer sums wrap, and an FP32 accumulator
added into an FP16/BF16 tensor is rounded to it first (the fixpipe's conversion on the way out)."""

import pytest
import torch
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def add_into(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], out, atomic=pl.AtomicType.Add)
    return out


# Four cores each add a [32, 32] @ [32, 32] partial product into the shared half-precision output.
@pl.jit
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    for part in pl.parallel(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            k0 = part * 32
            partial = pl.matmul(a[:, k0 : k0 + 32], b[k0 : k0 + 32, :], out_dtype=pl.FP32)
            c = pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)
    return c
'''


kernels = kernels_fixture("atomic_add_kernels.py", KERNELS)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_precision_sum_is_rounded_once(kernels, dtype):
    x = torch.randn(16, 32).to(dtype)
    out = torch.full((16, 32), 1.0, dtype=dtype)
    kernels.add_into(x, out)
    assert torch.equal(out, (1.0 + x.float()).to(dtype))


@pytest.mark.parametrize("dtype", [torch.int16, torch.int8])
def test_an_integer_sum_wraps(kernels, dtype):
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max + 1, (16, 32), dtype=dtype)
    base = torch.randint(info.min, info.max + 1, (16, 32), dtype=dtype)
    out = base.clone()
    kernels.add_into(x, out)
    wrapped = (base.long() + x.long() - info.min) % (1 << info.bits) + info.min
    assert torch.equal(out, wrapped.to(dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_fp32_partials_are_rounded_then_added_into_a_half_tensor(kernels, dtype):
    a = (torch.randn(16, 128) * 0.1).to(dtype)
    b = (torch.randn(128, 32) * 0.1).to(dtype)
    c = torch.zeros(16, 32, dtype=dtype)
    kernels.split_k(a, b, c)
    # The parts are added in task order, each rounded to the tensor's type before and after.
    expected = torch.zeros(16, 32, dtype=dtype)
    for part in range(4):
        k = slice(part * 32, part * 32 + 32)
        partial = (a[:, k].float() @ b[k].float()).to(dtype)
        expected = (expected.float() + partial.float()).to(dtype)
    torch.testing.assert_close(c.float(), expected.float(), rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=5e-2, atol=5e-2)
