"""Tensor slices in orchestration code that kernels read (qwen3's decode slices each token's RoPE row
at a position it reads from a tensor): each pl.at scope using the slice loads it itself, together with
the reads and scalar arithmetic its bounds need. Checked against torch, and the error for a slice the
orchestration itself uses."""

import pytest
import torch

import pypto.language as pl


@pl.jit
def rope_scaled(x: pl.Tensor[[4, 64], pl.FP32], table: pl.Tensor[[16, 64], pl.FP32],
                positions: pl.Tensor[[4], pl.INT32], y: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    for b in pl.range(4):
        ctx_len = pl.read(positions, [b])
        pos = ctx_len - 1
        row = table[pos : pos + 1, :]
        half = pl.slice(table, [1, 32], [pos, 32])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_row"):
            y[b : b + 1, :] = pl.mul(x[b : b + 1, :], row)
            y[b : b + 1, 32:64] = pl.add(pl.mul(x[b : b + 1, 32:64], half), 1.0)
    return y


def test_orchestration_slices_are_loaded_by_the_kernels_that_read_them():
    torch.manual_seed(4)
    x, table = torch.randn(4, 64), torch.randn(16, 64)
    positions = torch.tensor([3, 16, 1, 9], dtype=torch.int32)
    y = torch.full((4, 64), float("nan"))
    rope_scaled(x, table, positions, y)
    rows = table[(positions - 1).long()]
    expected = x * rows
    expected[:, 32:] = x[:, 32:] * rows[:, 32:] + 1.0
    torch.testing.assert_close(y, expected)


def test_the_orchestration_keeps_no_load():
    x, table, positions = torch.zeros(4, 64), torch.zeros(16, 64), torch.ones(4, dtype=torch.int32)
    text = str(rope_scaled.lower(x, table, positions, torch.zeros(4, 64)))
    orchestration = text.split("@pl.function(type=pl.FunctionType.Orchestration)")[1]
    assert "load" not in orchestration and "read" not in orchestration, text


def test_a_slice_the_orchestration_itself_uses_is_reported(write_kernel):
    module, path = write_kernel("orchestration_slice", """
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    rows = x[0:16, :]
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:16, :] = pl.add(x[0:16, :], 1.0)
    return rows
""")
    with pytest.raises(Exception) as error:
        module.k(torch.zeros(32, 64), torch.zeros(32, 64))
    message = str(error.value)
    assert "'rows' slices a tensor in orchestration code and is used there; only the pl.at scopes that read it " \
        "can use such a slice" in message, message
    assert f"{path}:6:12" in message, message


@pl.jit
def through_an_alias(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    x_flat = x  # prefill_compressor_ratio128's `x_flat = x`: another name for the same tensor
    out = y
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.add(x_flat[:, :], 2.0)
    return out


def test_a_tensor_renamed_in_orchestration_is_the_same_tensor():
    x, y = torch.randn(16, 64), torch.zeros(16, 64)
    through_an_alias(x, y)
    torch.testing.assert_close(y, x + 2.0)


# A slice the entry forwards to an inline function whose parameter is a bare pl.Tensor: the inline
# body loads from the window (upstream's test_jit, issue 1836 there), for a closed and an open range.
@pl.jit.inline
def add_one_inline(x: pl.Tensor, c: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [32, 64]), 1.0), [0, 0], c)
    return c


@pl.jit
def add_one_to_first_rows(src: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    c = add_one_inline(src[0:32], c)
    return c


@pl.jit
def add_one_to_last_rows(src: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    rows = src[32:]
    c = add_one_inline(rows, c)
    return c


@pytest.mark.parametrize("entry, window", [(add_one_to_first_rows, slice(0, 32)),
                                           (add_one_to_last_rows, slice(32, 64))])
def test_a_slice_forwarded_to_an_inline_function_is_a_view(entry, window):
    src, c = torch.randn(64, 64), torch.zeros(32, 64)
    entry(src, c)
    torch.testing.assert_close(c, src[window] + 1.0)


@pl.jit
def layer_weights(w: pl.Tensor[[3 * 16, 64], pl.FP32], x: pl.Tensor[[16, 64], pl.FP32],
                  y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    # A stacked weight's layer window, annotated as the tensor it is (model code writes this).
    layer: pl.Tensor[[16, 64], pl.FP32] = pl.slice(w, [16, 64], [2 * 16, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_by_layer"):
        y[0:16, :] = pl.mul(x[0:16, :], layer[0:16, :])
    return y


def test_an_orchestration_slice_may_be_annotated_as_the_tensor_window_it_is():
    torch.manual_seed(5)
    w, x = torch.randn(48, 64), torch.randn(16, 64)
    y = torch.zeros(16, 64)
    layer_weights(w, x, y)
    torch.testing.assert_close(y, x * w[32:48])


@pl.jit.inline
def _scale_rows(src: pl.Tensor, dst: pl.Tensor):
    rows = pl.tensor.dim(src, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_rows"):
        for r in pl.range(0, rows, 8):
            dst[r : r + 8, :] = pl.mul(src[r : r + 8, :], 3.0)
    return dst


@pl.jit
def scale_second_half(x: pl.Tensor[[32, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    half = pl.slice(x, [16, 64], [16, 0])
    _scale_rows(half, y)
    return y


def test_pl_tensor_dim_reads_the_extent_of_an_orchestration_slice():
    torch.manual_seed(6)
    x = torch.randn(32, 64)
    y = torch.zeros(16, 64)
    scale_second_half(x, y)
    torch.testing.assert_close(y, x[16:] * 3)
