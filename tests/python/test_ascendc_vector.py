"""AscendC vector instructions on the simulator, against torch in FP32 and FP16: every family in its
count form (arithmetic, tensor-scalar, unary math, Duplicate, Compare/Select, reductions), the mask +
repeatTimes + repeat-parameter forms (continuous and bit masks, block and repeat strides, counter
mode, BlockReduce/WholeReduce, Brcb, Copy), the scalar helpers (Std::min/max, ToFloat), and Cast
under each RoundMode."""

import numpy as np
import pytest
import torch
from ascendc_kernels import declare

N = 512
ROW = 256

_COUNT = """
@pl.jit.extern(core_type="aiv", source="{source}")
def vector_count(x: pl.Tensor[[512], {dtype}], y: pl.Tensor[[512], {dtype}],
                 out: pl.InOut[pl.Tensor[[20, 512], {dtype}]],
                 reduced: pl.InOut[pl.Tensor[[{reduced}], {dtype}]]) -> pl.Tensor[[20, 512], {dtype}]: ...


@pl.jit
def entry(x: pl.Tensor[[512], {dtype}], y: pl.Tensor[[512], {dtype}], out: pl.Out[pl.Tensor[[20, 512], {dtype}]],
          reduced: pl.InOut[pl.Tensor[[{reduced}], {dtype}]]):
    out = vector_count(x, y, out, reduced)
    return out
"""

_REPEAT = """
@pl.jit.extern(core_type="aiv", source="{source}")
def vector_repeat(x: pl.Tensor[[512], {dtype}], y: pl.Tensor[[512], {dtype}],
                  out: pl.InOut[pl.Tensor[[15, 256], {dtype}]]) -> pl.Tensor[[15, 256], {dtype}]: ...


@pl.jit
def entry(x: pl.Tensor[[512], {dtype}], y: pl.Tensor[[512], {dtype}], out: pl.Out[pl.Tensor[[15, 256], {dtype}]]):
    out = vector_repeat(x, y, out)
    return out
"""

_CAST = """
@pl.jit.extern(core_type="aiv", source="{source}")
def cast_round(x: pl.Tensor[[256], pl.FP32], ints: pl.InOut[pl.Tensor[[5, 256], pl.INT32]],
               halves: pl.InOut[pl.Tensor[[5, 256], pl.FP16]],
               back: pl.InOut[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[5, 256], pl.INT32]: ...


@pl.jit
def entry(x: pl.Tensor[[256], pl.FP32], ints: pl.Out[pl.Tensor[[5, 256], pl.INT32]],
          halves: pl.InOut[pl.Tensor[[5, 256], pl.FP16]], back: pl.InOut[pl.Tensor[[256], pl.FP32]]):
    ints = cast_round(x, ints, halves, back)
    return ints
"""


def _tolerance(dtype):
    return dict(rtol=0, atol=0) if dtype == torch.float32 else dict(rtol=1e-3, atol=1e-3)


def _inputs(dtype):
    torch.manual_seed(0)
    x = (torch.rand(N) * 4 + 0.25).to(dtype)  # positive, for Ln / Sqrt / Rsqrt
    y = torch.randn(N).to(dtype)
    return x, y


def _in_float(dtype, fn):
    """fn computed in float and rounded once to dtype, as the vector unit does."""
    return lambda *args: fn(*(a.float() if torch.is_tensor(a) else a for a in args)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_count_forms_match_torch(tmp_path, dtype):
    per_block = 32 // torch.tensor([], dtype=dtype).element_size()
    entry = declare(tmp_path, _COUNT, dtype, kernel="vector_count", reduced=per_block).entry
    x, y = _inputs(dtype)
    out = torch.zeros(20, N, dtype=dtype)
    reduced = torch.zeros(per_block, dtype=dtype)
    entry(x, y, out, reduced)
    f = lambda fn: _in_float(dtype, fn)  # noqa: E731
    expected = [
        f(torch.add)(x, y), f(torch.sub)(x, y), f(torch.mul)(x, y), f(torch.div)(x, y),
        torch.maximum(x, y), torch.minimum(x, y),
        f(lambda a: a + 0.5)(x), f(lambda a: a * 3)(x),
        torch.clamp(y, min=0.25), torch.clamp(y, max=0.25),
        f(torch.exp)(y), f(torch.log)(x), y.abs(), f(torch.sqrt)(x), f(torch.rsqrt)(x), f(torch.reciprocal)(x),
        torch.relu(y), torch.full((N,), 1.5, dtype=dtype),
        torch.where(x > y, x, y), torch.where(y > 0, y, torch.zeros_like(y)),
    ]
    transcendental = {10, 11, 13, 14}  # exp, ln, sqrt, rsqrt: libm and torch (SLEEF) may differ in the last bit
    for row, want in enumerate(expected):
        tol = dict(rtol=1e-6, atol=0) if row in transcendental and dtype == torch.float32 else _tolerance(dtype)
        torch.testing.assert_close(out[row], want, **tol, msg=lambda m, row=row: f"result row {row}: {m}")
    torch.testing.assert_close(reduced[0], x.float().sum().to(dtype), rtol=1e-5 if dtype == torch.float32 else 1e-3,
                               atol=0)
    torch.testing.assert_close(reduced[1], y.max(), rtol=0, atol=0)
    torch.testing.assert_close(reduced[2], y.min(), rtol=0, atol=0)


def _repeat_expected(x, y, dtype):
    lanes = 256 // x.element_size()
    per_block = 32 // x.element_size()
    f = lambda fn: _in_float(dtype, fn)  # noqa: E731
    rows = torch.zeros(15, ROW, dtype=dtype)
    for r in range(2):
        span = slice(r * lanes, r * lanes + 40)
        rows[0, span] = f(torch.add)(x[span], y[span])
        for lane in range(lanes):
            word = 0xF0F0F0F0F0F0F0F0 if lane < 64 else 0x0F0F0F0F0F0F0F0F
            if (word >> (lane % 64)) & 1:
                i = r * lanes + lane
                rows[1, i] = f(torch.mul)(x[i], y[i])
        rows[2, r * lanes:(r + 1) * lanes] = f(torch.sub)(x[2 * r * lanes:(2 * r + 1) * lanes],
                                                          y[r * lanes:(r + 1) * lanes])
        rows[5, r * lanes:r * lanes + 24] = 2.0
        for b in range(8):
            block = slice((r * 8 + b) * per_block, (r * 8 + b + 1) * per_block)
            rows[6, r * 8 + b] = x[block].float().sum().to(dtype)
            rows[9, r * 8 + b] = y[block].max()
        rows[7, r] = x[r * lanes:(r + 1) * lanes].float().sum().to(dtype)
        rows[8, r] = y[r * lanes:(r + 1) * lanes].max()
    for b in range(8):
        rows[3, 2 * b * per_block:(2 * b + 1) * per_block] = f(lambda a: a + 1)(x[b * per_block:(b + 1) * per_block])
    rows[4, :100] = f(torch.add)(x[:100], y[:100])
    for j in range(16):
        rows[10, j * per_block:(j + 1) * per_block] = x[j]
    rows[11, :40] = f(torch.exp)(y[:40])
    rows[12, :2 * lanes] = torch.where(x[:2 * lanes] < y[:2 * lanes], x[:2 * lanes], y[:2 * lanes])
    for r in range(2):
        rows[13, r * lanes:r * lanes + 40] = x[(r + 1) * lanes:(r + 1) * lanes + 40]
    rows[14, :3] = torch.tensor([1.5, 4.0, 5.0], dtype=dtype)
    return rows


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_repeat_forms_walk_masks_and_strides(tmp_path, dtype):
    entry = declare(tmp_path, _REPEAT, dtype, kernel="vector_repeat").entry
    x, y = _inputs(dtype)
    out = torch.zeros(15, ROW, dtype=dtype)
    entry(x, y, out)
    expected = _repeat_expected(x, y, dtype)
    sums = {6, 7}  # float sums of 8 or more elements may differ from torch's order in the last bit
    for row in range(15):
        tol = dict(rtol=1e-5, atol=1e-5) if row in sums | {11} and dtype == torch.float32 else _tolerance(dtype)
        torch.testing.assert_close(out[row], expected[row], **tol, msg=lambda m, row=row: f"result row {row}: {m}")


def _half_toward(x, mode):
    """float32 -> float16 under a directed rounding, from nearest-even and one step where needed."""
    xs = x.numpy().astype(np.float32)
    nearest = xs.astype(np.float16)
    back = nearest.astype(np.float32)
    up = np.nextafter(nearest, np.float16(np.inf))
    down = np.nextafter(nearest, np.float16(-np.inf))
    if mode == "floor":
        result = np.where(back > xs, down, nearest)
    elif mode == "ceil":
        result = np.where(back < xs, up, nearest)
    elif mode == "trunc":
        result = np.where(np.abs(back) > np.abs(xs), np.where(xs > 0, down, up), nearest)
    else:  # odd: truncate, then make the last bit odd when inexact
        trunc = np.where(np.abs(back) > np.abs(xs), np.where(xs > 0, down, up), nearest)
        bits = trunc.view(np.uint16)
        odd = np.where((back != xs) & ((bits & 1) == 0), bits + 1, bits).astype(np.uint16)
        result = odd.view(np.float16)
    return torch.from_numpy(result.astype(np.float16))


def test_cast_round_modes(tmp_path):
    entry = declare(tmp_path, _CAST, torch.float32, kernel="cast_round").entry
    torch.manual_seed(1)
    x = torch.randn(256) * 100
    x[:8] = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -7.25])
    ints = torch.zeros(5, 256, dtype=torch.int32)
    halves = torch.zeros(5, 256, dtype=torch.float16)
    back = torch.zeros(256)
    entry(x, ints, halves, back)
    away = torch.sign(x) * torch.floor(x.abs() + 0.5)
    for row, want in enumerate([torch.round(x), torch.floor(x), torch.ceil(x), torch.trunc(x), away]):
        torch.testing.assert_close(ints[row], want.to(torch.int32), rtol=0, atol=0, msg=f"int row {row}")
    for row, mode in enumerate(["rint", "trunc", "floor", "ceil", "odd"]):
        want = x.to(torch.float16) if mode == "rint" else _half_toward(x, mode)
        torch.testing.assert_close(halves[row], want, rtol=0, atol=0, msg=f"half row {row} ({mode})")
    torch.testing.assert_close(back, halves[0].float(), rtol=0, atol=0)
