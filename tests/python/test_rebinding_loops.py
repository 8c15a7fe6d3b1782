"""Orchestration loops that rebind a tensor to another buffer in each iteration (`state = nxt`): the
loop carries the tensor (ClassifyIterArgCarry: a rebind carry), so each iteration reads what the last
one produced and code after the loop reads the last one, checked on the simulator against torch.
Tensors a loop only updates in place stay one buffer alongside. A tensor created in the loop body is a
new tensor in each iteration (a buffer no carried tensor names), so a kernel reading the carried
tensor and writing the new one never reads what it writes; rotating rows makes sharing one buffer
show. A kernel writing a tensor the loop has rebound the tensor it reads to is refused at the call,
naming the iteration."""

import pypto.ir
import pytest
import torch
from conftest import kernels_fixture
from pypto.ir.pass_manager import PassManager

PROGRAMS = '''
import pypto.language as pl


# Shared by both programs, which call it by its bare name.
@pl.function(type=pl.FunctionType.InCore)
def blend(
    state: pl.Tensor[[32, 64], pl.FP32],
    x: pl.Tensor[[32, 64], pl.FP32],
    dst: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
) -> pl.Tensor[[32, 64], pl.FP32]:
    s: pl.Tile[[32, 64], pl.FP32] = pl.load(state, [0, 0], [32, 64])
    v: pl.Tile[[32, 64], pl.FP32] = pl.load(x, [0, 0], [32, 64])
    out: pl.Tensor[[32, 64], pl.FP32] = pl.store(pl.add(pl.mul(s, 0.5), v), [0, 0], dst)
    return out


@pl.program
class Smoothing:
    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(
        self,
        state: pl.Tensor[[32, 64], pl.FP32],
        total: pl.InOut[pl.Tensor[[32, 64], pl.FP32]],
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        s: pl.Tile[[32, 64], pl.FP32] = pl.load(state, [0, 0], [32, 64])
        t: pl.Tile[[32, 64], pl.FP32] = pl.load(total, [0, 0], [32, 64])
        out: pl.Tensor[[32, 64], pl.FP32] = pl.store(pl.add(s, t), [0, 0], total)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def copy(
        self, src: pl.Tensor[[32, 64], pl.FP32], dst: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[32, 64], pl.FP32] = pl.load(src, [0, 0], [32, 64])
        out: pl.Tensor[[32, 64], pl.FP32] = pl.store(t, [0, 0], dst)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def smooth(
        self,
        x: pl.Tensor[[32, 64], pl.FP32],
        total: pl.InOut[pl.Tensor[[32, 64], pl.FP32]],
        last: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        state: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        state = self.copy(x, state)
        spare: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        for _ in pl.range(5):
            nxt = blend(state, x, spare)
            total = self.accumulate(nxt, total)
            spare = state
            state = nxt
        last = self.copy(state, last)
        return last


# dst[r] = state[(r + 16) % 32] + x[r]: the second half is read after the first half of dst is written,
# so a state that were dst's buffer would give other numbers.
@pl.function(type=pl.FunctionType.InCore)
def rotate_add(
    state: pl.Tensor[[32, 64], pl.FP32],
    x: pl.Tensor[[32, 64], pl.FP32],
    dst: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
) -> pl.Tensor[[32, 64], pl.FP32]:
    low: pl.Tile[[16, 64], pl.FP32] = pl.load(state, [16, 0], [16, 64])
    pl.store(pl.add(low, pl.load(x, [0, 0], [16, 64])), [0, 0], dst)
    high: pl.Tile[[16, 64], pl.FP32] = pl.load(state, [0, 0], [16, 64])
    out: pl.Tensor[[32, 64], pl.FP32] = pl.store(pl.add(high, pl.load(x, [16, 0], [16, 64])), [16, 0], dst)
    return out


@pl.program
class FreshEachIteration:
    @pl.function(type=pl.FunctionType.Orchestration)
    def smooth(
        self, x: pl.Tensor[[32, 64], pl.FP32], last: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        state = x
        for i in pl.range(6):
            nxt: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
            nxt = rotate_add(state, x, nxt)
            state = nxt
        last = rotate_add(state, x, last)
        return last


@pl.program
class TwoGenerationsLive:
    @pl.function(type=pl.FunctionType.InCore)
    def mix(
        self,
        cur: pl.Tensor[[32, 64], pl.FP32],
        prev: pl.Tensor[[32, 64], pl.FP32],
        dst: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        low: pl.Tile[[16, 64], pl.FP32] = pl.load(cur, [16, 0], [16, 64])
        pl.store(pl.add(low, pl.load(prev, [0, 0], [16, 64])), [0, 0], dst)
        high: pl.Tile[[16, 64], pl.FP32] = pl.load(cur, [0, 0], [16, 64])
        out: pl.Tensor[[32, 64], pl.FP32] = pl.store(pl.add(high, pl.load(prev, [16, 0], [16, 64])), [16, 0], dst)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def fib(
        self,
        a: pl.Tensor[[32, 64], pl.FP32],
        b: pl.Tensor[[32, 64], pl.FP32],
        last: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        prev = a
        cur = b
        for i in pl.range(7):
            nxt: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
            nxt = self.mix(cur, prev, nxt)
            prev = cur
            cur = nxt
        last = self.mix(cur, prev, last)
        return last


@pl.program
class WritesWhatItReads:
    @pl.function(type=pl.FunctionType.Orchestration)
    def smooth(
        self, x: pl.Tensor[[32, 64], pl.FP32], last: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        first: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        first = rotate_add(x, x, first)
        second: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
        state = first
        for i in pl.range(2):
            nxt = rotate_add(state, x, second)
            state = nxt
        last = rotate_add(state, x, last)
        return last
'''


programs = kernels_fixture("rebinding_loops.py", PROGRAMS)


def test_a_tensor_rebound_in_each_iteration_carries_the_last_buffer(programs, tmp_path):
    x = torch.randn(32, 64)
    total = torch.randn(32, 64)
    last = torch.zeros(32, 64)
    expected_total = total.clone()
    state = x.clone()
    for _ in range(5):
        state = state * 0.5 + x
        expected_total += state
    compiled = pypto.ir.compile(programs.Smoothing, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    compiled(x, total, last)
    torch.testing.assert_close(last, state, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(total, expected_total, rtol=1e-5, atol=1e-5)


def test_the_lowered_loop_carries_the_rebound_tensors(programs):
    text = str(PassManager.get_strategy().run_passes(programs.Smoothing))
    assert 'carry=("rebind", "rebind")):' in text, text


def rotated_sum(state, x):
    return torch.roll(state, shifts=-16, dims=0) + x


def test_a_tensor_created_in_the_loop_body_is_a_new_one_in_each_iteration(programs, tmp_path):
    x = torch.randn(32, 64)
    last = torch.zeros(32, 64)
    state = x.clone()
    for _ in range(7):  # six iterations, then the copy into last
        state = rotated_sum(state, x)
    compiled = pypto.ir.compile(programs.FreshEachIteration, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    compiled(x, last)
    torch.testing.assert_close(last, state, rtol=1e-5, atol=1e-5)


def test_two_generations_of_a_tensor_created_in_the_loop_stay_live_together(programs, tmp_path):
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    last = torch.zeros(32, 64)
    prev, cur = a.clone(), b.clone()
    for _ in range(7):
        prev, cur = cur, rotated_sum(cur, prev)
    expected = rotated_sum(cur, prev)
    compiled = pypto.ir.compile(programs.TwoGenerationsLive, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    compiled(a, b, last)
    torch.testing.assert_close(last, expected, rtol=1e-5, atol=1e-5)
    # The loop keeps three buffers for `nxt` (the new one and the two the carried names hold), not seven.
    source = next((tmp_path / "out" / "orchestration").glob("*.cpp")).read_text()
    assert "alloc_tensors(nxt_ci, nxt_ci, nxt_ci)" in source, source


def test_a_kernel_writing_the_tensor_it_reads_through_a_rebinding_is_refused(programs, tmp_path):
    with pytest.raises(Exception) as info:
        pypto.ir.compile(programs.WritesWhatItReads, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    message = str(info.value)
    expected = ("'rotate_add' would read 'state' and write 'second', which name one buffer here (when i = 1): the "
                "loop rebinds 'state' to the tensor the task writes, so the task would overwrite what it reads")
    assert expected in message, message
    call = "            nxt = rotate_add(state, x, second)"
    line = PROGRAMS.splitlines().index(call) + 1
    assert f"rebinding_loops.py:{line}:{call.index('rotate_add') + 1}" in message, message
