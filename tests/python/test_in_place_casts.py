"""A tile.cast writes its result over its operand when the operand dies there and the result's
elements are no wider (upstream's rule), so a dequantizing kernel of 64 KB tiles fits the 184 KB of UB
on Ascend910B; a widening cast still takes a buffer of its own."""

import pytest
import torch

from pypto.language.parser.diagnostics import ResourceError
from pypto.runtime import RunConfig

ROWS, COLS, PARTS = 16, 1024, 2

KERNELS = '''
import pypto.language as pl

ROWS, COLS, PARTS = 16, 1024, 2


# `base` (64 KB) lives through the loop; each part's INT32 rows (64 KB) become FP32 in place, so two
# 64 KB tiles and the small scales are live at once, not three.
@pl.jit
def dequant(acc: pl.Tensor[[ROWS * PARTS + ROWS, COLS], pl.INT32], scale: pl.Tensor[[ROWS, 1], pl.FP32],
            out: pl.Out[pl.Tensor[[ROWS * PARTS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        base = pl.cast(acc[0:ROWS, :], target_type=pl.FP32, mode="none")
        for p in pl.range(PARTS):
            r0 = ROWS + p * ROWS
            part = pl.cast(acc[r0 : r0 + ROWS, :], target_type=pl.FP32, mode="none")
            out[p * ROWS : p * ROWS + ROWS, :] = pl.add(base, pl.row_expand_mul(part, scale[:, :]))
    return out


# FP16 -> FP32 widens: the result cannot be written over its 32 KB operand, and a (64 KB), b (64 KB)
# and x (32 KB) leave 24 KB of UB for it.
@pl.jit
def widen(x: pl.Tensor[[ROWS, COLS], pl.FP16], y: pl.Tensor[[ROWS * 3, COLS], pl.FP32],
          out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = y[0:ROWS, :]
        b = y[ROWS : 2 * ROWS, :]
        wide = pl.cast(x[:, :], target_type=pl.FP32, mode="none")
        out[:, :] = pl.add(pl.add(a, b), wide)
    return out
'''


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("casts", KERNELS)
    return module


def test_a_same_width_cast_reuses_its_operand_and_fits_ub(kernels):
    acc = torch.randint(-(1 << 20), 1 << 20, (ROWS * PARTS + ROWS, COLS), dtype=torch.int32)
    scale = torch.rand(ROWS, 1)
    out = torch.empty(ROWS * PARTS, COLS)
    kernels.dequant(acc, scale, out, config=RunConfig(platform="a2a3sim"))
    base = acc[:ROWS].float()
    expected = torch.cat([base + acc[ROWS + p * ROWS : 2 * ROWS + p * ROWS].float() * scale for p in range(PARTS)])
    torch.testing.assert_close(out, expected)


def test_a_widening_cast_takes_its_own_buffer(write_kernel):
    module, path = write_kernel("widening", KERNELS)
    x = torch.randn(ROWS, COLS).half()
    with pytest.raises(ResourceError) as info:
        module.widen(x, torch.randn(ROWS * 3, COLS), torch.empty(ROWS, COLS), config=RunConfig(platform="a2a3sim"))
    assert info.value.message == (
        f"kernel 'widen_incore_0' (from {path}:26:5) does not fit in UB (Vec): tile 'wide' "
        "(pl.Tile[[16, 1024], pl.FP32, pl.Mem.Vec]) needs 65536 bytes while 163840 bytes are in use, "
        "and Ascend910B has 188416 bytes"
    )
    assert info.value.location == f"{path}:29:9"
