"""What a loop carries from one iteration to the next: only the names its body reads before
rebinding them (true carries) and the names read after the loop. A name each iteration rebinds
before any read, and nothing after the loop reads, is not carried: a chunk loaded before and inside
a K loop, a scalar offset recomputed each iteration, a value one branch assigns that nothing uses.
Checked on the printed frontend IR (the loop's init_values) and on the simulator against torch."""

from pathlib import Path

import torch
from conftest import kernels_fixture

from pypto.runtime import RunConfig

KERNELS = """
import pypto.language as pl


# `t` is loaded before the loop and again in each iteration before the add reads it, and nothing
# after the loop reads it: only `acc` is carried.
@pl.jit
def dead_rebinding(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="dead_rebinding"):
        t = x[0:16, :]
        acc = pl.mul(t, 0.5)
        off = 0
        for i in pl.range(1, 4):
            off = i * 16
            t = x[off : off + 16, :]
            acc = pl.add(acc, t)
        y[:, :] = acc
    return y


# `prev` is read before it is rebound: each iteration adds the previous iteration's chunk.
@pl.jit
def true_carry(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="true_carry"):
        prev = x[0:16, :]
        acc = pl.mul(prev, 0.0)
        for i in pl.range(1, 4):
            t = x[i * 16 : i * 16 + 16, :]
            acc = pl.add(acc, pl.mul(prev, t))
            prev = t
        y[:, :] = acc
    return y


# `best` is written on one branch only and read after the loop: carried, the other branch handing
# on the value before. `t` is not.
@pl.jit
def one_branch(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="one_branch"):
        best = x[0:16, :]
        t = x[0:16, :]
        for i in pl.range(1, 4):
            t = x[i * 16 : i * 16 + 16, :]
            if i == 2:
                best = pl.add(t, 1.0)
        y[:, :] = best
    return y


# `scratch` is assigned on one branch and read only there: neither the if nor the loop hands it on.
@pl.jit
def branch_local(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="branch_local"):
        scratch = x[0:16, :]
        acc = pl.mul(scratch, 0.0)
        for i in pl.range(4):
            if i == 2:
                scratch = x[i * 16 : i * 16 + 16, :]
                acc = pl.add(acc, scratch)
        y[:, :] = acc
    return y


# A break hands on what the loop carries, `acc`, and not the chunk `t`.
@pl.jit
def early_exit(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="early_exit"):
        t = x[0:16, :]
        acc = pl.mul(t, 0.0)
        for i in pl.range(4):
            t = x[i * 16 : i * 16 + 16, :]
            if i == 2:
                break
            acc = pl.add(acc, t)
        y[:, :] = acc
    return y


# `t` is only written in the loop, but read after it: the loop carries it to hand on the last chunk.
@pl.jit
def read_after(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_after"):
        t = x[0:16, :]
        for i in pl.range(1, 4):
            t = x[i * 16 : i * 16 + 16, :]
        y[:, :] = pl.mul(t, 2.0)
    return y


# The inner loop rebinds `w` without reading it, but the outer loop's next iteration reads what
# the inner loop left: both carry it.
@pl.jit
def nested(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="nested"):
        w = x[0:16, :]
        acc = pl.mul(w, 0.0)
        for i in pl.range(2):
            acc = pl.add(acc, w)
            for j in pl.range(2):
                w = x[(i * 2 + j) * 16 : (i * 2 + j) * 16 + 16, :]
        y[:, :] = acc
    return y


# A while loop: `t` is dead, `n` and `acc` are carried.
@pl.jit
def while_loop(x: pl.Tensor[[64, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="while_loop"):
        t = x[0:16, :]
        acc = pl.mul(t, 0.0)
        n = 1
        while n < 4:
            t = x[n * 16 : n * 16 + 16, :]
            acc = pl.add(acc, t)
            n = n + 1
        y[:, :] = acc
    return y
"""

kernels = kernels_fixture("loop_carries.py", KERNELS)


def _inputs():
    torch.manual_seed(0)
    return torch.randn(64, 16), torch.zeros(16, 16)


def _chunk(x, i):
    return x[i * 16 : i * 16 + 16]


def _frontend_ir(function) -> str:
    compiled = function.compile(*_inputs(), config=RunConfig(platform="a2a3sim", dump_passes=True))
    return (Path(compiled.output_dir) / "passes_dump" / "00_frontend.py").read_text()


def _loop_lines(text: str) -> list[str]:
    """The lines of the printed IR that open a loop or yield, stripped."""
    return [line.strip() for line in text.splitlines()
            if line.strip().startswith(("for ", "while ")) or "pl.yield_(" in line]


def test_a_name_rebound_before_any_read_and_dead_after_the_loop_is_not_carried(kernels):
    text = _frontend_ir(kernels.dead_rebinding)
    assert _loop_lines(text) == [
        "for i, (acc_1,) in pl.range(1, 4, init_values=(acc,)):",
        "acc_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_2)",
    ], text
    assert "t_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [off_1, 0], [16, 16])" in text, text
    x, y = _inputs()
    kernels.dead_rebinding(x, y)
    torch.testing.assert_close(y, _chunk(x, 0) * 0.5 + _chunk(x, 1) + _chunk(x, 2) + _chunk(x, 3))


def test_a_name_read_before_it_is_rebound_is_carried(kernels):
    assert _loop_lines(_frontend_ir(kernels.true_carry)) == [
        "for i, (acc_1, prev_1) in pl.range(1, 4, init_values=(acc, prev)):",
        "acc_3, prev_3 = pl.yield_(acc_2, prev_2)",
    ]
    x, y = _inputs()
    kernels.true_carry(x, y)
    expected = sum(_chunk(x, i - 1) * _chunk(x, i) for i in range(1, 4))
    torch.testing.assert_close(y, expected)


def test_a_name_one_branch_writes_and_the_loop_hands_on_is_carried(kernels):
    assert _loop_lines(_frontend_ir(kernels.one_branch)) == [
        "for i, (best_1,) in pl.range(1, 4, init_values=(best,)):",
        "best_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(best_2)",
        "best_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(best_1)",
        "best_4: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(best_3)",
    ]
    x, y = _inputs()
    kernels.one_branch(x, y)
    torch.testing.assert_close(y, _chunk(x, 2) + 1.0)


def test_a_name_one_branch_writes_and_reads_is_neither_merged_nor_carried(kernels):
    text = _frontend_ir(kernels.branch_local)
    assert _loop_lines(text) == [
        "for i, (acc_1,) in pl.range(4, init_values=(acc,)):",
        "acc_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_2)",
        "acc_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_1)",
        "acc_4: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_3)",
    ], text
    x, y = _inputs()
    kernels.branch_local(x, y)
    torch.testing.assert_close(y, _chunk(x, 2))


def test_a_break_hands_on_only_what_the_loop_carries(kernels):
    text = _frontend_ir(kernels.early_exit)
    assert _loop_lines(text) == [
        "for i, (acc_1,) in pl.range(4, init_values=(acc,)):",
        "acc_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(acc_2)",
    ], text
    assert "pl.break_(acc_1)" in text, text
    x, y = _inputs()
    kernels.early_exit(x, y)
    torch.testing.assert_close(y, _chunk(x, 0) + _chunk(x, 1))


def test_a_name_only_written_in_the_loop_but_read_after_it_is_carried(kernels):
    assert _loop_lines(_frontend_ir(kernels.read_after)) == [
        "for i, (t_1,) in pl.range(1, 4, init_values=(t,)):",
        "t_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(t_2)",
    ]
    x, y = _inputs()
    kernels.read_after(x, y)
    torch.testing.assert_close(y, _chunk(x, 3) * 2.0)


def test_an_inner_loop_carries_what_the_outer_loop_reads_next_iteration(kernels):
    assert _loop_lines(_frontend_ir(kernels.nested)) == [
        "for i, (acc_1, w_1) in pl.range(2, init_values=(acc, w)):",
        "for j, (w_2,) in pl.range(2, init_values=(w_1,)):",
        "w_4: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(w_3)",
        "acc_3, w_5 = pl.yield_(acc_2, w_4)",
    ]
    x, y = _inputs()
    kernels.nested(x, y)
    torch.testing.assert_close(y, _chunk(x, 0) + _chunk(x, 1))


def test_a_while_loop_carries_its_counter_and_accumulator_only(kernels):
    assert _loop_lines(_frontend_ir(kernels.while_loop)) == [
        "for (acc_1, n_1) in pl.while_(init_values=(acc, n)):",
        "acc_3, n_3 = pl.yield_(acc_2, n_2)",
    ]
    x, y = _inputs()
    kernels.while_loop(x, y)
    torch.testing.assert_close(y, _chunk(x, 1) + _chunk(x, 2) + _chunk(x, 3))
