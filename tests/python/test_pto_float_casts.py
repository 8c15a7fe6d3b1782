"""pl.cast of a literal or an integer to FP32 inside a kernel is a floating-point scalar, which pl.write
stores: the simulator computes what torch does, and backend-ptoas writes a .pto for the kernel
(arith.sitofp of the index value through i64, or a constant) that conforms to the PTO dialect."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def signs(x: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for c in pl.range(8):
            lane = c % 2
            pl.write(x, [0, c], pl.cast(pl.cast(lane * 2 - 1, pl.INT32), pl.FP32))
            pl.write(x, [1, c], pl.cast(0.0, pl.FP32))
            pl.write(x, [2, c], pl.cast(pl.cast(c, pl.INT64), pl.FP32))
    return x
'''

kernels = kernels_fixture("float_casts.py", KERNELS)


def test_float_casts_of_integers_and_literals_are_written(kernels):
    x = torch.full((4, 8), 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.signs.compile(x, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    assert "arith.sitofp" in pto.read_text()
    assert_conforms(compiled.output_dir)
    compiled(x)
    j = torch.arange(8)
    expected = torch.full((4, 8), 5.0)
    expected[0], expected[1], expected[2] = (j % 2 * 2 - 1).float(), 0.0, j.float()
    torch.testing.assert_close(x, expected, rtol=0, atol=0)
