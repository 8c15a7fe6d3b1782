"""The bitwise, shift and remainder ops on the simulator, against torch, for every integer width and
signedness: pl.and_ / pl.or_ / pl.xor (torch.bitwise_*; xor takes a scratch tile), pl.shl / pl.shr
(torch.bitwise_left_shift / bitwise_right_shift: arithmetic for signed elements, a count outside
[0, bits) shifting every bit out), pl.rem (torch.remainder: signed as the divisor), each with a tile
or a scalar right operand (pl.tile.ands, pl.tile.shrs, pl.tile.rems, ...). Each op runs at the tile's
own width: an unsigned element shifts and divides as unsigned."""

import pytest
import torch

from pypto.language.parser import ParserTypeError
from pypto.runtime import RunConfig
from conftest import kernels_fixture

# (torch dtype, bits, signed) of each DSL integer dtype.
DTYPES = {
    "INT8": (torch.int8, 8, True),
    "UINT8": (torch.uint8, 8, False),
    "INT16": (torch.int16, 16, True),
    "UINT16": (torch.uint16, 16, False),
    "INT32": (torch.int32, 32, True),
    "UINT32": (torch.uint32, 32, False),
}

OUTPUTS = ["ands", "ors", "xors", "shl", "shr", "rem", "ands_s", "ors_s", "xors_s", "shl_s", "shr_s", "rem_s"]

# Tile-tile and tile-scalar forms, through the unified pl.X spellings (the scalar picks the `*s` op)
# and the explicit pl.tile.X ones.
KERNEL = '''
@pl.jit
def ops_{d}(a: pl.Tensor[[16, 32], pl.{d}], b: pl.Tensor[[16, 32], pl.{d}], n: pl.Tensor[[16, 32], pl.{d}],
            {outs}):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        y = pl.load(b, [0, 0], [16, 32])
        k = pl.load(n, [0, 0], [16, 32])
        tmp = pl.tile.create([16, 32], dtype=pl.{d})
        ands[:, :] = pl.and_(x, y)
        ors[:, :] = pl.tile.or_(x, y)
        xors[:, :] = pl.xor(x, y, tmp)
        shl[:, :] = pl.shl(x, k)
        shr[:, :] = pl.tile.shr(x, k)
        rem[:, :] = pl.rem(x, y, tmp)
        ands_s[:, :] = pl.tile.ands(x, 0x35)
        ors_s[:, :] = pl.or_(x, 6)
        xors_s[:, :] = pl.xor(x, 0x5A, tmp)
        shl_s[:, :] = pl.shls(x, 3)
        shr_s[:, :] = pl.shr(x, 2)
        rem_s[:, :] = pl.tile.rems(x, 7, tmp)
    return {ret}
'''

KERNELS = "import pypto.language as pl\n" + "".join(
    KERNEL.format(
        d=d,
        outs=", ".join(f"{o}: pl.Out[pl.Tensor[[16, 32], pl.{d}]]" for o in OUTPUTS),
        ret=", ".join(OUTPUTS),
    )
    for d in DTYPES
) + '''

@pl.jit
def signed_scalars(a: pl.Tensor[[16, 32], pl.INT32], s: pl.Scalar[pl.INT32],
                   rem_neg: pl.Out[pl.Tensor[[16, 32], pl.INT32]], shr_by: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        tmp = pl.tile.create([16, 32], dtype=pl.INT32)
        rem_neg[:, :] = pl.rem(x, -5, tmp)
        shr_by[:, :] = pl.tile.shrs(x, s)
    return rem_neg, shr_by


@pl.jit
def float_rem(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32], h: pl.Tensor[[16, 32], pl.FP16],
              by_tile: pl.Out[pl.Tensor[[16, 32], pl.FP32]], by_scalar: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
              halves: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        tmp = pl.tile.create([16, 32], dtype=pl.FP32)
        by_tile[:, :] = pl.tile.rem(x, pl.load(b, [0, 0], [16, 32]), tmp)
        by_scalar[:, :] = pl.rem(x, -2.5, tmp)
        halves[:, :] = pl.tile.rems(pl.load(h, [0, 0], [16, 32]), 0.75, pl.tile.create([16, 32], dtype=pl.FP16))
    return by_tile, by_scalar, halves


@pl.jit
def narrow_rem(a: pl.Tensor[[16, 32], pl.INT32], b: pl.Tensor[[16, 32], pl.INT32],
               y: pl.InOut[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32], valid_shape=[8, 12])
        d = pl.load(b, [0, 0], [16, 32], valid_shape=[8, 12])
        y = pl.store(pl.tile.rem(x, d, pl.tile.create([16, 32], dtype=pl.INT32)), [0, 0], y)
    return y


@pl.jit
def tensor_spellings(a: pl.Tensor[[16, 32], pl.INT32], b: pl.Tensor[[16, 32], pl.INT32],
                     xor: pl.Out[pl.Tensor[[16, 32], pl.INT32]], xors: pl.Out[pl.Tensor[[16, 32], pl.INT32]],
                     shl: pl.Out[pl.Tensor[[16, 32], pl.INT32]], ands: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        y = pl.load(b, [0, 0], [16, 32])
        xor[:, :] = pl.tensor.xor(x, y)
        xors[:, :] = pl.tensor.xors(x, 9)
        shl[:, :] = pl.tensor.shl(x, 4)
        ands[:, :] = pl.tensor.and_(x, y)
    return xor, xors, shl, ands


@pl.jit
def tile_xor_without_scratch(a: pl.Tensor[[16, 32], pl.INT32], y: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        y[:, :] = pl.xor(x, x)
    return y


@pl.jit
def float_and(a: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 32])
        y[:, :] = pl.and_(x, x)
    return y


@pl.jit
def wide_shift(a: pl.Tensor[[16, 32], pl.INT16], y: pl.Out[pl.Tensor[[16, 32], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.shls(pl.load(a, [0, 0], [16, 32]), 16)
    return y
'''

kernels = kernels_fixture("bitwise_kernels.py", KERNELS)


def wrap(values: torch.Tensor, bits: int, signed: bool) -> torch.Tensor:
    """INT64 values reduced modulo 2**bits, as the element type holds them."""
    values = values % (1 << bits)
    return values - (1 << bits) * (values >= (1 << (bits - 1))) if signed else values


def random_values(bits: int, signed: bool, generator: torch.Generator) -> torch.Tensor:
    low = -(1 << (bits - 1)) if signed else 0
    return torch.randint(low, low + (1 << bits), (16, 32), dtype=torch.int64, generator=generator)


def expected(a: torch.Tensor, b: torch.Tensor, k: torch.Tensor, bits: int, signed: bool) -> dict:
    """Each output as INT64 values, computed on INT64 with torch and reduced to the element type."""

    def shl(x, count):
        return torch.where((count >= 0) & (count < bits), wrap(x << count.clamp(0, bits - 1), bits, signed), 0)

    def shr(x, count):
        return torch.where((count >= 0) & (count < bits), x >> count.clamp(0, bits - 1), torch.where(x < 0, -1, 0))

    seven, three, two = (torch.full_like(a, v) for v in (7, 3, 2))
    return {
        "ands": a & b,
        "ors": a | b,
        "xors": a ^ b,
        "shl": shl(a, k),
        "shr": shr(a, k),
        "rem": torch.remainder(a, b),
        "ands_s": a & 0x35,
        "ors_s": a | 6,
        "xors_s": a ^ 0x5A,
        "shl_s": shl(a, three),
        "shr_s": shr(a, two),
        "rem_s": torch.remainder(a, seven),
    }


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_bitwise_shift_and_remainder_match_torch(kernels, dtype):
    torch_dtype, bits, signed = DTYPES[dtype]
    generator = torch.Generator().manual_seed(bits + signed)
    a = random_values(bits, signed, generator)
    a[0, :4] = torch.tensor([0, 1, -1 if signed else (1 << bits) - 1, -(1 << (bits - 1)) if signed else 1 << (bits - 1)])
    b = random_values(bits, signed, generator)
    b[b == 0] = 1
    b[0, :3] = torch.tensor([-1 if signed else 1, 1, 3])  # x rem -1 is 0, even for the most negative x
    # Counts in range, and some outside it: negative (signed types) and at or past the width.
    k = torch.randint(0, bits, (16, 32), dtype=torch.int64, generator=generator)
    k[1, :4] = torch.tensor([bits, bits + 3, -1 if signed else bits + 1, bits - 1])
    outs = {name: torch.empty(16, 32, dtype=torch_dtype) for name in OUTPUTS}
    getattr(kernels, f"ops_{dtype}")(a.to(torch_dtype), b.to(torch_dtype), k.to(torch_dtype), *outs.values())
    for name, want in expected(a, b, k, bits, signed).items():
        got = outs[name].to(torch.int64)
        assert torch.equal(got, wrap(want, bits, signed)), f"{dtype} {name}: {got[0, :8]} != {want[0, :8]}"


def test_signed_results_are_torchs_own(kernels):
    # The same as torch's own int16 ops, not only the INT64 reference.
    generator = torch.Generator().manual_seed(5)
    a = torch.randint(-32768, 32768, (16, 32), dtype=torch.int16, generator=generator)
    b = torch.randint(1, 300, (16, 32), dtype=torch.int16, generator=generator) * torch.where(a < 0, 1, -1).short()
    k = torch.randint(-2, 18, (16, 32), dtype=torch.int16, generator=generator)
    outs = {name: torch.empty(16, 32, dtype=torch.int16) for name in OUTPUTS}
    kernels.ops_INT16(a, b, k, *outs.values())
    assert torch.equal(outs["shl"], torch.bitwise_left_shift(a, k))
    assert torch.equal(outs["shr"], torch.bitwise_right_shift(a, k))
    assert torch.equal(outs["rem"], torch.remainder(a, b))
    assert torch.equal(outs["xors"], torch.bitwise_xor(a, b))
    assert torch.equal(outs["shr_s"], a >> 2)
    assert torch.equal(outs["rem_s"], torch.remainder(a, 7))


def test_a5sim_computes_the_same(kernels):
    generator = torch.Generator().manual_seed(9)
    a = torch.randint(0, 1 << 16, (16, 32), dtype=torch.int64, generator=generator)
    b = torch.randint(1, 1 << 16, (16, 32), dtype=torch.int64, generator=generator)
    k = torch.randint(0, 16, (16, 32), dtype=torch.int64, generator=generator)
    outs = {name: torch.empty(16, 32, dtype=torch.uint16) for name in OUTPUTS}
    kernels.ops_UINT16(a.to(torch.uint16), b.to(torch.uint16), k.to(torch.uint16), *outs.values(),
                       config=RunConfig(platform="a5sim"))
    for name, want in expected(a, b, k, 16, False).items():
        assert torch.equal(outs[name].to(torch.int64), wrap(want, 16, False)), name


def test_negative_divisor_and_scalar_shift_count(kernels):
    a = torch.arange(-256, 256, dtype=torch.int32).reshape(16, 32) * 37
    rem_neg, shr_by = torch.empty(16, 32, dtype=torch.int32), torch.empty(16, 32, dtype=torch.int32)
    kernels.signed_scalars(a, 5, rem_neg, shr_by)
    assert torch.equal(rem_neg, torch.remainder(a, -5))
    assert (rem_neg <= 0).all()
    assert torch.equal(shr_by, a >> 5)
    # A jit scalar is a constant of the kernel it specializes: past the width, it is refused.
    with pytest.raises(ParserTypeError) as info:
        kernels.signed_scalars(a, 40, rem_neg, shr_by)
    assert "tile.shrs shifts INT32 elements by 0 to 31 bits, got 40" in str(info.value)


def test_float_rem_is_torch_remainder(kernels):
    torch.manual_seed(0)
    a = torch.randn(16, 32) * 10
    b = torch.where(torch.rand(16, 32) < 0.5, -1.0, 1.0) * (torch.rand(16, 32) * 3 + 0.5)
    h = (torch.randn(16, 32) * 4).half()
    by_tile, by_scalar, halves = torch.empty(16, 32), torch.empty(16, 32), torch.empty(16, 32, dtype=torch.float16)
    kernels.float_rem(a, b, h, by_tile, by_scalar, halves)
    assert torch.equal(by_tile, torch.remainder(a, b))
    assert torch.equal(by_scalar, torch.remainder(a, -2.5))
    assert torch.equal(halves, torch.remainder(h.float(), 0.75).half())
    assert not torch.equal(by_tile, torch.fmod(a, b))  # the two differ where the signs do


def test_rem_reads_only_the_valid_region(kernels):
    # Zero divisors outside the [8, 12] valid region are never divided by.
    a = torch.arange(-256, 256, dtype=torch.int32).reshape(16, 32)
    b = torch.zeros(16, 32, dtype=torch.int32)
    b[:8, :12] = torch.arange(1, 97, dtype=torch.int32).reshape(8, 12) * torch.tensor([1, -1]).repeat(6).int()
    y = torch.full((16, 32), 1234, dtype=torch.int32)
    kernels.narrow_rem(a, b, y)
    want = torch.full((16, 32), 1234, dtype=torch.int32)
    want[:8, :12] = torch.remainder(a[:8, :12], b[:8, :12])
    assert torch.equal(y, want)


def test_remainder_by_zero_is_an_error(kernels):
    a = torch.ones(16, 32, dtype=torch.int32)
    b = torch.ones(16, 32, dtype=torch.int32)
    b[3, 4] = 0
    outs = [torch.empty(16, 32, dtype=torch.int32) for _ in OUTPUTS]
    with pytest.raises(Exception) as info:
        kernels.ops_INT32(a, b, torch.zeros(16, 32, dtype=torch.int32), *outs)
    assert "integer remainder by zero" in str(info.value)


def test_tensor_spellings_in_a_kernel_are_the_tile_ops(kernels):
    # pl.tensor.xor takes no scratch tile (upstream's tensor op); the kernel's tile.xor gets one.
    generator = torch.Generator().manual_seed(3)
    a = torch.randint(-(2**31), 2**31 - 1, (16, 32), dtype=torch.int32, generator=generator)
    b = torch.randint(-(2**31), 2**31 - 1, (16, 32), dtype=torch.int32, generator=generator)
    xor, xors, shl, ands = (torch.empty(16, 32, dtype=torch.int32) for _ in range(4))
    kernels.tensor_spellings(a, b, xor, xors, shl, ands)
    assert torch.equal(xor, a ^ b)
    assert torch.equal(xors, a ^ 9)
    assert torch.equal(shl, a << 4)
    assert torch.equal(ands, a & b)


def test_tile_xor_needs_its_scratch_tile(kernels):
    with pytest.raises(Exception) as info:
        kernels.tile_xor_without_scratch(torch.zeros(16, 32, dtype=torch.int32), torch.empty(16, 32, dtype=torch.int32))
    assert "'pl.xor' is missing argument 'tmp'" in str(info.value)


def test_bitwise_op_of_float_tiles_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.float_and(torch.zeros(16, 32), torch.empty(16, 32))
    message = str(info.value)
    line = next(i for i, text in enumerate(KERNELS.splitlines(), 1) if "pl.and_(x, x)" in text)
    column = KERNELS.splitlines()[line - 1].index("pl.and_") + 1
    assert f"bitwise_kernels.py:{line}:{column}\n" in message
    assert "tile.and needs an integer tile, got FP32" in message


def test_constant_shift_past_the_width_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.wide_shift(torch.zeros(16, 32, dtype=torch.int16), torch.empty(16, 32, dtype=torch.int16))
    assert "tile.shls shifts INT16 elements by 0 to 15 bits, got 16" in str(info.value)


PROGRAM = '''import pypto.language as pl


@pl.program
class Bits:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 32], pl.INT16], s: pl.Scalar[pl.INT16], out: pl.Out[pl.Tensor[[16, 32], pl.INT16]]) -> pl.Tensor[[16, 32], pl.INT16]:
        x: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 32])
        tmp: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.create([16, 32], dtype=pl.INT16, target_memory=pl.Mem.Vec)
        t: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.and_(x, x)
        t_1: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.or_(t, x)
        t_2: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.xor(t_1, x, tmp)
        t_3: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.shl(t_2, x)
        t_4: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.shr(t_3, x)
        t_5: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.rem(t_4, x, tmp)
        t_6: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.ands(t_5, s)
        t_7: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.ors(t_6, 3)
        t_8: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.xors(t_7, 3, tmp)
        t_9: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.shls(t_8, 3)
        t_10: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.shrs(t_9, s)
        t_11: pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec] = pl.tile.rems(t_10, 3, tmp)
        pl.tile.store(t_11, [0, 0], out)
        return out
'''


def test_printed_program_parses_back(tmp_path):
    from conftest import import_source

    program = import_source(tmp_path / "bits.py", PROGRAM).Bits
    text = str(program)
    for spelling in ("pl.tile.and_(x, x)", "pl.tile.or_(t, x)", "pl.tile.xor(t_1, x, tmp)", "pl.tile.shrs(t_9, s)",
                     "pl.tile.rems(t_10, 3, tmp)"):
        assert spelling in text, text
    again = import_source(tmp_path / "bits_printed.py", "import pypto.language as pl\n\n" + text).Bits
    assert str(again) == text
