"""Manual runtime scopes and TaskId arrays: `with pl.manual_scope():` turns off the dependencies the
runtime derives from tensors, so launches wait only for the TaskIds their deps= name; a loop records
its launches' TaskIds with `tids[i] = tid` into `tids = pl.array.create(n, pl.TASK_ID)`, and one
consumer waits for all of them with `deps=[tids]`. Checked against torch, in the printed program and
the generated C++, and in the chip swimlane."""

import json
from pathlib import Path

import pytest
import torch

import pypto.ir
import pypto.language as pl
from pypto.runtime import RunConfig

ROWS, COLS, REPEATS = 128, 512, 1000


# The shape of upstream's usage: independent launches in a manual scope, each recording its TaskId,
# then a consumer of everything they wrote that waits for all of them. Each producer adds its rows of
# x up REPEATS + 1 times, enough work for the simulator to spread the producers over its threads.
@pl.jit
def fan_in(x: pl.Tensor[[128, 512], pl.FP32], y: pl.Out[pl.Tensor[[128, 512], pl.FP32]],
           out: pl.Out[pl.Tensor[[128, 512], pl.FP32]]):
    with pl.manual_scope():
        tids = pl.array.create(4, pl.TASK_ID)
        for i in pl.range(4):
            r = i * 32
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="producer") as t:
                rows = x[r : r + 32, :]
                acc = pl.add(rows, 0.0)
                for _k in pl.range(REPEATS):
                    acc = pl.add(acc, rows)
                y[r : r + 32, :] = acc
            tids[i] = t
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[tids]):
            for j in pl.range(4):
                s = j * 32
                out[s : s + 32, :] = pl.add(y[s : s + 32, :], 1.0)
    return y, out


# The consumer names each producer's TaskId with a comprehension over a constant range (pypto-lib's
# `deps=[proj_b_tids[i] for i in range(O_GROUPS)]`), unrolled at compile time; the even producers only.
@pl.jit
def fan_in_listed(x: pl.Tensor[[128, 512], pl.FP32], y: pl.Out[pl.Tensor[[128, 512], pl.FP32]],
                  out: pl.Out[pl.Tensor[[128, 512], pl.FP32]]):
    with pl.manual_scope():
        tids = pl.array.create(4, pl.TASK_ID)
        for i in pl.range(4):
            r = i * 32
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="producer") as t:
                rows = x[r : r + 32, :]
                acc = pl.add(rows, 0.0)
                for _k in pl.range(REPEATS):
                    acc = pl.add(acc, rows)
                y[r : r + 32, :] = acc
            tids[i] = t
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[tids[2 * j] for j in range(0, 2)]):
            for j in pl.range(2):
                s = j * 64
                out[s : s + 32, :] = pl.add(y[s : s + 32, :], 1.0)
    return y, out


# The same producers in the default (auto) scope: each writes y, so the runtime orders them one after
# another (write after write on the tensor they share).
@pl.jit
def serialised(x: pl.Tensor[[128, 512], pl.FP32], y: pl.Out[pl.Tensor[[128, 512], pl.FP32]]):
    for i in pl.range(4):
        r = i * 32
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="producer"):
            rows = x[r : r + 32, :]
            acc = pl.add(rows, 0.0)
            for _k in pl.range(REPEATS):
                acc = pl.add(acc, rows)
            y[r : r + 32, :] = acc
    return y


def _summed(x):
    """What a producer computes, in the same order of float additions."""
    acc = x.clone()
    for _ in range(REPEATS):
        acc = acc + x
    return acc


def _tasks(compiled):
    records = Path(compiled.output_dir) / "dfx_outputs" / "chip_swimlane_records.json"
    return sorted(json.loads(records.read_text())["aicore_tasks"], key=lambda t: int(t["task_id"], 16))


def _overlap(tasks):
    """Whether some task started before an earlier-submitted one ended."""
    return any(later["start_ns"] < earlier["end_ns"] for k, earlier in enumerate(tasks) for later in tasks[k + 1:])


def test_the_fan_in_matches_torch():
    x = torch.randn(ROWS, COLS)
    y, out = torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)
    fan_in(x, y, out)
    torch.testing.assert_close(y, _summed(x))
    torch.testing.assert_close(out, _summed(x) + 1.0)


def test_the_consumer_starts_after_every_producer_and_the_producers_are_not_serialised():
    x = torch.randn(ROWS, COLS)
    y, out = torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)
    compiled = fan_in.compile(x, y, out, config=RunConfig(enable_chip_swimlane=1))
    overlapped = False
    for run in range(20):  # a busy machine may run the threads one at a time; some run overlaps
        compiled(x, y, out)
        torch.testing.assert_close(out, _summed(x) + 1.0)
        tasks = _tasks(compiled)
        assert len(tasks) == 5
        producers, consumer = tasks[:4], tasks[4]
        assert consumer["start_ns"] >= max(t["end_ns"] for t in producers)
        overlapped |= _overlap(producers)
        if overlapped and run >= 2:
            break
    assert overlapped, "the producers of a manual scope ran one after another in every run"


def test_in_an_auto_scope_the_same_producers_run_one_after_another():
    x, y = torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)
    compiled = serialised.compile(x, y, config=RunConfig(enable_chip_swimlane=1))
    for _ in range(3):
        compiled(x, y)
        torch.testing.assert_close(y, _summed(x))
        tasks = _tasks(compiled)
        assert len(tasks) == 4
        for before, after in zip(tasks, tasks[1:]):
            assert after["start_ns"] >= before["end_ns"]


def test_the_generated_cpp_opens_a_manual_scope_and_waits_for_the_array():
    x = torch.randn(ROWS, COLS)
    compiled = fan_in.compile(x, torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS))
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert "PTO2TaskId tids[4];" in cpp
    assert "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {" in cpp
    assert "tids[i] = t;" in cpp
    assert "= {tids[0], tids[1], tids[2], tids[3]};" in cpp


def test_the_lowered_program_prints_the_scope_and_the_array_and_parses_back(write_dsl):
    x = torch.randn(ROWS, COLS)
    lowered = fan_in.lower(x, torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS))
    text = str(lowered)
    assert "        with pl.scope(mode=pl.ScopeMode.MANUAL):\n" in text
    assert "            tids: pl.Array[4, pl.TASK_ID] = pl.array.create(4, dtype=pl.TASK_ID)\n" in text
    assert "pl.array.update_element(tids_1, i, t)" in text
    module, _ = write_dsl("printed", text)
    assert str(getattr(module, lowered.name)) == text


@pytest.mark.parametrize(
    "body, message, line, column",
    [
        ("    with pl.at(level=pl.Level.CORE_GROUP):\n"
         "        with pl.manual_scope():\n"
         "            y[:] = pl.add(x, 1.0)\n",
         "error: pl.manual_scope() cannot appear inside a kernel", 7, 14),
        ("    with pl.manual_scope():\n"
         "        with pl.manual_scope():\n"
         "            y[:] = pl.add(x, 1.0)\n",
         "error: pl.manual_scope() cannot be nested inside another manual scope", 7, 14),
        ("    with pl.manual_scope():\n"
         "        with pl.scope(mode=pl.ScopeMode.AUTO):\n"
         "            y[:] = pl.add(x, 1.0)\n",
         "error: an AUTO scope (pl.scope()) cannot be nested inside a manual scope", 7, 14),
    ],
)
def test_misplaced_scopes_are_refused_where_they_are_written(write_dsl, body, message, line, column):
    module, path = write_dsl(
        "bad_scope",
        "\n@pl.jit\n"
        "def bad(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
        + body + "    return y\n",
    )
    with pytest.raises(Exception) as info:
        module.bad.lower(torch.randn(16, 32), torch.zeros(16, 32))
    text = str(info.value)
    assert text.startswith(message), text
    assert f"--> {path}:{line}:{column}" in text


def test_a_manual_scope_holds_its_slots_until_it_ends():
    # Its loop opens no scope per iteration: the 4 producers and the consumer all hold slots of the
    # manual scope's ring (depth 2, inside the body's scope at depth 1), of which a window of 4 has 3.
    x = torch.randn(ROWS, COLS)
    y, out = torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)
    with pytest.raises(RuntimeError, match=r"fatal error 1 \(ScopeDeadlock\): task 3 .*task ring 2.*the scope at depth 2"):
        fan_in(x, y, out, config=RunConfig(ring_task_window=4))
    fan_in(x, y, out, config=RunConfig(ring_task_window=8))
    torch.testing.assert_close(out, _summed(x) + 1.0)


# Upstream's program form: pl.submit in the loop, the TaskIds recorded in an array, one consumer.
@pl.program
class SubmittedFanIn:
    @pl.function(type=pl.FunctionType.InCore)
    def part(self, x: pl.Tensor[[64, 32], pl.FP32], r: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [r, 0], [16, 32])
        y = pl.store(pl.add(t, t), [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, y: pl.Tensor[[64, 32], pl.FP32],
              z: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(y, [0, 0], [64, 32])
        z = pl.store(pl.add(t, 1.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
             z: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(4, pl.TASK_ID)
            for i in pl.range(4):
                part, tid = pl.submit(self.part, x, i * 16, y)
                tids[i] = tid
            z, _ = pl.submit(self.total, y, z, deps=[tids])
        return z


def test_the_program_form_with_pl_submit_runs_and_round_trips(write_dsl):
    text = str(SubmittedFanIn)
    assert "                part, tid = pl.submit(self.part, x, i * 16, y)\n" in text
    assert "            z_1, _ = pl.submit(self.total, y, z, deps=[tids_3])\n" in text
    module, _ = write_dsl("printed_program", text)
    assert str(module.SubmittedFanIn) == text
    x, y, z = torch.randn(64, 32), torch.zeros(64, 32), torch.zeros(64, 32)
    pypto.ir.compile(SubmittedFanIn, platform="a2a3sim")(x, y, z)
    torch.testing.assert_close(z, (x + x) + 1.0)


def test_a_comprehension_in_deps_names_each_task_it_lists():
    x = torch.randn(ROWS, COLS)
    y, out = torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)
    compiled = fan_in_listed.compile(x, y, out, config=RunConfig(enable_chip_swimlane=1))
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert "t___tmp_v0 = tids[0];" in cpp and "t___tmp_v1 = tids[2];" in cpp, cpp
    assert "_deps[2] = {t___tmp_v0, t___tmp_v1};" in cpp, cpp
    for _ in range(3):
        compiled(x, y, out)
        torch.testing.assert_close(y, _summed(x))
        torch.testing.assert_close(out[0:32], _summed(x)[0:32] + 1.0)
        torch.testing.assert_close(out[64:96], _summed(x)[64:96] + 1.0)
        tasks = _tasks(compiled)
        producers, consumer = tasks[:4], tasks[4]
        assert consumer["start_ns"] >= max(producers[0]["end_ns"], producers[2]["end_ns"])


def test_a_comprehension_in_deps_needs_constant_bounds(write_kernel):
    module, path = write_kernel(
        "deps_bound",
        """
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.manual_scope():
        tids = pl.array.create(4, pl.TASK_ID)
        for n in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP, deps=[tids[i] for i in range(n)]):
                y[:, :] = pl.add(x[:, :], 1.0)
    return y
""",
    )
    with pytest.raises(Exception) as error:
        module.k(torch.zeros(32, 32), torch.zeros(32, 32))
    message = str(error.value)
    assert "deps= takes a comprehension of the form [tids[i] for i in range(n)] with constant bounds" in message
    assert f"{path}:9:80" in message, message
