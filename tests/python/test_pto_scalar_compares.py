"""Integers a kernel makes of a comparison or of a floating-point scalar, and ifs on a comparison of
floating-point scalars or of elements read where they stand: `pl.cast(a == a, pl.INT32)` is 1 or 0, `pl.cast(f, pl.INT32)` rounds f toward
zero, as torch's conversions do. The simulator computes them, and backend-ptoas writes a .pto
(arith.cmpf / cmpi, extui, fptosi) that conforms to the PTO dialect."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def flags(x: pl.Tensor[[4, 8], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32],
          out: pl.InOut[pl.Tensor[[4, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for c in pl.range(8):
            f = pl.read(x, [0, c])
            same = pl.cast(f == f, pl.INT32)
            pl.write(out, [0, c], same * same)
            pl.write(out, [1, c], pl.cast(pl.read(x, [1, c]), pl.INT32))
            g = pl.read(idx, [2, c])
            pl.write(out, [2, c], pl.cast(g >= 0, pl.INT32))
            h = pl.read(x, [3, c])
            if h > 0.5:
                pl.write(out, [3, c], pl.cast(7, pl.INT32))
            if g < pl.cast(2, pl.INT32):
                pl.write(out, [3, c], pl.cast(9, pl.INT32))
            if pl.read(idx, [1, c]) > 0:
                pl.write(out, [1, c], pl.cast(5, pl.INT32))
            if pl.read(x, [2, c]) == h:
                pl.write(out, [2, c], pl.cast(3, pl.INT32))
    return out


@pl.jit
def offsets(idx: pl.Tensor[[4, 8], pl.INT32], out: pl.Out[pl.Tensor[[4, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(4):
            off = pl.cast(b * 3 - 1, pl.INT32)
            t = pl.load(idx, [b, 0], [1, 8])
            pl.store(pl.sub(pl.add(t, off), b), [b, 0], out)
    return out
'''

kernels = kernels_fixture("scalar_compares.py", KERNELS)


def test_comparisons_and_float_scalars_become_integers(kernels):
    x = torch.randn(4, 8) * 3
    x[0, 3] = float("nan")
    x[2, 5] = x[3, 5]
    idx = torch.randint(-4, 4, (4, 8), dtype=torch.int32)
    out = torch.full((4, 8), -1, dtype=torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.flags.compile(x, idx, out, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    text = pto.read_text()
    for op in ("arith.cmpf oeq", "arith.cmpf ogt", "arith.extui", "arith.fptosi"):
        assert op in text, text
    assert_conforms(compiled.output_dir)
    compiled(x, idx, out)
    expected = torch.full((4, 8), -1, dtype=torch.int32)
    expected[0] = (x[0] == x[0]).int()
    expected[1] = torch.where(idx[1] > 0, 5, x[1].int()).int()  # toward zero
    expected[2] = torch.where(x[2] == x[3], 3, (idx[2] >= 0).int()).int()
    expected[3] = torch.where(idx[2] < 2, 9, torch.where(x[3] > 0.5, 7, -1)).int()
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_integers_the_kernel_computes_are_scalars_of_integer_tile_ops(kernels):
    """`pl.add(t, pl.cast(b * 3 - 1, pl.INT32))` and `pl.sub(t, b)` of an INT32 tile: the index value
    narrowed to i32 (arith.index_cast) is the scalar operand of tadds / tsubs."""
    idx = torch.randint(-50, 50, (4, 8), dtype=torch.int32)
    out = torch.zeros(4, 8, dtype=torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernels.offsets.compile(idx, out, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    text = pto.read_text()
    assert "pto.tadds" in text and "pto.tsubs" in text and "index to i32" in text, text
    assert_conforms(compiled.output_dir)
    compiled(idx, out)
    b = torch.arange(4, dtype=torch.int32).unsqueeze(1)
    torch.testing.assert_close(out, idx + (b * 3 - 1) - b, rtol=0, atol=0)
