"""pl.transpose of the last two axes of a [B, R, C] tile in a .pto (upstream's test_trans.py:368).
FlattenTileNdTo2D leaves the tile rank 3 (the transpose has no 2-D form); backend-ptoas types it as
the rows of all its matrices and writes one pto.ttrans per matrix, between alloc_tiles of each
matrix's band, through a tmp in the Vec scratch. The module conforms to pto-check's table, and the
simulator computes torch's transpose."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def batch_transpose(x: pl.Tensor[[4, 24, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8, 24], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [4, 24, 8])
        out = pl.store(pl.transpose(t, axis1=1, axis2=2), [0, 0, 0], out)
    return out


@pl.jit
def narrow_rows(x: pl.Tensor[[2, 4, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 8, 4], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [2, 4, 8])
        out = pl.store(pl.transpose(t, axis1=2, axis2=1), [0, 0, 0], out)
    return out
'''

kernels = kernels_fixture("pto_batch_transpose.py", KERNELS)


def vec(rows, cols):
    return (f"!pto.tile_buf<loc=vec, dtype=f32, rows={rows}, cols={cols}, v_row=?, v_col=?, "
            "blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def test_a_batch_transpose_is_one_ttrans_per_matrix(kernels):
    x, out = torch.randn(4, 24, 8), torch.zeros(4, 8, 24)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        compiled = kernels.batch_transpose.compile(x, out, config=RunConfig(platform="a2a3sim"))
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems
    (pto,) = [p.read_text() for p in Path(compiled.output_dir).glob("kernels/aiv/*.pto")]
    lines = [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.splitlines()]
    # The rank-3 tiles are typed as all their rows; each matrix's band starts 768 bytes after the last.
    assert f"%t = pto.alloc_tile addr = %c0_i64 valid_row = %c96_index valid_col = %c8_index : {vec(96, 8)}" in lines
    transposes = [line for line in lines if line.startswith("pto.ttrans ")]
    assert len(transposes) == 4, transposes
    assert transposes[1] == f"pto.ttrans ins(%t_1, %__tmp_v0_tmp : {vec(24, 8)}, {vec(24, 8)}) outs(%__tmp_v0_1 : " \
                            f"{vec(8, 24)})", transposes
    assert f"%t_1 = pto.alloc_tile addr = %c768_i64 valid_row = %c24_index valid_col = %c8_index : {vec(24, 8)}" in lines
    compiled(x, out)
    torch.testing.assert_close(out, x.transpose(1, 2), rtol=0, atol=0)


def test_matrices_with_rows_shorter_than_a_block_are_refused(kernels):
    x, out = torch.randn(2, 4, 8), torch.zeros(2, 8, 4)
    with pytest.warns(UserWarning, match=r"backend-ptoas cannot lower 'tile.transpose' of pl.Tile\[\[2, 4, 8\], pl.FP32, "
                                         r".*each matrix and its transpose must have rows of whole 32-byte blocks, as "
                                         r"ttrans's tiles do \(got 32 and 16 bytes\)"):
        kernels.narrow_rows(x, out)
    torch.testing.assert_close(out, x.transpose(1, 2), rtol=0, atol=0)  # the simulator runs it all the same
