"""``break`` and ``continue`` in kernel loops (parsed into jumps, which CtrlFlowTransform turns into
structured ifs and a carried flag), and tensor names bound in a loop body read after it, checked
against torch and as printed IR."""

import pytest
import torch

import pypto.ir
from pypto.language.parser import ParserSyntaxError, InvalidOperationError

from conftest import import_source, is_poison, kernels_fixture, unwritten

KERNELS = """
import pypto.language as pl


@pl.jit
def even_blocks(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            if i % 2 != 0:
                continue
            y[i * 32 : i * 32 + 32, :] = pl.mul(x[i * 32 : i * 32 + 32, :], 2.0)
    return y


@pl.jit
def prefix_sum(x: pl.Tensor[[128, 32], pl.FP32], limit: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            if i >= limit:
                break
            acc = pl.add(acc, x[i * 32 : i * 32 + 32, :])
        y[:, :] = acc
    return y


@pl.jit
def jumps_in_nested_ifs(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = x[i * 32 : i * 32 + 32, :]
            if i > 0:
                if i == 2:
                    continue
                t = pl.add(t, 1.0)
                if i == 3:
                    break
            y[i * 32 : i * 32 + 32, :] = t
    return y


@pl.jit
def jumps_hand_on_carried_values(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([32, 32], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            acc = pl.add(acc, x[i * 32 : i * 32 + 32, :])
            if i == 1:
                continue
            if i == 2:
                acc = pl.mul(acc, 2.0)
                break
            acc = pl.add(acc, 1.0)
        y[:, :] = acc
    return y
"""

kernels = kernels_fixture("loop_jumps.py", KERNELS)


def test_continue_skips_the_rest_of_the_iteration(kernels):
    x, y = torch.randn(128, 32), torch.zeros(128, 32)
    # The odd blocks' stores are skipped: those rows of the pl.Out tensor are never written.
    with unwritten("output 'y' [128, 32] float32: 2048 of 4096 elements were never written: "
                   "all of rows 32..63, 96..127"):
        kernels.even_blocks(x, y)
    for i in (0, 2):
        torch.testing.assert_close(y[i * 32 : i * 32 + 32], x[i * 32 : i * 32 + 32] * 2.0)
    for i in (1, 3):
        assert is_poison(y[i * 32 : i * 32 + 32])


@pytest.mark.parametrize("limit", [0, 1, 3, 4])
def test_break_stops_a_loop_that_carries_a_tile(kernels, limit):
    x, y = torch.randn(128, 32), torch.zeros(32, 32)
    kernels.prefix_sum(x, limit, y)
    expected = x.reshape(4, 32, 32)[:limit].sum(dim=0)
    torch.testing.assert_close(y, expected)


def test_jumps_inside_nested_ifs(kernels):
    x, y = torch.randn(128, 32), torch.full((128, 32), -5.0)
    # i = 2 continues and i = 3 breaks before their stores: rows 64..127 are never written.
    with unwritten("output 'y' [128, 32] float32: 2048 of 4096 elements were never written: all of rows 64..127"):
        kernels.jumps_in_nested_ifs(x, y)
    torch.testing.assert_close(y[0:32], x[0:32])
    torch.testing.assert_close(y[32:64], x[32:64] + 1.0)
    assert is_poison(y[64:])


def test_a_jump_hands_on_the_values_the_carried_names_have_where_it_jumps(kernels):
    x, y = torch.randn(128, 32), torch.zeros(32, 32)
    kernels.jumps_hand_on_carried_values(x, y)
    blocks = x.reshape(4, 32, 32)
    expected = (blocks[0] + 1.0 + blocks[1] + blocks[2]) * 2.0  # i = 1 continues, i = 2 breaks
    torch.testing.assert_close(y, expected)


# The upstream system tests' shape: an InCore function whose loop breaks and continues, storing into
# its Out parameter under a name first bound in the loop and returned after it.
BREAK_CONTINUE = '''@pl.program
class BreakContinue:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32], c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        for i in pl.range(4):
            if i >= 3:
                break
            if i % 2 != 0:
                continue
            tile_a: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [i * 64, 0], [64, 64])
            tile_b: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [i * 64, 0], [64, 64])
            out: pl.Tensor[[256, 64], pl.FP32] = pl.store(pl.add(tile_a, tile_b), [i * 64, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32], c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        c = self.kernel(a, b, c)
        return c
'''

BREAK_CONTINUE_PRINTED = '''@pl.program
class BreakContinue:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32], c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        for i in pl.range(4):
            if i >= 3:
                break
            if (i % 2) != 0:
                continue
            tile_a: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i * 64, 0], [64, 64])
            tile_b: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i * 64, 0], [64, 64])
            out: pl.Tensor[[256, 64], pl.FP32] = pl.tile.store(pl.tile.add(tile_a, tile_b), [i * 64, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32], c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        c_1: pl.Tensor[[256, 64], pl.FP32] = self.kernel(a, b, c)
        return c_1
'''

# The kernel after CtrlFlowTransform: the continue's rest of the iteration is its if's else branch,
# and the break is a carried flag under which the whole body runs.
STRUCTURED_KERNEL = '''    def kernel(self, a: pl.Tensor[[256, 64], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32], c: pl.Out[pl.Tensor[[256, 64], pl.FP32]]) -> pl.Tensor[[256, 64], pl.FP32]:
        _break_flag_0: pl.Scalar[pl.INDEX] = 0
        for i, (_break_flag_0_1,) in pl.range(4, init_values=(_break_flag_0,)):
            if _break_flag_0_1 == 0:
                if i >= 3:
                    _break_flag_0_2: pl.Scalar[pl.INDEX] = pl.yield_(1)
                else:
                    if (i % 2) != 0:
                        _break_flag_0_3: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_1)
                    else:
                        tile_a: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i * 64, 0], [64, 64])
                        tile_b: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i * 64, 0], [64, 64])
                        out: pl.Tensor[[256, 64], pl.FP32] = pl.tile.store(pl.tile.add(tile_a, tile_b), [i * 64, 0], c)
                        _break_flag_0_3: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_1)
                    _break_flag_0_2: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_3)
                _break_flag_0_4: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_2)
            else:
                _break_flag_0_4: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_1)
            _break_flag_0_5: pl.Scalar[pl.INDEX] = pl.yield_(_break_flag_0_4)
        return c
'''

HEADER = "import pypto.language as pl\n\n"


def test_the_jumps_print_as_written_parse_back_and_become_structured_in_the_pipeline(tmp_path):
    from pypto.ir.pass_manager import PassManager

    program = import_source(tmp_path / "break_continue.py", HEADER + BREAK_CONTINUE).BreakContinue
    assert str(program) == BREAK_CONTINUE_PRINTED
    again = import_source(tmp_path / "printed.py", HEADER + BREAK_CONTINUE_PRINTED).BreakContinue
    assert str(again) == BREAK_CONTINUE_PRINTED
    PassManager().run_passes(program, dump_ir=True, output_dir=tmp_path / "dump")
    structured = (tmp_path / "dump" / "02_after_CtrlFlowTransform.py").read_text()
    assert STRUCTURED_KERNEL in structured, structured
    assert "break\n" not in structured and "continue\n" not in structured


def test_a_program_that_breaks_and_continues_runs(tmp_path):
    program = import_source(tmp_path / "break_continue_run.py", HEADER + BREAK_CONTINUE).BreakContinue
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a, b, c = torch.randn(256, 64), torch.randn(256, 64), torch.zeros(256, 64)
    # i = 1 continues and i = 3 breaks before storing: their rows of c are never written.
    with unwritten("output 'c' [256, 64] float32: 8192 of 16384 elements were never written: "
                   "all of rows 64..127, 192..255"):
        compiled(a, b, c)
    for i in (0, 2):
        torch.testing.assert_close(c[i * 64 : i * 64 + 64], a[i * 64 : i * 64 + 64] + b[i * 64 : i * 64 + 64])
    for i in (1, 3):
        assert is_poison(c[i * 64 : i * 64 + 64])


# `for i, (acc,) in pl.range(n, init_values=(c,))` whose body yields a store into `acc`: the loop
# writes into `c` itself, and `result` after the loop is `c`.
TENSOR_CARRY = '''@pl.program
class TensorCarry:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i, (acc,) in pl.range(4, init_values=(c,)):
            t: pl.Tile[[32, 64], pl.FP32] = pl.load(a, [i * 32, 0], [32, 64])
            out: pl.Tensor[[128, 64], pl.FP32] = pl.store(pl.exp(t), [i * 32, 0], acc)
            result = pl.yield_(out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        c = self.kernel(a, c)
        return c
'''


def test_a_tensor_carried_explicitly_and_stored_into_is_written_in_place(tmp_path):
    program = import_source(tmp_path / "tensor_carry.py", HEADER + TENSOR_CARRY).TensorCarry
    text = str(program)
    assert "for i in pl.range(4):" in text
    assert "pl.tile.store(pl.tile.exp(t), [i * 32, 0], c)" in text
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a, c = torch.randn(128, 64), torch.zeros(128, 64)
    compiled(a, c)
    torch.testing.assert_close(c, torch.exp(a))


JUMP_ERRORS = {
    "parallel": (
        """
@pl.jit
def kernel(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.parallel(4):
            if i == 2:
                break
            y[i * 16 : i * 16 + 16, :] = x[i * 16 : i * 16 + 16, :]
    return y
""",
        InvalidOperationError,
        "'break' is allowed in pl.range loops only; the iterations of a pl.parallel loop do not run one after "
        "another",
        "9:17",
    ),
    "init_values": (
        """
@pl.jit
def kernel(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i, (acc,) in pl.range(4, init_values=(pl.full([16, 16], dtype=pl.FP32, value=0.0),)):
            if i == 2:
                continue
            s = pl.add(acc, x[i * 16 : i * 16 + 16, :])
            acc_out = pl.yield_(s)
        y[:, :] = acc_out
    return y
""",
        ParserSyntaxError,
        "'continue' in a loop with init_values is not supported",
        "9:17",
    ),
    "orchestration": (
        """
@pl.jit
def kernel(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
    for i in pl.range(4):
        if i == 2:
            break
        with pl.at(level=pl.Level.CORE_GROUP):
            y[i * 16 : i * 16 + 16, :] = x[i * 16 : i * 16 + 16, :]
    return y
""",
        InvalidOperationError,
        "'break' is supported in kernel loops only: an orchestration loop submits its tasks before any of them "
        "runs",
        "8:13",
    ),
    "scope": (
        """
@pl.jit
def kernel(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            if i == 2:
                continue
            y[i * 16 : i * 16 + 16, :] = x[i * 16 : i * 16 + 16, :]
    return y
""",
        ParserSyntaxError,
        "'continue' must be inside a pl.range loop of the same scope",
        "9:17",
    ),
}


@pytest.mark.parametrize("case", sorted(JUMP_ERRORS))
def test_a_jump_where_it_cannot_be_structured_is_an_error(write_dsl, case):
    source, error, message, where = JUMP_ERRORS[case]
    module, path = write_dsl(f"jump_{case}", source)
    with pytest.raises(error) as info:
        module.kernel(torch.zeros(64, 16), torch.zeros(64 if case != "init_values" else 16, 16))
    assert info.value.message == message
    assert info.value.location == f"{path}:{where}"
