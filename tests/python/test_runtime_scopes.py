"""Runtime scopes and task windows, seen from a program: an orchestration loop's body is a scope, so
a loop runs through any window; a scope holding more tasks than its window is a diagnosed deadlock."""

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def rows_plus_one_loop(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    for r in pl.range(0, 128, 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
    return y


@pl.jit
def four_straight_kernels(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:16, :] = pl.add(x[0:16, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP):
        y[16:32, :] = pl.add(x[16:32, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP):
        y[32:48, :] = pl.add(x[32:48, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP):
        y[48:64, :] = pl.add(x[48:64, :], 1.0)
    return y


def test_a_loop_runs_through_a_small_window():
    # Eight iterations, one task each, through 3 usable slots: each iteration's scope gives its slot back.
    x = torch.randn(128, 32)
    y = torch.zeros(128, 32)
    rows_plus_one_loop(x, y, config=RunConfig(ring_task_window=4))
    torch.testing.assert_close(y, x + 1.0)


def test_a_scope_over_its_window_is_a_scope_deadlock():
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    with pytest.raises(RuntimeError) as info:
        four_straight_kernels(x, y, config=RunConfig(ring_task_window=4))
    message = str(info.value)
    assert "fatal error 1 (ScopeDeadlock): task 3 (func_id 3) needs a slot of task ring 0, but all 3 usable slots" in message
    assert "the scope at depth 0 submits more tasks than its window holds" in message
    # With a window that holds them, the same program runs.
    four_straight_kernels(x, y, config=RunConfig(ring_task_window=8))
    torch.testing.assert_close(y, x + 1.0)


def test_the_window_comes_from_the_environment_when_the_config_has_none(monkeypatch):
    monkeypatch.setenv("PTO2_RING_TASK_WINDOW", "2")
    four_straight_kernels.clear_cache()
    x = torch.randn(64, 32)
    with pytest.raises(RuntimeError, match=r"all 1 usable slots \(task window 2\)"):
        four_straight_kernels(x, torch.zeros(64, 32))
    four_straight_kernels.clear_cache()


@pytest.mark.parametrize("window", [0, 1, 6, 4.0, True])
def test_a_window_must_be_a_power_of_two(window):
    with pytest.raises(ValueError, match=f"ring_task_window must be a power of two of at least 2, got {window!r}"):
        RunConfig(ring_task_window=window)
