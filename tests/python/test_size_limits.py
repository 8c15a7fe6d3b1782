"""Sizes past what a kernel or a run can hold are errors at the source line, found before anything
is allocated or copied: a pl.unroll of millions of trips, an SPMD launch of a billion blocks, a tile
of 2^62 elements. Each of these once ran for minutes, ran out of memory, or wrapped to a small size."""

import pytest
import torch

KERNELS = '''
import pypto.language as pl


@pl.jit
def long_unroll(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        for i in pl.unroll(10000000):
            t = pl.add(t, 1.0)
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def many_blocks(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    for b in pl.spmd(1000000000, name_hint="tiny"):
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def huge_tile(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.full([1 << 31, 1 << 31], dtype=pl.FP32, value=0.0)
        pl.store(pl.slice(t, [16, 64], [0, 0]), [0, 0], y)
    return y
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("size_limit_kernels", KERNELS)
    return module


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(KERNELS.splitlines(), start=1) if text in line)


def _error(kernels, name) -> str:
    with pytest.raises(Exception) as info:
        getattr(kernels, name)(torch.zeros(16, 64), torch.zeros(16, 64))
    return str(info.value)


def test_an_unroll_of_ten_million_trips_is_refused_at_the_loop(kernels):
    message = _error(kernels, "long_unroll")
    assert "pl.unroll over 'i' runs 10000000 times, more than the 1024 copies a loop may be unrolled into" in message
    assert f"size_limit_kernels.py:{line_of('pl.unroll(10000000)')}:9" in message, message
    assert "use pl.range for a long loop, and unroll a short inner one" in message


def test_a_launch_of_a_billion_blocks_is_refused_at_the_launch(kernels):
    message = _error(kernels, "many_blocks")
    assert ("the pl.spmd launch of 'tiny' has 1000000000 blocks, more than the 4000000 tasks a run may hold "
            "(each block is a task)") in message, message
    assert f"size_limit_kernels.py:{line_of('pl.spmd(1000000000')}:5" in message, message


def test_a_tile_of_2_62_elements_does_not_wrap_to_a_small_size(kernels):
    message = _error(kernels, "huge_tile")
    assert ("tile 't' occupies bytes [0, 9223372036854775807) of Vec, outside its 188416-byte capacity on "
            "Ascend910B") in message, message
    assert f"size_limit_kernels.py:{line_of('pl.full([1 << 31')}:13" in message, message
