"""pl.store(t, offsets, y, shapes=[r, c]) of the top-left corner of a tile: the simulator writes the
corner only, and backend-ptoas stores it through a view of the tile whose valid region is the corner
(tstore writes its source's valid region), in a .pto that conforms to the PTO dialect."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def first_columns(x: pl.Tensor[[16, 64], pl.FP32], y: pl.InOut[pl.Tensor[[32, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.mul(pl.load(x, [0, 0], [16, 64]), 2.0)
        pl.tile.store(t, [8, 0], y, shapes=[4, 8])
    return y
'''

kernels = kernels_fixture("corner_store.py", KERNELS)


def test_a_store_of_a_tile_corner_writes_only_the_corner(kernels):
    x, y = torch.randn(16, 64), torch.full((32, 8), 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.first_columns.compile(x, y, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    text = pto.read_text()
    assert "valid_row = %c4_index valid_col = %c8_index" in text and "pto.tstore ins(%t_corner" in text, text
    assert_conforms(compiled.output_dir)
    compiled(x, y)
    expected = torch.full((32, 8), 7.0)
    expected[8:12, :] = x[0:4, 0:8] * 2.0
    torch.testing.assert_close(y, expected, rtol=0, atol=0)
