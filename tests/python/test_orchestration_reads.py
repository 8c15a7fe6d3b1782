"""An element read in orchestration code (`scale = pl.read(scales, [1])`, as pypto-lib's hc_pre reads
its gate scales) and used by kernels is read by each kernel that uses it, when it runs. A read whose
value the orchestration itself needs is reported."""

import pytest
import torch

import pypto.language as pl


@pl.jit
def scaled_sum(x: pl.Tensor[[32, 64], pl.FP32], scales: pl.Tensor[[3], pl.FP32],
               y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    first = pl.read(scales, [0])
    second = pl.read(scales, [2])
    for r in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            t = x[r * 16 : r * 16 + 16, :]
            y[r * 16 : r * 16 + 16, :] = pl.add(pl.mul(t, first), second)
    return y


def test_a_read_used_by_kernels_matches_torch():
    x, scales = torch.randn(32, 64), torch.tensor([1.5, 7.0, -0.25])
    y = torch.full((32, 64), float("nan"))
    scaled_sum(x, scales, y)
    torch.testing.assert_close(y, x * 1.5 - 0.25)


def test_the_kernel_reads_the_elements_and_the_orchestration_does_not():
    x, scales = torch.zeros(32, 64), torch.zeros(3)
    text = str(scaled_sum.lower(x, scales, torch.zeros(32, 64)))
    kernel, orchestration = text.split("@pl.function(type=pl.FunctionType.Orchestration)")
    assert "first: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [0])" in kernel, text
    assert "second: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [2])" in kernel, text
    assert "read" not in orchestration, text


def test_a_read_the_orchestration_needs_is_reported(write_kernel):
    module, path = write_kernel("orchestration_read", """
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[32, 64], pl.FP32], n: pl.Tensor[[1], pl.INT32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    count = pl.read(n, [0])
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = x[r : r + 1, :]
    return y
""")
    with pytest.raises(Exception) as error:
        module.k(torch.zeros(32, 64), torch.ones(1, dtype=torch.int32), torch.zeros(32, 64))
    assert "'tensor.read' is not supported in orchestration code yet" in str(error.value), str(error.value)
    assert f"{path}:6:" in str(error.value), str(error.value)

