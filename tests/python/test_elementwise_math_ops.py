"""Element-wise ops of upstream's activation, trigonometric and bitwise tests on the simulator, against
torch: pl.tile.lrelu (leaky ReLU with a scalar slope), pl.tile.sin / pl.tile.cos, pl.tile.not_ on
16-bit integers, and the high_precision keyword of pl.log / pl.div (an attribute for PTOAS's precise
templates; the simulator computes both exactly in FP32 either way); FP16 tiles compute in FP32 and
round each result to FP16."""

import math

import pytest
import torch

from pypto.language.parser import ParserTypeError
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def lrelu(x: pl.Tensor[[16, 64], pl.FP32], slope: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.lrelu(pl.load(x, [0, 0], [16, 64]), slope)
    return y


@pl.jit
def lrelu_narrow(x: pl.Tensor[[16, 16], pl.FP32], y: pl.InOut[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16], valid_shape=[8, 12])
        y = pl.store(pl.tile.lrelu(t, -0.5), [16, 16], y)
    return y


@pl.jit
def trig(x: pl.Tensor[[32, 64], pl.FP32], s: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
         c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        s[:, :] = pl.tile.sin(t)
        c[:, :] = pl.tile.cos(t)
    return s, c


@pl.jit
def bit_not(a: pl.Tensor[[16, 32], pl.INT16], b: pl.Tensor[[16, 32], pl.UINT16],
            na: pl.Out[pl.Tensor[[16, 32], pl.INT16]], nb: pl.Out[pl.Tensor[[16, 32], pl.UINT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        na[:, :] = pl.tile.not_(pl.load(a, [0, 0], [16, 32]))
        nb[:, :] = pl.tile.not_(pl.load(b, [0, 0], [16, 32]))
    return na, nb


@pl.jit
def precise(x: pl.Tensor[[16, 64], pl.FP32], d: pl.Tensor[[16, 64], pl.FP32],
            log_hp: pl.Out[pl.Tensor[[16, 64], pl.FP32]], log_plain: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
            div_hp: pl.Out[pl.Tensor[[16, 64], pl.FP32]], div_plain: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(d, [0, 0], [16, 64])
        log_hp[:, :] = pl.tile.log(t, high_precision=True)
        log_plain[:, :] = pl.log(t, high_precision=False)
        div_hp[:, :] = pl.div(t, u, high_precision=True)
        div_plain[:, :] = pl.tile.div(t, u)
    return log_hp, log_plain, div_hp, div_plain


@pl.jit
def half_ops(x: pl.Tensor[[16, 64], pl.FP16], d: pl.Tensor[[16, 64], pl.FP16],
             leaky: pl.Out[pl.Tensor[[16, 64], pl.FP16]], logs: pl.Out[pl.Tensor[[16, 64], pl.FP16]],
             quot: pl.Out[pl.Tensor[[16, 64], pl.FP16]], mix: pl.Out[pl.Tensor[[16, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(d, [0, 0], [16, 64])
        leaky[:, :] = pl.tile.lrelu(t, 0.1)
        logs[:, :] = pl.tile.log(pl.abs(t), high_precision=True)
        quot[:, :] = pl.tile.div(t, u, high_precision=True)
        mix[:, :] = pl.add(pl.muls(pl.sqrt(u), 3.0), pl.relu(t))
    return leaky, logs, quot, mix


@pl.jit
def sin_half(x: pl.Tensor[[16, 16], pl.FP16], y: pl.Out[pl.Tensor[[16, 16], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.sin(pl.load(x, [0, 0], [16, 16]))
    return y


@pl.jit
def not_wide(x: pl.Tensor[[16, 16], pl.INT32], y: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.not_(pl.load(x, [0, 0], [16, 16]))
    return y


@pl.jit
def int_div_hp(x: pl.Tensor[[16, 16], pl.INT32], y: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        y[:, :] = pl.tile.div(t, t, high_precision=True)
    return y


@pl.jit
def half_reductions(x: pl.Tensor[[32, 64], pl.FP16], sums: pl.Out[pl.Tensor[[32, 1], pl.FP16]],
                    mins: pl.Out[pl.Tensor[[1, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        sums[:, :] = pl.row_sum(t)
        mins[:, :] = pl.col_min(t)
    return sums, mins
'''


kernels = kernels_fixture("math_kernels.py", KERNELS)


@pytest.mark.parametrize("slope", [0.0, 0.1, 1.0, -0.5, 2.0])
def test_lrelu_matches_torch(kernels, slope):
    torch.manual_seed(0)
    x = torch.randn(16, 64)
    y = torch.empty(16, 64)
    kernels.lrelu(x, slope, y)
    expected = torch.where(x > 0, x, torch.tensor(slope, dtype=torch.float32) * x)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_lrelu_on_a_narrow_valid_region_stored_at_an_offset(kernels):
    torch.manual_seed(1)
    x = torch.randn(16, 16)
    y = torch.zeros(32, 32)
    kernels.lrelu_narrow(x, y)
    expected = torch.zeros(32, 32)
    v = x[:8, :12]
    expected[16:24, 16:28] = torch.where(v > 0, v, -0.5 * v)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_sin_cos_match_torch_over_two_periods(kernels):
    torch.manual_seed(2)
    x = torch.rand(32, 64) * (4 * math.pi) - 2 * math.pi
    s, c = torch.empty(32, 64), torch.empty(32, 64)
    # The simulator runs them (backend-ptoas expands them as upstream does: tests/python/test_pto_sin_cos.py).
    kernels.trig(x, s, c)
    torch.testing.assert_close(s, torch.sin(x), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(c, torch.cos(x), rtol=1e-5, atol=1e-6)


def test_not_inverts_int16_and_uint16(kernels):
    a = (torch.arange(16 * 32, dtype=torch.int32) * 97 - 20000).to(torch.int16).reshape(16, 32)
    b_values = torch.arange(16 * 32, dtype=torch.int32).reshape(16, 32) * 127  # 0 .. 64897
    b = b_values.to(torch.uint16)
    na, nb = torch.empty(16, 32, dtype=torch.int16), torch.empty(16, 32, dtype=torch.uint16)
    kernels.bit_not(a, b, na, nb)
    assert torch.equal(na, torch.bitwise_not(a))
    assert torch.equal(nb.to(torch.int32), 0xFFFF - b_values)


def test_high_precision_log_and_div_match_torch(kernels):
    torch.manual_seed(3)
    x = torch.rand(16, 64) * 10 + 0.01
    d = torch.rand(16, 64) * 4 + 0.5
    outs = [torch.empty(16, 64) for _ in range(4)]
    kernels.precise(x, d, *outs)
    log_hp, log_plain, div_hp, div_plain = outs
    torch.testing.assert_close(log_hp, torch.log(x), rtol=1e-6, atol=1e-6)
    assert torch.equal(log_hp, log_plain)
    torch.testing.assert_close(div_hp, x / d, rtol=0, atol=0)
    assert torch.equal(div_hp, div_plain)


def test_fp16_ops_round_each_fp32_result_to_fp16(kernels):
    """FP16 tiles compute in FP32 and round each result once: torch's FP32 result rounded to FP16
    (exact for lrelu, relu and division's single rounding, within an FP16 ULP for log and sqrt)."""
    torch.manual_seed(4)
    x = (torch.randn(16, 64) * 4).half()
    d = (torch.rand(16, 64) * 4 + 0.5).half()
    leaky, logs, quot, mix = (torch.empty(16, 64, dtype=torch.float16) for _ in range(4))
    kernels.half_ops(x, d, leaky, logs, quot, mix)
    xf, df = x.float(), d.float()
    assert torch.equal(leaky, torch.where(xf > 0, xf, 0.1 * xf).half())
    torch.testing.assert_close(logs, torch.log(xf.abs()).half(), rtol=1e-3, atol=1e-3)
    assert torch.equal(quot, (xf / df).half())
    expected_mix = (torch.sqrt(df).half().float() * 3.0).half().float() + torch.relu(xf)
    torch.testing.assert_close(mix, expected_mix.half(), rtol=1e-3, atol=1e-3)


def test_sin_of_fp16_is_refused_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.sin_half(torch.zeros(16, 16, dtype=torch.float16), torch.empty(16, 16, dtype=torch.float16))
    message = str(info.value)
    assert "tile.sin needs an FP32 tile, got FP16" in message
    assert "math_kernels.py:" in message


def test_not_of_int32_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.not_wide(torch.zeros(16, 16, dtype=torch.int32), torch.empty(16, 16, dtype=torch.int32))
    assert "tile.not needs an INT16 or UINT16 tile, got INT32" in str(info.value)


def test_high_precision_integer_division_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.int_div_hp(torch.ones(16, 16, dtype=torch.int32), torch.empty(16, 16, dtype=torch.int32))
    assert "tile.div(high_precision=True) needs a floating-point tile, got INT32" in str(info.value)


def test_fp16_reductions_accumulate_in_fp32_and_round_once(kernels):
    x = torch.randn(32, 64).half()
    sums, mins = torch.zeros(32, 1).half(), torch.zeros(1, 64).half()
    kernels.half_reductions(x, sums, mins)
    torch.testing.assert_close(sums, x.float().sum(dim=1, keepdim=True).half(), rtol=0, atol=0)
    torch.testing.assert_close(mins, x.min(dim=0, keepdim=True).values, rtol=0, atol=0)
