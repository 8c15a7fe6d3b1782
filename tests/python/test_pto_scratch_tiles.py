"""Kernels whose PTO instructions need a scratch tile the program does not name: pto.ttrans (a
pl.transpose without tmp_tile) and pto.tgather's index form (pl.gather along the last axis, and
pl.tile.gather by flat indices without a tmp of the indices' type and shape).
backend-ptoas places it in UB past the kernel's tiles; each kernel gets a .pto that pto-check finds
nothing in, known divergences included, and computes what torch does on the simulator."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def transpose(x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.transpose(t, 0, 1), [0, 0], out)
    return out


@pl.jit
def rope_interleave(x: pl.Tensor[[8, 64], pl.FP32], cos: pl.Tensor[[8, 32], pl.FP32],
                    swap: pl.Tensor[[8, 64], pl.INT32], dup: pl.Tensor[[8, 64], pl.INT32],
                    out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        c = pl.gather(pl.load(cos, [0, 0], [8, 32]), dim=-1, index=pl.load(dup, [0, 0], [8, 64]))
        s = pl.gather(t, dim=-1, index=pl.load(swap, [0, 0], [8, 64]))
        pl.store(pl.add(pl.mul(t, c), s), [0, 0], out)
    return out


@pl.jit
def flat_gathers(x: pl.Tensor[[8, 64], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
                 out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 64])
        i = pl.load(idx, [0, 0], [8, 32])
        tmp = pl.create_tile([8, 32], dtype=pl.INT32, target_memory=pl.MemorySpace.Vec)
        pl.store(pl.tile.gather(t, i, tmp), [0, 0], out)
        pl.store(pl.tile.gather(t, i), [0, 32], out)
    return out
'''

kernels = kernels_fixture("scratch_tiles.py", KERNELS)


def compile_strictly(kernel, *args):
    """Compiles for a2a3sim, failing on any warning (a kernel without a .pto is one), and returns
    the program and its one .pto module, which must conform to the PTO dialect outright."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    return compiled, pto.read_text()


def test_a_transpose_without_a_tmp_tile_gets_one_in_the_scratch(kernels):
    x, out = torch.randn(16, 32), torch.zeros(32, 16)
    compiled, pto = compile_strictly(kernels.transpose, x, out)
    assert "pto.ttrans ins(%t, %" in pto and "_tmp : " in pto, pto
    compiled(x, out)
    torch.testing.assert_close(out, x.t(), rtol=0, atol=0)


def test_gathers_along_the_last_axis_run_row_by_row(kernels):
    x, cos = torch.randn(8, 64), torch.randn(8, 32)
    j = torch.arange(64)
    swap = (j ^ 1).to(torch.int32).expand(8, 64).contiguous()
    dup = (j // 2).to(torch.int32).expand(8, 64).contiguous()
    out = torch.zeros(8, 64)
    compiled, pto = compile_strictly(kernels.rope_interleave, x, cos, swap, dup, out)
    assert pto.count("pto.tgather ins(") == 2, pto
    compiled(x, cos, swap, dup, out)
    expected = x * torch.gather(cos, 1, dup.long()) + torch.gather(x, 1, swap.long())
    torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)


def test_flat_gathers_are_one_tgather_each(kernels):
    """pl.tile.gather's indices address the source's elements row-major, as TGATHER reads them: one
    pto.tgather each, with the program's tmp (the indices' type and shape), else one in the scratch."""
    x = torch.randn(8, 64)
    idx = torch.randint(0, 8 * 64, (8, 32), dtype=torch.int32)
    out = torch.zeros(8, 64)
    compiled, pto = compile_strictly(kernels.flat_gathers, x, idx, out)
    assert pto.count("pto.tgather ins(") == 2 and "scf.for" not in pto, pto
    compiled(x, idx, out)
    expected = x.flatten()[idx.long()]
    torch.testing.assert_close(out, torch.cat([expected, expected], dim=1), rtol=0, atol=0)
