"""pl.read / pl.write of single elements of tensors and tiles inside kernels, and tensors created
with a starting value (pl.create_tensor(..., init_value=v)), checked against torch."""

import pytest
import torch

ELEMENTS = """
import pypto.language as pl

N = 64


@pl.jit
def scatter(x: pl.Tensor[[1, N], pl.FP32], idx: pl.Tensor[[16], pl.INT32], y: pl.InOut[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for t in pl.range(16):
            k = pl.cast(pl.read(idx, t), pl.INDEX)
            pl.write(y, [0, k], pl.read(x, [0, t]))
    return y


@pl.jit
def compact(x: pl.Tensor[[N], pl.INT32], y: pl.Out[pl.Tensor[[1, N], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        kept = pl.full([1, N], dtype=pl.INT32, value=-1)
        seen = pl.cast(0, pl.INDEX)
        for i in pl.range(N):
            v = pl.read(x, i)
            if v >= 0:
                pl.write(kept, [0, seen], v)
                seen = seen + 1
        y[0:1, 0:N] = kept
    return y


@pl.jit
def tile_elements(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.mul(x[0:1, 0:N], 2.0)
        first = pl.read(t, [0, 0])
        pl.tile.write(t, [0, N - 1], pl.read(t, [0, 1]))
        y[0:1, 0:N] = pl.add(t, first)
    return y


@pl.jit
def wrong_count(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.write(y, [0], pl.read(x, [0, 0]))
    return y


@pl.jit
def wrong_dtype(x: pl.Tensor[[N], pl.INT32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.write(y, [0, 0], pl.read(x, [0]))
    return y


@pl.jit
def outside_tile(x: pl.Tensor[[1, N], pl.FP32], y: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.mul(x[0:1, 0:N], 2.0)
        for i in pl.range(2):
            pl.write(t, [0, i * N], pl.read(t, [0, 0]))
        y[0:1, 0:N] = t
    return y
"""


COMPARES = """
import pypto.language as pl

N = 64


@pl.jit
def argmax(x: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = x[0:1, 0:N]
        best = pl.read(pl.row_max(t), [0, 0])
        found = pl.cast(-1, pl.INT32)
        positive = pl.cast(0, pl.INT32)
        for i in pl.range(N):
            v = pl.read(t, [0, i])
            if v == best:
                found = pl.cast(i, pl.INT32)
            if v > 0.0:
                positive = positive + 1
        last = pl.cast(-1, pl.INT32)
        for i in pl.range(N):
            if pl.read(t, [0, i]) == best:  # the read inside the condition (upstream's topk_select)
                last = pl.cast(i, pl.INT32)
        marks = pl.full([1, 8], dtype=pl.INT32, value=0)
        pl.write(marks, [0, 0], found)
        pl.write(marks, [0, 1], positive)
        pl.write(marks, [0, 3], last)
        if found >= pl.cast(0, pl.INT32):  # a cast inside a condition
            pl.write(marks, [0, 2], pl.cast(1, pl.INT32))
        out[0:1, 0:8] = marks
    return out
"""


def test_fp32_elements_compare_in_conditions(write_kernel):
    module, _ = write_kernel("compares", COMPARES)
    x = torch.randn(1, 64)
    out = torch.zeros(1, 8, dtype=torch.int32)
    module.argmax(x, out)
    expected = torch.zeros(1, 8, dtype=torch.int32)
    expected[0, 0] = int(torch.argmax(x[0]))
    expected[0, 1] = int((x[0] > 0).sum())
    expected[0, 2] = 1
    expected[0, 3] = int(torch.argmax(x[0]))
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.fixture
def elements(write_kernel):
    module, path = write_kernel("elements", ELEMENTS)
    module.path = path
    return module


def test_write_scatters_elements_read_at_computed_indices(elements):
    x = torch.randn(1, 64)
    idx = torch.randperm(64)[:16].to(torch.int32)
    y = torch.full((1, 64), 7.0)
    elements.scatter(x, idx, y)
    expected = torch.full((1, 64), 7.0)
    expected[0, idx.long()] = x[0, :16]
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_writes_into_a_tile_carry_through_loops_and_ifs(elements):
    x = torch.tensor([5, -2, 9, -7, 0, 3] * 10 + [-1, 4, -3, 8], dtype=torch.int32)
    y = torch.zeros(1, 64, dtype=torch.int32)
    elements.compact(x, y)
    kept = x[x >= 0]
    expected = torch.full((1, 64), -1, dtype=torch.int32)
    expected[0, : len(kept)] = kept
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_read_and_write_of_tile_elements(elements):
    x = torch.randn(1, 64)
    y = torch.zeros(1, 64)
    elements.tile_elements(x, y)
    t = 2 * x
    t[0, 63] = t[0, 1]
    torch.testing.assert_close(y, t + t[0, 0], rtol=0, atol=0)


def test_write_misuse_is_reported_at_the_call(elements):
    from pypto.language.parser.diagnostics import ParserTypeError

    with pytest.raises(ParserTypeError) as info:
        elements.wrong_count(torch.zeros(1, 64), torch.zeros(1, 64))
    assert info.value.message == "pl.write: an element of pl.Tensor[[1, 64], pl.FP32] has 2 indices, got 1"
    assert info.value.location == f"{elements.path}:43:9"
    with pytest.raises(ParserTypeError) as info:
        elements.wrong_dtype(torch.zeros(64, dtype=torch.int32), torch.zeros(1, 64))
    assert info.value.message == "pl.write: the value is INT32 but the elements of pl.Tensor[[1, 64], pl.FP32] are FP32"
    assert info.value.location == f"{elements.path}:50:9"
    assert "pl.cast(value, pl.FP32)" in str(info.value)


def test_write_outside_a_tile_stops_the_kernel(elements):
    with pytest.raises(RuntimeError, match=r"elements.py:59:\d+: .*element \[0, 64\] is outside the tile of shape "
                       r"\[1, 64\]"):
        elements.outside_tile(torch.zeros(1, 64), torch.zeros(1, 64))


CREATED = """
import pypto.language as pl

N = 64


@pl.jit
def start_at(x: pl.Tensor[[16, N], pl.FP32], y: pl.Out[pl.Tensor[[16, N], pl.FP32]]):
    acc = pl.create_tensor([16, N], dtype=pl.FP32, init_value=1.5)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="accumulate"):
        acc[0:16, 0:N] = pl.add(acc[0:16, 0:N], x[0:16, 0:N])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out"):
        y[0:16, 0:N] = pl.mul(acc[0:16, 0:N], 1.0)
    return y


@pl.jit
def marks(idx: pl.Tensor[[8], pl.INT32], y: pl.Out[pl.Tensor[[1, N], pl.INT32]]):
    flags = pl.create_tensor([1, N], dtype=pl.INT32, init_value=-1)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mark"):
        for i in pl.range(8):
            pl.write(flags, [0, pl.cast(pl.read(idx, i), pl.INDEX)], pl.cast(i, pl.INT32))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out"):
        y[0:1, 0:N] = pl.add(flags[0:1, 0:N], 0)
    return y


@pl.jit
def in_loop(x: pl.Tensor[[48, N], pl.FP32], y: pl.Out[pl.Tensor[[48, N], pl.FP32]]):
    for i in pl.range(3):
        acc = pl.create_tensor([16, N], dtype=pl.FP32, init_value=0.5)
        for k in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="accumulate"):
                acc[0:16, 0:N] = pl.add(acc[0:16, 0:N], x[i * 16 : i * 16 + 16, 0:N])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out"):
            y[i * 16 : i * 16 + 16, 0:N] = pl.mul(acc[0:16, 0:N], 1.0)
    return y


@pl.jit
def fractional(x: pl.Tensor[[16, N], pl.INT32], y: pl.Out[pl.Tensor[[16, N], pl.INT32]]):
    acc = pl.create_tensor([16, N], dtype=pl.INT32, init_value=0.5)
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:16, 0:N] = pl.add(acc[0:16, 0:N], x[0:16, 0:N])
    return y
"""


@pytest.fixture
def created(write_kernel):
    module, path = write_kernel("created", CREATED)
    module.path = path
    return module


def test_created_tensor_starts_at_its_init_value(created):
    x = torch.randn(16, 64)
    y = torch.zeros(16, 64)
    created.start_at(x, y)
    torch.testing.assert_close(y, x + 1.5, rtol=0, atol=0)


def test_elements_never_written_keep_the_init_value(created):
    idx = torch.tensor([60, 3, 17, 0, 42, 9, 33, 25], dtype=torch.int32)
    y = torch.zeros(1, 64, dtype=torch.int32)
    created.marks(idx, y)
    expected = torch.full((1, 64), -1, dtype=torch.int32)
    expected[0, idx.long()] = torch.arange(8, dtype=torch.int32)
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def test_init_value_misuse_is_reported(created):
    from pypto.language.parser.diagnostics import ParserTypeError

    with pytest.raises(ParserTypeError) as info:
        created.fractional(torch.zeros(16, 64, dtype=torch.int32), torch.zeros(16, 64, dtype=torch.int32))
    assert info.value.message == "pl.create_tensor: init_value=0.5 is not a INT32 value"
    assert info.value.location == f"{created.path}:42:11"


def test_a_tensor_created_in_a_loop_starts_at_its_init_value_in_every_iteration(created):
    # Each of the 3 iterations accumulates twice into a new 'acc' that starts at 0.5: its buffer is
    # reused, so it must be filled again after the previous iteration's tasks are done with it.
    x = torch.randn(48, 64)
    y = torch.zeros(48, 64)
    created.in_loop(x, y)
    torch.testing.assert_close(y, 0.5 + x + x, rtol=0, atol=0)


HALF_READS = """
import pypto.language as pl


@pl.jit
def scale_rows(x: pl.Tensor[[4, 64], pl.FP32], w: pl.Tensor[[4], pl.BF16], b: pl.Tensor[[4], pl.FP16],
               y: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(4):
            row = pl.mul(x[r : r + 1, 0:64], pl.read(w, [r]))
            y[r : r + 1, 0:64] = pl.add(row, pl.read(b, [r]))
    return y
"""


def test_bf16_and_fp16_elements_are_read_as_fp32(write_kernel):
    module, _ = write_kernel("half_reads", HALF_READS)
    x = torch.randn(4, 64)
    w = torch.randn(4).to(torch.bfloat16)
    b = torch.randn(4).to(torch.float16)
    y = torch.zeros(4, 64)
    module.scale_rows(x, w, b, y)
    torch.testing.assert_close(y, x * w.float()[:, None] + b.float()[:, None], rtol=0, atol=0)
