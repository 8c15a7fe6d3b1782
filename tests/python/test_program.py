"""``@pl.program``: programs written by hand as a class, and printed IR parsed back."""

import importlib.util
import sys

import pytest
import torch

import pypto.ir
import pypto.language as pl
from pypto import _core
from pypto.language.parser import ParserSyntaxError, ParserTypeError, UndefinedVariableError
from pypto.runtime import RunConfig

HEADER = "import pypto.language as pl\n\n"

SCALE = '''@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[ROWS, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        tmp: pl.Tensor[[32, 16], pl.FP32] = pl.tensor.create([32, 16], dtype=pl.FP32)
        tmp_1: pl.Tensor[[32, 16], pl.FP32] = self.scale(x, 2.0, tmp)
        out_1: pl.Tensor[[32, 16], pl.FP32] = self.scale(tmp_1, FACTOR, out)
        return out_1

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[32, 16], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(ROWS // 16):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 16])
            pl.tile.store(pl.tile.muls(t, s), [i * 16, 0], out)
        return out
'''


def _import(tmp_path, name, source, register=False):
    """Writes `source` to a file and imports it (in sys.modules when `register`, as a normal import is)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module, path


def _printed(source: str) -> str:
    """The program text the printer writes for SCALE: constants become their values."""
    return source.replace("[ROWS, 16]", "[32, 16]").replace("ROWS // 16", "2").replace("FACTOR", "0.5")


@pytest.mark.parametrize("register", [False, True])
def test_a_hand_written_program_prints_as_written(tmp_path, register):
    module, _ = _import(tmp_path, f"scale_{register}", HEADER + "ROWS = 32\nFACTOR = 0.5\n\n\n" + SCALE, register)
    program = module.Scale
    assert str(program) == _printed(SCALE)
    assert program.name == "Scale"
    assert program.entry_name == "main"
    assert [(f.name, f.function_type) for f in program.functions.values()] == [("main", "Opaque"), ("scale", "InCore")]


def test_a_program_inside_a_function_sees_its_locals(tmp_path):
    nested = "def make():\n    ROWS = 32\n    FACTOR = 0.5\n\n" + "".join(
        f"    {line}\n" if line else "\n" for line in SCALE.splitlines()
    ) + "    return Scale\n"
    module, _ = _import(tmp_path, "nested_scale", HEADER + nested)
    assert str(module.make()) == _printed(SCALE)


def test_a_hand_written_program_lowers_compiles_and_runs(tmp_path):
    module, _ = _import(tmp_path, "scale_run", HEADER + "ROWS = 32\nFACTOR = 0.5\n\n\n" + SCALE)
    lowered = _core.lower(module.Scale, "a2a3sim")
    text = str(lowered)
    assert "pl.MemRef(0, 1024), pl.Mem.Vec]" in text
    assert 'attrs={"arg_directions": ["Input", "Scalar", "OutputExisting"]}' in text
    # The lowered text is a program too, and prints the same.
    again, _ = _import(tmp_path, "scale_lowered", HEADER + text)
    assert str(getattr(again, lowered.name)) == text

    compiled = pypto.ir.compile(module.Scale, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    assert [(p.name, p.direction) for p in compiled.parameters] == [("x", "In"), ("out", "Out")]
    x, out = torch.randn(32, 16), torch.zeros(32, 16)
    compiled(x, out)
    torch.testing.assert_close(out, x * 2.0 * 0.5)


JIT = """
import pypto.language as pl


@pl.jit
def chunked(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            ta = pl.load(a, [i * 32, 0], [32, 64])
            tb = pl.load(b, [i * 32, 0], [32, 64])
            pl.store(pl.sub(ta, tb), [i * 32, 0], c)
    return c
"""


def test_what_lower_prints_parses_back(tmp_path):
    module, _ = _import(tmp_path, "chunked", JIT)
    a, b, c = torch.randn(128, 64), torch.randn(128, 64), torch.zeros(128, 64)
    lowered = module.chunked.lower(a, b, c, config=RunConfig())
    text = str(lowered)
    reparsed, _ = _import(tmp_path, "chunked_printed", HEADER + text)
    program = getattr(reparsed, lowered.name)
    assert str(program) == text
    kinds = [f.function_type for f in program.functions.values()]
    assert kinds == [f.function_type for f in lowered.functions.values()]


def test_each_class_statement_is_parsed_from_its_own_lines(tmp_path):
    twice = HEADER + "ROWS = 32\nFACTOR = 0.5\n\n\n" + SCALE + "\n\nFIRST = Scale\n\n\n" + SCALE.replace(
        "@pl.program\n", "@pl.program()\n"
    ).replace("2.0", "3.0")
    module, _ = _import(tmp_path, "twice", twice, register=True)
    assert str(module.FIRST) == _printed(SCALE)
    assert str(module.Scale) == _printed(SCALE).replace("2.0", "3.0")


def test_decorators_are_markers():
    def method(self):
        return None

    assert pl.function(method) is method
    assert pl.function(type=pl.FunctionType.AIV)(method) is method
    with pytest.raises(TypeError, match="unexpected option"):
        pl.program(strict_ssa=True)
    with pytest.raises(TypeError, match="decorates a class"):
        pl.program(method)


BROKEN = HEADER + '''@pl.program
class Broken:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32]):
        self.{call}(x)
        return
'''


def test_a_call_to_a_missing_function_is_reported_in_the_file(tmp_path):
    with pytest.raises(UndefinedVariableError) as info:
        _import(tmp_path, "broken_call", BROKEN.format(call="missing"))
    error = info.value
    assert error.message == "program 'Broken' has no function 'missing'"
    assert error.location == f"{tmp_path / 'broken_call.py'}:7:9"
    assert "7 |         self.missing(x)" in str(error)


def test_function_types_and_self_are_checked(tmp_path):
    source = BROKEN.format(call="main").replace("FunctionType.Opaque", "FunctionType.Host")
    with pytest.raises(AttributeError):  # Python evaluates the decorator first: there is no FunctionType.Host
        _import(tmp_path, "broken_type", source)
    source = BROKEN.format(call="main").replace("def main(self, x", "def main(x")
    with pytest.raises(ParserSyntaxError) as info:
        _import(tmp_path, "broken_self", source)
    assert info.value.message == "function 'main' must take 'self' as its first parameter"
    assert info.value.location.endswith("broken_self.py:6:14")
    # Annotations inside bodies are never evaluated by Python; the parser reads them.
    source = BROKEN.format(call="main").replace(
        "self.main(x)", "t: pl.Tile[[16, 16], pl.FP99, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])"
    )
    with pytest.raises(ParserTypeError) as info:
        _import(tmp_path, "broken_dtype", source)
    assert info.value.message == "'pl.FP99' is not a dtype (expected e.g. pl.FP32)"
    assert info.value.location.endswith("broken_dtype.py:7:30")


TWO_OUTPUTS = '''@pl.program
class TwoOutputs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], a: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
        a = pl.store(pl.add(t, 1.0), [0, 0], a)
        b = pl.store(pl.mul(t, 2.0), [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], a: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        {assign} = self.k(x, a, b)
        return a, b
'''


def test_a_call_returning_two_tensors_names_its_output_arguments(tmp_path):
    module, _ = _import(tmp_path, "two_outputs", HEADER + TWO_OUTPUTS.replace("{assign}", "a, b"))
    program = module.TwoOutputs
    assert "        self.k(x, a, b)\n        return a, b\n" in str(program)
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    x, a, b = torch.randn(16, 16), torch.zeros(16, 16), torch.zeros(16, 16)
    compiled(x, a, b)
    torch.testing.assert_close(a, x + 1.0)
    torch.testing.assert_close(b, x * 2.0)


def test_assigning_two_results_to_three_names_is_an_error(tmp_path):
    with pytest.raises(ParserTypeError) as info:
        _import(tmp_path, "three_names", HEADER + TWO_OUTPUTS.replace("{assign}", "a, b, c"))
    assert info.value.message == "k() returns 2 tensors through 2 output parameters, assigned to 3 names"
    assert info.value.location.endswith("three_names.py:14:9")


# `buf = self.k(x, o0, buf)` in an orchestration loop: k returns its output parameter, so each call
# updates `buf` in place and the loop carries nothing. `buf` is created afresh in each iteration of
# the outer loop, before anything reads it.
IN_PLACE_CALLS = '''@pl.program
class InPlaceCalls:
    @pl.function(type=pl.FunctionType.InCore)
    def zero(self, acc: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for zi in pl.range(4):
            acc = pl.assemble(acc, pl.full([16, 16], dtype=pl.FP32, value=0.0), [0, zi * 16])
        return acc

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 64], pl.FP32], o0: pl.Scalar[pl.INDEX], acc: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, o0], [16, 16])
        acc = pl.store(pl.mul(t, 2.0), [0, o0], acc)
        return acc

    @pl.function(type=pl.FunctionType.InCore)
    def add_into(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        a: pl.Tile[[16, 64], pl.FP32] = pl.load(x, [0, 0], [16, 64])
        b: pl.Tile[[16, 64], pl.FP32] = pl.load(out, [0, 0], [16, 64])
        out = pl.store(pl.add(a, b), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for b in pl.range(2):
            buf = pl.create_tensor([16, 64], dtype=pl.FP32)
            buf = self.zero(buf)
            for ob in pl.range(4):
                buf = self.scale(x, ob * 16, buf)
            out = self.add_into(buf, out)
        {after}
        return out
'''


def test_orchestration_loops_whose_calls_update_a_tensor_in_place(tmp_path):
    module, _ = _import(tmp_path, "in_place_calls", HEADER + IN_PLACE_CALLS.replace("{after}", ""))
    compiled = pypto.ir.compile(module.InPlaceCalls, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    x, out = torch.randn(16, 64), torch.ones(16, 64)
    compiled(x, out)
    torch.testing.assert_close(out, 1.0 + 2 * (2.0 * x))


def test_a_tensor_rebound_in_each_iteration_has_no_value_after_the_loop(tmp_path):
    with pytest.raises(UndefinedVariableError) as info:
        source = IN_PLACE_CALLS.replace("{after}", "out = self.add_into(buf, out)").replace(
            "        for b in pl.range(2):", "        buf = pl.create_tensor([16, 64], dtype=pl.FP32)\n        for b in pl.range(2):")
        _import(tmp_path, "rebound_read", HEADER + source)
    assert info.value.message == (
        "'buf' is reassigned in each iteration of the orchestration loop at line 27, so it has no single value "
        "after the loop"
    )
    assert info.value.location.endswith("rebound_read.py:33:29")


# Ops on whole tensors inside an InCore function compute on tiles; a `pl.Tensor` annotation of
# their result names the tensor the tile holds.
WHOLE_TENSOR_OPS = '''@pl.program
class WholeTensorOps:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[16, 1], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        result: pl.Tensor[[16, 32], pl.FP32] = pl.row_expand_max(a, v)
        return pl.assemble(out, result, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[16, 1], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel(a, v, out)
        return out
'''


def test_a_tensor_annotation_of_a_whole_tensor_op_in_a_kernel(tmp_path):
    module, _ = _import(tmp_path, "whole_tensor_ops", HEADER + WHOLE_TENSOR_OPS)
    text = str(module.WholeTensorOps)
    assert "result: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_max(" in text
    compiled = pypto.ir.compile(module.WholeTensorOps, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a, v, out = torch.randn(16, 32), torch.randn(16, 1), torch.zeros(16, 32)
    compiled(a, v, out)
    torch.testing.assert_close(out, torch.maximum(a, v.expand(16, 32)))


def test_a_split_mode_attribute_is_kept_by_name(tmp_path):
    source = SCALE.replace("@pl.function(type=pl.FunctionType.InCore)",
                           '@pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})')
    module, _ = _import(tmp_path, "split_attr", HEADER + "ROWS = 32\nFACTOR = 0.5\n\n\n" + source)
    assert '@pl.function(type=pl.FunctionType.InCore, attrs={"split": "UP_DOWN"})' in str(module.Scale)
    assert int(pl.SplitMode.LEFT_RIGHT) == 2


ROWS_BY_CARRY = '''@pl.program
class RowsByCarry:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[64, 16], pl.FP32], row: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [row, 0], [16, 16])
        u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, 1.0)
        stored: pl.Tensor[[64, 16], pl.FP32] = pl.tile.store(u, [row, 0], out)
        return stored

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i, (row,) in pl.range(0, 4, 1, init_values=(0,)):
            out_1: pl.Tensor[[64, 16], pl.FP32] = self.add_one(x, row, out)
            next_row: pl.Scalar[pl.INDEX] = row + 16
            row_last = pl.yield_(next_row)
        return out
'''


def test_lowering_makes_returns_and_runtime_scopes_explicit(tmp_path):
    # The kernel returns the result of its store; lowering returns the parameter itself, puts the
    # orchestration body and the loop body (its yield after it) in runtime scopes, and stamps how the
    # loop carries `row`; all of which parse back.
    module, _ = _import(tmp_path, "rows_by_carry", HEADER + ROWS_BY_CARRY)
    text = str(_core.lower(module.RowsByCarry, "a2a3sim"))
    assert "        stored: pl.Tensor[[64, 16], pl.FP32] = pl.tile.store(u, [row, 0], out)\n        return out\n" in text
    main = text[text.index("    def main"):]
    assert main.splitlines()[1:8] == [
        "        with pl.scope():",
        '            for i, (row,) in pl.range(4, init_values=(0,), carry=("scalar",)):',
        "                with pl.scope():",
        '                    out_1: pl.Tensor[[64, 16], pl.FP32] = self.add_one(x, row, out, '
        'attrs={"arg_directions": ["Input", "Scalar", "OutputExisting"]})',
        "                    next_row: pl.Scalar[pl.INDEX] = row + 16",
        "                row_last: pl.Scalar[pl.INDEX] = pl.yield_(next_row)",
        "        return out",
    ], main
    again, _ = _import(tmp_path, "rows_by_carry_lowered", HEADER + text)
    assert str(getattr(again, "RowsByCarry")) == text

    compiled = pypto.ir.compile(module.RowsByCarry, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    x, out = torch.randn(64, 16), torch.zeros(64, 16)
    compiled(x, out)
    torch.testing.assert_close(out, x + 1.0)
