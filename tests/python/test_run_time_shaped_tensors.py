"""Tensors whose shape is computed at run time (issue 30): a ragged last tile of a token loop
(`rows = pl.min(TILE, t - base)`) sizes an intermediate tensor. Its buffer is allocated at the
constant bound of each run-time dimension; loops, valid shapes and `pl.tensor.dim` keep the run-time
extent. Results are compared with torch at several token counts."""

import inspect
import re

import pytest
import torch

from pypto.language.parser import ParserTypeError

KERNELS = '''
import pypto.language as pl

T = pl.dynamic("T")
D = 64
TILE = 48
M = 16


@pl.jit.inline(auto_scope=False)
def _double_then_add_one(x: pl.Tensor[[T, D], pl.FP32], y: pl.Tensor[[T, D], pl.FP32],
                         tile_base: pl.Scalar[pl.INDEX], tile_rows: pl.Scalar[pl.INDEX]):
    padded = ((tile_rows + M - 1) // M) * M
    buf = pl.create_tensor([padded, D], dtype=pl.FP32)
    for t0 in pl.range(0, padded, M):
        rows = pl.min(M, tile_rows - t0)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.slice(x, [M, D], [tile_base + t0, 0], valid_shape=[rows, D])
            buf = pl.assemble(buf, pl.mul(a, 2.0), [t0, 0])
    for t0 in pl.range(0, pl.tensor.dim(buf, 0), M):
        rows = pl.min(M, tile_rows - t0)
        with pl.at(level=pl.Level.CORE_GROUP):
            b = pl.slice(buf, [M, D], [t0, 0], valid_shape=[rows, D])
            y = pl.assemble(y, pl.add(b, 1.0), [tile_base + t0, 0])


@pl.jit
def ragged_tiles(x: pl.Tensor[[T, D], pl.FP32], y: pl.Out[pl.Tensor[[T, D], pl.FP32]]):
    t_dim = pl.tensor.dim(x, 0)
    for tile_base in pl.range(0, t_dim, TILE):
        tile_rows = pl.min(TILE, t_dim - tile_base)
        with pl.scope():
            _double_then_add_one(x, y, tile_base, tile_rows)
    return y


@pl.jit
def row_counts(x: pl.Tensor[[T, D], pl.FP32], y: pl.Out[pl.Tensor[[T, D], pl.FP32]]):
    t_dim = pl.tensor.dim(x, 0)
    for tile_base in pl.range(0, t_dim, TILE):
        tile_rows = pl.min(TILE, t_dim - tile_base)
        counts = pl.create_tensor([tile_rows, 1], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.slice(x, [TILE, D], [tile_base, 0], valid_shape=[tile_rows, D])
            counts = pl.assemble(counts, pl.row_sum(a), [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.slice(counts, [TILE, 1], [0, 0], valid_shape=[tile_rows, 1])
            a = pl.slice(x, [TILE, D], [tile_base, 0], valid_shape=[tile_rows, D])
            y = pl.assemble(y, pl.row_expand_sub(a, c), [tile_base, 0])
    return y


@pl.jit
def composite_shape(x: pl.Tensor[[T, D], pl.FP32], y: pl.Out[pl.Tensor[[T, D], pl.FP32]]):
    t_dim = pl.tensor.dim(x, 0)
    for tile_base in pl.range(0, t_dim, TILE):
        tile_rows = pl.min(TILE, t_dim - tile_base)
        buf = pl.create_tensor([((tile_rows + M - 1) // M) * M, D], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.slice(x, [TILE, D], [tile_base, 0], valid_shape=[tile_rows, D])
            buf = pl.assemble(buf, pl.exp(a), [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            b = pl.slice(buf, [TILE, D], [0, 0], valid_shape=[tile_rows, D])
            y = pl.assemble(y, b, [tile_base, 0])
    return y


@pl.jit
def unbounded_rows(x: pl.Tensor[[64, D], pl.FP32], n: pl.Tensor[[1], pl.INT32],
                   y: pl.Out[pl.Tensor[[64, D], pl.FP32]]):
    rows = pl.read(n, [0])
    buf = pl.create_tensor([rows, D], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        buf = pl.assemble(buf, pl.slice(x, [64, D], [0, 0]), [0, 0])
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.assemble(y, pl.slice(buf, [64, D], [0, 0]), [0, 0])
    return y
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("run_time_shaped_kernels", KERNELS)
    return module


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(KERNELS.splitlines(), start=1) if text in line)


@pytest.mark.parametrize("tokens", [100, 37, 48])
def test_a_ragged_tile_sizes_its_intermediate_at_run_time(kernels, tokens):
    torch.manual_seed(tokens)
    x = torch.randn(tokens, 64)
    y = torch.zeros(tokens, 64)
    kernels.ragged_tiles(x, y)
    torch.testing.assert_close(y, x * 2 + 1)


@pytest.mark.parametrize("tokens", [96, 50])
def test_a_tensor_shaped_by_the_tile_rows_holds_one_value_per_row(kernels, tokens):
    torch.manual_seed(tokens)
    x = torch.randn(tokens, 64)
    y = torch.zeros(tokens, 64)
    kernels.row_counts(x, y)
    torch.testing.assert_close(y, x - x.sum(dim=1, keepdim=True), rtol=1e-5, atol=1e-4)


def test_arithmetic_in_the_shape_list_runs_and_warns_that_upstream_rejects_it(kernels):
    torch.manual_seed(3)
    x = torch.randn(70, 64)
    # The reference is computed before the run: torch's first multi-threaded exp after a simulator run
    # in a fresh process has been seen to differ from its own second call (see issue 32's note).
    expected = torch.exp(x)
    y = torch.zeros(70, 64)
    with pytest.warns(UserWarning) as record:
        kernels.composite_shape(x, y)
    # The simulator's exp is a vectorized approximation within a few ulp of torch's.
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
    messages = [str(w.message) for w in record if "upstream PyPTO rejects it" in str(w.message)]
    assert messages, [str(w.message) for w in record]
    assert messages[0].startswith(
        f"{kernels.path}:{line_of('buf = pl.create_tensor([((tile_rows')}:")
    assert messages[0].endswith(
        "a run-time dimension computed inside the shape list works here, but upstream PyPTO rejects it; "
        "compute it into a named local first (`rows = ...; pl.create_tensor([rows, ...])`)")


def test_a_run_time_dimension_without_a_bound_is_refused_with_the_fix(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.unbounded_rows(torch.randn(64, 64), torch.tensor([64], dtype=torch.int32), torch.zeros(64, 64))
    message = str(info.value)
    assert ("'buf' has a shape known only at run time with no bound the compiler can find; such a tensor takes "
            "the shape of the kernel parameter it is passed to, and no function call after it passes 'buf'") in message
    assert f"run_time_shaped_kernels.py:{line_of('buf = pl.create_tensor([rows, D]')}:" in message
    assert "bound each run-time dimension with pl.min(CONSTANT, ...)" in message
