"""Explicit task order in orchestration code: `with pl.at(...) as tid`, `deps=[...]`, `pl.submit`,
`pl.system.task_dummy` and `pl.system.task_invalid`. Edges are checked where a user sees them: in the
printed program, in the generated C++, and in the chip swimlane (a task that waits for another starts
after it ends), with results against torch."""

import json
from pathlib import Path

import pytest
import torch

import pypto.ir
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def declared_edge(x: pl.Tensor, scratch: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1") as first:
        scratch[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage2", deps=[first]):
        out[:] = pl.add(scratch, scratch)
    return scratch, out


# Two kernels that share no tensor: only the declared edge orders them.
@pl.jit
def independent_halves(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top") as top:
        y[0:16, :] = pl.exp(x[0:16, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom", deps=[top, None]):
        y[16:32, :] = pl.exp(x[16:32, :])
    return y


# A join of two producers, an invalid TaskId (orders nothing), and an SPMD launch waiting on the join.
@pl.jit
def joined(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a") as a:
        y[0:16, :] = pl.add(x[0:16, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="b") as b:
        y[16:32, :] = pl.add(x[16:32, :], 2.0)
    nothing = pl.system.task_invalid()
    both = pl.system.task_dummy(deps=[a, b, nothing])
    with pl.spmd(2, name_hint="rest", deps=[both]) as rest:
        i = pl.tile.get_block_idx()
        r = 32 + i * 16
        y[r : r + 16, :] = pl.mul(x[r : r + 16, :], 3.0)
    return y


def _tasks(compiled):
    records = Path(compiled.output_dir) / "dfx_outputs" / "chip_swimlane_records.json"
    return json.loads(records.read_text())["aicore_tasks"]


def test_a_declared_edge_runs_as_the_example_expects():
    x = torch.randn(128, 128)
    scratch, out = torch.zeros(128, 128), torch.zeros(128, 128)
    declared_edge(x, scratch, out)
    torch.testing.assert_close(out, (x + x) + (x + x))


def test_the_waiting_task_starts_after_the_one_it_waits_for():
    x, y = torch.randn(32, 32), torch.zeros(32, 32)
    compiled = independent_halves.compile(x, y, config=RunConfig(enable_chip_swimlane=1))
    for _ in range(5):
        compiled(x, y)
        torch.testing.assert_close(y, torch.exp(x))
        tasks = {t["task_id"]: t for t in _tasks(compiled)}
        assert tasks["0x1"]["start_ns"] >= tasks["0x0"]["end_ns"]


def test_a_join_orders_an_spmd_launch_after_both_producers():
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = joined.compile(x, y, config=RunConfig(enable_chip_swimlane=1))
    compiled(x, y)
    expected = torch.cat([x[0:16] + 1.0, x[16:32] + 2.0, x[32:64] * 3.0])
    torch.testing.assert_close(y, expected)
    tasks = _tasks(compiled)
    producers = [t for t in tasks if t["task_id"] in ("0x0", "0x1")]
    blocks = [t for t in tasks if t["task_id"] not in ("0x0", "0x1")]
    assert len(producers) == 2 and len(blocks) == 2
    assert min(t["start_ns"] for t in blocks) >= max(t["end_ns"] for t in producers)


def _reparsed(write_dsl, text, name):
    """The program a printed text defines, imported from a file."""
    return getattr(write_dsl("printed", text)[0], name)


def test_the_lowered_program_prints_the_order_and_parses_back(write_dsl):
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    lowered = joined.lower(x, y)
    text = str(lowered)
    directions = 'attrs={"arg_directions": ["Input", "OutputExisting"]}'
    assert f"        y_1, a = pl.submit(self.a, x, y, {directions})\n" in text
    assert "        nothing: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n" in text
    assert "        both: pl.Scalar[pl.TASK_ID] = pl.system.task_dummy([a, b, nothing])\n" in text
    assert "        with pl.spmd(core_num=2, deps=[both]) as rest:\n" in text
    assert str(_reparsed(write_dsl, text, lowered.name)) == text


def test_the_generated_cpp_passes_the_dependencies():
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = joined.compile(x, y)
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert "PTO2TaskId a = rt_submit_aiv_task(0, params_t0).task_id();" in cpp
    assert "PTO2TaskId nothing = PTO2TaskId::invalid();" in cpp
    assert "PTO2TaskId params_t2_deps[3] = {a, b, nothing};" in cpp
    assert "PTO2TaskId both = rt_submit_dummy_task(params_t2).task_id();" in cpp
    assert "PTO2TaskId params_t3_deps[1] = {both};" in cpp


@pl.program
class Submitted:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y, first = pl.submit(self.twice, x, y)
        z, _ = pl.submit(self.twice, y, z, deps=[first])
        return z


def test_pl_submit_binds_the_task_id_and_round_trips(write_dsl):
    text = str(Submitted)
    assert "        y_1, first = pl.submit(self.twice, x, y)\n" in text
    assert "        z_1, _ = pl.submit(self.twice, y_1, z, deps=[first])\n" in text
    assert str(_reparsed(write_dsl, text, "Submitted")) == text


def test_pl_submit_runs_in_order():
    x, y, z = torch.randn(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)
    compiled = pypto.ir.compile(Submitted, platform="a2a3sim")
    compiled(x, y, z)
    torch.testing.assert_close(z, 4 * x)


@pytest.mark.parametrize(
    "deps, message, column",
    [
        ("[x]", "error: deps= takes TaskIds, but 'x' is pl.Tensor[[16, 32], pl.FP32]", 49),
        ("x", "error: deps= takes a list of TaskIds, such as deps=[tid]", 48),
    ],
)
def test_deps_that_are_not_task_ids_are_refused(write_dsl, deps, message, column):
    module, path = write_dsl(
        "bad_deps",
        "\n@pl.jit\n"
        "def bad(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
        f"    with pl.at(level=pl.Level.CORE_GROUP, deps={deps}):\n"
        "        y[:] = pl.add(x, 1.0)\n"
        "    return y\n",
    )
    with pytest.raises(Exception) as info:
        module.bad.lower(torch.randn(16, 32), torch.zeros(16, 32))
    text = str(info.value)
    assert text.startswith(message), text
    assert f"--> {path}:6:{column}" in text


# Each iteration waits for the previous one: a TaskId carried across orchestration loop iterations.
@pl.jit
def chained_rows(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    prev = pl.system.task_invalid()
    for i in pl.range(4):
        r = i * 16
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="step", deps=[prev]) as t:
            y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
        prev = t
    return y


def _run_chained(fn):
    """Runs a program that chains its four row launches; returns the compiled program, checking the
    result and that each launch started after the one before it ended."""
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = fn.compile(x, y, config=RunConfig(enable_chip_swimlane=1))
    compiled(x, y)
    torch.testing.assert_close(y, x + 1.0)
    tasks = sorted(_tasks(compiled), key=lambda t: int(t["task_id"], 16))
    assert len(tasks) == 4
    for before, after in zip(tasks, tasks[1:]):
        assert after["start_ns"] >= before["end_ns"]
    return compiled


def test_a_task_id_carried_across_iterations_chains_them(write_dsl):
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = _run_chained(chained_rows)
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert "    PTO2TaskId prev_1 = prev;\n" in cpp
    assert "PTO2TaskId params_t0_deps[1] = {prev_1};" in cpp
    assert "        prev_1 = prev_2;\n" in cpp
    lowered = chained_rows.lower(x, y)
    assert "        for i, (prev_1,) in pl.range(4, init_values=(prev,), carry=(\"task_id\",)):\n" in str(lowered)
    assert str(_reparsed(write_dsl, str(lowered), lowered.name)) == str(lowered)


# Upstream's spelling of the same chain: the TaskId starts as None, and `as prev` rebinds it.
@pl.jit
def chained_as(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    prev = None
    for i in pl.range(4):
        r = i * 16
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="step", deps=[prev]) as prev:
            y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
    return y


def test_a_task_id_from_none_rebound_by_as_chains_the_iterations():
    _run_chained(chained_as)
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    assert "    prev: pl.Scalar[pl.TASK_ID] = pl.system.task_invalid()\n" in str(chained_as.lower(x, y))


def test_an_orchestration_loop_carries_a_scalar_beside_its_task_ids(write_dsl):
    module, _ = write_dsl(
        "carry_scalar",
        "\n@pl.jit\n"
        "def chained(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
        "    prev = pl.system.task_invalid()\n"
        "    n: pl.Scalar[pl.INT64] = 0\n"
        "    for i in pl.range(3):\n"
        "        n = n + 2\n"
        "        with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as t:\n"
        "            y[:] = pl.add(x, pl.cast(n, pl.FP32))\n"
        "        prev = t\n"
        "    return y\n",
    )
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    module.chained(x, y)
    torch.testing.assert_close(y, x + 6.0)
