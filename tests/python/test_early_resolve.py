"""Early resolve: `allow_early_resolve=True` on a launch (`pl.at`, `pl.spmd`, `pl.submit`) lets the
runtime stage its consumers on idle cores before it finishes. It changes when tasks start, never
what they compute: the results are checked against torch, the staging in the chip swimlane, the flag
in the printed program (which parses back) and in the generated C++."""

import json
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def staged_pair(x: pl.Tensor[[64, 64], pl.FP32], mid: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce", allow_early_resolve=True):
        mid[:] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y[:] = pl.add(mid, 1.0)
    return mid, y


@pl.jit
def unflagged_pair(x: pl.Tensor[[64, 64], pl.FP32], mid: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
                   y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="produce"):
        mid[:] = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y[:] = pl.add(mid, 1.0)
    return mid, y


# An SPMD producer: its consumer waits for every block through the launch's TaskId.
@pl.jit
def spmd_then_sum(x: pl.Tensor[[64, 32], pl.FP32], mid: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
                  y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.spmd(4, name_hint="rows", allow_early_resolve=True) as rows:
        i = pl.tile.get_block_idx()
        r = i * 16
        mid[r : r + 16, :] = pl.mul(x[r : r + 16, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="total", deps=[rows]):
        y[:] = pl.add(mid, x)
    return mid, y


def _tasks_by_kernel(compiled):
    records = Path(compiled.output_dir) / "dfx_outputs" / "chip_swimlane_records.json"
    tasks = {}
    for task in json.loads(records.read_text())["aicore_tasks"]:
        tasks.setdefault(task["kernel"], []).append(task)
    return tasks


def test_the_consumer_is_staged_before_its_producer_ends_and_starts_after_it():
    x, mid, y = torch.randn(64, 64), torch.zeros(64, 64), torch.zeros(64, 64)
    compiled = staged_pair.compile(x, mid, y, config=RunConfig(enable_chip_swimlane=1))
    for _ in range(3):
        compiled(x, mid, y)
        torch.testing.assert_close(y, torch.exp(x) + 1.0)
        tasks = _tasks_by_kernel(compiled)
        (produce,), (consume,) = tasks["produce"], tasks["consume"]
        assert "staged_ns" not in produce
        assert consume["staged_ns"] < produce["end_ns"] <= consume["start_ns"]
        assert consume["core_index"] != produce["core_index"]


def test_without_the_flag_the_consumer_is_dispatched_when_it_is_ready():
    x, mid, y = torch.randn(64, 64), torch.zeros(64, 64), torch.zeros(64, 64)
    compiled = unflagged_pair.compile(x, mid, y, config=RunConfig(enable_chip_swimlane=1))
    compiled(x, mid, y)
    torch.testing.assert_close(y, torch.exp(x) + 1.0)
    tasks = _tasks_by_kernel(compiled)
    assert all("staged_ns" not in t for t in tasks["produce"] + tasks["consume"])
    assert tasks["consume"][0]["start_ns"] >= tasks["produce"][0]["end_ns"]


def test_an_spmd_producer_releases_its_consumer_once_every_block_started():
    x, mid, y = torch.randn(64, 32), torch.zeros(64, 32), torch.zeros(64, 32)
    compiled = spmd_then_sum.compile(x, mid, y, config=RunConfig(enable_chip_swimlane=1))
    staged = 0
    # On a loaded machine every block may end before the scheduler gets to stage the consumer: then it
    # is dispatched when ready, which is right too. Of five runs, at least one must show the staging.
    for _ in range(5):
        compiled(x, mid, y)
        torch.testing.assert_close(y, 3.0 * x)
        tasks = _tasks_by_kernel(compiled)
        blocks, (total,) = tasks["rows"], tasks["total"]
        assert len(blocks) == 4
        last_end = max(b["end_ns"] for b in blocks)
        assert last_end <= total["start_ns"]
        if "staged_ns" in total:
            assert total["staged_ns"] < last_end
            staged += 1
    assert staged > 0, "the consumer was never staged before its producer's last block ended"


def test_the_generated_cpp_sets_the_flag_on_the_producer_only():
    x, mid, y = torch.randn(64, 64), torch.zeros(64, 64), torch.zeros(64, 64)
    compiled = staged_pair.compile(x, mid, y)
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert cpp.count("set_allow_early_resolve(true);") == 1
    assert "params_t0.set_allow_early_resolve(true);\n" in cpp


@pytest.mark.parametrize("program,expected", [
    (staged_pair, 'pl.submit(self.produce, x, mid, attrs={"arg_directions": ["Input", "OutputExisting"]}, '
                  "allow_early_resolve=True)"),
    (spmd_then_sum, "with pl.spmd(core_num=4, allow_early_resolve=True) as rows:"),
])
def test_the_lowered_program_prints_the_flag_and_parses_back(write_dsl, program, expected):
    x = torch.randn(64, 64) if program is staged_pair else torch.randn(64, 32)
    lowered = program.lower(x, torch.zeros_like(x), torch.zeros_like(x))
    text = str(lowered)
    assert expected in text
    reparsed = getattr(write_dsl("printed", text)[0], lowered.name)
    assert str(reparsed) == text


def test_the_flag_must_be_a_bool_literal(write_dsl):
    source = (
        "@pl.jit\n"
        "def bad(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=1):\n"
        "        y[:] = pl.exp(x)\n"
        "    return y\n")
    module, _ = write_dsl("bad_flag", source)
    with pytest.raises(Exception) as error:
        module.bad.lower(torch.randn(16, 16), torch.zeros(16, 16))
    text = str(error.value)
    assert "bad_flag.py:5:63" in text
    assert "pl.at allow_early_resolve must be True or False" in text
