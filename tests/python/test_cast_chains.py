"""Casts the vector core lacks: the LegalizeTileCast pass turns them into chains of native casts,
which the simulator rounds hop by hop as the device does; a cast no chain reaches is an error at the
cast. Checked against torch doing the same hops."""

from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

KERNELS = """
import pypto.language as pl


@pl.jit
def to_int8(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        y[:, :] = pl.cast(t, target_type=pl.INT8, mode="rint")
    return y


@pl.jit
def int8_to_fp32(x: pl.Tensor[[16, 32], pl.INT8], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        y[:, :] = pl.cast(t, target_type=pl.FP32)
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, path = write_kernel("cast_chain_kernels", KERNELS)
    return module, path


def test_fp32_to_int8_on_ascend910b_rounds_to_fp16_first(kernels):
    module, _ = kernels
    x = torch.empty(16, 32).uniform_(-100, 100)
    # 2.5009 is 2.5 in FP16, which rounds to even: 2, where rounding 2.5009 directly gives 3.
    x[0, 0] = 2.5009
    y = torch.zeros(16, 32, dtype=torch.int8)
    compiled = module.to_int8.compile(x, y, config=RunConfig(platform="a2a3sim", dump_passes=True))
    module.to_int8(x, y, config=RunConfig(platform="a2a3sim"))
    expected = x.to(torch.float16).to(torch.float32).round().to(torch.int8)
    assert torch.equal(y, expected)
    assert y[0, 0].item() == 2
    text = (Path(compiled.output_dir) / "passes_dump" / "08_after_LegalizeTileCast.py").read_text()
    assert 'pl.tile.cast(t, target_type=pl.FP16, mode="rint")' in text, text


def test_ascend950_converts_fp32_to_int8_through_fp16_too(kernels):
    module, _ = kernels
    x = torch.empty(16, 32).uniform_(-100, 100)
    y = torch.zeros(16, 32, dtype=torch.int8)
    module.to_int8(x, y, config=RunConfig(platform="a5sim"))
    assert torch.equal(y, x.to(torch.float16).to(torch.float32).round().to(torch.int8))


def test_a_cast_only_a_lossy_chain_reaches_is_an_error_at_the_cast(kernels):
    module, path = kernels
    x, y = torch.zeros(16, 32, dtype=torch.int8), torch.zeros(16, 32)
    with pytest.raises(Exception) as raised:
        module.int8_to_fp32(x, y, config=RunConfig(platform="a2a3sim"))
    message = str(raised.value)
    assert f"{path}:17:19" in message, message
    assert ("Ascend910B cannot convert INT8 to FP32: no chain of its native conversions gets there without "
            "losing values") in message
    assert "help: Ascend910B converts INT8 to FP16 directly" in message


def test_ascend950_has_no_lossless_chain_for_it_either(kernels):
    # INT8 converts to FP16, INT16 and INT32 there: FP16 is narrower than FP32, and an integer bridge
    # holds no fractions.
    module, _ = kernels
    x, y = torch.randint(-128, 127, (16, 32), dtype=torch.int8), torch.zeros(16, 32)
    with pytest.raises(Exception, match="Ascend950 cannot convert INT8 to FP32"):
        module.int8_to_fp32(x, y, config=RunConfig(platform="a5sim"))
