"""The communication ops of a distributed kernel in its .pto: pld.rank / nranks, remote loads and
stores into a peer's window, notify, wait and the barrier. They are written as upstream pypto's PTO emitter
(hw-native-sys/pypto e2d0f78ae) writes them: each window comes with its CommContext argument, a
peer's copy of a region is the window pointer moved by the two ranks' window bases, and the signals
are pto.comm.tnotify / pto.comm.twait. The modules conform to pto-check's table (the pto.comm.* ops
from its separate, upstream-emitter source), and the programs still run on the simulator."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms, pto_check

SOURCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

N = 3
C = 32


@pl.jit.incore
def handoff(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    box: pld.DistributedTensor[[2, C], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(box)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    nxt = (me + 1) % n
    t = pl.load(x, [0, 0], [1, C])
    doubled = pl.add(t, t)
    pld.tile.remote_store(doubled, box, peer=nxt, offsets=[1, 0], atomic=pld.AtomicType.Add)
    pld.system.notify(target=flag, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(flag, offsets=[0, 0], expected=me + 1 - me, cmp=pld.WaitCmp.Ge)
    got = pld.tile.remote_load(box, peer=me, offsets=[1, 0], shape=[1, C])
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def chip_handoff(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    box: pld.DistributedTensor[[2, C], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    return handoff(x, y, box, flag)


@pl.jit.incore
def meet(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    pld.tile.remote_store(pl.load(x, [0, 0], [1, C]), data, peer=(me + 1) % pld.nranks(ctx), offsets=[0, 0])
    signal = pld.tensor.barrier(signal)
    y = pl.store(pl.load(data, [0, 0], [1, C]), [0, 0], y)
    return y


@pl.jit
def chip_meet(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N, 1], pl.INT32],
):
    return meet(x, y, data, signal)


@pl.jit.host
def host_meet(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
        chip_meet(x[r], y[r], data, signal, device=r)


@pl.jit.host
def host_handoff(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([2, C], dtype=pl.FP32)
    flag_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        box = pld.window(box_buf, [2, C], dtype=pl.FP32)
        flag = pld.window(flag_buf, [1, 1], dtype=pl.INT32)
        chip_handoff(x[r], y[r], box, flag, device=r)
'''

kernels = kernels_fixture("pto_comm_ops.py", SOURCE)


def world() -> RunConfig:
    return RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1, 2]))


def handoff_module(compiled) -> list:
    """The lines of handoff's .pto, locations left out."""
    (pto,) = Path(compiled.output_dir).rglob("kernels/*/handoff.pto")
    return [re.sub(r" loc\(.*\)$", "", line) for line in pto.read_text().splitlines()]


def run_of(lines, first):
    """The lines from the one starting with `first` to the end, stripped."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(first))
    return [line.strip() for line in lines[start:]]


@pytest.fixture(scope="module")
def compiled(kernels):
    x, y = torch.zeros(3, 1, 32), torch.zeros(3, 1, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        return kernels.host_handoff.compile(x, y, config=world())


def test_each_window_comes_with_its_comm_context_after_the_scalars(compiled):
    lines = handoff_module(compiled)
    assert lines[1] == ("  func.func @handoff(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, "
                        "%arg3: !pto.ptr<i32>, %arg4: !pto.ptr<i64>, %arg5: !pto.ptr<i64>) "
                        "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {")
    # rank is the low half of the CommContext's (rankId, rankNum) slot, nranks the high half.
    assert run_of(lines, "%0 = pto.load_scalar")[:7] == [
        "%0 = pto.load_scalar %arg4[%c2_index] : !pto.ptr<i64> -> i64",
        "%1 = arith.trunci %0 : i64 to i32",
        "%me = arith.index_cast %1 : i32 to index",
        "%2 = pto.load_scalar %arg4[%c2_index] : !pto.ptr<i64> -> i64",
        "%3 = arith.shrui %2, %c32_i64 : i64",
        "%4 = arith.trunci %3 : i64 to i32",
        "%n = arith.index_cast %4 : i32 to index",
    ]


def test_a_remote_store_writes_the_peers_copy_through_the_moved_window_pointer(compiled):
    tile = ("!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=32, v_row=?, v_col=?, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=0>")
    assert run_of(handoff_module(compiled), "%9 = pto.load_scalar")[:13] == [
        "%9 = pto.load_scalar %arg4[%c2_index] : !pto.ptr<i64> -> i64",
        "%10 = arith.trunci %9 : i64 to i32",
        "%11 = arith.index_cast %10 : i32 to index",
        "%12 = arith.addi %c4_index, %11 : index",
        "%13 = pto.load_scalar %arg4[%12] : !pto.ptr<i64> -> i64",
        "%14 = arith.addi %c4_index, %8 : index",
        "%15 = pto.load_scalar %arg4[%14] : !pto.ptr<i64> -> i64",
        "%16 = arith.subi %15, %13 : i64",
        "%17 = arith.divsi %16, %c4_i64 : i64",
        "%18 = arith.index_cast %17 : i64 to index",
        "%box_peer_ptr = pto.addptr %arg2, %18 : !pto.ptr<f32> -> !pto.ptr<f32>",
        "%box_peer_view = pto.make_tensor_view %box_peer_ptr, shape = [%c2_index, %c32_index], strides = "
        "[%c32_index, %c1_index] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>",
        "%box_peer_pview = pto.partition_view %box_peer_view, offsets = [%c1_index, %c0_index], sizes = "
        "[%c1_index, %c32_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x32xf32>",
    ]
    assert (f"pto.tstore ins(%doubled : {tile}) outs(%box_peer_pview : !pto.partition_tensor_view<1x32xf32>) "
            "{atomicType = #pto<atomic_type atomic_add>}") in run_of(handoff_module(compiled), "%box_peer_pview")[1]


def test_a_remote_load_reads_the_peers_copy(compiled):
    # peer=me: the rank's own copy, reached the same way (its window base minus its own).
    tile = ("!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=32, v_row=?, v_col=?, blayout=row_major, "
            "slayout=none_box, fractal=512, pad=0>")
    assert run_of(handoff_module(compiled), "%37 = arith.addi")[:8] == [
        "%37 = arith.addi %c4_index, %me : index",
        "%38 = pto.load_scalar %arg4[%37] : !pto.ptr<i64> -> i64",
        "%39 = arith.subi %38, %36 : i64",
        "%40 = arith.divsi %39, %c4_i64 : i64",
        "%41 = arith.index_cast %40 : i64 to index",
        "%42 = pto.addptr %arg2, %41 : !pto.ptr<f32> -> !pto.ptr<f32>",
        "%43 = pto.make_tensor_view %42, shape = [%c2_index, %c32_index], strides = [%c32_index, %c1_index] "
        "{layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>",
        "%44 = pto.partition_view %43, offsets = [%c1_index, %c0_index], sizes = [%c1_index, %c32_index] : "
        "!pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x32xf32>",
    ]
    assert run_of(handoff_module(compiled), "%44 = pto.partition_view")[1] == (
        f"pto.tload ins(%44 : !pto.partition_tensor_view<1x32xf32>) outs(%got : {tile})")


def test_notify_and_wait_are_pto_comm_tnotify_and_twait(compiled):
    lines = handoff_module(compiled)
    assert run_of(lines, "%flag_peer_pview =")[:3] == [
        "%flag_peer_pview = pto.partition_view %flag_peer_view, offsets = [%c0_index, %c0_index], sizes = "
        "[%c1_index, %c1_index] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x1xi32>",
        "pto.barrier <PIPE_ALL>",
        "pto.comm.tnotify(%flag_peer_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) "
        "{notifyOp = #pto<notify_op atomic_add>}",
    ]
    assert run_of(lines, "%flag_pview =")[:5] == [
        "%flag_pview = pto.partition_view %flag_view, offsets = [%c0_index, %c0_index], sizes = "
        "[%c1_index, %c1_index] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x1xi32>",
        "%29 = arith.addi %me, %c1_index : index",
        "%30 = arith.subi %29, %me : index",
        "%31 = arith.index_cast %30 : index to i32",
        "pto.comm.twait(%flag_pview, %31 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}",
    ]


def test_the_modules_conform_and_the_program_still_runs(compiled):
    assert_conforms(compiled.output_dir)
    generic = next(Path(compiled.output_dir).rglob("kernels/*/handoff.generic.mlir")).read_text()
    assert ('"pto.comm.tnotify"(%flag_peer_pview, %c1_i32) {notifyOp = #pto<notify_op atomic_add>} : '
            "(!pto.partition_tensor_view<1x1xi32>, i32) -> ()") in generic
    torch.manual_seed(3)
    x, y = torch.randn(3, 1, 32), torch.zeros(3, 1, 32)
    compiled(x, y)
    # Each rank adds 2x into its successor's window and reads its own: 2x of its predecessor.
    torch.testing.assert_close(y, torch.roll(x * 2, shifts=1, dims=0), rtol=0, atol=0)


def test_the_barrier_is_notifies_into_the_peers_and_waits_on_this_ranks_cells(kernels):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernels.host_meet.compile(torch.zeros(3, 1, 32), torch.zeros(3, 1, 32), config=world())
    (pto,) = Path(compiled.output_dir).rglob("kernels/*/meet.pto")
    lines = [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.read_text().splitlines()]
    # A credit into this rank's cell of every other rank's signal...
    assert run_of(lines, "scf.for %peer = ")[:3] == [
        "scf.for %peer = %c0_index to %barrier_ranks step %c1_index {",
        "%23 = arith.cmpi ne, %peer, %barrier_rank : index",
        "scf.if %23 {",
    ]
    assert run_of(lines, "%signal_peer_pview = ")[:3] == [
        "%signal_peer_pview = pto.partition_view %signal_peer_view, offsets = [%barrier_rank, %c0_index], sizes = "
        "[%c1_index, %c1_index] : !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x1xi32>",
        "pto.barrier <PIPE_ALL>",
        "pto.comm.tnotify(%signal_peer_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) "
        "{notifyOp = #pto<notify_op atomic_add>}",
    ]
    # ... then each other rank's credit awaited in this rank's own signal and taken back.
    assert run_of(lines, "%signal_pview = ")[:2] == [
        "%signal_pview = pto.partition_view %signal_view, offsets = [%34, %c0_index], sizes = [%c1_index, %c1_index] "
        ": !pto.tensor_view<?x?xi32> -> !pto.partition_tensor_view<1x1xi32>",
        "pto.comm.twait(%signal_pview, %c1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}",
    ]
    assert ("pto.comm.tnotify(%48, %cn1_i32 : !pto.partition_tensor_view<1x1xi32>, i32) "
            "{notifyOp = #pto<notify_op atomic_add>}") in lines
    assert_conforms(compiled.output_dir)
    torch.manual_seed(5)
    x, y = torch.randn(3, 1, 32), torch.zeros(3, 1, 32)
    compiled(x, y)
    torch.testing.assert_close(y, torch.roll(x, shifts=1, dims=0), rtol=0, atol=0)


def mutated(compiled, tmp_path, old, new):
    """handoff's generic form with the first `old` replaced by `new`: (path, the line changed)."""
    lines = next(Path(compiled.output_dir).rglob("kernels/*/handoff.generic.mlir")).read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if old in line)
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    return path, number


def test_the_checker_rejects_a_tnotify_without_its_value(compiled, tmp_path):
    path, number = mutated(compiled, tmp_path, '"pto.comm.tnotify"(%flag_peer_pview, %c1_i32)',
                           '"pto.comm.tnotify"(%flag_peer_pview)')
    problems = [str(p) for p in pto_check.check_paths([path]).problems]
    assert problems == [f"{path}:{number}: op 'pto.comm.tnotify': expected 2 operands (signal, value), got 1"]


def test_the_checker_rejects_a_twait_comparison_of_the_wrong_kind(compiled, tmp_path):
    path, number = mutated(compiled, tmp_path, "cmp = #pto<wait_cmp ge>", "cmp = 3 : i32")
    problems = [str(p) for p in pto_check.check_paths([path]).problems]
    assert problems == [f"{path}:{number}: op 'pto.comm.twait': attribute 'cmp' must be #pto<wait_cmp ...> "
                        f"(PTO_WaitCmpAttr), got 3 : i32"]


def test_the_checker_names_the_source_of_the_comm_ops():
    table = pto_check.load_table()
    source = table["upstream_emitter"]["source"]
    assert (source["repository"], source["commit"]) == ("https://github.com/hw-native-sys/pypto", "e2d0f78ae")
    assert "no PTOAS revision available defines them" in source["note"]
    assert table["ops"]["pto.comm.twait"]["source"] == "upstream pypto e2d0f78ae's PTO emitter"
