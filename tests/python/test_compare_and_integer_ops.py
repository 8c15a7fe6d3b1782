"""Comparisons, remainders, padding into a larger tile, and arithmetic on 8- and 16-bit integer tiles,
on the simulator against torch: pl.tile.cmp / pl.tile.cmps write a packed UINT8 predicate mask (bit
c % 8 of byte c / 8 for column c, rows padded to 32 bytes) that pl.tile.sel reads; pl.tile.fmod /
pl.tile.fmods are torch.fmod; pl.tile.fillpad_inplace pads a tile in its own buffer and
pl.tile.fillpad_expand into a larger one; INT8/UINT8/INT16/UINT16 tiles compute in INT32 and wrap
back, as their own two's complement arithmetic does, and UINT32 tiles add, subtract and multiply as
INT32 (the same bits) but refuse what reads them as signed."""

import pytest
import torch

import pypto.ir
from pypto.language.parser import ParserTypeError
from conftest import import_source, kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def pick_by_mode(a: pl.Tensor[[16, 24], pl.FP32], b: pl.Tensor[[16, 24], pl.FP32],
                 eq: pl.Out[pl.Tensor[[16, 24], pl.FP32]], ne: pl.Out[pl.Tensor[[16, 24], pl.FP32]],
                 lt: pl.Out[pl.Tensor[[16, 24], pl.FP32]], le: pl.Out[pl.Tensor[[16, 24], pl.FP32]],
                 gt: pl.Out[pl.Tensor[[16, 24], pl.FP32]], ge: pl.Out[pl.Tensor[[16, 24], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 24])
        y = pl.load(b, [0, 0], [16, 24])
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        eq[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=0), x, y, tmp)
        ne[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=1), x, y, tmp)
        lt[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=2), x, y, tmp)
        le[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=3), x, y, tmp)
        gt[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=4), x, y, tmp)
        ge[:, :] = pl.tile.sel(pl.tile.cmp(x, y, cmp_type=5), x, y, tmp)
    return eq, ne, lt, le, gt, ge


@pl.jit
def mask_of_int16(a: pl.Tensor[[8, 40], pl.INT16], mask: pl.Out[pl.Tensor[[8, 32], pl.UINT8]],
                  picked: pl.Out[pl.Tensor[[8, 40], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 40])
        m = pl.cmp(t, 3, cmp_type=4)
        mask[:, :] = m
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        picked[:, :] = pl.tile.sel(m, t, pl.tile.full([8, 40], dtype=pl.INT16, value=-1), tmp)
    return mask, picked


@pl.jit
def half_against_scalar(a: pl.Tensor[[16, 16], pl.FP16], picked: pl.Out[pl.Tensor[[16, 16], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        zero = pl.tile.full([16, 16], dtype=pl.FP16, value=0.0)
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        picked[:, :] = pl.tile.sel(pl.tile.cmps(t, 0.1, cmp_type=3), t, zero, tmp)
    return picked


@pl.jit
def remainders(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32], i: pl.Tensor[[16, 32], pl.INT32],
               j: pl.Tensor[[16, 32], pl.INT32], h: pl.Tensor[[16, 32], pl.FP16],
               by_tile: pl.Out[pl.Tensor[[16, 32], pl.FP32]], by_scalar: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
               ints: pl.Out[pl.Tensor[[16, 32], pl.INT32]], halves: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        by_tile[:, :] = pl.tile.fmod(x, pl.load(b, [0, 0], [16, 32]))
        by_scalar[:, :] = pl.fmod(x, -2.5)
        ints[:, :] = pl.fmod(pl.load(i, [0, 0], [16, 32]), pl.load(j, [0, 0], [16, 32]))
        halves[:, :] = pl.tile.fmods(pl.load(h, [0, 0], [16, 32]), 0.75)
    return by_tile, by_scalar, ints, halves


@pl.jit
def narrow_ints(a: pl.Tensor[[16, 64], pl.INT16], r: pl.Tensor[[16, 1], pl.INT16], b: pl.Tensor[[16, 64], pl.INT8],
                c: pl.Tensor[[16, 64], pl.INT8], u: pl.Tensor[[16, 64], pl.UINT8],
                shifted: pl.Out[pl.Tensor[[16, 64], pl.INT16]], added: pl.Out[pl.Tensor[[16, 64], pl.INT16]],
                mins: pl.Out[pl.Tensor[[16, 1], pl.INT16]], larger: pl.Out[pl.Tensor[[16, 64], pl.INT8]],
                col_sums: pl.Out[pl.Tensor[[1, 64], pl.UINT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        shifted[:, :] = pl.tile.subs(t, 3)
        added[:, :] = pl.tile.row_expand_add(t, pl.load(r, [0, 0], [16, 1]))
        tmp = pl.tile.create([16, 64], dtype=pl.INT16)
        mins[:, :] = pl.tile.row_min(t, tmp)
        larger[:, :] = pl.maximum(pl.load(b, [0, 0], [16, 64]), pl.load(c, [0, 0], [16, 64]))
        col_sums[:, :] = pl.tile.col_sum(pl.load(u, [0, 0], [16, 64]))
    return shifted, added, mins, larger, col_sums


@pl.jit
def packed_row_add(a: pl.Tensor[[16, 64], pl.FP32], blocks: pl.Tensor[[16, 8], pl.FP32],
                   i: pl.Tensor[[16, 48], pl.INT32], iblocks: pl.Tensor[[16, 8], pl.INT32],
                   y: pl.Out[pl.Tensor[[16, 64], pl.FP32]], iy: pl.Out[pl.Tensor[[16, 48], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        y[:, :] = pl.tile.row_expand_add(t, pl.load(blocks, [0, 0], [16, 8]))
        tmp = pl.tile.create([16, 48], dtype=pl.INT32)
        iy[:, :] = pl.tile.row_expand_add(pl.load(i, [0, 0], [16, 48]), pl.load(iblocks, [0, 0], [16, 8]), tmp=tmp)
    return y, iy


@pl.jit
def pad_in_place(a: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[10, 20])
        y[:, :] = pl.tile.fillpad_inplace(t, pad_value=pl.PadValue.max)
    return y


@pl.jit
def pad_to_larger(a: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 16], pl.INT32],
                  y: pl.Out[pl.Tensor[[16, 32], pl.FP32]], iy: pl.Out[pl.Tensor[[16, 24], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 16], valid_shape=[5, 12])
        y[:, :] = pl.tile.fillpad_expand(t, [16, 32], pad_value=pl.PadValue.min)
        iy[:, :] = pl.tile.fillpad_expand(pl.load(i, [0, 0], [8, 16]), [16, 24], pad_value=pl.PadValue.max)
    return y, iy


@pl.jit
def bf16_subs(a: pl.Tensor[[16, 32], pl.BF16], y: pl.Out[pl.Tensor[[16, 32], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.subs(pl.load(a, [0, 0], [16, 32]), 1.5)
    return y


@pl.jit
def whole_tensors(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                  lt: pl.Out[pl.Tensor[[16, 32], pl.FP32]], ge: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
                  low: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        lt = pl.assemble(lt, pl.cmp(a, b, cmp_type=2), [0, 0])
        ge = pl.assemble(ge, pl.cmp(a, 0.0, cmp_type=5), [0, 0])
        low = pl.assemble(low, pl.tensor.minimum(a, b), [0, 0])
    return lt, ge, low


@pl.jit
def first_peak(x: pl.Tensor[[32, 64], pl.FP32], where: pl.Out[pl.Tensor[[8, 64], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        best = pl.full([8, 64], dtype=pl.FP32, value=-1e30)
        block_of_best = pl.full([8, 64], dtype=pl.INT32, value=0)
        for block in pl.range(4):
            scores = x[block * 8 : block * 8 + 8, 0:64]
            newer = pl.cast(pl.cmp(scores, best, cmp_type=4), target_type=pl.INT32)
            best = pl.maximum(best, scores)
            to_new = pl.neg(pl.sub(block_of_best, pl.cast(block, pl.INT32)))
            block_of_best = pl.add(block_of_best, pl.mul(newer, to_new))
        positive = pl.cast(pl.cmp(best, 0.0, cmp_type=5), target_type=pl.INT32)
        where[:, :] = pl.add(block_of_best, pl.mul(positive, 10))
    return where


@pl.jit
def bad_mode(a: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.UINT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        y[:, :] = pl.tile.cmps(t, 0.0, cmp_type=7)
    return y


@pl.jit
def uint32_wraps(a: pl.Tensor[[16, 16], pl.UINT32], b: pl.Tensor[[16, 16], pl.UINT32],
                 diff: pl.Out[pl.Tensor[[16, 16], pl.UINT32]], prod: pl.Out[pl.Tensor[[16, 16], pl.UINT32]],
                 shifted: pl.Out[pl.Tensor[[16, 16], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 16])
        y = pl.load(b, [0, 0], [16, 16])
        diff[:, :] = pl.tile.sub(x, y)
        prod[:, :] = pl.tile.mul(x, y)
        shifted[:, :] = pl.tile.adds(x, 7)
    return diff, prod, shifted


@pl.jit
def uint32_maximum(a: pl.Tensor[[16, 16], pl.UINT32], y: pl.Out[pl.Tensor[[16, 16], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 16])
        y[:, :] = pl.tile.maximum(x, x)
    return y
'''


kernels = kernels_fixture("compare_kernels.py", KERNELS)


def packed_mask(predicate: torch.Tensor, row_bytes: int) -> torch.Tensor:
    """The UINT8 mask of a boolean [rows, cols] predicate: bit c % 8 of byte c / 8, zero-padded rows."""
    rows, cols = predicate.shape
    mask = torch.zeros(rows, row_bytes, dtype=torch.int32)
    for c in range(cols):
        mask[:, c // 8] |= predicate[:, c].to(torch.int32) << (c % 8)
    return mask.to(torch.uint8)


def test_each_cmp_mode_selects_like_torch_where(kernels):
    # Small integers in floats: many ties, so EQ/LE/GE differ from NE/LT/GT.
    a = (torch.arange(16 * 24).reshape(16, 24) % 7 - 3).float()
    b = (torch.arange(16 * 24).reshape(16, 24) % 5 - 2).float()
    outs = [torch.empty(16, 24) for _ in range(6)]
    kernels.pick_by_mode(a, b, *outs)
    for out, predicate in zip(outs, [a == b, a != b, a < b, a <= b, a > b, a >= b]):
        assert torch.equal(out, torch.where(predicate, a, b))


def test_cmps_of_int16_writes_the_packed_mask(kernels):
    a = (torch.arange(8 * 40, dtype=torch.int32).reshape(8, 40) * 37 % 11 - 4).to(torch.int16)
    mask = torch.zeros(8, 32, dtype=torch.uint8)
    picked = torch.empty(8, 40, dtype=torch.int16)
    kernels.mask_of_int16(a, mask, picked)
    assert torch.equal(mask, packed_mask(a > 3, 32))
    assert torch.equal(picked, torch.where(a > 3, a, torch.tensor(-1, dtype=torch.int16)))


def test_fp16_cmps_compares_with_the_scalar_rounded_to_fp16(kernels):
    # 0.1 is 0.0999755859375 in FP16: the FP16 element equal to it is <= the scalar.
    values = torch.tensor([0.0999755859375, 0.10009765625, -1.0, 0.5], dtype=torch.float16)
    a = values.repeat(64).reshape(16, 16)
    picked = torch.empty(16, 16, dtype=torch.float16)
    kernels.half_against_scalar(a, picked)
    assert torch.equal(picked, torch.where(a <= torch.tensor(0.1, dtype=torch.float16), a, 0.0))


def test_fmod_and_fmods_match_torch(kernels):
    torch.manual_seed(0)
    a = torch.randn(16, 32) * 10
    b = torch.where(torch.rand(16, 32) < 0.5, -1.0, 1.0) * (torch.rand(16, 32) * 3 + 0.5)
    i = torch.randint(-1000, 1000, (16, 32), dtype=torch.int32)
    j = torch.randint(1, 17, (16, 32), dtype=torch.int32) * torch.where(torch.rand(16, 32) < 0.5, -1, 1).int()
    h = (torch.randn(16, 32) * 4).half()
    by_tile, by_scalar, halves = torch.empty(16, 32), torch.empty(16, 32), torch.empty(16, 32, dtype=torch.float16)
    ints = torch.empty(16, 32, dtype=torch.int32)
    kernels.remainders(a, b, i, j, h, by_tile, by_scalar, ints, halves)
    assert torch.equal(by_tile, torch.fmod(a, b))
    assert torch.equal(by_scalar, torch.fmod(a, -2.5))
    assert torch.equal(ints, torch.fmod(i, j))
    assert torch.equal(halves, torch.fmod(h, 0.75))


def test_narrow_integer_tiles_wrap_like_their_own_arithmetic(kernels):
    a = (torch.arange(16 * 64, dtype=torch.int32).reshape(16, 64) * 4099 % 65536 - 32768).to(torch.int16)
    a[0, 0] = -32768  # subs 3 wraps to 32765
    r = (torch.arange(16, dtype=torch.int32).reshape(16, 1) * 1001 - 7000).to(torch.int16)
    b = (torch.arange(16 * 64, dtype=torch.int32).reshape(16, 64) * 7 % 256 - 128).to(torch.int8)
    c = (torch.arange(16 * 64, dtype=torch.int32).reshape(16, 64) * 13 % 256 - 128).to(torch.int8)
    u = (torch.arange(16 * 64, dtype=torch.int32).reshape(16, 64) * 31 % 256).to(torch.uint8)
    shifted, added = torch.empty(16, 64, dtype=torch.int16), torch.empty(16, 64, dtype=torch.int16)
    mins = torch.empty(16, 1, dtype=torch.int16)
    larger = torch.empty(16, 64, dtype=torch.int8)
    col_sums = torch.empty(1, 64, dtype=torch.uint8)
    kernels.narrow_ints(a, r, b, c, u, shifted, added, mins, larger, col_sums)
    wide = a.to(torch.int32)
    assert torch.equal(shifted, (wide - 3).to(torch.int16))  # .to keeps the low bits
    assert shifted[0, 0].item() == 32765
    assert torch.equal(added, (wide + r.to(torch.int32)).to(torch.int16))
    assert torch.equal(mins, a.min(dim=1, keepdim=True).values)
    assert torch.equal(larger, torch.maximum(b, c))
    assert torch.equal(col_sums, (u.to(torch.int32).sum(dim=0, keepdim=True) % 256).to(torch.uint8))


def test_row_expand_add_repeats_a_packed_block_across_each_row(kernels):
    torch.manual_seed(1)
    a, blocks = torch.randn(16, 64), torch.randn(16, 8)
    i = torch.randint(-100, 100, (16, 48), dtype=torch.int32)
    iblocks = torch.randint(-100, 100, (16, 8), dtype=torch.int32)
    y, iy = torch.empty(16, 64), torch.empty(16, 48, dtype=torch.int32)
    kernels.packed_row_add(a, blocks, i, iblocks, y, iy)
    assert torch.equal(y, a + blocks.repeat(1, 8))
    assert torch.equal(iy, i + iblocks.repeat(1, 6))


def test_fillpad_inplace_pads_outside_the_valid_region(kernels):
    a = torch.randn(16, 32)
    y = torch.empty(16, 32)
    kernels.pad_in_place(a, y)
    expected = torch.full((16, 32), float("inf"))
    expected[:10, :20] = a[:10, :20]
    assert torch.equal(y, expected)


def test_fillpad_expand_copies_the_valid_region_into_a_larger_tile(kernels):
    a = torch.randn(8, 16)
    i = torch.randint(-50, 50, (8, 16), dtype=torch.int32)
    y, iy = torch.empty(16, 32), torch.empty(16, 24, dtype=torch.int32)
    kernels.pad_to_larger(a, i, y, iy)
    expected = torch.full((16, 32), float("-inf"))
    expected[:5, :12] = a[:5, :12]
    assert torch.equal(y, expected)
    iexpected = torch.full((16, 24), 2**31 - 1, dtype=torch.int32)
    iexpected[:8, :16] = i
    assert torch.equal(iy, iexpected)


def test_an_unknown_cmp_type_is_refused_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.bad_mode(torch.zeros(16, 16), torch.empty(16, 32, dtype=torch.uint8))
    message = str(info.value)
    assert "tile.cmps cmp_type=7 is not a comparison" in message
    assert "compare_kernels.py:" in message


def test_bf16_tiles_compute_in_fp32_and_round_each_result(kernels):
    a = (torch.randn(16, 32) * 8).bfloat16()
    y = torch.empty(16, 32, dtype=torch.bfloat16)
    kernels.bf16_subs(a, y)
    assert torch.equal(y, (a.float() - 1.5).bfloat16())


def test_whole_tensors_in_a_kernel_compare_to_ones_and_zeros(kernels):
    """pl.cmp of whole tensors is upstream's tensor.cmp (1 where it holds, 0 elsewhere, in the operand's
    dtype), and pl.tensor.X without a tensor form is the tile op on the loaded tensors."""
    a = (torch.arange(16 * 32).reshape(16, 32) % 7 - 3).float()
    b = (torch.arange(16 * 32).reshape(16, 32) % 5 - 2).float()
    lt, ge, low = torch.empty(16, 32), torch.empty(16, 32), torch.empty(16, 32)
    kernels.whole_tensors(a, b, lt, ge, low)
    assert torch.equal(lt, (a < b).float())
    assert torch.equal(ge, (a >= 0).float())
    assert torch.equal(low, torch.minimum(a, b))


PROGRAM = '''@pl.program
class CompareOps:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 48], pl.FP32], b: pl.Tensor[[16, 48], pl.FP32], v: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        x: pl.Tile[[16, 48], pl.FP32] = pl.load(a, [0, 0], [16, 48], valid_shape=[12, 40])
        y: pl.Tile[[16, 48], pl.FP32] = pl.load(b, [0, 0], [16, 48])
        m: pl.Tile[[16, 32], pl.UINT8] = pl.tile.cmp(x, y, cmp_type=4)
        tmp: pl.Tile[[1, 32], pl.UINT8] = pl.tile.create([1, 32], dtype=pl.UINT8)
        s: pl.Tile[[16, 48], pl.FP32] = pl.tile.sel(m, x, y, tmp)
        r: pl.Tile[[16, 48], pl.FP32] = pl.tile.fmods(pl.tile.fmod(s, y), 2.0)
        p: pl.Tile[[16, 48], pl.FP32] = pl.tile.row_expand_add(r, pl.load(v, [0, 0], [16, 8]), tmp=pl.tile.create([16, 48], dtype=pl.FP32))
        q: pl.Tile[[16, 48], pl.FP32] = pl.tile.fillpad_inplace(pl.tile.sel(pl.tile.cmps(x, 0.5, cmp_type=1), p, x, tmp), pad_value=pl.PadValue.min)
        e: pl.Tile[[32, 64], pl.FP32] = pl.tile.fillpad_expand(q, [32, 64], pad_value=pl.PadValue.max)
        out = pl.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 48], pl.FP32], b: pl.Tensor[[16, 48], pl.FP32], v: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out = self.kernel(a, b, v, out)
        return out
'''

PRINTED = '''@pl.program
class CompareOps:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 48], pl.FP32], b: pl.Tensor[[16, 48], pl.FP32], v: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        x: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[12, 40])] = pl.tile.load(a, [0, 0], [16, 48], [12, 40])
        y: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [16, 48])
        m: pl.Tile[[16, 32], pl.UINT8, pl.Mem.Vec, pl.TileView(valid_shape=[12, 5])] = pl.tile.cmp(x, y, cmp_type=4)
        tmp: pl.Tile[[1, 32], pl.UINT8, pl.Mem.Vec] = pl.tile.create([1, 32], dtype=pl.UINT8)
        s: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[12, 40])] = pl.tile.sel(m, x, y, tmp)
        r: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[12, 40])] = pl.tile.fmods(pl.tile.fmod(s, y), 2.0)
        p: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[12, 40])] = pl.tile.row_expand_add(r, pl.tile.load(v, [0, 0], [16, 8]), pl.tile.create([16, 48], dtype=pl.FP32))
        q: pl.Tile[[16, 48], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_inplace(pl.tile.sel(pl.tile.cmps(x, 0.5, cmp_type=1), p, x, tmp), pad_value="min")
        e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.fillpad_expand(q, [32, 64], pad_value="max")
        pl.tile.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 48], pl.FP32], b: pl.Tensor[[16, 48], pl.FP32], v: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        out_1: pl.Tensor[[32, 64], pl.FP32] = self.kernel(a, b, v, out)
        return out_1
'''

HEADER = "import pypto.language as pl\n\n"


def test_cmp_of_tensor_windows_and_values_computed_from_them_is_ones_and_zeros(kernels):
    """Upstream types a window `x[a:b, c:d]`, pl.full and what unified ops compute from them as tensors,
    so pl.cmp of them is tensor.cmp (0/1 in the operand's shape), not the packed mask, also where the
    value is carried by a loop (lm_head.py's greedy sample)."""
    x = torch.randn(32, 64)
    where = torch.zeros(8, 64, dtype=torch.int32)
    kernels.first_peak(x, where)
    blocks = x.reshape(4, 8, 64)
    assert torch.equal(where, blocks.argmax(0).int() + (blocks.max(0).values >= 0).int() * 10)


def test_the_new_ops_print_as_the_dsl_spells_them_and_parse_back(tmp_path):
    program = import_source(tmp_path / "compare_ops.py", HEADER + PROGRAM).CompareOps
    assert str(program) == PRINTED
    again = import_source(tmp_path / "printed.py", HEADER + PRINTED).CompareOps
    assert str(again) == PRINTED


def test_the_printed_program_runs(tmp_path):
    program = import_source(tmp_path / "compare_ops_run.py", HEADER + PROGRAM).CompareOps
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    torch.manual_seed(2)
    a, b = torch.randn(16, 48), torch.rand(16, 48) + 0.5
    v, out = torch.randn(16, 8), torch.zeros(32, 64)
    compiled(a, b, v, out)
    x, y = a[:12, :40], b[:12, :40]
    s = torch.where(x > y, x, y)
    p = torch.fmod(torch.fmod(s, y), 2.0) + v[:12].repeat(1, 5)[:, :40]
    q = torch.full((16, 48), float("-inf"))
    q[:12, :40] = torch.where(x != 0.5, p, x)
    expected = torch.full((32, 64), float("inf"))
    expected[:16, :48] = q
    assert torch.equal(out, expected)


def as_uint32(values: torch.Tensor) -> torch.Tensor:
    """INT64 values reduced modulo 2**32, as UINT32 arithmetic wraps."""
    return (values % 2**32).to(torch.uint32)


def test_uint32_add_sub_mul_wrap_like_unsigned_arithmetic(kernels):
    torch.manual_seed(0)
    a = torch.randint(0, 2**32, (16, 16), dtype=torch.int64)
    b = torch.randint(0, 2**32, (16, 16), dtype=torch.int64)
    a[0, 0], b[0, 0] = 0, 1  # 0 - 1 wraps to 4294967295
    a[0, 1] = 2**32 - 3  # + 7 wraps to 4
    diff, prod, shifted = (torch.empty(16, 16, dtype=torch.uint32) for _ in range(3))
    kernels.uint32_wraps(as_uint32(a), as_uint32(b), diff, prod, shifted)
    assert torch.equal(diff.to(torch.int64), as_uint32(a - b).to(torch.int64))
    assert diff[0, 0].item() == 2**32 - 1
    assert torch.equal(prod.to(torch.int64), as_uint32(a * b).to(torch.int64))
    assert torch.equal(shifted.to(torch.int64), as_uint32(a + 7).to(torch.int64))
    assert shifted[0, 1].item() == 4


def test_uint32_maximum_is_refused_where_signedness_matters(kernels):
    with pytest.raises(Exception) as info:
        kernels.uint32_maximum(torch.zeros(16, 16, dtype=torch.uint32), torch.empty(16, 16, dtype=torch.uint32))
    message = str(info.value)
    line = next(i for i, text in enumerate(KERNELS.splitlines(), 1) if "pl.tile.maximum(x, x)" in text)
    column = KERNELS.splitlines()[line - 1].index("pl.tile.maximum") + 1
    assert f"compare_kernels.py:{line}:{column}:" in message
    assert "tile.maximum on UINT32 tiles is not supported yet by the simulator" in message
    assert "UINT32 only for the ops whose result does not depend on signedness" in message
