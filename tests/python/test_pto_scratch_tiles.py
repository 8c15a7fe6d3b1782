"""Kernels whose PTO instructions need a scratch tile the program does not name: pto.ttrans (a
pl.transpose without tmp_tile) and pto.tgather's index form (pl.gather along the last axis, and
pl.tile.gather by flat indices without a tmp of the indices' type and shape).
A transpose's scratch is a tile of the IR (the TransposeScratchTiles pass), placed by memory
allocation where bytes are free at the transpose; a gather's, backend-ptoas places in UB past the
kernel's tiles. Each kernel gets a .pto that pto-check finds nothing in, known divergences included,
and computes what torch does on the simulator."""

import re
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
def transpose_after_a_peak(x: pl.Tensor[[256, 160], pl.FP32], y: pl.Out[pl.Tensor[[128, 160], pl.FP32]],
                           out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [128, 160])
        b = pl.load(x, [128, 0], [128, 160])
        pl.store(pl.add(a, b), [0, 0], y)
        s = pl.load(x, [0, 0], [64, 128])
        pl.store(pl.transpose(s, 0, 1), [0, 0], out)
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


def vec(rows, cols):
    return (f"!pto.tile_buf<loc=vec, dtype=f32, rows={rows}, cols={cols}, v_row=?, v_col=?, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=0>")


def placement_lines(pto):
    """The .pto's tile allocations and transposes, without their loc()."""
    return [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.splitlines()
            if "pto.alloc_tile" in line or "pto.ttrans" in line]


def alloc(name, addr, rows, cols):
    return f"%{name} = pto.alloc_tile addr = %c{addr}_i64 valid_row = %c{rows}_index valid_col = %c{cols}_index : " \
           f"{vec(rows, cols)}"


def test_a_transpose_without_a_tmp_tile_gets_a_scratch_tile_like_its_source(kernels):
    """The scratch sits between the source (at 0) and the result, as memory allocation placed it."""
    x, out = torch.randn(16, 32), torch.zeros(32, 16)
    compiled, pto = compile_strictly(kernels.transpose, x, out)
    assert placement_lines(pto) == [
        alloc("t", 0, 16, 32),
        alloc("__tmp_v0_tmp", 2048, 16, 32),
        alloc("__tmp_v0", 4096, 32, 16),
        f"pto.ttrans ins(%t, %__tmp_v0_tmp : {vec(16, 32)}, {vec(16, 32)}) outs(%__tmp_v0 : {vec(32, 16)})",
    ], pto
    compiled(x, out)
    torch.testing.assert_close(out, x.t(), rtol=0, atol=0)


def test_a_transposes_scratch_takes_bytes_free_at_the_transpose(kernels):
    """UB holds 160 KB while a and b live; past that there is no room for a 32 KB scratch (184 KB of
    UB). At the transpose only s is alive, and the scratch goes beside it."""
    x, y, out = torch.randn(256, 160), torch.zeros(128, 160), torch.zeros(128, 64)
    compiled, pto = compile_strictly(kernels.transpose_after_a_peak, x, y, out)
    assert placement_lines(pto) == [
        alloc("a", 0, 128, 160),
        alloc("b", 81920, 128, 160),
        alloc("__tmp_v0", 0, 128, 160),
        alloc("s", 0, 64, 128),
        alloc("__tmp_v1_tmp", 32768, 64, 128),
        alloc("__tmp_v1", 65536, 128, 64),
        f"pto.ttrans ins(%s, %__tmp_v1_tmp : {vec(64, 128)}, {vec(64, 128)}) outs(%__tmp_v1 : {vec(128, 64)})",
    ], pto
    compiled(x, y, out)
    torch.testing.assert_close(y, x[:128] + x[128:], rtol=0, atol=0)
    torch.testing.assert_close(out, x[:64, :128].t(), rtol=0, atol=0)


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
