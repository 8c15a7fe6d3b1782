"""An if whose branches leave a name as integer scalars of different dtypes (an INT32 read in one,
an INDEX sum with a Python int in the other) merges it as the wider dtype, as upstream promotes
integer operands. Results are compared with torch."""

import torch

KERNELS = '''
import pypto.language as pl

BASE = 8


@pl.jit
def pick(idx: pl.Tensor[[16], pl.INT32], x: pl.Tensor[[32, 16], pl.FP32],
         out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(16):
            row = pl.read(idx, [r])
            src = row
            if row >= BASE:
                src = BASE + row
            out[r : r + 1, :] = x[src : src + 1, :]
    return out
'''


def test_an_int32_and_an_index_merge_as_index_after_an_if(write_kernel):
    kernels, _ = write_kernel("if_integer_merge", KERNELS)
    idx = torch.tensor([0, 9, 3, 12, 7, 8, 1, 15, 2, 10, 4, 11, 5, 13, 6, 14], dtype=torch.int32)
    x, out = torch.randn(32, 16), torch.zeros(16, 16)
    kernels.pick(idx, x, out)
    src = torch.where(idx >= 8, idx + 8, idx).long()
    torch.testing.assert_close(out, x[src])
