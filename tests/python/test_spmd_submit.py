"""`pl.spmd_submit(kernel, *args, core_num=N, deps=[...], predicate=(t[i] > 0))` and the predicate of
`with pl.spmd(...)`: a launch that runs only when a tensor element passes the test, whose TaskId
completes either way (upstream's predicated dispatch)."""

import re

import pytest
import torch

import pypto.language as pl
from pypto.language.parser import ParserSyntaxError, ParserTypeError
from pypto.testing import TensorSpec, run

PROGRAM = '''
R, C = 16, 32


@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t: pl.Tile[[R, C], pl.FP32] = pl.tile.full([R, C], dtype=pl.FP32, value=42.0)
        return pl.store(t, [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def clobber(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t: pl.Tile[[R, C], pl.FP32] = pl.tile.full([R, C], dtype=pl.FP32, value=999.0)
        return pl.store(t, [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t: pl.Tile[[R, C], pl.FP32] = pl.load(x, [0, 0], [R, C])
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]], gate: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.manual_scope():
            x, fill_tid = pl.spmd_submit(self.fill, x, core_num=1)
            CLOBBER
            out, _ = pl.spmd_submit(self.copy, x, out, core_num=1, deps=[clobber_tid])
        return out
'''

SUBMITTED = "x, clobber_tid = pl.spmd_submit(self.clobber, x, core_num=1, deps=[fill_tid], predicate=(gate[2] > 0))"
WITH_FORM = """with pl.spmd(1, deps=[fill_tid], predicate=(gate[2] > 0)) as clobber_tid:
                x = self.clobber(x)"""


@pytest.mark.parametrize("form", [SUBMITTED, WITH_FORM], ids=["spmd_submit", "with_pl_spmd"])
@pytest.mark.parametrize("gate", [0, 1], ids=["skipped", "dispatched"])
def test_the_launch_runs_only_when_the_predicate_holds(write_dsl, form, gate):
    module, _ = write_dsl(f"gated_{gate}_{len(form)}", PROGRAM.replace("CLOBBER", form))
    specs = [TensorSpec("x", [16, 32], torch.float32),
             TensorSpec("gate", [4], torch.int32, init_value=torch.tensor([1, 1, gate, 1], dtype=torch.int32)),
             TensorSpec("out", [16, 32], torch.float32)]

    def golden(t):
        t["x"][:] = 999.0 if gate else 42.0
        t["out"][:] = t["x"]

    result = run(module.Gated, specs, golden, platform="a2a3sim")
    assert result.passed, result.error


def test_a_skipped_launch_is_a_dependency_only_task(write_dsl):
    module, _ = write_dsl("gated_printed", PROGRAM.replace("CLOBBER", SUBMITTED))
    text = str(module.Gated)
    read = re.search(r"(_dispatch_predicate_\d+): pl.Scalar\[pl.INT32\] = pl.tensor.read\(gate, \[2\]\)", text)
    assert read, text
    assert f"if {read.group(1)} > 0:" in text, text
    assert "with pl.spmd(core_num=1, deps=[fill_tid]) as clobber_tid:" in text, text
    assert "pl.Scalar[pl.TASK_ID] = pl.system.task_dummy([fill_tid])" in text, text


def test_a_predicate_must_compare_a_tensor_element(write_dsl):
    bad = SUBMITTED.replace("predicate=(gate[2] > 0)", "predicate=(1 > 0)")
    with pytest.raises(ParserSyntaxError) as error:
        write_dsl("gated_bad", PROGRAM.replace("CLOBBER", bad))
    assert "a dispatch predicate compares one tensor element with an integer" in str(error.value)
    assert ":29:102" in str(error.value), str(error.value)


JIT_SUBMIT = '''
import pypto.language as pl


@pl.jit.incore
def double_rows(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    block = pl.tile.get_block_idx()
    t = pl.load(x, [block * 16, 0], [16, 32])
    pl.store(pl.mul(t, 2.0), [block * 16, 0], y)
    return y


@pl.jit
def launch(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    y, _ = pl.spmd_submit(self.double_rows, x, y, core_num=4)
    return y
'''


def test_a_jit_function_submits_an_incore_function_as_self_kernel(write_kernel):
    # pypto-lib's models write `pl.spmd_submit(self.kernel, ...)` in @pl.jit functions: upstream's JIT
    # makes each @pl.jit.incore function a method of the program it generates.
    module, _ = write_kernel("jit_submit", JIT_SUBMIT)
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    module.launch(x, y)
    torch.testing.assert_close(y, 2 * x)


NO_DEP = '''
import pypto.language as pl


@pl.jit.incore
def add_rows(x: pl.Tensor[[64, 32], pl.FP32], bias: pl.Tensor[[64, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    block = pl.tile.get_block_idx()
    t = pl.add(pl.load(x, [block * 16, 0], [16, 32]), pl.load(bias, [block * 16, 0], [16, 32]))
    pl.store(t, [block * 16, 0], y)
    return y


@pl.jit
def launch(x: pl.Tensor[[64, 32], pl.FP32], bias: pl.Tensor[[64, 32], pl.FP32],
           y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    y, _ = pl.spmd_submit(self.add_rows, x, pl.no_dep(bias), y, core_num=4)
    return y


@pl.jit
def not_a_tensor(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    y, _ = pl.spmd_submit(self.add_rows, x, pl.no_dep(1), y, core_num=4)
    return y
'''


def test_no_dep_marks_an_argument_and_passes_the_tensor(write_kernel):
    # Upstream's per-task opt-out of dependency tracking: tracking it anyway computes the same values.
    module, path = write_kernel("no_dep", NO_DEP)
    x, bias = torch.randn(64, 32), torch.randn(64, 32)
    y = torch.zeros(64, 32)
    module.launch(x, bias, y)
    torch.testing.assert_close(y, x + bias)
    with pytest.raises(ParserTypeError) as error:
        module.not_a_tensor(x, y)
    assert str(error.value) == (
        f"error: pl.no_dep takes a tensor, got pl.Scalar[pl.INDEX]\n  --> {path}:23:55\n   |\n"
        "23 |     y, _ = pl.spmd_submit(self.add_rows, x, pl.no_dep(1), y, core_num=4)\n"
        "   |                                                       ^")
