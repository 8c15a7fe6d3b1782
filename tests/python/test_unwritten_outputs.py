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
def token_blocks(x: pl.Tensor, blocks: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    # As prefill kernels do: only the blocks below the sequence length are computed and stored.
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(blocks):
            t = pl.load(x, [0, i * 64, 0], [1, 64, 64])
            pl.store(pl.add(t, t), [0, i * 64, 0], out)
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


def test_the_report_names_the_positions_past_a_sequence_length_of_an_nd_output(kernels):
    # pypto-lib's deepseek_v3_2/prefill_back.py: with seq_len 64 of 128, its golden expects zeros in
    # out[:, 64:], which no kernel writes (seed 001: undefined), so it reads back as the poison.
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    x, out = torch.randn(1, 128, 64), torch.zeros(1, 128, 64)
    with pytest.warns(UnwrittenOutputWarning) as caught:
        kernels.token_blocks(x, 1, out, config=_config())
    assert str(caught[0].message) == (
        "output 'out' [1, 128, 64] float32: 4096 of 8192 elements were never written: part of rows 0 "
        "(axis 1: 64..127)")
    torch.testing.assert_close(out[:, :64], x[:, :64] * 2)
    assert torch.isnan(out[:, 64:]).all()


def test_by_default_unwritten_outputs_are_poisoned_and_reported(kernels):
    # Seed 001: a pure pl.Out buffer is not uploaded, so what no kernel writes is undefined; the
    # simulator makes that visible instead of handing back the zeros the caller passed.
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with pytest.warns(UnwrittenOutputWarning) as caught:
        kernels.top_half(x, out, config=_config())
    assert str(caught[0].message) == (
        "output 'out' [128, 64] float32: 4096 of 8192 elements were never written: all of rows 64..127")
    assert torch.isnan(out[64:]).all()


def test_poison_off_keeps_what_the_caller_passed_without_a_report(kernels):
    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.top_half(x, out, config=_config(poison_outputs=False))
    assert (out[64:] == 0).all()
    torch.testing.assert_close(out[:64], x[:64] * 2)


def test_poison_alone_turns_unwritten_regions_into_nan_without_a_report(kernels):
    x, out = torch.randn(128, 64), torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.top_half(x, out, config=_config(report_unwritten=False))
    assert torch.isnan(out[64:]).all()
    torch.testing.assert_close(out[:64], x[:64] * 2)


def test_the_environment_turns_the_poison_off_for_unmodified_programs(kernels, monkeypatch):
    monkeypatch.setenv("PYPTO_POISON_OUTPUTS", "0")
    out = torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernels.top_half(torch.randn(128, 64), out, config=_config())
    assert (out[64:] == 0).all()


def test_the_environment_turns_the_report_back_on(kernels, monkeypatch):
    from pypto.runtime.unwritten import UnwrittenOutputWarning

    monkeypatch.setenv("PYPTO_REPORT_UNWRITTEN", "1")
    with pytest.warns(UnwrittenOutputWarning, match="all of rows 64..127"):
        kernels.top_half(torch.randn(128, 64), torch.zeros(128, 64), config=_config(report_unwritten=False))


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
    tensor[1:3, 3:5] = 1  # the gaps between written parts are long enough to count for int8 too
    name = str(dtype).removeprefix("torch.")
    assert unwritten_report("t", tensor) == (
        f"output 't' [4, 8] {name}: 28 of 32 elements were never written: all of rows 0, 3; part of rows 1..2 "
        "(columns 0..2, 5..7)")
    tensor.fill_(1)
    assert unwritten_report("t", tensor) is None


def test_a_computed_nan_is_not_mistaken_for_poison():
    from pypto.runtime.unwritten import unwritten_report

    assert unwritten_report("t", torch.full((2, 2), float("nan"))) is None
    assert unwritten_report("t", torch.zeros(3)) is None


def test_a_narrow_integer_equal_to_the_pattern_by_chance_is_not_reported():
    # One int8 in 256 equals the 0xA5 pattern: a computed value, not an unwritten one.
    from pypto.runtime.unwritten import poison, unwritten_report

    tensor = torch.arange(64, dtype=torch.int8).reshape(8, 8)
    tensor[1, 3] = tensor[4, 0] = tensor[4, 1] = -0x5B  # 0xA5, isolated or in a short run
    assert unwritten_report("t", tensor) is None
    poison(tensor[6:])  # two whole rows never written
    assert unwritten_report("t", tensor) == (
        "output 't' [8, 8] int8: 16 of 64 elements were never written: all of rows 6..7")


def test_a_report_names_the_first_ranges_and_counts_the_rest():
    from pypto.runtime.unwritten import poison, unwritten_report

    tensor = torch.zeros(40)
    poison(tensor)
    tensor[1::2] = 1.0  # every even element stays unwritten
    poison(tensor[:6])
    assert unwritten_report("t", tensor) == (
        "output 't' [40] float32: 23 of 40 elements were never written: "
        "elements 0..6, 8, 10, 12, 14, 16, 18, 20, ... (9 more ranges)")
    tensor[:] = 1.0
    poison(tensor[39:])
    assert unwritten_report("t", tensor) == (
        "output 't' [40] float32: 1 of 40 elements were never written: elements 39")
