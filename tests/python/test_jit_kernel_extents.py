"""A @pl.jit.incore kernel reading the extent of its own parameter's unbound axis
(`pl.tensor.dim(x, 0)`, prefill_kv_allgather's pattern) in a program compiled once for every extent
(docs/language.md, "One compile for every extent"): the kernel takes the extent as an INDEX parameter
after its own, which each call passes. One compile at three token counts, each result equal to torch's."""

import pytest
import torch
from test_jit_generic_forms import _compiled_once

KERNELS = """
import pypto.language as pl

ROWS = pl.dynamic("ROWS")
TILE = 16


@pl.jit.incore
def scale_rows(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]],
               factor: pl.Scalar[pl.FP32]):
    n = pl.tensor.dim(x, 0)
    for r in pl.range(0, n, TILE):
        rows = pl.min(TILE, n - r)
        a = pl.load(x, [r, 0], [TILE, 64], valid_shape=[rows, 64])
        pl.store(pl.mul(a, factor), [r, 0], out)
    return out


@pl.jit
def scaled(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    out = scale_rows(x, out, 3.0)
    return out
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("kernel_extents", KERNELS)
    return module


def test_an_incore_kernel_reads_the_extent_of_its_parameter(kernels, monkeypatch, tmp_path):
    """The kernel loops over the rows its tensor has in this call: 5, 40 and 33 (a ragged last tile)."""

    def call(rows):
        def run():
            x, out = torch.randn(rows, 64), torch.zeros(rows, 64)
            kernels.scaled(x, out)
            torch.testing.assert_close(out, x * 3)

        return run

    _compiled_once(kernels.scaled, monkeypatch, tmp_path, [call(5), call(40), call(33)])
