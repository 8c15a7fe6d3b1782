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
    assert "fatal error 1 (ScopeDeadlock): task 3 (func_id 3) needs a slot of task ring 1, but all 3 usable slots" in message
    assert "the scope at depth 1 submits more tasks than its window holds" in message
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


# ---- heap rings: the memory of the tensors a run creates ------------------------------------------------

@pl.jit
def tensor_per_iteration(x: pl.Tensor[[8, 1024], pl.FP32], y: pl.Out[pl.Tensor[[8, 1024], pl.FP32]]):
    for r in pl.range(8):
        t = pl.create_tensor([1, 1024], dtype=pl.FP32)  # 4 KiB, in the heap ring of the loop body's scope
        with pl.at(level=pl.Level.CORE_GROUP):
            t[0:1, :] = pl.mul(x[r : r + 1, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = pl.add(t[0:1, :], 1.0)
    return y


@pl.jit
def one_big_tensor(x: pl.Tensor[[16, 1024], pl.FP32], y: pl.Out[pl.Tensor[[16, 1024], pl.FP32]]):
    t = pl.create_tensor([16, 1024], dtype=pl.FP32)  # 64 KiB, in the outer scope's ring
    for r in pl.range(0, 16, 8):
        with pl.at(level=pl.Level.CORE_GROUP):
            t[r : r + 8, :] = pl.mul(x[r : r + 8, :], 2.0)
    for r in pl.range(0, 16, 8):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 8, :] = pl.add(t[r : r + 8, :], 1.0)
    return y


def test_each_iteration_gives_its_tensor_back_so_a_loop_runs_in_a_small_heap():
    # 32 KiB of tensors in all through an 8 KiB ring: an iteration's tensor is freed once its scope has
    # ended and its readers are done.
    x = torch.randn(8, 1024)
    y = torch.zeros(8, 1024)
    tensor_per_iteration(x, y, config=RunConfig(ring_heap=8192))
    torch.testing.assert_close(y, x * 2.0 + 1.0)


def test_a_tensor_larger_than_its_heap_ring_is_a_heap_ring_deadlock():
    x = torch.randn(16, 1024)
    y = torch.zeros(16, 1024)
    with pytest.raises(RuntimeError) as info:
        one_big_tensor(x, y, config=RunConfig(ring_heap=[0, 16384, 0, 0]))
    assert str(info.value) == (
        "sim: fatal error 2 (HeapRingDeadlock): intermediate 't' needs 65536 bytes of heap ring 1 (scope depth 1), "
        "which is more than the whole ring (16384 bytes); raise the heap (RunConfig(ring_heap=...), PTO2_RING_HEAP) "
        "or create fewer or smaller tensors in that scope (e.g. inside a loop, whose body is a scope)")
    one_big_tensor(x, y, config=RunConfig(ring_heap=[0, 65536, 0, 0]))  # the whole tensor fits
    torch.testing.assert_close(y, x * 2.0 + 1.0)


def test_the_heap_comes_from_the_environment_when_the_config_has_none(monkeypatch):
    monkeypatch.setenv("PTO2_RING_HEAP", "16384")
    one_big_tensor.clear_cache()
    with pytest.raises(RuntimeError, match=r"needs 65536 bytes of heap ring 1 .* the whole ring \(16384 bytes\)"):
        one_big_tensor(torch.randn(16, 1024), torch.zeros(16, 1024))
    one_big_tensor.clear_cache()
