"""pl.paged_gather with indices whose number is known only at run time: the kernel, compiled once,
gathers as many rows as the call passes indices (at most max_indices), reading no index past them,
as upstream's loop runs to the indices' length. The rows past that count are not written (upstream
leaves them as the tile held them), so only the gathered rows are compared with torch."""

import pytest
import torch

from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl

N = pl.dynamic("N")


@pl.jit
def gather_rows(src: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[N], pl.INT32], bt: pl.Tensor[[8], pl.INT32],
                out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=pl.MemorySpace.Vec)
        out = pl.assemble(out, rows, [0, 0])
    return out


@pl.jit
def gather_into_matmul(src: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[1, N], pl.INT32],
                       bt: pl.Tensor[[8], pl.INT32], eye: pl.Tensor[[16, 16], pl.FP16],
                       out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=pl.MemorySpace.Mat,
                               is_b_matrix=True)
        out = pl.assemble(out, pl.matmul(eye, rows, out_dtype=pl.FP32), [0, 0])
    return out
'''

kernels = kernels_fixture("paged_gather_run_time_count.py", KERNELS)


def pool_and_table():
    torch.manual_seed(1)
    return torch.randn(64, 32).to(torch.float16), torch.randperm(8).to(torch.int32)


def logical_rows(count):
    """`count` logical rows spread over the pages, none repeated."""
    return torch.tensor([(i * 11 + 5) % 64 for i in range(count)], dtype=torch.int32)


def expected(src, idx, bt):
    pages = bt[idx.long() // 8].long()
    return src[pages * 8 + idx.long() % 8]


def test_one_compile_gathers_as_many_rows_as_each_call_passes_indices(kernels):
    src, bt = pool_and_table()
    kernels.gather_rows.clear_cache()
    for count in (12, 5):
        idx = logical_rows(count)
        out = torch.zeros(16, 32, dtype=torch.float16)
        kernels.gather_rows(src, idx, bt, out)
        assert torch.equal(out[:count], expected(src, idx, bt)), count
    assert len(kernels.gather_rows._cache) == 1


def test_a_mat_gather_of_fewer_indices_feeds_the_matmul_its_rows(kernels):
    src, bt = pool_and_table()
    eye = torch.eye(16, dtype=torch.float16)
    kernels.gather_into_matmul.clear_cache()
    for count in (16, 9):
        idx = logical_rows(count)
        out = torch.zeros(16, 32)
        kernels.gather_into_matmul(src, idx.reshape(1, count), bt, eye, out)
        assert torch.equal(out[:count], expected(src, idx, bt).float()), count
    assert len(kernels.gather_into_matmul._cache) == 1


def test_more_indices_than_max_indices_fail_at_the_gather_saying_the_fix(kernels):
    src, bt = pool_and_table()
    with pytest.raises(RuntimeError) as failure:
        kernels.gather_rows(src, logical_rows(17), bt, torch.zeros(16, 32, dtype=torch.float16))
    message = str(failure.value)
    assert "`rows = pl.tile.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=pl.Mem.Vec)` at " \
        in message
    assert message.endswith("paged_gather_run_time_count.py:11:16: tensor 'idx' (args[1]) holds 17 indices, more "
                            "than the max_indices=16 rows of the tile; raise max_indices or pass fewer indices")
