"""pl.store of one element of a one-row tile into a tensor whose last dimension is 1 (a per-row value
kept in a [M, 1] tensor, as a norm's inverse RMS is): ptoas reads such a tensor column-major (DN),
and pto-isa's TSTORE takes a one-row tile into it, so the kernel gets a .pto that conforms to the
PTO dialect, and the simulator writes that one element."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def row_scale(x: pl.Tensor[[16, 8], pl.FP32], y: pl.InOut[pl.Tensor[[16, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.mul(pl.load(x, [3, 0], [1, 8]), 2.0)
        pl.tile.store(t, [5, 0], y, shapes=[1, 1])
    return y
'''

kernels = kernels_fixture("one_row_dn_store.py", KERNELS)


def test_one_element_of_a_row_stores_into_a_column_vector_tensor(kernels):
    x, y = torch.randn(16, 8), torch.full((16, 1), 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.row_scale.compile(x, y, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    text = pto.read_text()
    assert "{layout = #pto.layout<dn>}" in text and "!pto.partition_tensor_view<1x1xf32>" in text, text
    assert_conforms(compiled.output_dir)
    compiled(x, y)
    expected = torch.full((16, 1), 7.0)
    expected[5, 0] = x[3, 0] * 2.0
    torch.testing.assert_close(y, expected, rtol=0, atol=0)
