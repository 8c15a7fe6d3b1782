"""Ifs in orchestration code on scalars (a scalar argument, loop variables, values computed from
them): the branch chosen decides which kernels run and which scalar values later launches get,
checked against torch on the simulator."""

from pathlib import Path

import pytest
import torch
from conftest import is_poison, kernels_fixture, unwritten

KERNELS = '''
import pypto.language as pl

ROWS = 64
COLS = 32


@pl.jit
def choose(x: pl.Tensor[[ROWS, COLS], pl.FP32], mode: pl.Scalar[pl.INT32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    m = pl.cast(mode, pl.INDEX)
    if m == 0:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            y[:, :] = pl.mul(x, 2.0)
    else:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="expo"):
            y[:, :] = pl.exp(x)
    return y


@pl.jit
def choose_per_block(x: pl.Tensor[[ROWS, COLS], pl.FP32], n: pl.Scalar[pl.INDEX],
                     y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for i in pl.range(4):
        r = i * 16
        if i < n:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
                y[r : r + 16, :] = pl.mul(x[r : r + 16, :], 2.0)
        else:
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="expo"):
                y[r : r + 16, :] = pl.exp(x[r : r + 16, :])
    return y


@pl.jit
def clamped_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], n: pl.Scalar[pl.INT32],
                 y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    k = pl.cast(n, pl.INDEX)
    if k < 0:
        k = pl.cast(0, pl.INDEX)
    if k > 4:
        k = pl.cast(4, pl.INDEX)
    for i in pl.range(4):
        s = i * 3 - 4
        if s < 0:
            s = 0
        elif s > 3:
            s = 3
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift"):
            t = (s + k) * 6
            y[i * 16 : i * 16 + 16, :] = pl.add(x[t : t + 16, :], 1.0)
    return y


@pl.jit
def read_condition(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    if pl.read(x, [0, 0]) > 0.0:
        with pl.at(level=pl.Level.CORE_GROUP):
            y[:, :] = pl.exp(x)
    return y
'''


kernels = kernels_fixture("orchestration_if_kernels.py", KERNELS)


def test_a_scalar_argument_chooses_the_kernel(kernels):
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    kernels.choose(x, 0, y)
    torch.testing.assert_close(y, 2 * x)
    kernels.choose(x, 1, y)
    torch.testing.assert_close(y, torch.exp(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 3])
def test_each_iteration_chooses_its_kernel(kernels, n):
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    kernels.choose_per_block(x, n, y)
    rows = 16 * n
    torch.testing.assert_close(y, torch.cat([2 * x[:rows], torch.exp(x[rows:])]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, k", [(7, 4), (-2, 0), (2, 2)])
def test_scalars_clamped_by_ifs_reach_the_kernel(kernels, n, k):
    x = torch.randn(64, 32)
    y = torch.zeros(64, 32)
    kernels.clamped_rows(x, n, y)
    shifts = [0, 0, 2, 3]  # i * 3 - 4 clamped to [0, 3]
    expected = torch.cat([x[(s + k) * 6 : (s + k) * 6 + 16] + 1.0 for s in shifts])
    torch.testing.assert_close(y, expected)


@pytest.mark.parametrize("first", [1.5, -1.5])
def test_a_condition_may_read_an_input_tensor(kernels, first):
    # The read is made when the run builds its task plan; the C++ reads it before the if.
    x = torch.randn(64, 32)
    x[0, 0] = first
    y = torch.zeros(64, 32)
    # A false condition runs no kernel: all of y is then left unwritten.
    with unwritten(*([] if first > 0 else
                     ["output 'y' [64, 32] float32: 2048 of 2048 elements were never written: all of rows 0..63"])):
        kernels.read_condition(x, y)
    if first > 0:
        torch.testing.assert_close(y, torch.exp(x))
    else:
        assert is_poison(y)
    source = next(Path(kernels.read_condition.compile(x, y).output_dir).glob("orchestration/*.cpp")).read_text()
    assert "float element = get_tensor_data<float>(ext_x, 2, element_index);" in source, source
    assert "if (element > 0.0f) {" in source, source


PROGRAM = '''
import pypto.language as pl


@pl.program
class Rebinds:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def expo(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(pl.exp(t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        k = pl.cast(LIMIT, pl.INDEX)
        if k > 2:
            y = self.twice(x, y)
        else:
            y = self.expo(x, y)
        z = self.twice(y, z)
        return z
'''


@pytest.mark.parametrize("limit", [3, 1])
def test_a_tensor_both_branches_write_is_read_after_the_if(write_kernel, limit):
    import pypto

    module, _ = write_kernel(f"rebinds_{limit}", PROGRAM.replace("LIMIT", str(limit)))
    x, y, z = torch.randn(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)
    pypto.ir.compile(module.Rebinds, platform="a2a3sim")(x, y, z)
    first = 2 * x if limit > 2 else torch.exp(x)
    torch.testing.assert_close(y, first, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(z, 2 * first, rtol=1e-5, atol=1e-5)


def test_branches_must_leave_a_name_on_one_tensor(write_kernel):
    import pypto

    source = PROGRAM.replace("LIMIT", "3").replace("y = self.expo(x, y)", "y = self.expo(x, z)")
    module, path = write_kernel("rebinds_apart", source)
    with pytest.raises(Exception) as info:
        pypto.ir.compile(module.Rebinds, platform="a2a3sim")
    message = str(info.value)
    assert (
        "'y' names a different tensor after each branch of this orchestration if; the branches may choose which "
        "kernels write a tensor, not which tensor later code uses" in message
    )
    assert f"--> {path}:23:9" in message


PHASES = '''
import pypto.language as pl


@pl.program
class Phases:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, data: pl.Tensor[[64, 32], pl.FP32], row: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32] = pl.load(data, [row, 0], [16, 32])
        ret: pl.Tensor[[64, 32], pl.FP32] = pl.store(pl.add(t, 1.0), [row, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[64, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(2, pl.TASK_ID)
            for branch in pl.parallel(2):
                if branch >= 0:
                    out, tid = pl.submit(self.stripe, data, branch * 16, out)
                    tids[branch] = tid
            out, joined = pl.submit(self.stripe, data, 32, out, deps=[tids])
            for branch in pl.parallel(1):
                out, _ = pl.submit(self.stripe, data, 48, out, deps=[joined])
        return out
'''


def test_launches_in_an_if_record_their_task_ids_and_update_the_tensor_in_place(write_kernel):
    # `tids[branch] = tid` in a branch updates the one TaskId array; `out = submit(..., out)` after
    # earlier in-place updates still names the same tensor in the next loop.
    from pypto.testing import TensorSpec, run

    module, _ = write_kernel("phases", PHASES)
    specs = [TensorSpec("data", [64, 32], torch.float32, init_value=torch.randn),
             TensorSpec("out", [64, 32], torch.float32)]

    def golden(t):
        t["out"][:] = t["data"] + 1.0

    result = run(module.Phases, specs, golden, platform="a2a3sim")
    assert result.passed, result.error
