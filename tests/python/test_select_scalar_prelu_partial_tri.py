"""pl.tile.sels, pl.tile.prelu, the partial combines pl.tile.part_add / part_mul / part_max / part_min
and pl.tile.tri on the simulator against torch.

sels picks a tile's element where a packed predicate mask (pl.tile.cmps's, or any 8-, 16- or 32-bit
integer carrier of the same bits) has its bit set and a scalar elsewhere; prelu is
torch.where(x > 0, x, x * slope); a partial combine is the op where both operands are valid and the
first operand where only it is; tri is torch.tril / torch.triu of ones, over the valid region only."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.language.parser import ParserTypeError
from pypto.runtime import RunConfig
from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def select_below(a: pl.Tensor[[16, 64], pl.FP32], out: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64], valid_shape=[9, 37])
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        out = pl.store(pl.tile.sels(pl.tile.cmps(t, 0.5, cmp_type=2), t, tmp, -3.0), [0, 0], out)
    return out


@pl.jit
def select_scalar_param(a: pl.Tensor[[8, 32], pl.FP16], s: pl.Scalar[pl.FP32],
                        out: pl.Out[pl.Tensor[[8, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 32])
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        out[:, :] = pl.tile.sels(pl.tile.cmps(t, 0.0, cmp_type=5), t, tmp, s)
    return out


@pl.jit
def select_by_carrier(a: pl.Tensor[[2, 16], pl.INT16], m: pl.Tensor[[2, 8], pl.INT32],
                      out: pl.Out[pl.Tensor[[2, 16], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tmp = pl.tile.create([1, 16], dtype=pl.INT16)
        out[:, :] = pl.tile.sels(pl.load(m, [0, 0], [2, 8]), pl.load(a, [0, 0], [2, 16]), tmp, 0x8007)
    return out


@pl.jit
def prelu32(x: pl.Tensor[[16, 64], pl.FP32], s: pl.Tensor[[16, 64], pl.FP32],
            y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tmp = pl.tile.create([17, 32], dtype=pl.UINT8)
        y[:, :] = pl.tile.prelu(pl.load(x, [0, 0], [16, 64]), pl.load(s, [0, 0], [16, 64]), tmp)
    return y


@pl.jit
def prelu16(x: pl.Tensor[[16, 64], pl.FP16], s: pl.Tensor[[16, 64], pl.FP16],
            y: pl.Out[pl.Tensor[[16, 64], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tmp = pl.tile.create([17, 32], dtype=pl.UINT8)
        y[:, :] = pl.tile.prelu(pl.load(x, [0, 0], [16, 64]), pl.load(s, [0, 0], [16, 64]), tmp)
    return y


@pl.jit
def partial(a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
            add: pl.Out[pl.Tensor[[16, 16], pl.FP32]], mul: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
            mx: pl.Out[pl.Tensor[[16, 16], pl.FP32]], mn: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 16])
        y = pl.load(b, [0, 0], [16, 16], valid_shape=[8, 12])
        add[:, :] = pl.tile.part_add(x, y)
        mul[:, :] = pl.tile.part_mul(x, y)
        mx[:, :] = pl.tile.part_max(x, y)
        mn[:, :] = pl.tile.part_min(x, y)
    return add, mul, mx, mn


@pl.jit
def partial_int16(a: pl.Tensor[[16, 16], pl.INT16], b: pl.Tensor[[16, 16], pl.INT16],
                  mx: pl.Out[pl.Tensor[[16, 16], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        mx[:, :] = pl.tile.part_max(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16], valid_shape=[16, 5]))
    return mx


@pl.jit
def partial_whole(a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.part_mul(a, b), [0, 0])
    return out


@pl.jit
def triangles(d: pl.Scalar[pl.INT32], lower: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
              upper: pl.InOut[pl.Tensor[[16, 32], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        lower[:, :] = pl.tile.tri(d, [16, 32], dtype=pl.FP32)
        upper = pl.store(pl.tile.tri(-1, [16, 32], valid_shape=[9, 21], dtype=pl.INT16, upper=True), [0, 0], upper)
    return lower, upper


@pl.jit
def sels_float_scalar_on_ints(a: pl.Tensor[[16, 16], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8)
        out[:, :] = pl.tile.sels(pl.tile.cmps(t, 0, cmp_type=4), t, tmp, 0.5)
    return out


@pl.jit
def part_add_of_two_dtypes(a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP16],
                           out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.tile.part_add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
    return out


@pl.jit
def triangle_of_read_diagonal(d: pl.Tensor[[1], pl.INT32], lower: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        lower[:, :] = pl.tile.tri(pl.read(d, [0]), [16, 32], dtype=pl.FP32)
    return lower
'''

kernels = kernels_fixture("select_kernels.py", KERNELS)


def test_sels_keeps_the_tile_where_cmps_holds_and_the_scalar_elsewhere_over_the_valid_region(kernels):
    a = torch.randn(16, 64)
    out = torch.full((16, 64), 7.0)
    kernels.select_below(a, out)
    expected = torch.full((16, 64), 7.0)
    expected[:9, :37] = torch.where(a[:9, :37] < 0.5, a[:9, :37], torch.tensor(-3.0))
    assert torch.equal(out, expected)


def test_sels_takes_a_scalar_parameter_at_the_tiles_precision(kernels):
    a = torch.randn(8, 32).half()
    out = torch.empty(8, 32, dtype=torch.float16)
    kernels.select_scalar_param(a, 1.25, out)
    assert torch.equal(out, torch.where(a >= 0, a, torch.tensor(1.25, dtype=torch.float16)))


def test_sels_reads_the_bits_of_a_wider_mask_carrier_and_keeps_the_scalars_bit_pattern(kernels):
    a = torch.arange(32, dtype=torch.int16).reshape(2, 16) - 8
    # Each INT32 carrier holds 32 predicates; 0x5A5A... selects columns 1, 3, 4, 6, 9, 11, 12, 14.
    m = torch.full((2, 8), 0x5A5A5A5A, dtype=torch.int32)
    out = torch.empty(2, 16, dtype=torch.int16)
    kernels.select_by_carrier(a, m, out)
    bits = torch.tensor([(0x5A5A >> c) & 1 for c in range(16)], dtype=torch.bool)
    # 0x8007 as an INT16 element is -32761.
    assert torch.equal(out, torch.where(bits, a, torch.tensor(-32761, dtype=torch.int16)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_prelu_scales_negatives_by_their_own_slope(kernels, dtype):
    x = (torch.arange(16 * 64).reshape(16, 64) % 23 - 11).to(dtype)
    s = torch.tensor([-1.0, 0.0, 0.25, 1.5]).repeat(16, 16).to(dtype)
    y = torch.empty(16, 64, dtype=dtype)
    (kernels.prelu32 if dtype == torch.float32 else kernels.prelu16)(x, s, y)
    assert torch.equal(y, torch.where(x > 0, x, x * s))


def test_partial_combines_copy_the_first_operand_where_the_second_is_not_valid(kernels):
    a = torch.arange(256, dtype=torch.float32).reshape(16, 16) % 13 - 6
    b = torch.arange(256, dtype=torch.float32).reshape(16, 16) % 7 - 3
    add, mul, mx, mn = (torch.empty(16, 16) for _ in range(4))
    kernels.partial(a, b, add, mul, mx, mn)
    for got, op in ((add, torch.add), (mul, torch.mul), (mx, torch.maximum), (mn, torch.minimum)):
        expected = a.clone()
        expected[:8, :12] = op(a[:8, :12], b[:8, :12])
        assert torch.equal(got, expected), op


def test_partial_max_of_int16_tiles(kernels):
    a = (torch.arange(256).reshape(16, 16) * 37 % 201 - 100).short()
    b = (torch.arange(256).reshape(16, 16) * 53 % 199 - 99).short()
    mx = torch.empty(16, 16, dtype=torch.int16)
    kernels.partial_int16(a, b, mx)
    expected = a.clone()
    expected[:, :5] = torch.maximum(a[:, :5], b[:, :5])
    assert torch.equal(mx, expected)


def test_partial_combine_of_whole_tensors_is_the_plain_op(kernels):
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    out = torch.empty(16, 16)
    kernels.partial_whole(a, b, out)
    assert torch.equal(out, a * b)


@pytest.mark.parametrize("diagonal", [0, 2, -3, 40])
def test_tri_is_tril_and_triu_of_ones_over_the_valid_region(kernels, diagonal):
    lower = torch.empty(16, 32)
    upper = torch.full((16, 32), 9, dtype=torch.int16)
    kernels.triangles(diagonal, lower, upper)
    assert torch.equal(lower, torch.tril(torch.ones(16, 32), diagonal=diagonal))
    expected = torch.full((16, 32), 9, dtype=torch.int16)
    expected[:9, :21] = torch.triu(torch.ones(9, 21, dtype=torch.int16), diagonal=-1)
    assert torch.equal(upper, expected)


def test_tri_of_a_diagonal_read_from_a_tensor_narrows_it_for_ttri(kernels):
    """upstream's test_tri.py:158: the .pto casts the element read (an index value) to ttri's i32."""
    d, lower = torch.tensor([2], dtype=torch.int32), torch.empty(16, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.triangle_of_read_diagonal.compile(d, lower, config=RunConfig(platform="a2a3sim"))
    (pto,) = [p.read_text() for p in Path(compiled.output_dir).glob("kernels/aiv/*.pto")]
    cast = re.search(r"(%\w+) = arith\.index_cast %\w+ : index to i32", pto)
    assert cast and f'"pto.ttri"({cast.group(1)}, ' in pto, pto
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems
    compiled(d, lower)
    assert torch.equal(lower, torch.tril(torch.ones(16, 32), diagonal=2))


def test_sels_of_an_integer_tile_with_a_float_scalar_is_refused_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.sels_float_scalar_on_ints(torch.zeros(16, 16, dtype=torch.int32),
                                          torch.empty(16, 16, dtype=torch.int32))
    assert info.value.message == ("pl.tile.sels: tile.sels selects between an integer INT32 tile and a floating-point "
                                  "scalar")
    assert info.value.location.endswith("select_kernels.py:95:21")


def test_part_add_of_two_dtypes_is_refused_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.part_add_of_two_dtypes(torch.zeros(16, 16), torch.zeros(16, 16).half(), torch.empty(16, 16))
    assert info.value.message.startswith("pl.tile.part_add: tile.part_add combines tiles of one shape and dtype, got ")
    assert info.value.location.endswith("select_kernels.py:103:21")
