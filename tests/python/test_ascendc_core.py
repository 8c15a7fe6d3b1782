"""AscendC on the simulator, the core of it (kernel_operator.h): GlobalTensor/LocalTensor, TPipe with
TQue and TBuf over the vector core's UB, block ids, flags and SyncAll, in kernels launched through
@pl.jit.extern and compared with torch; and the traps that fail the run with the kernel's line."""

import pathlib

import pypto.language as pl
import pytest
import torch
from pypto.testing import TensorSpec, run

KERNELS = pathlib.Path(__file__).parent / "kernels" / "ascendc"
ROWS = 4
COLS = 256


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/add_scale_fp32.cpp")
def add_scale_fp32(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Tensor[[ROWS, COLS], pl.FP32],
                   out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]: ...


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/add_scale_fp16.cpp")
def add_scale_fp16(x: pl.Tensor[[ROWS, COLS], pl.FP16], y: pl.Tensor[[ROWS, COLS], pl.FP16],
                   out: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP16]]) -> pl.Tensor[[ROWS, COLS], pl.FP16]: ...


@pl.jit
def run_add_scale_fp32(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Tensor[[ROWS, COLS], pl.FP32],
                       out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.spmd(ROWS):
        out = add_scale_fp32(x, y, out)
    return out


@pl.jit
def run_add_scale_fp16(x: pl.Tensor[[ROWS, COLS], pl.FP16], y: pl.Tensor[[ROWS, COLS], pl.FP16],
                       out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP16]]):
    with pl.spmd(ROWS):
        out = add_scale_fp16(x, y, out)
    return out


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/sync_all.cpp")
def rotate(x: pl.Tensor[[ROWS, 64], pl.FP32], out: pl.InOut[pl.Tensor[[ROWS, 64], pl.FP32]],
           stage: pl.InOut[pl.Tensor[[ROWS, 64], pl.FP32]]) -> pl.Tensor[[ROWS, 64], pl.FP32]: ...


@pl.jit
def run_rotate(x: pl.Tensor[[ROWS, 64], pl.FP32], stage: pl.InOut[pl.Tensor[[ROWS, 64], pl.FP32]],
               out: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]):
    with pl.spmd(ROWS, sync_start=True):
        out = rotate(x, out, stage)
    return out


@pytest.mark.parametrize("dtype, entry", [(torch.float32, run_add_scale_fp32), (torch.float16, run_add_scale_fp16)])
def test_queues_and_buffers_carry_a_row_per_block(dtype, entry):
    x = torch.randn(ROWS, COLS, dtype=dtype)
    y = torch.randn(ROWS, COLS, dtype=dtype)
    out = torch.zeros(ROWS, COLS, dtype=dtype)
    entry(x, y, out)
    expected = ((x.float() + y.float()).to(dtype).float() * 2).to(dtype)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_sync_all_waits_for_every_block():
    x = torch.randn(ROWS, 64)
    out = torch.zeros(ROWS, 64)
    run_rotate(x, torch.zeros(ROWS, 64), out)
    torch.testing.assert_close(out, torch.roll(x + 1, shifts=-1, dims=0), rtol=0, atol=0)


def _failing_program(source):
    @pl.program
    class Failing:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def KERNEL(self, out: pl.InOut[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]:
            with pl.spmd(core_num=1):
                out = self.KERNEL(out)
            return out

    return run(Failing, [TensorSpec("out", [ROWS, 8], torch.float32, init_value=0.0)], lambda values: None)


def _failing_cube_program(source):
    @pl.program
    class FailingCube:
        @pl.function(type=pl.FunctionType.AIC, external_source=source)
        def KERNEL(self, out: pl.InOut[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[ROWS, 8], pl.FP32]]) -> pl.Tensor[[ROWS, 8], pl.FP32]:
            with pl.spmd(core_num=1):
                out = self.KERNEL(out)
            return out

    return run(FailingCube, [TensorSpec("out", [ROWS, 8], torch.float32, init_value=0.0)], lambda values: None)


def _line_of(source, text):
    return next(i for i, line in enumerate(source.read_text().splitlines(), 1) if text in line)


def test_init_buffer_beyond_ub_names_the_buffer_and_line():
    source = KERNELS / "ub_overflow.cpp"
    result = _failing_program(source)
    assert not result.passed
    line = _line_of(source, "pipe.InitBuffer(out")
    assert (
        f"fatal error 203 (KernelFailed): hand-written kernel 'KERNEL' (task 0, AIV core 0): {source}:{line}: "
        "TPipe::InitBuffer of buffer #2 of this TPipe (a TQue at VECOUT, 2 x 65536 bytes) overflows UB: this "
        "TPipe's buffers would end at byte 262144 (131072 taken by the buffers before it), but UB holds 196608 "
        "bytes. Shrink the tiles or use fewer buffers"
    ) in result.error, result.error


def test_init_buffer_beyond_l1_on_the_cube_names_the_buffer_and_line():
    source = KERNELS / "l1_overflow.cpp"
    result = _failing_cube_program(source)
    assert not result.passed
    line = _line_of(source, "pipe.InitBuffer(b")
    assert (
        f"fatal error 203 (KernelFailed): hand-written kernel 'KERNEL' (task 0, AIC core 0): {source}:{line}: "
        "TPipe::InitBuffer of buffer #2 of this TPipe (a TQue at B1, 2 x 196608 bytes) overflows L1: this "
        "TPipe's buffers would end at byte 655360 (262144 taken by the buffers before it), but L1 holds 524288 "
        "bytes. Shrink the tiles or use fewer buffers"
    ) in result.error, result.error


def test_an_event_id_out_of_range_is_named():
    source = KERNELS / "event_id.cpp"
    result = _failing_program(source)
    assert not result.passed
    line = _line_of(source, "SetFlag")
    assert (
        f"{source}:{line}: SetFlag: event id 8 is out of range; A2/A3 have event ids 0 to 7 (EVENT_ID0..EVENT_ID7) "
        "per pair of pipes"
    ) in result.error, result.error


def test_a_dequeue_from_an_empty_queue_is_named():
    source = KERNELS / "deque_empty.cpp"
    result = _failing_program(source)
    assert not result.passed
    line = _line_of(source, "in.DeQue")
    assert (
        f"{source}:{line}: TQue::DeQue: the queue is empty (no EnQue before this DeQue; on the device it waits "
        "forever)"
    ) in result.error, result.error


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/whole_ub.cpp")
def whole_ub(x: pl.Tensor[[256], pl.FP32], out: pl.InOut[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[256], pl.FP32]: ...


@pl.jit
def run_whole_ub(x: pl.Tensor[[256], pl.FP32], out: pl.Out[pl.Tensor[[256], pl.FP32]]):
    out = whole_ub(x, out)
    return out


def test_all_192_kib_of_ub_and_the_cube_positions_are_there():
    x = torch.randn(256)
    out = torch.zeros(256)
    run_whole_ub(x, out)
    torch.testing.assert_close(out, x + 1, rtol=0, atol=0)
