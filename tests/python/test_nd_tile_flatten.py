"""Kernels whose tiles have rank 3: FlattenTileNdTo2D merges their leading dimensions into rows
([2, 16, 64] -> [32, 64]), so backend-ptoas writes their .pto, and the simulator computes the same
numbers as torch. A matmul over a batch becomes one 2-D matmul per batch first (more in
test_batch_matmul_2d.py); a kernel with an op that has no 2-D form (a transpose over a batch) keeps
its N-d tiles: it still runs on the simulator, and gets no .pto."""

from pathlib import Path

import torch
from conftest import kernels_fixture

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit
def batch_exp_add(x: pl.Tensor[[2, 16, 64], pl.FP32], b: pl.Tensor[[2, 16, 64], pl.FP32],
                  y: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [2, 16, 64])
        u = pl.load(b, [0, 0, 0], [2, 16, 64])
        pl.store(pl.add(pl.exp(t), u), [0, 0, 0], y)
    return y


@pl.jit
def per_batch_softmax(x: pl.Tensor[[4, 16, 64], pl.FP32], y: pl.Out[pl.Tensor[[4, 16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i, 0, 0], [1, 16, 64])
            m = pl.row_max(t)
            e = pl.exp(pl.row_expand_sub(t, m))
            pl.store(pl.row_expand_div(e, pl.row_sum(e)), [i, 0, 0], y)
    return y


@pl.jit
def batch_row_sums(x: pl.Tensor[[3, 16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 3], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(3):
            t = pl.load(x, [i, 0, 0], [1, 16, 64])
            pl.store(pl.row_sum(pl.mul(t, t)), [0, i], out)
    return out


@pl.jit
def ragged_chunks(x: pl.Tensor[[2, 40, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 40, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(2):
            for c in pl.range(0, 40, 16):
                valid = pl.min(16, 40 - c)
                t = pl.load(x, [b, c, 0], [1, 16, 64], valid_shape=[1, valid, 64])
                pl.store(pl.mul(t, 2.0), [b, c, 0], y)
    return y


@pl.jit
def batch_matmul(a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32],
                 c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0, 0], [2, 16, 32])
        tb = pl.load(b, [0, 0, 0], [2, 32, 16])
        pl.store(pl.matmul(ta, tb), [0, 0, 0], c)
    return c
'''

kernels = kernels_fixture("nd_tile_kernels.py", KERNELS)

CONFIG = RunConfig(platform="a2a3sim", dump_passes=True)


def _dump(compiled, name):
    return (Path(compiled.output_dir) / "passes_dump" / name).read_text()


def _pto(compiled, kernel):
    return Path(compiled.output_dir) / "kernels" / "aiv" / f"{kernel}.pto"


def test_a_whole_3d_window_is_one_merged_tile_with_a_pto(kernels):
    torch.manual_seed(1)
    x, b = torch.randn(2, 16, 64), torch.randn(2, 16, 64)
    y = torch.zeros(2, 16, 64)
    compiled = kernels.batch_exp_add.compile(x, b, y, config=CONFIG)
    kernels.batch_exp_add(x, b, y, config=CONFIG)
    torch.testing.assert_close(y, torch.exp(x) + b)
    text = _dump(compiled, "07_after_FlattenTileNdTo2D.py")
    assert "t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 64])" in text, text
    assert "pl.tile.store(__tmp_v1, [0, 0, 0], y, [2, 16, 64])" in text, text
    pto = _pto(compiled, "batch_exp_add_incore_0").read_text()
    assert "!pto.partition_tensor_view<2x16x64xf32>" in pto, pto
    assert "rows=32, cols=64" in pto, pto


def test_a_softmax_over_each_batch_of_a_3d_tensor(kernels):
    torch.manual_seed(2)
    x = torch.randn(4, 16, 64)
    y = torch.zeros(4, 16, 64)
    compiled = kernels.per_batch_softmax.compile(x, y, config=CONFIG)
    kernels.per_batch_softmax(x, y, config=CONFIG)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)
    assert "m: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_max(t" in _dump(
        compiled, "07_after_FlattenTileNdTo2D.py")
    assert _pto(compiled, "per_batch_softmax_incore_0").exists()


def test_row_sums_of_3d_windows_stored_as_columns_of_a_2d_tensor(kernels):
    torch.manual_seed(3)
    x = torch.randn(3, 16, 64)
    out = torch.full((16, 3), float("nan"))
    compiled = kernels.batch_row_sums.compile(x, out, config=CONFIG)
    kernels.batch_row_sums(x, out, config=CONFIG)
    torch.testing.assert_close(out, (x * x).sum(dim=-1).T, rtol=1e-5, atol=1e-5)
    assert _pto(compiled, "batch_row_sums_incore_0").exists()


def test_a_chunk_with_a_ragged_tail_keeps_its_valid_rows_when_merged(kernels):
    torch.manual_seed(5)
    x = torch.randn(2, 40, 64)
    y = torch.full((2, 40, 64), float("nan"))
    compiled = kernels.ragged_chunks.compile(x, y, config=CONFIG)
    kernels.ragged_chunks(x, y, config=CONFIG)
    torch.testing.assert_close(y, 2 * x)
    assert ("t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[valid, 64])] = "
            "pl.tile.load(x, [b, c, 0], [1, 16, 64], [1, valid, 64])") in _dump(compiled, "07_after_FlattenTileNdTo2D.py")
    pto = _pto(compiled, "ragged_chunks_incore_0").read_text()
    assert ("%y_pview = pto.partition_view %y_view, offsets = [%b, %c, %c0_index], "
            "sizes = [%c1_index, %c16_index, %c64_index]") in pto, pto


def test_a_matmul_over_a_batch_becomes_one_2d_matmul_per_batch_with_a_pto(kernels):
    torch.manual_seed(4)
    a, b = torch.randn(2, 16, 32), torch.randn(2, 32, 16)
    c = torch.zeros(2, 16, 16)
    compiled = kernels.batch_matmul.compile(a, b, c, config=CONFIG)
    kernels.batch_matmul(a, b, c, config=CONFIG)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    text = _dump(compiled, "07_after_FlattenTileNdTo2D.py")
    assert "pl.Tile[[2, 16, 32], pl.FP32" not in text, text
    assert "pl.tile.matmul(ta_b1, tb_b1)" in text, text
    assert (Path(compiled.output_dir) / "kernels" / "aic" / "batch_matmul_incore_0.pto").exists()
