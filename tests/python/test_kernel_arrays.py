"""pl.array inside kernels on the simulator: element reads and writes at constant indices (or a
pl.unroll loop's variable) and at indices computed at run time, arrays merged by an if and carried by
a loop, against torch."""

import pytest
import torch

KERNELS = """
import pypto.language as pl


@pl.jit
def gather_rows(index: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[16, 32], pl.FP32],
                dst: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        index_tile = pl.load(index, [0, 0], [1, 8])
        rows = pl.array.create(4, pl.INT32)
        for k in pl.unroll(4):
            rows[k] = pl.tile.read(index_tile, [0, 2 * k])
        for k in pl.unroll(4):
            r = pl.cast(rows[3 - k], pl.INDEX)
            pl.store(pl.load(src, [r, 0], [1, 32]), [k, 0], dst)
    return dst


@pl.jit
def pick_row(flag: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[16, 32], pl.FP32],
             dst: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.tile.read(pl.load(flag, [0, 0], [1, 8]), [0, 0])
        choice = pl.array.create(2, pl.INT32)
        if c > 0:
            choice[1] = c
        else:
            choice[1] = 7
        r = pl.cast(choice[1], pl.INDEX)
        pl.store(pl.load(src, [r, 0], [1, 32]), [0, 0], dst)
    return dst


@pl.jit
def count_up(src: pl.Tensor[[16, 32], pl.FP32], dst: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        counter = pl.array.create(2, pl.INT32)
        for i in pl.range(5):
            counter[0] = counter[0] + 2
        r = pl.cast(counter[0], pl.INDEX)
        pl.store(pl.load(src, [r, 0], [1, 32]), [0, 0], dst)
    return dst


@pl.jit
def histogram(ids: pl.Tensor[[1, 8], pl.INT32], src: pl.Tensor[[16, 32], pl.FP32],
              dst: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    # What a MoE dispatch counts: routes per expert, at indices the data chooses.
    with pl.at(level=pl.Level.CORE_GROUP):
        id_tile = pl.load(ids, [0, 0], [1, 8])
        counts = pl.array.create(4, pl.INT32)
        for t in pl.range(8):
            e = pl.tile.read(id_tile, [0, t])
            counts[e] = counts[e] + 1
        for k in pl.range(4):
            r = pl.cast(counts[k], pl.INDEX)
            pl.store(pl.load(src, [r, 0], [1, 32]), [k, 0], dst)
    return dst
"""


@pytest.fixture
def kernels(write_kernel):
    module, path = write_kernel("kernel_arrays", KERNELS)
    return module, path


def test_elements_written_and_read_in_unrolled_loops(kernels):
    module, _ = kernels
    index = torch.tensor([[3, 0, 9, 0, 1, 0, 14, 0]], dtype=torch.int32)
    src, dst = torch.randn(16, 32), torch.zeros(4, 32)
    module.gather_rows(index, src, dst)
    torch.testing.assert_close(dst, src[[14, 1, 9, 3]])


@pytest.mark.parametrize("flag, row", [(5, 5), (-2, 7)])
def test_an_array_each_branch_of_an_if_updates(kernels, flag, row):
    module, _ = kernels
    src, dst = torch.randn(16, 32), torch.zeros(1, 32)
    module.pick_row(torch.full((1, 8), flag, dtype=torch.int32), src, dst)
    torch.testing.assert_close(dst, src[row:row + 1])


def test_an_array_a_loop_carries(kernels):
    module, _ = kernels
    src, dst = torch.randn(16, 32), torch.zeros(1, 32)
    module.count_up(src, dst)
    torch.testing.assert_close(dst, src[10:11])


def test_indices_computed_at_run_time_read_and_write_the_elements(kernels):
    module, _ = kernels
    ids = torch.tensor([[2, 0, 2, 3, 2, 0, 2, 2]], dtype=torch.int32)
    src, dst = torch.randn(16, 32), torch.zeros(4, 32)
    module.histogram(ids, src, dst)
    counts = torch.bincount(ids[0].long(), minlength=4)
    torch.testing.assert_close(dst, src[counts])


def test_a_run_time_index_outside_the_array_stops_the_kernel_with_the_index(kernels):
    module, path = kernels
    with pytest.raises(Exception) as raised:
        module.histogram(torch.tensor([[1, 0, 4, 3, 2, 0, 1, 1]], dtype=torch.int32), torch.randn(16, 32),
                         torch.zeros(4, 32))
    message = str(raised.value)
    assert "index 4 is outside the 4 elements of the array in `counts[e]`" in message, message
    assert f"{path}:54:25" in message, message
