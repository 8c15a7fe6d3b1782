"""A pl.dynamic dimension held by a config object (`D.rows` with `D = Dims(rows=pl.dynamic("ROWS"))`,
the way pypto-lib's Qwen3 models write `pl.Tensor[[D.block_table_flat], pl.INT32]`) is a dynamic
dimension, as the same pl.dynamic held by a module global is: it takes each call's extent."""

import pytest
import torch

KERNELS = """
import dataclasses

import pypto.language as pl


@dataclasses.dataclass(frozen=True)
class Dims:
    rows: object


D = Dims(rows=pl.dynamic("ROWS_DYN"))


@pl.jit
def add_one(x: pl.Tensor[[D.rows, 64], pl.FP32], y: pl.Out[pl.Tensor[[D.rows, 64], pl.FP32]]):
    rows = x.shape[0]
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:rows, :] = pl.add(x[0:rows, :], 1.0)
    return y


@pl.jit
def add_two(x: pl.Tensor[[D.rows, 64], pl.FP32], y: pl.Out[pl.Tensor[[D.rows, 64], pl.FP32]]):
    # decode_fwd.py of pypto-lib's Qwen3-14B binds its block table this way.
    x.bind_dynamic(0, D.rows)
    y.bind_dynamic(0, D.rows)
    rows = x.shape[0]
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:rows, :] = pl.add(x[0:rows, :], 2.0)
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("config_dims_kernels", KERNELS)
    return module


def test_a_dynamic_dimension_held_by_a_config_object_takes_each_calls_extent(kernels):
    for rows in (8, 16):
        x = torch.randn(rows, 64)
        y = torch.zeros(rows, 64)
        kernels.add_one(x, y)
        torch.testing.assert_close(y, x + 1)


def test_bind_dynamic_takes_a_dimension_held_by_a_config_object(kernels):
    for rows in (8, 24):
        x = torch.randn(rows, 64)
        y = torch.zeros(rows, 64)
        kernels.add_two(x, y)
        torch.testing.assert_close(y, x + 2)
