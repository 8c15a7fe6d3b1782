"""`pl.submit(..., dumps=[...])`: the arguments of one launch marked for the args dump
(RunConfig(enable_dump_args=1)), where pl.dump_tag marks a tensor for every later launch. The
manifest, the results against torch, the printed program (which parses back) and the errors."""

import numpy as np
import pytest
import torch

import pypto.ir
from pypto.runtime import dump_viewer

PROGRAM = """
@pl.program
class TwoStages:
    @pl.function(type=pl.FunctionType.InCore)
    def stage1(self, x: pl.Tensor[[16, 32], pl.FP32],
               scratch: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        return pl.store(pl.add(t, 1.0), [0, 0], scratch)

    @pl.function(type=pl.FunctionType.InCore)
    def stage2(self, scratch: pl.Tensor[[16, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(scratch, [0, 0], [16, 32])
        return pl.store(pl.mul(t, 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        scratch = pl.create_tensor([16, 32], dtype=pl.FP32)
        scratch, first = pl.submit(self.stage1, x, scratch, dumps=[x, scratch])
        out, _ = pl.submit(self.stage2, scratch, out, deps=[first])
        return out
"""


@pytest.fixture
def program(write_dsl):
    module, path = write_dsl("two_stages", PROGRAM)
    return module.TwoStages, path


def test_only_the_marked_launch_is_dumped_with_both_its_arguments(program, tmp_path):
    two_stages, _ = program
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    compiled = pypto.ir.compile(two_stages, platform="a2a3sim", enable_dump_args=1, output_dir=str(tmp_path / "build"))
    compiled(x, out)
    torch.testing.assert_close(out, (x + 1.0) * 2.0)
    manifest = dump_viewer.load(compiled.output_dir)
    records = [(r["task_id"], r["stage"], r["role"], r["arg_index"]) for r in manifest["records"]]
    assert records == [("0x0", "before_dispatch", "input", 0), ("0x0", "after_completion", "output", 1)]
    assert np.array_equal(dump_viewer.read_values(manifest, 0), x.numpy())
    torch.testing.assert_close(torch.from_numpy(dump_viewer.read_values(manifest, 1).copy()), x + 1.0)


def test_the_printed_program_keeps_the_mark_and_parses_back(program, write_dsl):
    two_stages, _ = program
    text = str(two_stages)
    assert "scratch_1, first = pl.submit(self.stage1, x, scratch, dumps=[x, scratch])\n" in text, text
    module, _ = write_dsl("printed", text)
    assert str(module.TwoStages) == text


def test_a_name_that_is_not_an_argument_of_the_launch_is_refused(write_dsl):
    module_source = PROGRAM.replace("dumps=[x, scratch]", "dumps=[x, out]")
    with pytest.raises(Exception) as raised:
        write_dsl("bad_dumps", module_source)
    message = str(raised.value)
    assert "bad_dumps.py:22:71" in message, message
    assert "pl.submit dumps= names arguments of this launch; `out` is not one of them" in message
