"""Slices whose bounds are computed (`x[:, ki * 64:(ki + 1) * 64]`, `x[:, c0:c1]` after
`c1 = c0 + 32`) and assignments into windows of tiles (`acc[r:r + 16, :] = row_block`), run on the
simulator and checked against torch."""

import pytest
import torch

KERNELS = '''
import pypto.language as pl


@pl.jit
def blockwise_exp(x: pl.Tensor[[32, 256], pl.FP32], y: pl.Out[pl.Tensor[[32, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for ki in pl.range(4):
            y[:, ki * 64:(ki + 1) * 64] = pl.exp(x[:, ki * 64:(ki + 1) * 64])
    return y


@pl.jit
def named_bounds(x: pl.Tensor[[16, 128], pl.FP32], base: pl.Scalar[pl.INDEX],
                 y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c0 = base + 16
        c1 = c0 + 32
        y[:, 0:32] = pl.mul(x[:, c0:c1], 2.0)
    return y


@pl.jit
def rows_into_a_tile(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([64, 32], dtype=pl.FP32, value=0.0)
        for r in pl.range(4):
            # Blocks of rows land in reverse order: block r of x is block 3 - r of y.
            dst = (3 - r) * 16
            acc[dst:dst + 16, :] = pl.add(x[r * 16:(r + 1) * 16, :], 1.0)
        y[:, :] = acc
    return y


@pl.jit
def varying_size(x: pl.Tensor[[16, 128], pl.FP32], y: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(1, 3):
            lo = i * 16
            hi = i * 32
            y[:, lo:hi] = x[:, 0:16]
    return y


@pl.jit
def wrong_window(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([64, 32], dtype=pl.FP32, value=0.0)
        acc[0:16, :] = x[0:8, :]
        y[:, :] = acc
    return y
'''


@pytest.fixture
def kernels(write_kernel):
    return write_kernel("computed_slices", KERNELS)


def test_windows_at_loop_scaled_bounds(kernels):
    module, _ = kernels
    x, y = torch.randn(32, 256), torch.zeros(32, 256)
    module.blockwise_exp(x, y)
    torch.testing.assert_close(y, torch.exp(x))


@pytest.mark.parametrize("base", [0, 40, 80])
def test_bounds_named_by_earlier_scalars(kernels, base):
    module, _ = kernels
    x, y = torch.randn(16, 128), torch.zeros(16, 32)
    module.named_bounds(x, base, y)
    torch.testing.assert_close(y, x[:, base + 16:base + 48] * 2.0)


def test_a_tile_built_from_windows_in_a_loop(kernels):
    module, _ = kernels
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    module.rows_into_a_tile(x, y)
    expected = torch.cat([x[r * 16:(r + 1) * 16] + 1.0 for r in reversed(range(4))])
    torch.testing.assert_close(y, expected)


def test_a_slice_whose_size_varies_is_reported_at_the_slice(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = kernels
    with pytest.raises(ParserTypeError) as error:
        module.varying_size(torch.zeros(16, 128), torch.zeros(16, 128))
    message = str(error.value)
    assert "the slice lo:hi must have a size known at compile time" in message
    assert f"--> {path}:41:18" in message


def test_a_window_and_its_tile_must_have_one_shape(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = kernels
    with pytest.raises(ParserTypeError) as error:
        module.wrong_window(torch.zeros(64, 32), torch.zeros(64, 32))
    message = str(error.value)
    assert "the window of 'acc' has shape [16, 32] but the tile assigned to it has shape [8, 32]" in message
    assert f"--> {path}:49:9" in message
