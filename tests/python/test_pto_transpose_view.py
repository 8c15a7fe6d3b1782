"""pl.tile.transpose_view of a Mat tile as a matmul's right operand: the simulator multiplies by the
transpose, and backend-ptoas writes the view as an alloc_tile at the source's address typed in the
ZN layout (the NZ bytes of the source read transposed), in a .pto that conforms to the PTO dialect."""

import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms

KERNELS = '''
import pypto.language as pl


@pl.jit
def scores(q: pl.Tensor[[16, 32], pl.FP16], k: pl.Tensor[[64, 32], pl.FP16],
           out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tk = pl.load(k, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        tq = pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.matmul(tq, pl.tile.transpose_view(tk)), [0, 0], out)
    return out


@pl.jit
def batch_at(a: pl.Tensor[[2, 64, 64], pl.FP32], b: pl.Tensor[[2, 64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [2, 64, 64], target_memory=pl.Mem.Mat)
        ta_t = pl.tile.transpose_view(ta)
        tb = pl.load(b, [0, 0, 0], [2, 64, 64], target_memory=pl.Mem.Mat)
        pl.store(pl.batch_matmul(ta_t, tb), [0, 0, 0], out)
    return out
'''

kernels = kernels_fixture("pto_transpose_view.py", KERNELS)


def test_a_transposed_view_of_a_mat_tile_is_read_in_place(kernels):
    q, k, out = torch.randn(16, 32).half(), torch.randn(64, 32).half(), torch.zeros(16, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.scores.compile(q, k, out, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aic/*.pto")
    text = pto.read_text()
    zn = "!pto.tile_buf<loc=mat, dtype=f16, rows=32, cols=64, v_row=?, v_col=?, blayout=row_major, slayout=col_major"
    assert "pto.tmov ins(%" in text and zn in text, text
    assert_conforms(compiled.output_dir)
    compiled(q, k, out)
    torch.testing.assert_close(out, q.float() @ k.float().T, rtol=1e-3, atol=1e-3)


def test_a_views_source_keeps_its_bytes_until_the_view_is_read(kernels):
    # Per batch, a's view is read after b's load: memory allocation keeps a's batch in its bytes
    # until then (b's batch goes past it), so every kernel gets a .pto.
    a, b, out = torch.randn(2, 64, 64), torch.randn(2, 64, 64), torch.zeros(2, 64, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.batch_at.compile(a, b, out, config=RunConfig(platform="a2a3sim"))
    assert_conforms(compiled.output_dir)
    compiled(a, b, out)
    torch.testing.assert_close(out, torch.bmm(a.transpose(-2, -1), b), rtol=1e-3, atol=1e-3)
