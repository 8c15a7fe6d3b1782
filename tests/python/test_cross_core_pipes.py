"""Explicit cross-core pipes: a ``pl.FunctionType.Group`` of an AIC and an AIV kernel that hand tiles to
each other with ``pl.tpush_to_aiv`` / ``pl.tpop_from_aic`` / ``pl.tfree_to_aic`` (and the other way
round). The pipes really block on the simulator: a full ring holds its producer back, and a pipe that can
never move fails the run naming the task, kernels, cores and pipe, while a kernel that is only slow is
waited for."""

import pypto.language as pl
import pytest
import torch

N = 16

# backend-ptoas does not lower a hand-written pipe setup yet; on a simulator that is a warning at compile time.
pytestmark = pytest.mark.filterwarnings("ignore:no .pto written for kernel .* backend-ptoas does not lower the "
                                         "explicit pipe setup op")


@pl.program
class CubeToVector:
    """out = a @ b + x: the product crosses from the cube core to the vector core."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        c = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
        r = pl.add(c, pl.load(x, [0, 0], [N, N]))
        pl.tfree_to_aic(c)
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, x, out)
        out = self.vec(a, b, x, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, x, out)
        return out


def test_a_product_crosses_from_the_cube_to_the_vector_core(tmp_path):
    from pypto.ir import compile

    compiled = compile(CubeToVector, output_dir=str(tmp_path / "build"))
    cpp = (tmp_path / "build" / "orchestration" / "main.cpp").read_text()
    assert "MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};" in cpp, cpp
    a, b, x = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(a, b, x, out)
    torch.testing.assert_close(out, a @ b + x, rtol=1e-5, atol=1e-5)


def test_the_printed_program_parses_back_with_its_pipes(tmp_path):
    from pypto.ir import compile

    compile(CubeToVector, output_dir=str(tmp_path / "build"))
    lowered = (tmp_path / "build" / "lowered_program.py").read_text()
    assert "pl.tile.tpush_to_aiv(c, split=0)" in lowered, lowered
    assert "pl.tile.tpop_from_aic([16, 16], dtype=pl.FP32, split=0)" in lowered, lowered
    assert "pl.system.tfree_to_aic(c)" in lowered, lowered
    from pypto.runtime import execute_compiled

    a, b, x = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    execute_compiled(str(tmp_path / "build"), [a, b, x, out])
    torch.testing.assert_close(out, a @ b + x, rtol=1e-5, atol=1e-5)


VECTOR_TO_CUBE = '''
import pypto.language as pl

N = 16
SPIN = {spin}


@pl.program
class VectorToCube:
    """out = (a + b) @ b: the sum crosses from the vector core to the cube core."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        ta = pl.load(a, [0, 0], [N, N])
        tb = pl.load(b, [0, 0], [N, N])
        for i in pl.range(SPIN):  # busy work before the push: a slow producer
            junk = pl.mul(ta, tb)
        pl.tpush_to_aic(pl.add(ta, tb), split=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        s: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(s, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.system.tfree_to_aiv(s, id=0)
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        result = self.cube(a, b, out)
        self.vec(a, b, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, out)
        return out
'''


def _vector_to_cube(write_kernel, spin):
    module, _ = write_kernel(f"vector_to_cube_{spin}", VECTOR_TO_CUBE.format(spin=spin))
    return module.VectorToCube


# On a device the two members are one module for ptoas (each imports the slot buffer the other reserves,
# by symbol), written under each member's name; the pipes become PTOAS's frontend pipe ops.
def test_each_member_of_a_group_gets_the_module_of_both(tmp_path):
    from pypto.ir import compile

    compile(CubeToVector, output_dir=str(tmp_path / "build"))
    cube = (tmp_path / "build" / "kernels" / "aic" / "cube.pto").read_text()
    vec = (tmp_path / "build" / "kernels" / "aiv" / "vec.pto").read_text()
    assert cube == vec
    assert "func.func @cube(" in cube and "func.func @vec(" in cube, cube
    for op in ("pto.tpush_to_aiv(%c : ", "= pto.tpop_from_aic(%c16_index, %c16_index) {split = 0} -> ",
               "pto.tfree_from_aic {split = 0}", "pto.import_reserved_buffer {name = \"fused_c2v_slot_buffer\", "
               "peer_func = @vec} -> i32", "pto.aic_initialize_pipe {dir_mask = 1, slot_size = 1024} (gm_slot_buffer = "):
        assert op in cube, (op, cube)


def test_a_sum_crosses_from_the_vector_to_the_cube_core(write_kernel, tmp_path):
    from pypto.ir import compile

    compiled = compile(_vector_to_cube(write_kernel, 1), output_dir=str(tmp_path / "build"))
    a, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(a, b, out)
    torch.testing.assert_close(out, (a + b) @ b, rtol=1e-5, atol=1e-5)


def test_a_consumer_waits_for_a_producer_that_is_only_slow(write_kernel, tmp_path):
    """The cube core pops at once; the vector core pushes only after a loop of five million multiplies (about
    half a second here), all that time with its peer idle at the pop. Nothing is declared stalled while the
    producer still runs, however long it takes; a detector going by idle time would fail this run."""
    from pypto.ir import compile

    compiled = compile(_vector_to_cube(write_kernel, 5_000_000), output_dir=str(tmp_path / "build"))
    a, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(a, b, out)
    torch.testing.assert_close(out, (a + b) @ b, rtol=1e-5, atol=1e-5)


RING = '''
import pypto.language as pl

N = 16
TILES = 4


@pl.program
class Ring:
    """out = a @ b + x, one row block at a time: TILES tiles through one pipe."""

    @pl.function(type=pl.FunctionType.AIC)
    def ring_cube(self, a: pl.Tensor[[TILES * N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  x: pl.Tensor[[TILES * N, N], pl.FP32], out: pl.Out[pl.Tensor[[TILES * N, N], pl.FP32]]):
{aic_init}
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        right = pl.move(tb, target_memory=pl.Mem.Right)
        for i in pl.range(TILES):
            ta = pl.load(a, [i * N, 0], [N, N], target_memory=pl.Mem.Mat)
            c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), right)
            pl.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def ring_vec(self, a: pl.Tensor[[TILES * N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 x: pl.Tensor[[TILES * N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[TILES * N, N], pl.FP32]]) -> pl.Tensor[[TILES * N, N], pl.FP32]:
{aiv_init}
        for i in pl.range(TILES):
            c = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32)
            r = pl.add(c, pl.load(x, [i * N, 0], [N, N]))
            pl.store(r, [i * N, 0], out)
{free}
        return out

    @pl.function(type=pl.FunctionType.Group)
    def ring(self, a: pl.Tensor[[TILES * N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             x: pl.Tensor[[TILES * N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[TILES * N, N], pl.FP32]]) -> pl.Tensor[[TILES * N, N], pl.FP32]:
        self.ring_cube(a, b, x, out)
        out = self.ring_vec(a, b, x, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[TILES * N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             x: pl.Tensor[[TILES * N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[TILES * N, N], pl.FP32]]) -> pl.Tensor[[TILES * N, N], pl.FP32]:
        out = self.ring(a, b, x, out)
        return out
'''


def _ring(write_kernel, tmp_path, *, free=True, slots=None):
    from pypto.ir import compile

    init = "" if slots is None else f"pl.{{}}_initialize_pipe(dir_mask=1, slot_size=1024, slot_num={slots})"
    source = RING.format(aic_init=" " * 8 + init.format("aic"), aiv_init=" " * 8 + init.format("aiv"),
                         free=" " * 12 + "pl.tfree_to_aic(c)" if free else "")
    module, _ = write_kernel(f"ring_{free}_{slots}", source)
    return compile(module.Ring, output_dir=str(tmp_path / f"build_{free}_{slots}"))


def _ring_inputs():
    a, b, x = torch.randn(4 * N, N), torch.randn(N, N), torch.randn(4 * N, N)
    return a, b, x, torch.zeros(4 * N, N)


def test_more_tiles_than_slots_flow_through_the_ring(write_kernel, tmp_path):
    a, b, x, out = _ring_inputs()
    _ring(write_kernel, tmp_path)(a, b, x, out)
    torch.testing.assert_close(out, a @ b + x, rtol=1e-5, atol=1e-5)


def test_a_producer_that_fills_every_slot_waits_for_a_free_one(write_kernel, tmp_path):
    """Without tfree the two default slots stay taken: the cube core's third push can never happen."""
    a, b, x, out = _ring_inputs()
    with pytest.raises(RuntimeError) as info:
        _ring(write_kernel, tmp_path, free=False)(a, b, x, out)
    assert (
        "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes can never move: "
        "kernel 'ring_cube' (task 0) on AIC core 0 waits in tpush_to_aiv for a free slot of pipe 0 (AIC to AIV), "
        "whose 2 slots are all taken (2 pushed, 2 popped, 0 freed so far); kernel 'ring_vec' (task 1) on AIV core 0 "
        "waits in tpop_from_aic for a tile of pipe 0 (AIC to AIV), which holds none (2 pushed, 2 popped so far); "
        "every tpop needs a tpush of the peer, and a tpush into a full pipe a tfree of the peer"
    ) in str(info.value)
    # The first two row blocks went through before the ring filled.
    torch.testing.assert_close(out[: 2 * N], (a @ b + x)[: 2 * N], rtol=1e-5, atol=1e-5)


def test_initialize_pipe_sets_the_number_of_slots(write_kernel, tmp_path):
    """Four slots hold all four tiles, so the same program without tfree completes."""
    a, b, x, out = _ring_inputs()
    _ring(write_kernel, tmp_path, free=False, slots=4)(a, b, x, out)
    torch.testing.assert_close(out, a @ b + x, rtol=1e-5, atol=1e-5)


DEADLOCK = '''
import pypto.language as pl

N = 16


@pl.program
class Deadlock:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
{cube}

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
{vec}
        return out

    @pl.function(type=pl.FunctionType.Group)
    def pair(self, a: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, out)
        out = self.vec(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.pair(a, out)
        return out
'''

PUSH_ONCE = """        t = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        pl.tpush_to_aiv(t, split=0)"""
POP_TWICE = """        first = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32)
        out = pl.store(first, [0, 0], out)
        pl.tfree_to_aic(first)
        second = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32)
        out = pl.store(second, [0, 0], out)
        pl.tfree_to_aic(second)"""
CUBE_POPS_FIRST = """        t = pl.tpop_from_aiv(shape=[N, N], dtype=pl.FP32, id=1)
        pl.tfree_to_aiv(t, id=1)
        pl.tpush_to_aiv(t, split=0)"""
VEC_POPS_FIRST = """        t = pl.system.tpop_from_aic(shape=[N, N], dtype=pl.FP32)
        pl.system.tfree_to_aic(t)
        pl.system.tpush_to_aic(t, split=0, id=1)"""


def _deadlock(write_kernel, tmp_path, cube, vec):
    from pypto.ir import compile

    module, _ = write_kernel("deadlock", DEADLOCK.format(cube=cube, vec=vec))
    compiled = compile(module.Deadlock, output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.zeros(N, N))
    return str(info.value)


def test_a_pop_the_peer_never_pushes_is_diagnosed(write_kernel, tmp_path):
    message = _deadlock(write_kernel, tmp_path, PUSH_ONCE, POP_TWICE)
    assert (
        "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes can never move: "
        "kernel 'cube' (task 0) on AIC core 0 has finished; kernel 'vec' (task 1) on AIV core 0 waits in "
        "tpop_from_aic for a tile of pipe 0 (AIC to AIV), which holds none (1 pushed, 1 popped so far); every tpop "
        "needs a tpush of the peer, and a tpush into a full pipe a tfree of the peer"
    ) in message


def test_both_sides_popping_first_is_diagnosed(write_kernel, tmp_path):
    message = _deadlock(write_kernel, tmp_path, CUBE_POPS_FIRST, VEC_POPS_FIRST)
    assert (
        "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes can never move: "
        "kernel 'cube' (task 0) on AIC core 0 waits in tpop_from_aiv for a tile of pipe 1 (AIV to AIC), which holds "
        "none (0 pushed, 0 popped so far); kernel 'vec' (task 1) on AIV core 0 waits in tpop_from_aic for a tile of "
        "pipe 0 (AIC to AIV), which holds none (0 pushed, 0 popped so far); every tpop needs a tpush of the peer, "
        "and a tpush into a full pipe a tfree of the peer"
    ) in message


def test_pipe_ops_outside_a_mixed_task_are_refused_when_they_run(tmp_path):
    from pypto.ir import compile

    @pl.program
    class Alone:
        @pl.function(type=pl.FunctionType.AIV)
        def lonely(self, a: pl.Tensor[[N, N], pl.FP32],
                   out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            pl.tpush_to_aic(pl.load(a, [0, 0], [N, N]), split=0)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            out = self.lonely(a, out)
            return out

    compiled = compile(Alone, output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.zeros(N, N))
    assert (
        "fatal error 203 (KernelFailed): task 0 (kernel 'lonely'): tpush_to_aic is a cross-core pipe op, which only "
        "the members of a mixed task (an AIC and an AIV kernel called from one pl.FunctionType.Group) may use"
    ) in str(info.value)


@pl.program
class TwoPipes:
    """Upstream's explicit form: slot buffers reserved and imported by name, both pipes set up, both AIV lanes
    pushing (without a split each lane sends the whole tile). Pipe 1 is pushed first, so tiles meant for
    one pipe must never come out of the other. out = (a + b) @ (a - b)."""

    @pl.function(type=pl.FunctionType.AIV, attrs={"dual_aiv_dispatch": True})
    def vec_two(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        peer_0 = pl.import_peer_buffer(name="slots_0", peer_func="cube_two")
        peer_1 = pl.import_peer_buffer(name="slots_1", peer_func="cube_two")
        pl.aiv_initialize_pipe(pl.const(0, pl.INT32), peer_0, dir_mask=2, slot_size=N * N * 4, id=0)
        pl.aiv_initialize_pipe(pl.const(0, pl.INT32), peer_1, dir_mask=2, slot_size=N * N * 4, id=1)
        ta: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [N, N])
        tb: pl.Tile[[N, N], pl.FP32, pl.Mem.Vec] = pl.load(b, [0, 0], [N, N])
        pl.tpush_to_aic(pl.sub(ta, tb), split=0, id=1)
        pl.tpush_to_aic(pl.add(ta, tb), split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube_two(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        buf_0 = pl.reserve_buffer(name="slots_0", size=8 * N * N * 4, base=pl.AUTO)
        buf_1 = pl.reserve_buffer(name="slots_1", size=8 * N * N * 4, base=pl.AUTO)
        pl.aic_initialize_pipe(pl.const(0, pl.INT32), buf_0, dir_mask=2, slot_size=N * N * 4, id=0)
        pl.aic_initialize_pipe(pl.const(0, pl.INT32), buf_1, dir_mask=2, slot_size=N * N * 4, id=1)
        total: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        diff: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
        c = pl.matmul(pl.move(total, target_memory=pl.Mem.Left), pl.move(diff, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(total, id=0)
        pl.tfree_to_aiv(diff, id=1)
        return pl.store(c, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def two(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        result = self.cube_two(a, b, out)
        self.vec_two(a, b, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        result = self.two(a, b, out)
        return result


def test_upstreams_explicit_pipe_setup_runs_with_two_pipes_and_two_lanes(tmp_path):
    from pypto.ir import compile

    compiled = compile(TwoPipes, output_dir=str(tmp_path / "build"))
    assert "MixedKernels mixed_0 = {0, 1, 1};" in (tmp_path / "build" / "orchestration" / "main.cpp").read_text()
    a, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(a, b, out)
    torch.testing.assert_close(out, (a + b) @ (a - b), rtol=1e-5, atol=1e-5)
    # The printed program (slot buffers, pipe setup and all) parses back and runs the same.
    from pypto.runtime import execute_compiled

    again = torch.zeros(N, N)
    execute_compiled(str(tmp_path / "build"), [a, b, again])
    torch.testing.assert_close(again, out, rtol=0, atol=0)
