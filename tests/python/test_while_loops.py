"""While loops in kernels: the natural `while cond:` and the explicit pl.while_ form, checked against
torch on the simulator, printed and parsed back, and the errors for misplaced or malformed loops."""

import pytest
import torch

import pypto.ir
from pypto.language.parser import ParserSyntaxError

# The upstream system test's kernel (TestWhileLoopAdd), storing straight into the output parameter.
WHILE_ADD = """
@pl.program
class WhileAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_while_add(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
                         c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = 0
        while i < 4:
            offset_i = i * 64
            tile_a: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [offset_i, 0], [64, 64])
            tile_b: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [offset_i, 0], [64, 64])
            tile_c: pl.Tile[[64, 64], pl.FP32] = pl.add(tile_a, tile_b)
            out: pl.Tensor[[256, 64], pl.FP32] = pl.store(tile_c, [offset_i, 0], c)
            i = i + 1
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
                     c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        c = self.kernel_while_add(a, b, c)
        return c
"""

# A tile and a scalar carried together; the scalar doubles, so the loop runs for k = 1, 2, 4, 8, 16.
DOUBLING = """
@pl.jit
def doubling(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        k = 1
        while k < 20:
            acc = pl.add(acc, x[0:16, 0:16])
            k = k * 2
        y[0:16, 0:16] = acc
    return y
"""

# The explicit form the printer writes: the carried values named, pl.cond first, the results bound by
# the yield's targets.
EXPLICIT = """
@pl.program
class Explicit:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[64, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc0: pl.Tile[[16, 16], pl.FP32] = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for (r, acc) in pl.while_(init_values=(0, acc0)):
            pl.cond(r < 64)
            t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [r, 0], [16, 16])
            total: pl.Tile[[16, 16], pl.FP32] = pl.add(acc, t)
            r_out, acc_out = pl.yield_(r + 16, total)
        y = pl.store(acc_out, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.rows(x, y)
        return y
"""


def test_the_upstream_while_add_kernel_matches_torch(write_dsl):
    module, _ = write_dsl("while_add", WHILE_ADD)
    a, b, c = torch.full((256, 64), 2.0), torch.randn(256, 64), torch.zeros(256, 64)
    pypto.ir.compile(module.WhileAdd, platform="a2a3sim")(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_a_while_loop_carries_a_tile_and_a_scalar(write_dsl):
    module, _ = write_dsl("doubling", DOUBLING)
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    module.doubling(x, y)
    torch.testing.assert_close(y, x * 5)


def test_the_natural_form_prints_as_pl_while_and_parses_back(write_dsl):
    module, _ = write_dsl("while_add_printed", WHILE_ADD)
    text = str(module.WhileAdd)
    assert "        for (i_1,) in pl.while_(init_values=(i,)):\n            pl.cond(i_1 < 4)\n" in text, text
    assert "            i_2: pl.Scalar[pl.INDEX] = i_1 + 1\n" in text, text
    assert "            i_3: pl.Scalar[pl.INDEX] = pl.yield_(i_2)\n" in text, text
    printed, _ = write_dsl("while_add_reparsed", text)
    assert str(printed.WhileAdd) == text
    a, b, c = torch.randn(256, 64), torch.randn(256, 64), torch.zeros(256, 64)
    pypto.ir.compile(printed.WhileAdd, platform="a2a3sim")(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_the_explicit_form_runs_and_round_trips(write_dsl):
    module, _ = write_dsl("explicit", EXPLICIT)
    x, y = torch.randn(64, 16), torch.zeros(16, 16)
    pypto.ir.compile(module.Explicit, platform="a2a3sim")(x, y)
    torch.testing.assert_close(y, x[0:16] + x[16:32] + x[32:48] + x[48:64])
    text = str(module.Explicit)
    assert "for (r, acc) in pl.while_(init_values=(0, acc0)):\n            pl.cond(r < 64)\n" in text, text
    assert "            r_out, acc_out = pl.yield_(r + 16, total)\n" in text, text
    printed, _ = write_dsl("explicit_reparsed", text)
    assert str(printed.Explicit) == text


def test_pl_while_must_open_with_pl_cond(write_dsl):
    source = EXPLICIT.replace("            pl.cond(r < 64)\n", "")
    with pytest.raises(ParserSyntaxError) as info:
        write_dsl("no_cond", source)
    assert info.value.message == "the first statement of a pl.while_ loop must be pl.cond(<condition>)"
    assert info.value.location.endswith("no_cond.py:11:13"), info.value.location


def test_a_while_loop_in_orchestration_code_is_refused_at_the_loop(write_dsl):
    source = """
@pl.jit
def orchestrated(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    n = 0
    while n < 2:
        with pl.at(level=pl.Level.CORE_GROUP):
            y[0:16, 0:16] = pl.add(x[0:16, 0:16], 1.0)
        n = n + 1
    return y
"""
    module, path = write_dsl("orchestrated", source)
    with pytest.raises(ParserSyntaxError) as info:
        module.orchestrated(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == "while loops are supported inside kernels only"
    assert info.value.location == f"{path}:7:5"
