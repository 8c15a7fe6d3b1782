"""Ifs in orchestration code on scalars (a scalar argument, loop variables, values computed from
them): the branch chosen decides which kernels run and which scalar values later launches get,
checked against torch on the simulator."""

import pytest
import torch

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


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    import importlib.util

    path = tmp_path_factory.mktemp("kernels") / "orchestration_if_kernels.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("orchestration_if_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.path = path
    return module


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


def test_a_condition_read_from_a_tensor_is_refused(kernels):
    with pytest.raises(Exception) as info:
        kernels.read_condition.compile(torch.randn(64, 32), torch.zeros(64, 32))
    message = str(info.value)
    assert (
        "the condition of this orchestration if calls 'tensor.read', whose value is only known at run time" in message
    )
    assert f"--> {kernels.path}:56:5" in message
