"""Orchestration loops that rebind a tensor to another buffer in each iteration (`state = nxt`): the
loop carries the tensor (ClassifyIterArgCarry: a rebind carry), so each iteration reads what the last
one produced and code after the loop reads the last one, checked on the simulator against torch.
Tensors a loop only updates in place stay one buffer alongside. A tensor created in the loop body is
one buffer for every iteration, so rebinding to it would make a later task read and write one
buffer: that is refused at the kernel call, naming the iteration."""

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


@pl.program
class FreshEachIteration:
    @pl.function(type=pl.FunctionType.Orchestration)
    def smooth(
        self, x: pl.Tensor[[32, 64], pl.FP32], last: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        state = last
        for i in pl.range(3):
            nxt: pl.Tensor[[32, 64], pl.FP32] = pl.create_tensor([32, 64], dtype=pl.FP32)
            nxt = blend(state, x, nxt)
            state = nxt
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


def test_rebinding_to_a_tensor_created_in_the_loop_body_is_refused(programs, tmp_path):
    with pytest.raises(Exception) as info:
        pypto.ir.compile(programs.FreshEachIteration, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    message = str(info.value)
    assert ("'blend' would read 'state' and write 'nxt', which are one buffer here (when i = 1): a loop that "
            "rebinds a tensor to one created in its body reuses that buffer in every iteration") in message, message
    assert "rebinding_loops.py:" in message, message
