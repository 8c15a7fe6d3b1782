"""`and`, `or` and `not` in if conditions, in kernels and in orchestration code: each becomes nested
ifs on one comparison, evaluated in Python's order (the right operand only when the left does not
decide), checked against torch on the simulator."""

import pytest
import torch

from pypto.language.parser import ParserSyntaxError

KERNELS = """
ROWS = 128
COLS = 32


@pl.jit
def by_block(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="by_block"):
        for i in pl.range(8):
            t = x[i * 16 : i * 16 + 16, :]
            if i < 2 or i >= 6:
                u = pl.mul(t, 2.0)
            elif i >= 3 and i < 5 and i != 4:
                u = pl.exp(t)
            elif not i == 5:
                u = pl.add(t, 1.0)
            else:
                u = pl.sub(t, 1.0)
            y[i * 16 : i * 16 + 16, :] = u
    return y


@pl.jit
def guarded_read(x: pl.Tensor[[ROWS, COLS], pl.FP32], flags: pl.Tensor[[1, 4], pl.INT32],
                 y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="guarded"):
        for i in pl.range(8):
            t = x[i * 16 : i * 16 + 16, :]
            u = pl.mul(t, 0.0)
            if i < 4 and pl.read(flags, [0, i]) > 0:
                u = t
            y[i * 16 : i * 16 + 16, :] = u
    return y


@pl.jit
def window(x: pl.Tensor[[ROWS, COLS], pl.FP32], lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
           y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for i in pl.range(8):
        r = i * 16
        if i >= lo and i < hi:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="inside"):
                y[r : r + 16, :] = pl.mul(x[r : r + 16, :], 2.0)
        else:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="outside"):
                y[r : r + 16, :] = pl.exp(x[r : r + 16, :])
    return y
"""


@pytest.fixture
def kernels(write_dsl):
    module, _ = write_dsl("boolean_condition_kernels", KERNELS)
    return module


def blocks(x):
    return [x[i * 16 : i * 16 + 16] for i in range(8)]


def test_and_or_not_choose_each_blocks_branch_in_a_kernel(kernels):
    x = torch.randn(128, 32)
    y = torch.zeros(128, 32)
    kernels.by_block(x, y)
    expected = []
    for i, t in enumerate(blocks(x)):
        if i < 2 or i >= 6:
            expected.append(t * 2.0)
        elif 3 <= i < 5 and i != 4:
            expected.append(torch.exp(t))
        elif not i == 5:
            expected.append(t + 1.0)
        else:
            expected.append(t - 1.0)
    torch.testing.assert_close(y, torch.cat(expected), rtol=1e-5, atol=1e-6)


def test_the_right_operand_of_and_is_read_only_when_the_left_holds(kernels):
    # flags has 4 elements: for blocks 4..7 reading flags[0, i] would be out of bounds, which the
    # simulator reports; `i < 4 and ...` never reads it there.
    x = torch.randn(128, 32)
    flags = torch.tensor([[1, 0, 0, 1]], dtype=torch.int32)
    y = torch.full((128, 32), 7.0)
    kernels.guarded_read(x, flags, y)
    expected = [t if i < 4 and flags[0, i] > 0 else torch.zeros_like(t) for i, t in enumerate(blocks(x))]
    torch.testing.assert_close(y, torch.cat(expected))


@pytest.mark.parametrize("lo, hi", [(2, 5), (0, 8), (5, 2)])
def test_an_orchestration_if_on_and_picks_the_kernel_per_iteration(kernels, lo, hi):
    x = torch.randn(128, 32)
    y = torch.zeros(128, 32)
    kernels.window(x, lo, hi, y)
    expected = [t * 2.0 if lo <= i < hi else torch.exp(t) for i, t in enumerate(blocks(x))]
    torch.testing.assert_close(y, torch.cat(expected), rtol=1e-5, atol=1e-6)


def test_the_lowered_kernel_tests_one_comparison_per_if(kernels):
    x, y = torch.zeros(128, 32), torch.zeros(128, 32)
    text = str(kernels.by_block.lower(x, y))
    kernel = text.split("def by_block_incore")[1].split("@pl.function")[0]
    branches = [line.rstrip() for line in kernel.splitlines() if line.strip().startswith(("if ", "else:"))]
    indent = min(len(line) - len(line.lstrip()) for line in branches)
    assert [line[indent:] for line in branches] == [
        "if i < 2:",
        "else:",
        "    if i >= 6:",
        "    else:",
        "        if i >= 3:",
        "            if i < 5:",
        "                if i != 4:",
        "                else:",
        "                    if i == 5:",
        "                    else:",
        "            else:",
        "                if i == 5:",
        "                else:",
        "        else:",
        "            if i == 5:",
        "            else:",
    ]


BOOL_VALUE = """
@pl.jit
def kernel(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            edge = i == 0 or i == 3
            y[0:16, 0:16] = x[0:16, 0:16]
    return y
"""


def test_and_or_outside_an_if_condition_is_an_error_at_the_operator(write_dsl):
    module, path = write_dsl("bool_value", BOOL_VALUE)
    with pytest.raises(ParserSyntaxError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == "'and' and 'or' are supported in the condition of an if only"
    assert info.value.location == f"{path}:8:20"


YIELD_BRANCHES = """
@pl.jit
def kernel(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = x[0:16, 0:16]
            if i == 0 or i == 3:
                u = pl.yield_(pl.mul(t, 2.0))
            else:
                u = pl.yield_(t)
            y[0:16, 0:16] = u
    return y
"""


def test_and_or_with_yield_branches_is_refused_with_the_fix(write_dsl):
    module, path = write_dsl("yield_branches", YIELD_BRANCHES)
    with pytest.raises(ParserSyntaxError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message.startswith("an if whose branches end in pl.yield_ takes one comparison")
    assert info.value.location == f"{path}:9:16"
