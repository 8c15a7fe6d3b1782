"""`pl.transpose` of a tensor in orchestration code: a view with two axes and their strides swapped (the
runtime's transpose(), no data moves), which kernels read through those strides. Upstream's system
tests pass such views to an add kernel and slice columns of a tensor through one. Checked against
torch, in the generated C++, and the error for axes outside the tensor."""

import pytest
import torch

import pypto.ir
import pypto.language as pl
import pypto.runtime


@pl.function(type=pl.FunctionType.InCore)
def add(a: pl.Tensor[[32, 16], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32],
        c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
    c = pl.store(pl.add(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [32, 16])), [0, 0], c)
    return c


@pl.program
class TransposedAdd:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        a_t = pl.transpose(a, 0, 1)
        b_t: pl.Tensor[[32, 16], pl.FP32] = pl.transpose(b, axis1=-1, axis2=-2)
        c = add(a_t, b_t, c)
        return c


def test_a_kernel_reads_a_transposed_view_through_its_strides():
    a, b, c = torch.randn(16, 32), torch.randn(16, 32), torch.zeros(32, 16)
    pypto.runtime.run(TransposedAdd, a, b, c)
    torch.testing.assert_close(c, (a + b).T)


def test_a_transpose_is_the_runtimes_transpose_of_the_tensor():
    source = pypto.ir.compile(TransposedAdd, platform="a2a3sim")._artifacts.orchestration_source
    assert "    const ChipTensor a_t = ext_a.transpose(0, 1);\n" in source, source
    assert "    const ChipTensor b_t = ext_b.transpose(1, 0);\n" in source, source


# Column h of x, read as row h of its transpose inside a pl.at scope (upstream's test_trans, whose
# entry has no return annotation: it returns what its body returns).
@pl.program
class ColumnsThroughTranspose:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], out: pl.Out[pl.Tensor[[16, 4], pl.FP32]]):
        xt = pl.transpose(x, 0, 1)
        for h in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="column"):
                col = pl.reshape(pl.slice(xt, [1, 16], [h, 0]), [16, 1])
                out = pl.assemble(out, col, [0, h])
        return out


def test_slices_of_a_transposed_view_are_columns_of_the_tensor():
    x, out = torch.randn(16, 8), torch.zeros(16, 4)
    pypto.runtime.run(ColumnsThroughTranspose, x, out)
    torch.testing.assert_close(out, x[:, :4])


# A transpose of a slice taken at a loop offset is made anew in each iteration.
@pl.program
class TransposedBlocks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(2):
            block = pl.slice(x, [16, 32], [i * 16, 0])
            block_t = pl.transpose(block, 0, 1)
            other = pl.slice(y, [32, 16], [0, i * 16])
            window = pl.slice(out, [32, 16], [0, 0])
            window = add(block_t, other, window)
        return out


def test_a_transpose_of_a_slice_at_a_loop_offset_follows_the_iteration():
    x, y, out = torch.randn(32, 32), torch.randn(32, 32), torch.zeros(32, 16)
    pypto.runtime.run(TransposedBlocks, x, y, out)
    torch.testing.assert_close(out, x[16:32, :].T + y[:, 16:32])


def test_a_transpose_names_axes_the_tensor_has():
    with pytest.raises(Exception) as error:
        @pl.program
        class BadAxes:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                     c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
                a_t = pl.transpose(a, 0, 2)
                c = add(a_t, a_t, c)
                return c
    message = str(error.value)
    assert "a transpose of pl.Tensor[[16, 32], pl.FP32] swaps two different axes in [-2, 2), got 0 and 2" in message
    assert "test_orchestration_transpose.py:92:23" in message
