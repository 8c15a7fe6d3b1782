"""Poisoned pl.Out tensors and the report of what no kernel wrote (pypto/runtime/unwritten.py)."""

import warnings

import pytest
import torch

PROGRAM = '''
import pypto.language as pl


@pl.jit
def top_half(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        pl.store(pl.add(t, t), [0, 0], out)
    return out


@pl.jit
def left_half(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [128, 32])
        pl.store(pl.add(t, t), [0, 0], out)
    return out


@pl.jit
def accumulate(x: pl.Tensor, acc: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        a = pl.load(acc, [0, 0], [64, 64])
        pl.store(pl.add(t, a), [0, 0], acc)
    return acc
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("unwritten_kernels", PROGRAM)
    return module


def _config(**switches):
    from pypto.runtime import RunConfig

    return RunConfig(platform="a2a3sim", **switches)


def test_the_report_names_the_rows_no_kernel_wrote(kernels):
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with pytest.warns(UnwrittenOutputWarning) as caught:
        kernels.top_half(x, out, config=_config(report_unwritten=True))
    assert str(caught[0].message) == (
        "output 'out' [128, 64] float32: 4096 of 8192 elements were never written: all of rows 64..127")
    torch.testing.assert_close(out[:64], x[:64] * 2)
    assert torch.isnan(out[64:]).all()  # poisoned, not the zeros the caller passed


def test_the_report_names_the_columns_of_partly_written_rows(kernels):
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    x, out = torch.randn(128, 64), torch.empty(128, 64)
    with pytest.warns(UnwrittenOutputWarning, match=r"4096 of 8192 elements were never written: part of rows "
                                                    r"0\.\.127 \(columns 32\.\.63\)$"):
        kernels.left_half(x, out, config=_config(report_unwritten=True))
    torch.testing.assert_close(out[:, :32], x[:, :32] * 2)


def test_by_default_outputs_keep_what_the_caller_passed_as_upstream_zero_fills_them(kernels):
    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.top_half(x, out, config=_config())
    assert (out[64:] == 0).all()


def test_poison_alone_turns_unwritten_regions_into_nan_without_a_report(kernels):
    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.top_half(x, out, config=_config(poison_outputs=True))
    assert torch.isnan(out[64:]).all()
    torch.testing.assert_close(out[:64], x[:64] * 2)


def test_the_environment_turns_the_report_on_for_unmodified_programs(kernels, monkeypatch):
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    monkeypatch.setenv("PYPTO_REPORT_UNWRITTEN", "1")
    with pytest.warns(UnwrittenOutputWarning, match="all of rows 64..127"):
        kernels.top_half(torch.randn(128, 64), torch.zeros(128, 64), config=_config())


def test_an_inout_tensor_is_never_poisoned(kernels):
    x, acc = torch.randn(64, 64), torch.ones(64, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.accumulate(x, acc, config=_config(report_unwritten=True))
    torch.testing.assert_close(acc, x + 1)


@pytest.mark.parametrize("dtype, bits", [(torch.float16, 0x7DA5), (torch.bfloat16, 0x7FE5), (torch.int32, -0x5A5A5A5B),
                                         (torch.int8, -0x5B), (torch.float32, 0x7FE5A5A5)])
def test_each_dtype_has_a_pattern_that_reads_as_garbage(dtype, bits):
    from pypto.runtime.unwritten import poison, unwritten_report

    tensor = torch.zeros(4, 8, dtype=dtype)
    poison(tensor)
    view = tensor.view({1: torch.int8, 2: torch.int16, 4: torch.int32}[tensor.element_size()])
    assert (view == bits).all()
    if dtype.is_floating_point:
        assert torch.isnan(tensor.float()).all()
    tensor[1:3, 2:5] = 1
    name = str(dtype).removeprefix("torch.")
    assert unwritten_report("t", tensor) == (
        f"output 't' [4, 8] {name}: 26 of 32 elements were never written: all of rows 0, 3; part of rows 1..2 "
        "(columns 0..1, 5..7)")
    tensor.fill_(1)
    assert unwritten_report("t", tensor) is None


def test_a_computed_nan_is_not_mistaken_for_poison():
    from pypto.runtime.unwritten import unwritten_report

    assert unwritten_report("t", torch.full((2, 2), float("nan"))) is None
    assert unwritten_report("t", torch.zeros(3)) is None
