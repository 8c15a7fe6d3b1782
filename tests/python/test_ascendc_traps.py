"""The traps of seed 002 in AscendC kernels on the simulator: each fails the run (or, where the
simulator computes the right value anyway, warns) naming the kernel, the core and the kernel's line,
with the fix. Kernels in kernels/ascendc/trap_*.cpp; docs/cce-kernels.md, "Traps"."""

import pathlib

import pypto.language as pl
import pytest
import torch

KERNELS = pathlib.Path(__file__).parent / "kernels" / "ascendc"
EXTERN_INCLUDE = pathlib.Path(__file__).parents[2] / "plugins" / "sim" / "extern_include"


def _line_of(source, text):
    return next(i for i, line in enumerate(source.read_text().splitlines(), 1) if text in line)


def _error_of(call):
    with pytest.raises(Exception) as info:
        call()
    return str(info.value)


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/trap_sync_all_mixed.cpp",
               aiv_source="kernels/ascendc/trap_sync_all_mixed.cpp")
def sync_all_mixed(out: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]: ...


@pl.jit
def run_sync_all_mixed(out: pl.InOut[pl.Tensor[[8], pl.FP32]]):
    with pl.spmd(1, sync_start=True):
        out = sync_all_mixed(out)
    return out


def test_a_vector_only_sync_all_in_a_mixed_kernel_is_refused_with_sync_all_false():
    source = KERNELS / "trap_sync_all_mixed.cpp"
    error = _error_of(lambda: run_sync_all_mixed(torch.zeros(8)))
    line = _line_of(source, "AscendC::SyncAll();")
    assert "hand-written kernel 'sync_all_mixed_aiv' (task " in error and ", AIV core " in error, error
    assert (
        f"{source}:{line}: SyncAll() synchronizes the vector cores only (isAIVOnly = true, its default), and this is "
        "a mixed kernel: on the device the cube cores are never released from it and the task hangs (507018). Use "
        "SyncAll<false>() for the barrier of all cube and vector cores (this vector (AIV) core called it)"
    ) in error, error


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/trap_cross_core_flag.cpp",
               aiv_source="kernels/ascendc/trap_cross_core_flag.cpp")
def cross_core_flag(out: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]: ...


@pl.jit
def run_cross_core_flag(out: pl.InOut[pl.Tensor[[8], pl.FP32]]):
    with pl.spmd(1, sync_start=True):
        out = cross_core_flag(out)
    return out


@pytest.mark.skipif(not (EXTERN_INCLUDE / "ascendc" / "cross_core.h").exists(),
                    reason="CrossCoreSetFlag is not on the simulator's include path yet")
def test_a_cross_core_flag_id_that_sync_all_uses_is_named_at_the_flag():
    source = KERNELS / "trap_cross_core_flag.cpp"
    error = _error_of(lambda: run_cross_core_flag(torch.zeros(8)))
    flag_line = _line_of(source, "CrossCoreSetFlag<")
    sync_line = _line_of(source, "SyncAll<false>()")
    assert "hand-written kernel 'cross_core_flag_aiv' (task " in error, error
    assert (
        f"{source}:{flag_line}: CrossCoreSetFlag: flag id 11 is one of the FFTS flag ids 11 to 14 that SyncAll uses, "
        f"and this kernel calls SyncAll (at {source}:{sync_line}): on the device the two signal each other's waits. "
        "Use flag ids 0 to 10 or 15 for the kernel's own cross-core flags"
    ) in error, error


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/trap_tpipe_on_cube.cpp",
               aiv_source="kernels/ascendc/trap_tpipe_on_cube.cpp")
def tpipe_on_cube(out: pl.InOut[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]: ...


@pl.jit
def run_tpipe_on_cube(out: pl.InOut[pl.Tensor[[8], pl.FP32]]):
    with pl.spmd(1):
        out = tpipe_on_cube(out)
    return out


def test_a_vector_only_tpipe_on_the_cube_is_named_at_its_construction():
    source = KERNELS / "trap_tpipe_on_cube.cpp"
    error = _error_of(lambda: run_tpipe_on_cube(torch.zeros(8)))
    assert "hand-written kernel 'tpipe_on_cube_aic' (task " in error and ", AIC core " in error, error
    assert (
        f"{source}:{_line_of(source, 'TPipe pipe;')}: this TPipe is constructed on the cube (AIC) core and places UB "
        f"buffers only (TBuf::Get of a VECCALC buffer at {source}:{_line_of(source, 'scratch.Get')}): on the device a "
        "TPipe on the cube drags it into the vector-only UB setup and hangs it. Construct the TPipe of a vector-only "
        "phase on the vector cores only, under #ifdef __DAV_C220_VEC__"
    ) in error, error


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/trap_gm_scalar_read.cpp")
def gm_scalar_read(lens: pl.Tensor[[8], pl.INT32],
                   out: pl.InOut[pl.Tensor[[8], pl.INT32]]) -> pl.Tensor[[8], pl.INT32]: ...


@pl.jit
def run_gm_scalar_read(lens: pl.Tensor[[8], pl.INT32], out: pl.Out[pl.Tensor[[8], pl.INT32]]):
    with pl.spmd(2):
        out = gm_scalar_read(lens, out)
    return out


def test_a_scalar_read_of_host_data_warns_once_with_the_data_copy_fix(capfd):
    source = KERNELS / "trap_gm_scalar_read.cpp"
    lens = torch.arange(8, dtype=torch.int32)
    out = torch.zeros(8, dtype=torch.int32)
    run_gm_scalar_read(lens, out)
    torch.testing.assert_close(out, lens * 2, rtol=0, atol=0)  # right here; maybe stale on the device
    log = capfd.readouterr()
    text = log.out + log.err
    message = (
        f"{source}:{_line_of(source, 'lens.GetValue')}: GlobalTensor::GetValue reads GM with a scalar load, which on "
        "the device goes through the core's cache and is not coherent with what the host wrote: it may read a stale "
        "value (the simulator reads the right one). Copy the data into UB with DataCopy, then "
        "SetFlag<HardEvent::MTE2_S> and WaitFlag<HardEvent::MTE2_S>, and read it with LocalTensor::GetValue"
    )
    assert "[warning] hand-written kernel 'gm_scalar_read' (task " in text, text
    assert text.count(message) == 1, text  # two blocks, eight reads each: once per kernel and line


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/pto_first_atomic.cpp")
def pto_first_atomic(x: pl.Tensor[[64, 8], pl.FP32],
                     out: pl.InOut[pl.Tensor[[64, 8], pl.FP32]]) -> pl.Tensor[[64, 8], pl.FP32]: ...


@pl.jit
def run_pto_first_atomic(x: pl.Tensor[[64, 8], pl.FP32], out: pl.InOut[pl.Tensor[[64, 8], pl.FP32]]):
    with pl.spmd(64):
        out = pto_first_atomic(x, out)
    return out


def test_each_task_starts_without_the_last_ones_atomic_mode_whatever_the_include_order():
    # 64 blocks on fewer vector cores: some core runs several, each after one that left SetAtomicAdd on.
    x = torch.randn(64, 8)
    out = torch.ones(64, 8)
    run_pto_first_atomic(x, out)
    torch.testing.assert_close(out, x, rtol=0, atol=0)


@pl.jit.extern(core_type="aiv", source="kernels/ascendc/trap_pipe_hazard.cpp")
def pipe_hazard(x: pl.Tensor[[64], pl.FP32], out: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]: ...


@pl.jit
def run_pipe_hazard(x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]):
    out = pipe_hazard(x, out)
    return out


def test_a_read_before_the_wait_for_its_producers_pipe_is_a_race_naming_both_lines():
    source = KERNELS / "trap_pipe_hazard.cpp"
    error = _error_of(lambda: run_pipe_hazard(torch.randn(64), torch.zeros(64)))
    assert "hand-written kernel 'pipe_hazard' (task 0, AIV core " in error, error
    assert (
        f"{source}:{_line_of(source, 'Add(sum')}: pipe hazard, a race between the pipes of this core: Add (V) reads "
        f"UB bytes from 0 on, which DataCopy (MTE2) at {source}:{_line_of(source, 'DataCopy(x, x_gm')} wrote, with no "
        "WaitFlag<HardEvent::MTE2_V> (nor TQue EnQue/DeQue) between them: on the device V may read them before MTE2 "
        "has written them. Put SetFlag<HardEvent::MTE2_V>(id) after the write and WaitFlag<HardEvent::MTE2_V>(id) "
        "before this read"
    ) in error, error
