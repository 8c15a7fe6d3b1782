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
