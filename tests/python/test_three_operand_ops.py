"""The three-operand sums on the simulator, against torch: pl.tile.addc (a + b + c), pl.tile.subc
(a - b + c), pl.tile.addsc (a + s + c) and pl.tile.subsc (a - s + c), also spelled pl.addc etc. The
subtracting forms add their third operand, as the PTO instructions TSUBC and TSUBSC do. Each runs as
the instruction's two element-wise steps, so an FP16 result is rounded after each step, as torch's
own FP16 arithmetic rounds it."""

import pytest
import torch

from pypto.language.parser import ParserTypeError
from pypto.runtime import RunConfig
from conftest import import_source, kernels_fixture

DTYPES = {"FP32": torch.float32, "FP16": torch.float16, "INT32": torch.int32}

OUTPUTS = ["addc", "subc", "addsc", "subsc", "addc_u", "subsc_u"]

KERNEL = '''
@pl.jit
def sums_{d}(a: pl.Tensor[[16, 64], pl.{d}], b: pl.Tensor[[16, 64], pl.{d}], c: pl.Tensor[[16, 64], pl.{d}],
             {outs}):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        y = pl.load(b, [0, 0], [16, 64])
        z = pl.load(c, [0, 0], [16, 64])
        addc[:, :] = pl.tile.addc(x, y, z)
        subc[:, :] = pl.tile.subc(x, y, z)
        addsc[:, :] = pl.tile.addsc(x, 3, z)
        subsc[:, :] = pl.tile.subsc(x, 5, z)
        addc_u[:, :] = pl.addc(z, x, y)
        subsc_u[:, :] = pl.subsc(z, 2, x)
    return {ret}
'''

KERNELS = "import pypto.language as pl\n" + "".join(
    KERNEL.format(
        d=d,
        outs=", ".join(f"{o}: pl.Out[pl.Tensor[[16, 64], pl.{d}]]" for o in OUTPUTS),
        ret=", ".join(OUTPUTS),
    )
    for d in DTYPES
) + '''

@pl.jit
def scalar_parameter(a: pl.Tensor[[16, 64], pl.FP32], c: pl.Tensor[[16, 64], pl.FP32], s: pl.Scalar[pl.FP32],
                     y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.subsc(pl.load(a, [0, 0], [16, 64]), s, pl.load(c, [0, 0], [16, 64]))
    return y


@pl.jit
def third_operand_differs(a: pl.Tensor[[16, 64], pl.FP32], c: pl.Tensor[[16, 32], pl.FP32],
                          y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        z = pl.load(c, [0, 0], [16, 32])
        y[:, :] = pl.tile.addc(x, x, z)
    return y


@pl.jit
def float_scalar_of_integer_tiles(a: pl.Tensor[[16, 64], pl.INT32], y: pl.Out[pl.Tensor[[16, 64], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.load(a, [0, 0], [16, 64])
        y[:, :] = pl.tile.addsc(x, 0.5, x)
    return y
'''

kernels = kernels_fixture("three_operand_kernels.py", KERNELS)


def inputs(dtype: str, seed: int):
    generator = torch.Generator().manual_seed(seed)
    if dtype == "INT32":
        return [torch.randint(-(2**31), 2**31 - 1, (16, 64), dtype=torch.int32, generator=generator) for _ in range(3)]
    return [(torch.randn(16, 64, generator=generator) * 8).to(DTYPES[dtype]) for _ in range(3)]


def expected(a, b, c) -> dict:
    """Each output by torch at the inputs' own dtype, step by step (INT32 wraps as the tile does)."""
    if a.dtype == torch.int32:
        a, b, c = (t.to(torch.int64) for t in (a, b, c))
        wrap = lambda t: ((t + 2**31) % 2**32 - 2**31).to(torch.int32)  # noqa: E731
    else:
        wrap = lambda t: t  # noqa: E731
    return {
        "addc": wrap(wrap(a + b) + c),
        "subc": wrap(wrap(a - b) + c),
        "addsc": wrap(wrap(a + 3) + c),
        "subsc": wrap(wrap(a - 5) + c),
        "addc_u": wrap(wrap(c + a) + b),
        "subsc_u": wrap(wrap(c - 2) + a),
    }


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_three_operand_sums_match_torch(kernels, dtype):
    a, b, c = inputs(dtype, 7)
    outs = {name: torch.empty(16, 64, dtype=DTYPES[dtype]) for name in OUTPUTS}
    getattr(kernels, f"sums_{dtype}")(a, b, c, *outs.values())
    for name, want in expected(a, b, c).items():
        assert torch.equal(outs[name], want), f"{dtype} {name}: {outs[name][0, :4]} != {want[0, :4]}"


def test_subc_adds_its_third_operand(kernels):
    a, b, c = (torch.full((16, 64), v) for v in (10.0, 3.0, 1.0))
    outs = {name: torch.empty(16, 64) for name in OUTPUTS}
    kernels.sums_FP32(a, b, c, *outs.values())
    assert torch.equal(outs["subc"], torch.full((16, 64), 8.0))  # 10 - 3 + 1, not 10 - 3 - 1
    assert torch.equal(outs["subsc"], torch.full((16, 64), 6.0))  # 10 - 5 + 1


def test_a5sim_computes_the_same(kernels):
    a, b, c = inputs("FP16", 11)
    outs = {name: torch.empty(16, 64, dtype=torch.float16) for name in OUTPUTS}
    kernels.sums_FP16(a, b, c, *outs.values(), config=RunConfig(platform="a5sim"))
    for name, want in expected(a, b, c).items():
        assert torch.equal(outs[name], want), name


def test_scalar_parameter(kernels):
    a, c, _ = inputs("FP32", 3)
    y = torch.empty(16, 64)
    kernels.scalar_parameter(a, c, 1.25, y)
    assert torch.equal(y, (a - 1.25) + c)


def error_location(call_text: str, op_text: str) -> str:
    lines = KERNELS.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if call_text in text)
    return f"three_operand_kernels.py:{line}:{lines[line - 1].index(op_text) + 1}\n"


def test_third_operand_of_another_shape_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.third_operand_differs(torch.zeros(16, 64), torch.zeros(16, 32), torch.empty(16, 64))
    message = str(info.value)
    assert error_location("pl.tile.addc(x, x, z)", "pl.tile.addc") in message
    assert (
        "the third operand of tile.addc differs from the first: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] and "
        "pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec]" in message
    ), message


def test_float_scalar_of_integer_tiles_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.float_scalar_of_integer_tiles(torch.zeros(16, 64, dtype=torch.int32),
                                              torch.empty(16, 64, dtype=torch.int32))
    message = str(info.value)
    assert error_location("pl.tile.addsc(x, 0.5, x)", "pl.tile.addsc") in message
    assert "tile.addsc combines an integer INT32 tile with a floating-point scalar" in message


PROGRAM = '''import pypto.language as pl


@pl.program
class Sums:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        x: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64])
        t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.addc(x, x, x)
        t_1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.subc(t, x, x)
        t_2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.addsc(t_1, s, x)
        t_3: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.subsc(t_2, 2.5, t)
        pl.tile.store(t_3, [0, 0], out)
        return out
'''


def test_printed_program_parses_back(tmp_path):
    program = import_source(tmp_path / "sums.py", PROGRAM).Sums
    text = str(program)
    for spelling in ("pl.tile.addc(x, x, x)", "pl.tile.subc(t, x, x)", "pl.tile.addsc(t_1, s, x)",
                     "pl.tile.subsc(t_2, 2.5, t)"):
        assert spelling in text, text
    again = import_source(tmp_path / "sums_printed.py", "import pypto.language as pl\n\n" + text).Sums
    assert str(again) == text
