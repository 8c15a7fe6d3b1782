"""pl.unroll loops: the UnrollLoops pass copies the body once per iteration; results against torch,
the IR after the pass, the kernel backend-ptoas now emits, and the error for bounds known only at
run time."""

from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

KERNELS = """
import pypto.language as pl


@pl.jit
def scaled_rows(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for k in pl.unroll(4):
            t = pl.load(a, [k * 16, 0], [16, 32])
            pl.store(pl.add(t, t), [k * 16, 0], c)
    return c


@pl.jit
def strided_sum(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.load(a, [0, 0], [16, 32])
        for k in pl.unroll(16, 64, 16):
            part = pl.load(a, [k, 0], [16, 32])
            acc = pl.add(acc, part)
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def nested(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(2):
            for j in pl.unroll(2):
                row = i * 32 + j * 16
                t = pl.load(a, [row, 0], [16, 32])
                pl.store(pl.add(t, 1.0), [row, 0], c)
    return c


@pl.jit
def launches(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for i in pl.unroll(4):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i * 16, 0], [16, 32])
            pl.store(pl.mul(t, 3.0), [i * 16, 0], c)
    return c
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("unroll_kernels", KERNELS)
    return module


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_each_copy_reads_and_writes_its_own_rows(kernels, platform):
    a, c = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.scaled_rows(a, c, config=RunConfig(platform=platform))
    torch.testing.assert_close(c, a + a)


def test_values_carried_from_copy_to_copy(kernels):
    a, c = torch.randn(64, 32), torch.zeros(16, 32)
    kernels.strided_sum(a, c)
    torch.testing.assert_close(c, a[0:16] + a[16:32] + a[32:48] + a[48:64])


def test_an_unroll_loop_inside_a_range_loop(kernels):
    a, c = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.nested(a, c)
    torch.testing.assert_close(c, a + 1.0)


def test_an_unroll_loop_in_orchestration_code_makes_one_kernel_per_iteration(kernels):
    a, c = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.launches(a, c)
    torch.testing.assert_close(c, a * 3.0)
    lowered = str(kernels.launches.lower(a, c))
    assert [f"def launches_incore_{n}(" in lowered for n in range(4)] == [True] * 4
    assert "launches_incore_4" not in lowered and "pl.unroll" not in lowered


def test_the_ir_after_the_pass_has_one_copy_per_iteration_with_literal_offsets(kernels):
    a, c = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = kernels.scaled_rows.compile(a, c, config=RunConfig(dump_passes=True))
    text = (Path(compiled.output_dir) / "passes_dump" / "01_after_UnrollLoops.py").read_text()
    assert "pl.unroll" not in text
    loads = [line.strip() for line in text.splitlines() if "pl.tile.load(" in line]
    assert [load.split("= ", 1)[1] for load in loads] == [
        f"pl.tile.load(a, [{row}, 0], [16, 32])" for row in (0, 16, 32, 48)]
    # backend-ptoas, which lowers no pl.unroll loop, writes the kernel: four loads, no loop.
    pto = (Path(compiled.output_dir) / "kernels" / "aiv" / "scaled_rows_incore_0.pto").read_text()
    assert pto.count("pto.tload ") == 4 and "scf.for" not in pto, pto


def test_bounds_known_only_at_run_time_are_an_error_at_the_loop(write_kernel):
    from pypto.language.parser import ParserError

    module, path = write_kernel("unroll_dynamic", """
import pypto.language as pl


@pl.jit
def dynamic(a: pl.Tensor[[64, 32], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for k in pl.unroll(pl.tile.get_block_idx() + 2):
            t = pl.load(a, [k * 16, 0], [16, 32])
            pl.store(t, [k * 16, 0], c)
    return c
""")
    with pytest.raises(Exception) as raised:
        module.dynamic(torch.zeros(64, 32), torch.zeros(64, 32))
    message = str(raised.value)
    assert f"{path}:8:9" in message, message
    assert "pl.unroll needs constant bounds: the loop over 'k' is copied once per iteration at compile time" in message
    assert "help: use pl.range for a loop whose trip count is known only at run time" in message
