"""Communication between the ranks of a distributed program, on the simulator: pld.rank / nranks,
remote loads and stores into peers' windows, notify / wait signals and the barrier."""

import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig, DistributedRunError
from pypto.language.parser.diagnostics import ParserError
from pypto.runtime import RunConfig

from conftest import kernels_fixture

SOURCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

N = 3
C = 32


@pl.jit.incore
def who(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], w: pld.DistributedTensor[[N, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(w)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    pl.write(y, [0, 0], me * 10)
    pl.write(y, [0, 1], n)
    return y


@pl.jit
def chip_who(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], w: pld.DistributedTensor[[N, 1], pl.INT32]):
    return who(y, w)


@pl.jit.host
def host_who(y: pl.Out[pl.Tensor[[N, 1, 2], pl.INT32]]):
    buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_who(y[r], pld.window(buf, [N, 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def gather(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[N, C], pl.FP32]],
    rows: pld.DistributedTensor[[N, C], pl.FP32],
    signal: pld.DistributedTensor[[N, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(rows)
    me = pld.rank(ctx)
    mine = pl.load(x, [0, 0], [1, C])
    for peer in pl.range(N):
        pld.tile.remote_store(mine, rows, peer=peer, offsets=[me, 0])
    signal = pld.tensor.barrier(signal)
    every = pl.load(rows, [0, 0], [N, C])
    y = pl.store(every, [0, 0], y)
    return y


@pl.jit
def chip_gather(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[N, C], pl.FP32]],
    rows: pld.DistributedTensor[[N, C], pl.FP32],
    signal: pld.DistributedTensor[[N, 1], pl.INT32],
):
    return gather(x, y, rows, signal)


@pl.jit.host
def host_gather(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, N, C], pl.FP32]]):
    rows_buf = pld.alloc_window_buffer([N, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        rows = pld.window(rows_buf, [N, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
        chip_gather(x[r], y[r], rows, signal, device=r)


@pl.jit.incore
def handoff(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    box: pld.DistributedTensor[[1, C], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(box)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    nxt = (me + 1) % n
    t = pl.load(x, [0, 0], [1, C])
    doubled = pl.add(t, t)
    pld.tile.remote_store(doubled, box, peer=nxt, offsets=[0, 0])
    pld.system.notify(target=flag, peer=nxt, offsets=[0, 0], value=me + 5, op=pld.NotifyOp.Set)
    prv = (me + n - 1) % n
    pld.system.wait(flag, offsets=[0, 0], expected=prv + 5, cmp=pld.WaitCmp.Eq)
    got = pl.load(box, [0, 0], [1, C])
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def chip_handoff(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    box: pld.DistributedTensor[[1, C], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    return handoff(x, y, box, flag)


@pl.jit.host
def host_handoff(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    flag_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        box = pld.window(box_buf, [1, C], dtype=pl.FP32)
        flag = pld.window(flag_buf, [1, 1], dtype=pl.INT32)
        chip_handoff(x[r], y[r], box, flag, device=r)


@pl.jit.incore
def two_rounds(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[2, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    me = pld.rank(ctx)
    peer = (me + 1) % pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, C])
    data = pl.store(t, [0, 0], data)
    signal = pld.tensor.barrier(signal)
    first = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, C])
    signal = pld.tensor.barrier(signal)
    squared = pl.mul(t, t)
    data = pl.store(squared, [0, 0], data)
    signal = pld.tensor.barrier(signal)
    second = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[1, C])
    y = pl.store(first, [0, 0], y)
    y = pl.store(second, [1, 0], y)
    return y


@pl.jit.incore
def read_cells(cells: pl.Out[pl.Tensor[[1, N], pl.INT32]], signal: pld.DistributedTensor[[N], pl.INT32]):
    for i in pl.range(N):
        pl.write(cells, [0, i], pl.read(signal, [i]))
    return cells


@pl.jit
def chip_two_rounds(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[2, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return two_rounds(x, y, data, signal)


@pl.jit
def chip_read_cells(cells: pl.Out[pl.Tensor[[1, N], pl.INT32]], signal: pld.DistributedTensor[[N], pl.INT32]):
    return read_cells(cells, signal)


@pl.jit.host
def host_two_rounds(
    x: pl.Tensor[[N, 1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[N, 2, C], pl.FP32]],
    cells: pl.Out[pl.Tensor[[N, 1, N], pl.INT32]],
):
    data_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N], dtype=pl.INT32)
        chip_two_rounds(x[r], y[r], data, signal, device=r)
        chip_read_cells(cells[r], signal, device=r)


@pl.jit.incore
def lonely_wait(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    pld.system.wait(flag, offsets=[0, 0], expected=3, cmp=pld.WaitCmp.Ge)
    pl.write(y, [0, 0], pl.read(flag, [0, 0]))
    return y


@pl.jit
def chip_lonely_wait(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    return lonely_wait(y, flag)


@pl.jit.host
def host_lonely_wait(y: pl.Out[pl.Tensor[[N, 1, 2], pl.INT32]]):
    flag_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        chip_lonely_wait(y[r], pld.window(flag_buf, [1, 1], dtype=pl.INT32), device=r)


@pl.jit.host
def host_not_a_window(y: pl.Out[pl.Tensor[[N, 1, 2], pl.INT32]], w: pl.Tensor[[N, N, 1], pl.INT32]):
    for r in pl.range(pld.world_size()):
        chip_who(y[r], w[r], device=r)


@pl.jit.incore
def far_peer(x: pl.Tensor[[1, C], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, C])
    pld.tile.remote_store(t, data, peer=7, offsets=[0, 0])
    return data


@pl.jit
def chip_far_peer(x: pl.Tensor[[1, C], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, C], pl.FP32]]):
    return far_peer(x, data)


@pl.jit.host
def host_far_peer(x: pl.Tensor[[N, 1, C], pl.FP32]):
    buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        chip_far_peer(x[r], pld.window(buf, [1, C], dtype=pl.FP32), device=r)


@pl.jit.incore
def float_signal(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.FP32]):
    pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pl.write(y, [0, 0], 1)
    return y


@pl.jit
def chip_float_signal(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.FP32]):
    return float_signal(y, flag)


@pl.jit.host
def host_float_signal(y: pl.Out[pl.Tensor[[N, 1, 2], pl.INT32]]):
    buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        chip_float_signal(y[r], pld.window(buf, [1, 1], dtype=pl.FP32), device=r)

@pl.jit.incore
def sum_into_first(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    acc: pld.DistributedTensor[[2, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    pld.tensor.put(acc, 0, x, [1, 0], [0, 0], [1, C], atomic=pld.AtomicType.Add)
    signal = pld.tensor.barrier(signal)
    total = pl.load(acc, [1, 0], [1, C])
    y = pl.store(total, [0, 0], y)
    return y


@pl.jit
def chip_sum_into_first(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    acc: pld.DistributedTensor[[2, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return sum_into_first(x, y, acc, signal)


@pl.jit.host
def host_sum_into_first(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    acc_buf = pld.alloc_window_buffer([2, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        acc = pld.window(acc_buf, [2, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N], dtype=pl.INT32)
        chip_sum_into_first(x[r], y[r], acc, signal, device=r)


@pl.jit.incore
def pull_next(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, C])
    data = pl.store(t, [0, 0], data)
    signal = pld.tensor.barrier(signal)
    pld.tensor.get(y, peer=nxt, src=data)
    return y


@pl.jit
def chip_pull_next(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    data: pld.DistributedTensor[[1, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return pull_next(x, y, data, signal)


@pl.jit.host
def host_pull_next(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
    data_buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [N], dtype=pl.INT32)
        chip_pull_next(x[r], y[r], data, signal, device=r)

@pl.jit.incore
def half_region(x: pl.Tensor[[1, C], pl.FP32], acc: pl.InOut[pld.DistributedTensor[[2, C], pl.FP32]]):
    pld.tensor.put(acc, 0, x, [1, 0])
    return acc


@pl.jit
def chip_half_region(x: pl.Tensor[[1, C], pl.FP32], acc: pl.InOut[pld.DistributedTensor[[2, C], pl.FP32]]):
    return half_region(x, acc)


@pl.jit.host
def host_half_region(x: pl.Tensor[[N, 1, C], pl.FP32]):
    buf = pld.alloc_window_buffer([2, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        chip_half_region(x[r], pld.window(buf, [2, C], dtype=pl.FP32), device=r)

@pl.jit.incore
def put_counted_rows(
    x: pl.Tensor[[16, C], pl.FP32],
    count: pl.Tensor[[1], pl.INT32],
    y: pl.Out[pl.Tensor[[N * 16, C], pl.FP32]],
    gathered: pld.DistributedTensor[[N * 16, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    rows = pl.read(count, [0])
    me = pld.rank(gathered)
    pld.tensor.put(
        dst=gathered, peer=0, src=x, dst_offsets=[me * rows, 0], src_offsets=[0, 0], shape=[rows, C],
        chunk_rows=4, chunk_cols=C,
    )
    signal = pld.tensor.barrier(signal)
    for r in pl.range(0, N * rows, 8):
        part = pl.load(gathered, [r, 0], [8, C], valid_shape=[pl.min(8, N * rows - r), C])
        y = pl.store(part, [r, 0], y)
    return y


@pl.jit
def chip_put_counted_rows(
    x: pl.Tensor[[16, C], pl.FP32],
    count: pl.Tensor[[1], pl.INT32],
    y: pl.Out[pl.Tensor[[N * 16, C], pl.FP32]],
    gathered: pld.DistributedTensor[[N * 16, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return put_counted_rows(x, count, y, gathered, signal)


@pl.jit.host
def host_put_counted_rows(x: pl.Tensor[[N, 16, C], pl.FP32], count: pl.Tensor[[N, 1], pl.INT32],
                          y: pl.Out[pl.Tensor[[N, N * 16, C], pl.FP32]]):
    gathered_buf = pld.alloc_window_buffer([N * 16, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_put_counted_rows(x[r], count[r], y[r], pld.window(gathered_buf, [N * 16, C], dtype=pl.FP32),
                              pld.window(signal_buf, [N], dtype=pl.INT32), device=r)


@pl.jit.incore
def put_then_sync(
    x: pl.Tensor[[16, C], pl.FP32],
    y: pl.Out[pl.Tensor[[16, C], pl.FP32]],
    window: pld.DistributedTensor[[N * 16, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    me = pld.rank(window)
    pld.tensor.put(dst=window, peer=0, src=x, dst_offsets=[me * 16, 0], src_offsets=[0, 0], shape=[16, C],
                   chunk_rows=4, chunk_cols=C)
    signal = pld.tensor.barrier(signal)
    y = pl.store(pl.load(x, [0, 0], [16, C]), [0, 0], y)
    return y, signal


@pl.jit.incore
def read_window(
    window: pld.DistributedTensor[[N * 16, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
    z: pl.Out[pl.Tensor[[N * 16, C], pl.FP32]],
):
    for r in pl.range(0, N * 16, 16):
        z = pl.store(pl.load(window, [r, 0], [16, C]), [r, 0], z)
    return z


@pl.jit
def chip_put_then_read(
    x: pl.Tensor[[16, C], pl.FP32],
    y: pl.Out[pl.Tensor[[16, C], pl.FP32]],
    z: pl.Out[pl.Tensor[[N * 16, C], pl.FP32]],
    window: pld.DistributedTensor[[N * 16, C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    y, signal = put_then_sync(x, y, window, signal)
    z = read_window(window, signal, z)
    return y, z


@pl.jit.host
def host_put_then_read(x: pl.Tensor[[N, 16, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 16, C], pl.FP32]],
                       z: pl.Out[pl.Tensor[[N, N * 16, C], pl.FP32]]):
    window_buf = pld.alloc_window_buffer([N * 16, C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_put_then_read(x[r], y[r], z[r], pld.window(window_buf, [N * 16, C], dtype=pl.FP32),
                           pld.window(signal_buf, [N], dtype=pl.INT32), device=r)


@pl.jit.incore
def push_doubled(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N * C], pl.FP32]],
    window: pld.DistributedTensor[[1, N * C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    me = pld.rank(window)
    doubled = pl.mul(pl.load(x, [0, 0], [1, C]), 2.0)
    pld.tensor.remote_store(doubled, window, 0, [0, me * C])
    signal = pld.tensor.barrier(signal)
    y = pl.store(pl.load(window, [0, 0], [1, N * C]), [0, 0], y)
    return y


@pl.jit
def chip_push_doubled(
    x: pl.Tensor[[1, C], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N * C], pl.FP32]],
    window: pld.DistributedTensor[[1, N * C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return push_doubled(x, y, window, signal)


@pl.jit.host
def host_push_doubled(x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, N * C], pl.FP32]]):
    window_buf = pld.alloc_window_buffer([1, N * C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_push_doubled(x[r], y[r], pld.window(window_buf, [1, N * C], dtype=pl.FP32),
                          pld.window(signal_buf, [N], dtype=pl.INT32), device=r)


'''

# The same sum over FP16 elements, whose atomic adds take another path between MPI processes.
_SUM_PROGRAM = SOURCE[SOURCE.index("@pl.jit.incore\ndef sum_into_first("):SOURCE.index("@pl.jit.incore\ndef pull_next(")]
SOURCE += "\n" + _SUM_PROGRAM.replace("pl.FP32", "pl.FP16").replace("sum_into_first", "half_sum_into_first")

kernels = kernels_fixture("distributed_comm_kernels.py", SOURCE)
N, C = 3, 32


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def world(platform: str = "a2a3sim") -> RunConfig:
    return RunConfig(platform=platform, distributed_config=DistributedConfig(device_ids=[0, 1, 2]))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rank_and_rank_count_come_from_the_window(kernels, platform):
    y = torch.full((N, 1, 2), -1, dtype=torch.int32)
    kernels.host_who(y, config=world(platform))
    assert y.view(N, 2).tolist() == [[0, 3], [10, 3], [20, 3]]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_remote_stores_then_a_barrier_gather_every_rank_row(kernels, platform):
    torch.manual_seed(5)
    x = torch.randn(N, 1, C)
    y = torch.zeros(N, N, C)
    kernels.host_gather(x, y, config=world(platform))
    for r in range(N):
        torch.testing.assert_close(y[r], x.view(N, C), rtol=0, atol=0)


def test_notify_and_wait_order_a_handoff_around_the_ring(kernels):
    torch.manual_seed(6)
    x = torch.randn(N, 1, C)
    y = torch.zeros(N, 1, C)
    compiled = kernels.host_handoff.compile(x, y, config=world())
    for _ in range(2):  # each call starts from zeroed windows: the flags do not carry over
        y.zero_()
        compiled(x, y)
        torch.testing.assert_close(y, torch.roll(x * 2, shifts=1, dims=0), rtol=0, atol=0)


def test_barrier_can_be_reused_and_leaves_its_signal_as_found(kernels):
    torch.manual_seed(7)
    x = torch.randn(N, 1, C)
    y = torch.zeros(N, 2, C)
    cells = torch.full((N, 1, N), -1, dtype=torch.int32)
    kernels.host_two_rounds(x, y, cells, config=world())
    nxt = torch.roll(x, shifts=-1, dims=0)
    torch.testing.assert_close(y[:, 0:1], nxt, rtol=0, atol=0)
    torch.testing.assert_close(y[:, 1:2], nxt * nxt, rtol=0, atol=0)
    assert not cells.any()


def test_a_wait_nobody_answers_times_out_naming_rank_signal_and_value(kernels, monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_COMM_TIMEOUT_S", "0.5")
    y = torch.zeros(N, 1, 2, dtype=torch.int32)
    with pytest.raises(DistributedRunError) as error:
        kernels.host_lonely_wait(y, config=world())
    message = str(error.value)
    assert error.value.rank == 0
    for r in range(N):
        assert (f"rank {r} (device {r}): " in message) and (f"rank {r} waited 0.5 s for signal 'flag'[0, 0] >= 3, "
                                                            "but it holds 0: no peer notified it") in message
    assert f"distributed_comm_kernels.py:{line_of('pld.system.wait(flag, offsets=[0, 0], expected=3')}" in message


def test_comm_ops_on_a_tensor_outside_the_windows_are_refused(kernels):
    y = torch.zeros(N, 1, 2, dtype=torch.int32)
    w = torch.zeros(N, N, 1, dtype=torch.int32)
    with pytest.raises(DistributedRunError, match=r"tensor 'w'|'w' is not in a window of a distributed program"):
        kernels.host_not_a_window(y, w, config=world())


def test_a_peer_outside_the_domain_is_refused(kernels):
    with pytest.raises(DistributedRunError, match=r"peer 7 is not a rank of the communication domain \(ranks 0 to 2\)"):
        kernels.host_far_peer(torch.zeros(N, 1, C), config=world())


def test_a_float_signal_is_a_type_error_at_the_wait(kernels):
    y = torch.zeros(N, 1, 2, dtype=torch.int32)
    with pytest.raises(ParserError) as error:
        kernels.host_float_signal(y, config=world())
    assert error.value.message == "pld.system.wait: the signal is a window of INT32 cells, got pl.Tensor[[1, 1], pl.FP32]"
    assert error.value.location.endswith(
        f"distributed_comm_kernels.py:{line_of('pld.system.wait(flag, offsets=[0, 0], expected=1')}:5")


def test_put_with_atomic_add_sums_every_rank_into_the_first(kernels):
    torch.manual_seed(8)
    x = torch.randn(N, 1, C)
    y = torch.full((N, 1, C), float("nan"))
    kernels.host_sum_into_first(x, y, config=world())
    torch.testing.assert_close(y[0], x.sum(dim=0), rtol=1e-6, atol=1e-6)
    assert not y[1:].any()


def test_put_with_atomic_add_sums_fp16_elements_of_every_rank(kernels):
    x = torch.arange(N * C, dtype=torch.float16).reshape(N, 1, C) - 40  # small integers: exact sums
    y = torch.full((N, 1, C), float("nan"), dtype=torch.float16)
    kernels.host_half_sum_into_first(x, y, config=world())
    assert torch.equal(y[0], x.sum(dim=0))
    assert not y[1:].any()


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_get_reads_the_next_rank_window_into_a_local_tensor(kernels, platform):
    torch.manual_seed(9)
    x = torch.randn(N, 1, C)
    y = torch.zeros(N, 1, C)
    kernels.host_pull_next(x, y, config=world(platform))
    torch.testing.assert_close(y, torch.roll(x, shifts=-1, dims=0), rtol=0, atol=0)


def test_the_lowered_chip_program_prints_the_comm_ops_and_parses_back(kernels, write_dsl):
    x, y = torch.zeros(1, C), torch.zeros(1, C)
    box, flag = torch.zeros(1, C), torch.zeros(1, 1, dtype=torch.int32)
    lowered = kernels.chip_handoff.lower(x, y, box, flag)
    text = str(lowered)
    for line in (
        "me: pl.Scalar[pl.INT32] = pl.comm.rank(box)",
        "n: pl.Scalar[pl.INT32] = pl.comm.nranks(box)",
        "pl.comm.remote_store(doubled, box, nxt, [0, 0])",
        "pl.comm.notify(flag, nxt, [0, 0], me + 5, op=pld.NotifyOp.Set)",
        "pl.comm.wait(flag, [0, 0], prv + 5, cmp=pld.WaitCmp.Eq)",
    ):
        assert line in text, text
    module, _ = write_dsl("printed_comm", text)
    assert str(getattr(module, lowered.name)) == text


def test_put_with_part_of_a_region_is_refused_at_the_call(kernels):
    with pytest.raises(ParserError) as error:
        kernels.host_half_region(torch.zeros(N, 1, C), config=world())
    assert error.value.message == "'pld.tensor.put' takes dst_offsets, src_offsets and shape together, or none of them"
    assert error.value.location.endswith(f"distributed_comm_kernels.py:{line_of('pld.tensor.put(acc, 0, x, [1, 0])')}:5")



SELF_PUT = """
import pypto.language as pl
import pypto.language.distributed as pld


@pl.jit
def chip_self_put(x: pl.Tensor[[1, 64], pl.FP32], box: pld.DistributedTensor[[1, 64], pl.FP32],
                  y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="publish"):
        me = pld.rank(box)
        pld.tensor.put(box, me, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume"):
        y = pl.store(pl.add(pl.load(box, [0, 0], [1, 64]), 1.0), [0, 0], y)
    return y
"""


def test_a_put_writes_its_destination_window_so_later_readers_wait_for_it(write_kernel):
    """A put to this rank itself (lm_head puts to every member of its group) is a local write the
    runtime must order later readers of the window after: the scope's window parameter is written."""
    module, _ = write_kernel("self_put", SELF_PUT)
    lowered = str(module.chip_self_put.lower(torch.zeros(1, 64), torch.zeros(1, 64), torch.zeros(1, 64)))
    publish = lowered.split("def publish")[1].split("\n")[0]
    assert "box: pl.InOut[pl.Tensor[[1, 64], pl.FP32]]" in publish, publish


def test_a_put_of_rows_counted_at_run_time_goes_in_chunks(kernels):
    # 10 rows in chunks of 4: two whole chunks and a cut one, from every rank into rank 0's window.
    torch.manual_seed(11)
    x = torch.randn(N, 16, C)
    count = torch.full((N, 1), 10, dtype=torch.int32)
    y = torch.zeros(N, N * 16, C)
    kernels.host_put_counted_rows(x, count, y, config=world())
    expected = torch.cat([x[r, :10] for r in range(N)])
    torch.testing.assert_close(y[0, : N * 10], expected)


def test_a_kernel_returning_its_signal_window_binds_two_names(kernels):
    # `y, signal = put_then_sync(...)`: the window the kernel returns after its barrier is written by it
    # (InOut), so the next kernel, which reads the window, runs after it. 16 rows in chunks of 4.
    torch.manual_seed(12)
    x = torch.randn(N, 16, C)
    y = torch.zeros(N, 16, C)
    z = torch.zeros(N, N * 16, C)
    kernels.host_put_then_read(x, y, z, config=world())
    torch.testing.assert_close(y, x)
    torch.testing.assert_close(z[0], x.reshape(N * 16, C))


def test_tensor_remote_store_in_a_kernel_pushes_a_computed_value(kernels):
    # pld.tensor.remote_store in a kernel is the tile form: the computed value goes to the peer's window.
    torch.manual_seed(13)
    x = torch.randn(N, 1, C)
    y = torch.zeros(N, 1, N * C)
    kernels.host_push_doubled(x, y, config=world())
    torch.testing.assert_close(y[0, 0], (x * 2).reshape(N * C))
