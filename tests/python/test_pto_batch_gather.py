"""pl.tensor.gather of a rank-3 tensor along its first or second axis in a .pto (upstream's
test_gather.py:320 and :341). The tiles stay rank 3 (the gather has no 2-D form); backend-ptoas types
them as all their rows and gathers through flat positions: one pto.tci per row of the indices for the
offsets along the other axes, the indices times the axis's stride (tmuls), their sum (tadd) and one
pto.tgather. The module conforms to pto-check's table; the flat positions, recomputed here from the
.pto's constants, pick what torch.gather picks, and the simulator matches torch."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def middle(inp: pl.Tensor[[2, 8, 8], pl.FP32], idx: pl.Tensor[[2, 3, 8], pl.INT32],
           out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.tensor.gather(inp, dim=1, index=idx), [0, 0, 0])
    return out


@pl.jit
def first(inp: pl.Tensor[[8, 2, 8], pl.FP32], idx: pl.Tensor[[3, 2, 8], pl.INT32],
          out: pl.Out[pl.Tensor[[3, 2, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.tensor.gather(inp, dim=-3, index=idx), [0, 0, 0])
    return out
'''

kernels = kernels_fixture("pto_batch_gather.py", KERNELS)


@pytest.mark.parametrize("name, dim, shape, index_shape", [("middle", 1, (2, 8, 8), (2, 3, 8)),
                                                           ("first", 0, (8, 2, 8), (3, 2, 8))])
def test_a_gather_across_the_batch_reads_flat_positions(kernels, name, dim, shape, index_shape):
    inp = torch.randn(*shape)
    idx = torch.randint(0, shape[dim], index_shape, dtype=torch.int32)
    out = torch.zeros(*index_shape)
    kernel = getattr(kernels, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernel.compile(inp, idx, out, config=RunConfig(platform="a2a3sim"))
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems
    (pto,) = [p.read_text() for p in Path(compiled.output_dir).glob("kernels/aiv/*.pto")]
    constants = {name: int(value) for name, value in re.findall(r"(%c\w+) = arith\.constant (-?\d+) : i32", pto)}
    starts = [constants[c] for c in re.findall(r"pto\.tci ins\((%\w+) : i32\)", pto)]
    (stride,) = [constants[c] for c in re.findall(r"pto\.tmuls ins\(%\w+, (%\w+) :", pto)]
    assert len(starts) == index_shape[0] * index_shape[1] and len(re.findall(r"pto\.tgather ", pto)) == 1
    # Each row of the indices: its offsets start + k, plus the index times the stride.
    rows = idx.reshape(-1, index_shape[2]).long()
    flat = rows * stride + torch.tensor(starts)[:, None] + torch.arange(index_shape[2])
    expected = torch.gather(inp, dim, idx.long())
    assert torch.equal(inp.flatten()[flat].reshape(index_shape), expected)
    compiled(inp, idx, out)
    assert torch.equal(out, expected)
