"""A plain pl.Tensor parameter of the orchestration entry is In (seed 001, "Output parameter
direction"): on a device its copy-back is skipped, so what a kernel writes into it never reaches the
caller. Compiling warns at the parameter with the kernel and the fix; the simulators leave the
caller's tensor as it was, unless RunConfig(copy_back_inputs=True) / $PYPTO_COPY_BACK_INPUTS=1."""

import re
import warnings

import pytest
import torch

from pypto.runtime import RunConfig
from pypto.runtime.declared_inputs import WrittenInputWarning

ENTRIES = '''\
@pl.jit
def doubled(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        y[:, :] = pl.mul(x, 2.0)


@pl.jit
def accumulated(x: pl.Tensor[[16, 16], pl.FP32], acc: pl.Tensor[[16, 16], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="accumulate"):
        acc[:, :] = pl.add(acc, x)


@pl.jit
def declared(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        y[:, :] = pl.mul(x, 2.0)
    return y


@pl.jit.inline
def double_into(x, y):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        y[:, :] = pl.mul(x, 2.0)
    return y


@pl.jit
def through_inline(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    double_into(x, y)
    return y


@pl.program
class Doubled:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        return pl.store(pl.mul(t, 2.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]):
        self.double(x, y)
'''


def _warning(path, line, col, entry, param, kernel, fix):
    return (f"{path}:{line}:{col}: parameter '{param}' of '{entry}' is a plain pl.Tensor, which the entry "
            f"passes In, but kernel '{kernel}' writes it: on a device its copy-back to the host is skipped, so "
            f"the kernel's writes are lost and '{param}' keeps what the caller passed (the simulators do the "
            f"same); declare it {fix}")


OUT_FIX = "pl.Out[pl.Tensor[...]] (the kernel only writes it; pl.InOut[...] if it must see the values passed)"
INOUT_FIX = "pl.InOut[pl.Tensor[...]] (the kernel reads it and writes it)"


@pytest.fixture
def entries(write_dsl):
    module, _ = write_dsl("entries", ENTRIES)
    return module


def _compile_warnings(compile_it) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_it()
    return [str(w.message) for w in caught if issubclass(w.category, WrittenInputWarning)]


def test_a_plain_parameter_a_kernel_writes_warns_at_the_parameter(entries):
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    found = _compile_warnings(lambda: entries.doubled.compile(x, y))
    # Line 4 of the file (the DSL import and a blank line come first), the parameter `y`.
    assert found == [_warning(entries.path, 4, 46, "doubled", "y", "double", OUT_FIX)]


def test_a_plain_parameter_a_kernel_reads_and_writes_is_told_to_be_inout(entries):
    x, acc = torch.randn(16, 16), torch.ones(16, 16)
    found = _compile_warnings(lambda: entries.accumulated.compile(x, acc))
    assert found == [_warning(entries.path, 10, 50, "accumulated", "acc", "accumulate", INOUT_FIX)]


def test_the_callers_tensor_keeps_what_it_held_as_on_a_device(entries):
    x = torch.randn(16, 16)
    y = torch.full((16, 16), 7.0)
    with pytest.warns(WrittenInputWarning):
        entries.doubled(x, y)
    torch.testing.assert_close(y, torch.full((16, 16), 7.0))
    acc = torch.ones(16, 16)
    with pytest.warns(WrittenInputWarning):
        entries.accumulated(x, acc)
    torch.testing.assert_close(acc, torch.ones(16, 16))


def test_copy_back_inputs_restores_the_writes(entries):
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    with pytest.warns(WrittenInputWarning):
        entries.doubled(x, y, config=RunConfig(copy_back_inputs=True))
    torch.testing.assert_close(y, x * 2)
    acc = torch.ones(16, 16)
    with pytest.warns(WrittenInputWarning):
        entries.accumulated(x, acc, config=RunConfig(copy_back_inputs=True))
    torch.testing.assert_close(acc, x + 1)


def test_the_environment_restores_the_writes_for_programs_run_unmodified(entries, monkeypatch):
    monkeypatch.setenv("PYPTO_COPY_BACK_INPUTS", "1")
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    with pytest.warns(WrittenInputWarning):
        entries.doubled(x, y)
    torch.testing.assert_close(y, x * 2)


def test_a_declared_output_is_written_without_a_warning(entries):
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WrittenInputWarning)
        entries.declared(x, y)
        torch.testing.assert_close(y, x * 2)
        # An inline helper's bare parameters alias the entry's pl.Out: nothing to warn about.
        y2 = torch.zeros(16, 16)
        entries.through_inline(x, y2)
    torch.testing.assert_close(y2, x * 2)


def test_a_program_orchestration_entry_is_held_to_the_same_rule(entries):
    import pypto

    with pytest.warns(WrittenInputWarning, match="^" + re.escape(
            _warning(entries.path, 43, 53, "main", "y", "double", OUT_FIX)) + "$"):
        compiled = pypto.ir.compile(entries.Doubled)
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    compiled(x, y)
    torch.testing.assert_close(y, torch.zeros(16, 16))
    compiled(x, y, config=RunConfig(copy_back_inputs=True))
    torch.testing.assert_close(y, x * 2)


def test_the_build_directory_remembers_the_declaration(entries):
    from pypto.runtime import execute_compiled

    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    with pytest.warns(WrittenInputWarning):
        compiled = entries.doubled.compile(x, y)
    param = compiled.parameters[1]
    assert (param.name, param.direction, param.declared_in_written_by) == ("y", "Out", "double")
    execute_compiled(compiled.output_dir, [x, y])
    torch.testing.assert_close(y, torch.zeros(16, 16))
