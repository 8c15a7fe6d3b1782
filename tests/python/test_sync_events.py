"""Cross-core events: ``pl.system.sync_set`` / ``pl.system.sync_wait`` between the AIC and AIV kernels of
one core group. The simulator counts the raises each member receives per event id and a wait consumes
one: with ``ffts_mode=2`` a raise by the AIC reaches every AIV lane, and the AIC receives one only once
every AIV lane has raised. A wait no raise can ever satisfy fails the run naming each member's state,
and the intra-core barriers (``bar_v``, ``fence``, ...) hold already on the simulator."""

import pypto.language as pl
import pytest
import torch

N = 16

# backend-ptoas does not emit the intra-core barriers yet; on a simulator that is a warning at compile time.
pytestmark = pytest.mark.filterwarnings("ignore:no .pto written for kernel .* backend-ptoas does not lower the "
                                        "synchronisation op")

LANES_THEN_CUBE = '''
import pypto.language as pl

N = 16


@pl.program
class LanesThenCube:
    """out = (a + b) @ w: lane 0 writes rows [0, 8) of a + b to global memory, lane 1 rows [8, 16), and
    the cube reads the sum only once both lanes raised event 3."""

    @pl.function(type=pl.FunctionType.AIV, attrs={{"dual_aiv_dispatch": True}})
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
            sums: pl.InOut[pl.Tensor[[N, N], pl.FP32]], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        lane = pl.tile.get_subblock_idx()
        row = lane * 8
        ta = pl.load(a, [row, 0], [8, N])
        tb = pl.load(b, [row, 0], [8, N])
        pl.store(pl.add(ta, tb), [row, 0], sums)
        {raise_}

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
             sums: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)
        ts = pl.load(sums, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tw = pl.load(w, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ts, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        out = pl.store(c, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
              sums: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.vec(a, b, w, sums, out)
        out = self.cube(a, b, w, sums, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
             sums: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, w, sums, out)
        return out
'''

BOTH_LANES_RAISE = "pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=2)"
ONLY_LANE_0_RAISES = """if lane == 0:
            pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=2)"""


def _lanes_then_cube(write_kernel, tmp_path, raise_):
    from pypto.ir import compile

    module, _ = write_kernel("lanes_then_cube", LANES_THEN_CUBE.format(raise_=raise_))
    return module.LanesThenCube, compile(module.LanesThenCube, output_dir=str(tmp_path / "build"))


def test_the_cube_reads_what_both_lanes_wrote_once_both_raised_the_event(write_kernel, tmp_path):
    _, compiled = _lanes_then_cube(write_kernel, tmp_path, BOTH_LANES_RAISE)
    a, b, w = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
    sums, out = torch.zeros(N, N), torch.zeros(N, N)
    compiled(a, b, w, sums, out)
    torch.testing.assert_close(sums, a + b)
    torch.testing.assert_close(out, (a + b) @ w, rtol=1e-4, atol=1e-4)


def test_a_wait_that_no_raise_can_satisfy_fails_the_run_naming_each_member(write_kernel, tmp_path):
    """Mode 2 reaches the AIC once every lane raised: with lane 1 silent the cube would wait forever."""
    _, compiled = _lanes_then_cube(write_kernel, tmp_path, ONLY_LANE_0_RAISES)
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.randn(N, N), torch.randn(N, N), torch.zeros(N, N), torch.zeros(N, N))
    message = str(info.value)
    assert "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes and events " \
           "can never move: " in message, message
    assert "kernel 'cube' (task 0) on AIC core 0 waits in sync_wait for event 3 (the AIV lanes raised it 1 and 0 " \
           "times)" in message, message
    assert "kernel 'vec' (task 1) on AIV core 0 (lane 0) has finished" in message, message
    assert "(task 2) on AIV core 1 (lane 1) has finished" in message, message
    assert "and a sync_wait a sync_set of the peer" in message, message


def test_the_printed_group_parses_back_with_its_events(write_kernel, tmp_path):
    program, _ = _lanes_then_cube(write_kernel, tmp_path, BOTH_LANES_RAISE)
    text = str(program)
    assert "pl.system.sync_set(3, pipe=pl.PipeType.MTE3, ffts_mode=2)" in text, text
    assert "pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)" in text, text
    module, _ = write_kernel("lanes_then_cube_printed", "import pypto.language as pl\n\n" + text)
    assert str(module.LanesThenCube) == text


@pl.program
class CubeThenVector:
    """out = a @ b + x: the cube stores the product to global memory and raises event 5; the vector
    kernel reads it back once the raise reached it. Every intra-core barrier the DSL has is spelled
    along the way: on the simulator each already holds."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        pl.system.set_ffts(ws)
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.system.bar_m()
        pl.store(c, [0, 0], prod)
        pl.system.fence()
        pl.system.sync_set(5, pipe=pl.PipeType.FIX)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
            prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        pl.system.set_ffts(ws)
        tx = pl.load(x, [0, 0], [N, N])
        pl.system.sync_wait(5, pipe=pl.PipeType.MTE2)
        pl.system.cacheinvalid()
        pl.system.cacheinvalid(prod, [1, N], [0, 0])
        tp = pl.load(prod, [0, 0], [N, N])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        r = pl.add(tp, tx)
        pl.system.bar_v()
        pl.system.bar_all()
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
              prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, x, prod, ws, out)
        out = self.vec(a, b, x, prod, ws, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, x, prod, ws, out)
        return out


def test_the_vector_kernel_reads_the_product_once_the_cube_raised_the_event(tmp_path):
    from pypto.ir import compile

    compiled = compile(CubeThenVector, output_dir=str(tmp_path / "build"))
    a, b, x = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
    prod, out = torch.zeros(N, N), torch.zeros(N, N)
    compiled(a, b, x, prod, torch.zeros(256, dtype=torch.int64), out)
    torch.testing.assert_close(out, a @ b + x, rtol=1e-4, atol=1e-4)


def test_backend_ptoas_names_the_barrier_it_does_not_lower(tmp_path):
    from pypto.ir import compile

    with pytest.warns(UserWarning, match=r"backend-ptoas does not lower the synchronisation op "
                      r"'pl.system.bar_m' \(pto.barrier <PIPE_M>\) yet in kernel 'cube'"):
        compile(CubeThenVector, output_dir=str(tmp_path / "build"))


@pl.program
class EventsOnly:
    """CubeThenVector with the cross-core event and the FFTS workspace only."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        pl.system.set_ffts(ws)
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(c, [0, 0], prod)
        pl.system.sync_set(5, pipe=pl.PipeType.FIX, ffts_mode=2)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
            prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        pl.system.set_ffts(ws)
        tx = pl.load(x, [0, 0], [N, N])
        pl.system.sync_wait(5, pipe=pl.PipeType.MTE2)
        tp = pl.load(prod, [0, 0], [N, N])
        out = pl.store(pl.add(tp, tx), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
              prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, x, prod, ws, out)
        out = self.vec(a, b, x, prod, ws, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32], x: pl.Tensor[[N, N], pl.FP32],
             prod: pl.InOut[pl.Tensor[[N, N], pl.FP32]], ws: pl.Tensor[[256], pl.INT64],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, x, prod, ws, out)
        return out


def test_backend_ptoas_writes_the_events_and_the_ffts_workspace_as_ptoas_defines_them(tmp_path):
    from pypto.ir import compile

    compiled = compile(EventsOnly, output_dir=str(tmp_path / "build"))
    a, b, x = torch.randn(N, N), torch.randn(N, N), torch.randn(N, N)
    prod, out = torch.zeros(N, N), torch.zeros(N, N)
    compiled(a, b, x, prod, torch.zeros(256, dtype=torch.int64), out)
    torch.testing.assert_close(out, a @ b + x, rtol=1e-4, atol=1e-4)
    cube = (tmp_path / "build" / "kernels" / "aic" / "cube.pto").read_text()
    vec = (tmp_path / "build" / "kernels" / "aiv" / "vec.pto").read_text()
    # The workspace is the 5th tensor: a memref, as PTOAS a56b18c's pto.set_ffts takes it.
    assert "%arg4: memref<256xi64>" in cube and "pto.set_ffts %arg4 : memref<256xi64>" in cube, cube
    assert "pto.sync.set <PIPE_FIX>, 5 {ffts_mode = 2 : i32}" in cube, cube
    assert "pto.set_ffts %arg4 : memref<256xi64>" in vec and "pto.sync.wait <PIPE_MTE2>, 5" in vec, vec


MIXED_KERNEL = '''
import pypto.language as pl

N = 16


@pl.jit
def mixed(a: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32], doubled: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
          out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    """out = (2 a) @ w in one kernel mixing vector and cube work: the lanes each double half of a, the
    cube waits for both. core_type keeps each event op on its member when the kernel is split."""
    for _ in pl.spmd(1, name_hint="doubled_then_product"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            ta: pl.Tile[[8, N], pl.FP32, pl.Mem.Vec] = pl.load(a, [lane * 8, 0], [8, N])
            pl.store(pl.add(ta, ta), [lane * 8, 0], doubled)
            pl.system.sync_set(7, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")
        pl.system.sync_wait(7, pipe=pl.PipeType.MTE2, core_type="aic")
        td: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.load(doubled, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tw: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.load(w, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        c = pl.matmul(pl.move(td, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        out = pl.store(c, [0, 0], out)
    return out
'''


def test_core_type_keeps_each_event_op_on_its_member_of_a_mixed_kernel(write_kernel):
    module, _ = write_kernel("mixed_events", MIXED_KERNEL)
    a, w = torch.randn(N, N), torch.randn(N, N)
    doubled, out = torch.zeros(N, N), torch.zeros(N, N)
    lowered = str(module.mixed.lower(a, w, doubled, out))
    aic = lowered[lowered.index("def doubled_then_product_aic"):lowered.index("def doubled_then_product_aiv")]
    aiv = lowered[lowered.index("def doubled_then_product_aiv"):]
    assert "pl.system.sync_wait(7, pipe=pl.PipeType.MTE2, core_type=\"aic\")" in aic, lowered
    assert "sync_set" not in aic, lowered
    assert "pl.system.sync_set(7, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type=\"aiv\")" in aiv, lowered
    assert "sync_wait" not in aiv.split("def ", 2)[1], lowered
    module.mixed(a, w, doubled, out)
    torch.testing.assert_close(doubled, 2 * a)
    torch.testing.assert_close(out, (2 * a) @ w, rtol=1e-4, atol=1e-4)


@pl.program
class Overflow:
    """The cube raises event 2 sixteen times and the vector kernel never waits: the device's counter
    holds 15."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        for _ in pl.range(16):
            pl.system.sync_set(2, pipe=pl.PipeType.FIX)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = pl.store(pl.load(a, [0, 0], [N, N]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, out)
        out = self.vec(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, out)
        return out


def test_raising_an_event_past_what_its_counter_holds_fails_the_run(tmp_path):
    from pypto.ir import compile

    compiled = compile(Overflow, output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.zeros(N, N))
    assert ("fatal error 203 (KernelFailed): task 0 (kernel 'cube'): event 2 is raised for the kernel of func_id 1 "
            "(task 1) on AIV core 0 16 times without a sync_wait; the device's counter holds at most 15") in str(info.value)


def test_events_outside_a_mixed_task_are_refused_when_they_run(tmp_path):
    from pypto.ir import compile

    @pl.program
    class Alone:
        @pl.function(type=pl.FunctionType.AIV)
        def lonely(self, a: pl.Tensor[[N, N], pl.FP32],
                   out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            pl.system.sync_wait(1, pipe=pl.PipeType.V)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            out = self.lonely(a, out)
            return out

    compiled = compile(Alone, output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(N, N), torch.zeros(N, N))
    assert ("fatal error 203 (KernelFailed): task 0 (kernel 'lonely'): sync_wait is a cross-core event between the AIC "
            "and AIV kernels of one core group") in str(info.value)


BAD_EVENT = '''
import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[16, 16], pl.FP32]):
        {call}
'''


# (the call, where in it the error points, the message)
@pytest.mark.parametrize("call,at,expected", [
    ("pl.system.sync_set(14, pipe=pl.PipeType.MTE3)", "14",
     "pl.system.sync_set: event id 14 is out of range [0, 13]"),
    ("pl.system.sync_wait(2, pipe=pl.PipeType.MTE4)", "pl.PipeType.MTE4", "'pl.PipeType.MTE4' is not a pipe"),
    ("pl.system.sync_set(2, pipe=pl.PipeType.V, core_type=\"cube\")", "pl.system",
     "pl.system.sync_set: core_type=\"cube\" is not \"aic\" or \"aiv\""),
    ("pl.system.sync_set(2, pipe=pl.PipeType.V, ffts_mode=3)", "pl.system",
     "pl.system.sync_set: ffts_mode=3 is not 0, 1 or 2"),
    ("pl.system.sync_wait(2, pipe=pl.PipeType.V, ffts_mode=2)", "2)",
     "'pl.system.sync_wait' has no argument 'ffts_mode' (arguments: event_id, pipe, core_type)"),
    ("pl.system.sync_wait(2)", "pl.system", "'pl.system.sync_wait' is missing argument 'pipe'"),
    ("pl.system.set_ffts(a)", "pl.system", "pl.system.set_ffts: the FFTS workspace must be a 1-D INT64 tensor of at "
                                           "least 256 elements, got pl.Tensor[[16, 16], pl.FP32]"),
    ("pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=8)", "pl.system",
     "pl.system.sync_src: event_id=8 is out of range [0, 7]"),
    ("pl.system.bar_v(a)", "pl.system", "'pl.system.bar_v' takes at most 0 arguments, got 1"),
])
def test_misused_sync_ops_are_compile_errors_at_the_call(write_kernel, call, at, expected):
    with pytest.raises(Exception) as info:
        module, _ = write_kernel("bad_event", BAD_EVENT.format(call=call))
        module.Bad  # noqa: B018 (the program is parsed where it is defined)
    message = str(info.value)
    assert expected in message, message
    column = 9 + call.index(at)  # the call is indented by 8
    assert f"bad_event.py:9:{column}\n" in message, message


DEVICE_SIZED = '''
import pypto.language as pl


@pl.jit
def device_sized(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.spmd(pl.system.available_cluster_count()):
        pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
    return out
'''


def test_a_launch_sized_by_the_device_is_refused_at_its_core_num(write_kernel):
    module, _ = write_kernel("device_sized", DEVICE_SIZED)
    with pytest.raises(Exception) as info:
        module.device_sized(torch.zeros(16, 16), torch.zeros(16, 16))
    message = str(info.value)
    assert ("pl.spmd core_num `pl.system.available_cluster_count()` is not supported yet: the run's device counts "
            "are not passed to orchestration code") in message, message
    assert "device_sized.py:7:18\n" in message, message
