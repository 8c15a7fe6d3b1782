"""pl.arange from a start the kernel computes as an unsigned integer (`pl.cast(i * 64, pl.UINT32)`,
the global column of a block, as pypto-lib's top-k numbers its candidates): the simulator fills
the row from that start, and backend-ptoas writes the start as the index value narrowed to i32
and re-typed as ui32 for pto.tci, in a .pto that conforms to the PTO dialect."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def numbered(out: pl.Out[pl.Tensor[[2, 64], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(2):
            start = pl.cast(i * 64 + 5, pl.UINT32)
            row = pl.arange(start, [1, 64], dtype=pl.UINT32)
            pl.store(row, [i, 0], out)
    return out
'''

kernels = kernels_fixture("pto_unsigned_arange.py", KERNELS)


def test_an_unsigned_start_computed_in_the_kernel_numbers_the_row(kernels):
    out = torch.zeros(2, 64, dtype=torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.numbered.compile(out.view(torch.uint32), config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    text = pto.read_text()
    assert "arith.index_castui" in text and "builtin.unrealized_conversion_cast" in text, text
    assert "pto.tci ins(" in text and ": ui32)" in text, text
    assert_conforms(compiled.output_dir)
    compiled(out.view(torch.uint32))
    expected = (torch.arange(64, dtype=torch.int32) + 5).repeat(2, 1) + torch.tensor([[0], [64]], dtype=torch.int32)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
