"""pl.reshape of a tensor in orchestration code: a view of the same buffer under another shape,
passed to kernels like any tensor, checked against torch."""

from pathlib import Path

import pytest
import torch

from pypto.language.parser import ParserTypeError

KERNELS = """
import pypto.language as pl

@pl.jit
def flat_exp(x: pl.Tensor[[4, 8, 64], pl.FP32], y: pl.Out[pl.Tensor[[4, 8, 64], pl.FP32]]):
    x2 = pl.reshape(x, [32, 64])
    y2 = pl.reshape(y, [32, 64])
    for r in pl.range(0, 32, 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x2, [r, 0], [16, 64])
            pl.store(pl.exp(t), [r, 0], y2)
    return y


@pl.jit
def through_intermediate(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    tmp = pl.create_tensor([16, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(x, [0, 0], [16, 64]), 3.0), [0, 0], tmp)
    tmp_square = pl.reshape(tmp, [32, 32])
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(tmp_square, [0, 0], [32, 32]), 1.0), [0, 0], y)
    return y


@pl.jit
def wrong_count(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    x2 = pl.reshape(x, [32, 64])
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x2, [0, 0], [16, 64]), [0, 0], y)
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("views", KERNELS)
    return module


def test_kernels_read_and_write_through_views(kernels):
    module = kernels
    x = torch.randn(4, 8, 64)
    y = torch.zeros(4, 8, 64)
    module.flat_exp(x, y)
    torch.testing.assert_close(y, torch.exp(x))
    cpp = next(Path(module.flat_exp.compile(x, y).output_dir).glob("orchestration/*.cpp")).read_text()
    assert "    uint32_t x2_shapes[2] = {32, 64};\n    const ChipTensor x2 = ext_x.reshape(x2_shapes, 2);\n" in cpp
    assert "      params_t0.add_output(y2);\n" in cpp


def test_a_view_of_an_intermediate_orders_its_reader_after_the_writer(kernels):
    module = kernels
    x = torch.randn(16, 64)
    y = torch.zeros(32, 32)
    module.through_intermediate(x, y)
    torch.testing.assert_close(y, (x * 3.0).reshape(32, 32) + 1.0)


def test_a_reshape_keeps_the_element_count(kernels):
    module = kernels
    with pytest.raises(ParserTypeError, match=r"cannot reshape pl.Tensor\[\[16, 64\], pl.FP32\] to \[32, 64\]: "
                       "1024 elements against 2048") as error:
        module.wrong_count(torch.zeros(16, 64), torch.zeros(16, 64))
    assert "views.py:28:10" in str(error.value)
