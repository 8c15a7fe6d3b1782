"""Split cross-core pipes: the two AIV lanes of a core group share each cube tile. A kernel split
``pl.SplitMode.UP_DOWN`` (or ``split=1`` on its pipe ops) runs on both lanes, lane
``pl.tile.get_subblock_idx()`` holding the upper (0) or lower (1) half of every tile; ``LEFT_RIGHT``
(``split=2``) cuts columns. The compiler halves the lane's tiles and moves its loads and stores to its
half of the global region; the simulator cuts each tile the cube pushes between the lanes and puts
the halves the lanes push back together for the cube."""

import pypto.language as pl
import pytest
import torch

from conftest import is_poison, unwritten

N = 16

# backend-ptoas does not lower a hand-written pipe setup yet; on a simulator that is a warning at compile time.
pytestmark = pytest.mark.filterwarnings("ignore:no .pto written for kernel .* backend-ptoas does not lower the "
                                         "explicit pipe setup op")

CUBE_TO_LANES = '''
import pypto.language as pl

N = 16


@pl.program
class CubeToLanes:
    """out[:rows] = a @ b + 1: each lane adds 1 to its half of the product's valid rows."""

    @pl.function(type=pl.FunctionType.AIC, attrs={{"split": pl.SplitMode.{mode}}})
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]], rows: pl.Scalar[pl.INDEX], cols: pl.Scalar[pl.INDEX]):
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        narrowed = pl.tile.set_validshape(c, rows, cols)
        pl.tpush_to_aiv(narrowed, split={code})

    @pl.function(type=pl.FunctionType.AIV, attrs={{"split": pl.SplitMode.{mode}}})
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]], rows: pl.Scalar[pl.INDEX],
            cols: pl.Scalar[pl.INDEX]) -> pl.Tensor[[N, N], pl.FP32]:
        c: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, cols])] = pl.tpop_from_aic(
            split={code})
        r = pl.add(c, 1.0)
        pl.tfree_to_aic(c)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group, attrs={{"split": pl.SplitMode.{mode}}})
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]], rows: pl.Scalar[pl.INDEX],
              cols: pl.Scalar[pl.INDEX]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, out, rows, cols)
        out = self.vec(a, b, out, rows, cols)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             valid: pl.Tensor[[2], pl.INDEX], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        rows: pl.Scalar[pl.INDEX] = pl.tensor.read(valid, [0])
        cols: pl.Scalar[pl.INDEX] = pl.tensor.read(valid, [1])
        out = self.fused(a, b, out, rows, cols)
        return out
'''


@pytest.mark.parametrize("mode,code,rows,cols", [("UP_DOWN", 1, 16, 16), ("UP_DOWN", 1, 11, 16),
                                                 ("UP_DOWN", 1, 5, 9), ("LEFT_RIGHT", 2, 16, 13),
                                                 ("LEFT_RIGHT", 2, 7, 3)])
def test_each_lane_computes_and_stores_its_half_of_the_cube_tile(write_kernel, tmp_path, mode, code, rows, cols):
    from pypto.ir import compile

    module, _ = write_kernel(f"cube_to_lanes_{mode}_{rows}_{cols}",
                             CUBE_TO_LANES.format(mode=mode, code=code))
    compiled = compile(module.CubeToLanes, output_dir=str(tmp_path / "build"))
    cpp = (tmp_path / "build" / "orchestration" / "main.cpp").read_text()
    assert "MixedKernels mixed_0 = {0, 1, 1};" in cpp, cpp  # the AIV kernel on both lanes
    a, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.full((N, N), -7.0)
    # Only the valid region is stored: the run names the rest of `out`, which holds the poison.
    where = ([f"all of rows {rows}..{N - 1}"] if rows < N else []) + \
            ([f"part of rows 0..{rows - 1} (columns {cols}..{N - 1})"] if cols < N else [])
    with unwritten(*([f"output 'out' [16, 16] float32: {N * N - rows * cols} of 256 elements were never written: "
                      + "; ".join(where)] if where else [])):
        compiled(a, b, torch.tensor([rows, cols]), out)
    torch.testing.assert_close(out[:rows, :cols], (a @ b)[:rows, :cols] + 1, rtol=1e-5, atol=1e-5)
    assert is_poison(out[rows:]) and is_poison(out[:, cols:])


def test_the_lane_kernel_works_on_halves(write_kernel, tmp_path):
    from pypto.ir import compile

    module, _ = write_kernel("cube_to_lanes_printed", CUBE_TO_LANES.format(mode="UP_DOWN", code=1))
    compile(module.CubeToLanes, output_dir=str(tmp_path / "build"))
    lowered = (tmp_path / "build" / "lowered_program.py").read_text()
    vec = lowered[lowered.index("def vec("):lowered.index("def fused(")]
    assert '@pl.function(type=pl.FunctionType.AIV, attrs={"dual_aiv_dispatch": True, "split": "UP_DOWN"})' in lowered
    assert "subblock_idx: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()" in vec, vec
    assert "pl.tile.tpop_from_aic([8, 16], dtype=pl.FP32, split=1)" in vec, vec
    assert "pl.tile.store(r, [subblock_idx * 8, 0], out)" in vec, vec


LANES_TO_CUBE = '''
import pypto.language as pl

N = 16


@pl.program
class LanesToCube:
    """out = (x * 2) @ b: each lane doubles its half of x's columns and pushes it to the cube."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        t = pl.load(x, [0, 0], [N, N])
        pl.tpush_to_aic(pl.mul(t, 2.0), split=2)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        s: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=2)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(s, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(s)
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, x: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        result = self.cube(x, b, out)
        self.vec(x, b, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(x, b, out)
        return out
'''


def test_the_cube_receives_both_lanes_halves_put_together(write_kernel, tmp_path):
    from pypto.ir import compile

    module, _ = write_kernel("lanes_to_cube", LANES_TO_CUBE)
    compiled = compile(module.LanesToCube, output_dir=str(tmp_path / "build"))
    x, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(x, b, out)
    torch.testing.assert_close(out, (x * 2) @ b, rtol=1e-4, atol=1e-4)


REDUCE_ACROSS_LANES = '''
@pl.program
class ReduceAcrossLanes:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]):
        ta = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(ta, target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(c, split=2)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[16, 16], pl.FP32],
            out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        c = pl.tpop_from_aic(shape=[16, 16], dtype=pl.FP32, split=2)
        s = pl.row_sum(c)
        pl.tfree_to_aic(c)
        out = pl.store(s, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        self.cube(a, out)
        out = self.vec(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        out = self.fused(a, out)
        return out
'''


def test_a_reduction_across_the_split_axis_is_refused(write_dsl, tmp_path):
    from pypto.ir import compile

    module, path = write_dsl("reduce_across_lanes", REDUCE_ACROSS_LANES)
    with pytest.raises(Exception) as info:
        compile(module.ReduceAcrossLanes, output_dir=str(tmp_path / "build"))
    message = str(info.value)
    assert ("error: tile.row_sum reduces along the axis kernel 'vec' splits left-right between its two AIV lanes, "
            "so each lane would reduce half of it") in message, message
    assert f"--> {path}:16:13" in message, message


MIXED_SPLITS = '''
@pl.program
class MixedSplits:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[16, 16], pl.FP32]):
        c = pl.tpop_from_aic(shape=[16, 16], dtype=pl.FP32, split=1)
        pl.tfree_to_aic(c, split=1)
        d = pl.tpop_from_aic(shape=[16, 16], dtype=pl.FP32, split=2)
        pl.tfree_to_aic(d, split=2)
'''


def test_pipes_of_one_kernel_split_differently_are_refused(write_dsl, tmp_path):
    from pypto.ir import compile

    module, path = write_dsl("mixed_splits", MIXED_SPLITS)
    with pytest.raises(Exception) as info:
        compile(module.MixedSplits, output_dir=str(tmp_path / "build"))
    message = str(info.value)
    assert ("error: tile.tpop_from_aic splits its tile left-right between the AIV lanes, but tile.tpop_from_aic at "
            f"{path}:8:13 splits up-down: the pipes of one kernel share one split") in message, message
    assert f"--> {path}:10:13" in message, message


SPLIT_AIV_REGIONS = '''
import pypto.language as pl

S = 32


@pl.program
class SplitAivRegions:
    """out_ud = (a @ b) * 2 over row halves, twice (in a loop); out_lr = (a @ b) * 3 over column halves."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[S, S], pl.FP32], b: pl.Tensor[[S, S], pl.FP32],
             out_ud: pl.Out[pl.Tensor[[S, S], pl.FP32]],
             out_lr: pl.Out[pl.Tensor[[S, S], pl.FP32]]) -> tuple[pl.Tensor[[S, S], pl.FP32], pl.Tensor[[S, S], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
            left = pl.move(pl.load(a, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat),
                           target_memory=pl.MemorySpace.Left)
            right = pl.move(pl.load(b, [0, 0], [S, S], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Right)
            qk = pl.matmul(left, right)
            for i in pl.range(2):
                for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                    rows = pl.aiv_shard(qk)
                    out_ud = pl.store(pl.mul(rows, 2.0), [lane * (S // 2), 0], out_ud)
            for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                cols = pl.aiv_shard(qk)
                out_lr = pl.store(pl.mul(cols, 3.0), [0, lane * (S // 2)], out_lr)
        return out_ud, out_lr
'''


def test_split_aiv_regions_shard_the_cube_tile_between_the_lanes(write_kernel, tmp_path):
    from pypto.ir import compile

    module, _ = write_kernel("split_aiv_regions", SPLIT_AIV_REGIONS)
    compiled = compile(module.SplitAivRegions, output_dir=str(tmp_path / "build"))
    lowered = (tmp_path / "build" / "lowered_program.py").read_text()
    assert "pl.tile.tpop_from_aic([16, 32], dtype=pl.FP32, split=1)" in lowered, lowered
    assert "pl.tile.tpop_from_aic([32, 16], dtype=pl.FP32, split=2)" in lowered, lowered
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    out_ud, out_lr = torch.zeros(32, 32), torch.zeros(32, 32)
    compiled(a, b, out_ud, out_lr)
    torch.testing.assert_close(out_ud, (a @ b) * 2, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out_lr, (a @ b) * 3, rtol=1e-4, atol=1e-4)


SHARD_OUTSIDE_A_REGION = '''
@pl.program
class ShardOutside:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            c = pl.matmul(pl.move(t, target_memory=pl.MemorySpace.Left), pl.move(t, target_memory=pl.MemorySpace.Right))
            half = pl.aiv_shard(c)
            out = pl.store(half, [0, 0], out)
        return out
'''


def test_a_shard_outside_a_split_aiv_region_is_refused(write_dsl):
    from pypto.language.parser import ParserSyntaxError

    with pytest.raises(ParserSyntaxError) as info:
        write_dsl("shard_outside", SHARD_OUTSIDE_A_REGION)
    message = str(info.value)
    assert ("pl.aiv_shard hands a cube tile to the vector lanes of a `for lane in pl.split_aiv(2, mode=...)` "
            "region, and is used outside one") in message, message
    assert "shard_outside.py:11:20" in message, message


def test_a_shard_in_a_region_of_mode_none_is_refused(write_dsl):
    from pypto.language.parser import ParserSyntaxError

    source = SHARD_OUTSIDE_A_REGION.replace(
        "            half = pl.aiv_shard(c)\n            out = pl.store(half, [0, 0], out)\n",
        "            for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):\n"
        "                whole = pl.aiv_shard(c)\n"
        "                out = pl.store(whole, [0, 0], out)\n")
    with pytest.raises(ParserSyntaxError) as info:
        write_dsl("shard_none", source)
    message = str(info.value)
    assert ("pl.aiv_shard in a pl.split_aiv region of mode NONE (each lane receiving the whole cube tile) is not "
            "supported yet") in message, message
    assert "shard_none.py:12:25" in message, message
