"""A @pl.jit entry is specialised on the tensors it is called with: their extents replace the integers
of its annotations, as upstream's JIT reads each extent off the tensor (the annotation's stand in only
for compile() without tensors). pypto-lib's paged_attention_cce.py relies on it: its entry is annotated
[BATCH_PAD, 40, 128] and its driver calls it at batch 1 by default. The rank and the dtype must still
agree, and an extern's declaration stays a fixed contract (test_jit_extern.py)."""

import pytest
import torch

from pypto.language.parser import ParserTypeError

KERNELS = """
import pypto.language as pl

ROWS = 16


@pl.jit
def double_rows(x: pl.Tensor[[ROWS, 64], pl.FP32],
                y: pl.Out[pl.Tensor[[ROWS, 64], pl.FP32]]) -> pl.Tensor[[ROWS, 64], pl.FP32]:
    rows = x.shape[0]
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:rows, :] = pl.add(pl.mul(x[0:rows, :], 2.0), 1.0)
    return y
"""


@pytest.fixture
def kernels(write_kernel):
    module, path = write_kernel("specialised_kernels", KERNELS)
    return module, path


@pytest.mark.parametrize("rows", [1, 8, 16])
def test_the_entry_runs_on_the_rows_passed_not_the_annotated_ones(kernels, rows):
    module, _ = kernels
    x = torch.randn(rows, 64)
    y = torch.zeros(rows, 64)
    module.double_rows(x, y)
    torch.testing.assert_close(y, x * 2 + 1)


def test_a_dtype_that_contradicts_the_annotation_is_an_error_at_it(kernels):
    module, path = kernels
    with pytest.raises(ParserTypeError) as info:
        module.double_rows(torch.zeros(16, 64, dtype=torch.float16), torch.zeros(16, 64))
    assert info.value.message == ("parameter 'x' is annotated pl.Tensor[[16, 64], pl.FP32] but was passed a "
                                  "tensor of shape [16, 64] and dtype FP16")
    assert info.value.location == f"{path}:8:20"


def test_a_rank_that_contradicts_the_annotation_is_an_error_at_it(kernels):
    module, path = kernels
    with pytest.raises(ParserTypeError) as info:
        module.double_rows(torch.zeros(16, 64), torch.zeros(16, 64, 1))
    assert info.value.message == ("parameter 'y' is annotated pl.Tensor[[16, 64], pl.FP32] but was passed a "
                                  "tensor of shape [16, 64, 1] and dtype FP32")
    assert info.value.location == f"{path}:9:27"
