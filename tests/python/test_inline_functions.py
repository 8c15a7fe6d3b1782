"""@pl.jit.inline functions as model code writes them: one that ends with `return other(...)` runs
the other's body (a layer handing its work down), and dimensions read off a config object
(`CFG.hidden`) are constants like module globals. Results are compared with torch."""

import torch

KERNELS = '''
import dataclasses

import pypto.language as pl


@dataclasses.dataclass(frozen=True)
class Config:
    rows: int
    hidden: int
    scale: float


CFG = Config(rows=32, hidden=64, scale=3.0)


@pl.jit.inline
def _scale(x: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32], y: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [CFG.rows, CFG.hidden])
        pl.store(pl.mul(t, CFG.scale), [0, 0], y)
    return y


@pl.jit.inline
def _shift_then_scale(x: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32], tmp: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32],
                      y: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [CFG.rows, CFG.hidden])
        pl.store(pl.add(t, 1.0), [0, 0], tmp)
    return _scale(tmp, y)


@pl.jit.inline
def _layer(x: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32], y: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32]):
    tmp = pl.create_tensor([CFG.rows, CFG.hidden], dtype=pl.FP32)
    return _shift_then_scale(x, tmp, y)


@pl.jit
def layer(x: pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32], y: pl.Out[pl.Tensor[[CFG.rows, CFG.hidden], pl.FP32]]):
    return _layer(x, y)
'''


def test_an_inline_function_returning_another_inline_call_runs_its_body(write_kernel):
    kernels, _ = write_kernel("inline_return_kernels", KERNELS)
    x = torch.randn(32, 64)
    y = torch.zeros(32, 64)
    kernels.layer(x, y)
    torch.testing.assert_close(y, (x + 1) * 3)


DYNAMIC = '''
import pypto.language as pl

B = pl.dynamic("B")


@pl.jit.inline
def _double_rows(src: pl.Tensor[[B, 64], pl.FP32], dst: pl.Tensor[[B, 64], pl.FP32]):
    rows = pl.tensor.dim(src, 0)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(src, [0, 0], [32, 64], valid_shape=[rows, 64])
        pl.store(pl.mul(t, 2.0), [0, 0], dst)
    return dst


@pl.jit
def padded(x: pl.Tensor[[B, 64], pl.FP32], y: pl.Out[pl.Tensor[[B, 64], pl.FP32]]):
    rows = pl.tensor.dim(x, 0)
    staged = pl.create_tensor([32, 64], dtype=pl.FP32)
    doubled = pl.create_tensor([32, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64], valid_shape=[rows, 64])
        pl.store(t, [0, 0], staged)
    _double_rows(staged, doubled)
    with pl.at(level=pl.Level.CORE_GROUP):
        d = pl.load(doubled, [0, 0], [32, 64], valid_shape=[rows, 64])
        pl.store(d, [0, 0], y)
    return y
'''


def test_an_inline_function_binds_its_own_dynamic_dimensions(write_kernel):
    # The entry binds B to 31 rows; the inline helper is handed a padded [32, 64] buffer, where its own
    # annotation binds B to 32 (each function's annotations are their own scope, as upstream's are).
    kernels, _ = write_kernel("inline_dynamic_kernels", DYNAMIC)
    x = torch.randn(31, 64)
    y = torch.zeros(31, 64)
    kernels.padded(x, y)
    torch.testing.assert_close(y, x * 2)
