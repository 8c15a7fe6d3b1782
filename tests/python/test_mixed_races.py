"""Races between the members of a mixed task: the AIC kernel and the AIV lanes of a block run side by side,
ordered only by their cross-core pipes (a tpop follows its tpush) and events (a sync_wait follows the
sync_set it consumes). Two members touching the same elements of a tensor, one of them writing, with no
such edge between the two accesses, fail the run naming the task, block, kernels, cores, tensor and
elements; the same accesses ordered by a pipe or an event run."""

import pytest
import torch

N = 16

pytestmark = pytest.mark.filterwarnings(
    "ignore:no .pto written for kernel .* backend-ptoas does not lower the (synchronisation op|explicit pipe setup op)")

PARAMS = ("a: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32], sums: pl.InOut[pl.Tensor[[N, N], pl.FP32]], "
          "out: pl.Out[pl.Tensor[[N, N], pl.FP32]]")

# The lanes write 2 a to `sums`, each its own half; the cube multiplies sums by w. {raise_} and {wait}
# order the cube's read after both lanes' writes, or leave it unordered.
LANES_THEN_CUBE = '''
import pypto.language as pl

N = 16


@pl.program
class LanesThenCube:
    @pl.function(type=pl.FunctionType.AIV, attrs={{"dual_aiv_dispatch": True}})
    def vec(self, PARAMS):
        lane = pl.tile.get_subblock_idx()
        ta = pl.load(a, [lane * 8, 0], [8, N])
        pl.store(pl.add(ta, ta), [lane * 8, 0], sums)
        {raise_}

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        {wait}
        ts = pl.load(sums, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tw = pl.load(w, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ts, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        self.vec(a, w, sums, out)
        out = self.cube(a, w, sums, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, w, sums, out)
        return out
'''.replace("PARAMS", PARAMS)

# The cube stores a @ w to `sums` and hands the product to the vector kernel through a pipe; the vector
# kernel adds what it reads back from `sums` to the tile it pops. {read_first} reads `sums` before the
# pop (unordered) instead of after it.
CUBE_THEN_VECTOR = '''
import pypto.language as pl

N = 16


@pl.program
class CubeThenVector:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, PARAMS):
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tw = pl.load(w, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        pl.store(c, [0, 0], sums)
        pl.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        {before}
        c = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
        {after}
        r = pl.add(c, s)
        pl.tfree_to_aic(c)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, w, sums, out)
        out = self.vec(a, w, sums, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, PARAMS) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, w, sums, out)
        return out
'''.replace("PARAMS", PARAMS)

READ_SUMS = "s = pl.load(sums, [0, 0], [N, N])"


def _compile(write_kernel, tmp_path, name, source):
    from pypto.ir import compile

    module, _ = write_kernel(name, source)
    program = getattr(module, name)
    return compile(program, output_dir=str(tmp_path / "build"))


def _lanes_then_cube(write_kernel, tmp_path, ordered):
    raise_ = "pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=2)" if ordered else ""
    wait = "pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)" if ordered else ""
    return _compile(write_kernel, tmp_path, "LanesThenCube", LANES_THEN_CUBE.format(raise_=raise_, wait=wait))


def _cube_then_vector(write_kernel, tmp_path, read_first):
    before, after = (READ_SUMS, "") if read_first else ("", READ_SUMS)
    return _compile(write_kernel, tmp_path, "CubeThenVector", CUBE_THEN_VECTOR.format(before=before, after=after))


def _inputs():
    return torch.randn(N, N), torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N)


def test_the_cube_reading_what_a_lane_writes_with_no_event_between_is_a_race(write_kernel, tmp_path):
    compiled = _lanes_then_cube(write_kernel, tmp_path, ordered=False)
    with pytest.raises(RuntimeError) as info:
        compiled(*_inputs())
    assert (
        "fatal error 203 (KernelFailed): data race between the members of a mixed task: in task 0 (block 0 of a "
        "mixed task), kernel 'vec' on AIV core 0 (lane 0) wrote tensor 'sums' (args[2]) where kernel 'cube' on AIC "
        "core 0 read it, within elements [0, 128) of its buffer, with no cross-core pipe or event ordering the two "
        "accesses. The cube and vector kernels of a block run side by side: hand data to a peer through "
        "tpush/tpop, or write it before a sync_set that the peer's sync_wait waits for before it touches the same "
        "elements"
    ) in str(info.value), str(info.value)


def test_the_cube_reading_what_both_lanes_wrote_after_their_event_is_no_race(write_kernel, tmp_path):
    compiled = _lanes_then_cube(write_kernel, tmp_path, ordered=True)
    a, w, sums, out = _inputs()
    compiled(a, w, sums, out)
    torch.testing.assert_close(sums, a + a)
    torch.testing.assert_close(out, (a + a) @ w, rtol=1e-4, atol=1e-4)


def test_the_vector_kernel_reading_what_the_cube_writes_before_the_pop_is_a_race(write_kernel, tmp_path):
    compiled = _cube_then_vector(write_kernel, tmp_path, read_first=True)
    with pytest.raises(RuntimeError) as info:
        compiled(*_inputs())
    assert (
        "data race between the members of a mixed task: in task 0 (block 0 of a mixed task), kernel 'cube' on AIC "
        "core 0 wrote tensor 'sums' (args[2]) where kernel 'vec' on AIV core 0 read it, within elements [0, 256) "
        "of its buffer, with no cross-core pipe or event ordering the two accesses."
    ) in str(info.value), str(info.value)


def test_the_vector_kernel_reading_what_the_cube_wrote_after_the_pop_is_no_race(write_kernel, tmp_path):
    compiled = _cube_then_vector(write_kernel, tmp_path, read_first=False)
    a, w, sums, out = _inputs()
    compiled(a, w, sums, out)
    torch.testing.assert_close(out, 2 * (a @ w), rtol=1e-4, atol=1e-4)


# One pl.jit kernel mixing vector and cube work: split into an AIC and an AIV kernel, whose order is only
# what {raise_} and {wait} give.
MIXED_JIT = '''
import pypto.language as pl

N = 16


@pl.jit
def mixed(a: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32], doubled: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
          out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for _ in pl.spmd(1, name_hint="doubled_then_product"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            ta: pl.Tile[[8, N], pl.FP32, pl.Mem.Vec] = pl.load(a, [lane * 8, 0], [8, N])
            pl.store(pl.add(ta, ta), [lane * 8, 0], doubled)
            {raise_}
        {wait}
        td: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.load(doubled, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tw: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.load(w, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(td, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        out = pl.store(c, [0, 0], out)
    return out
'''


def _mixed_jit(write_kernel, ordered):
    raise_ = 'pl.system.sync_set(7, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")' if ordered else ""
    wait = 'pl.system.sync_wait(7, pipe=pl.PipeType.MTE2, core_type="aic")' if ordered else ""
    module, _ = write_kernel("mixed_jit_" + ("ordered" if ordered else "racing"),
                             MIXED_JIT.format(raise_=raise_, wait=wait))
    return module.mixed


def test_a_jit_mixed_kernel_whose_cube_reads_before_the_lanes_raise_is_a_race(write_kernel):
    mixed = _mixed_jit(write_kernel, ordered=False)
    with pytest.raises(RuntimeError) as info:
        mixed(*_inputs())
    assert (
        "data race between the members of a mixed task: in task 0 (block 0 of a mixed task), kernel "
        "'doubled_then_product_aiv' on AIV core 0 (lane 0) wrote tensor 'doubled' (args[1]) where kernel "
        "'doubled_then_product_aic' on AIC core 0 read it, within elements [0, 128) of its buffer"
    ) in str(info.value), str(info.value)


def test_a_jit_mixed_kernel_whose_cube_waits_for_the_lanes_is_no_race(write_kernel):
    mixed = _mixed_jit(write_kernel, ordered=True)
    a, w, doubled, out = _inputs()
    mixed(a, w, doubled, out)
    torch.testing.assert_close(doubled, 2 * a)
    torch.testing.assert_close(out, (2 * a) @ w, rtol=1e-4, atol=1e-4)


# The vector kernel writes `r` before it frees the first tile; the cube reads `r` after {pushes} pushes
# into a ring of 2 slots. The third push needs the first slot back, so only from then on does the
# cube's read follow the vector kernel's write.
FREE_ORDERS = '''
import pypto.language as pl

N = 16


@pl.program
class FreeOrders:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], r: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(ta, target_memory=pl.Mem.Right))
        for i in pl.range({pushes}):
            pl.tpush_to_aiv(c, split=0)
        tr = pl.load(r, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        for i in pl.range(3 - {pushes}):
            pl.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], r: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        c = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
        pl.store(c, [0, 0], r)
        pl.tfree_to_aic(c)
        for i in pl.range(2):
            d = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
            pl.tfree_to_aic(d)
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], r: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, r, out)
        out = self.vec(a, r, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], r: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, r, out)
        return out
'''


def test_the_cube_reading_before_its_push_waited_for_the_free_is_a_race(write_kernel, tmp_path):
    compiled = _compile(write_kernel, tmp_path, "FreeOrders", FREE_ORDERS.format(pushes=2))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N))
    assert (
        "data race between the members of a mixed task: in task 0 (block 0 of a mixed task), kernel 'vec' on AIV "
        "core 0 wrote tensor 'r' (args[1]) where kernel 'cube' on AIC core 0 read it, within elements [0, 256) of "
        "its buffer"
    ) in str(info.value), str(info.value)


def test_the_cube_reading_after_a_push_into_the_freed_slot_is_no_race(write_kernel, tmp_path):
    compiled = _compile(write_kernel, tmp_path, "FreeOrders", FREE_ORDERS.format(pushes=3))
    a, r, out = torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N)
    compiled(a, r, out)
    torch.testing.assert_close(r, a @ a, rtol=1e-4, atol=1e-4)
