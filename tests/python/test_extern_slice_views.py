"""An orchestration slice passed to a @pl.jit.extern kernel (`w = pl.slice(ws, [1, 64], [i, 0])`, then
`out = kernel(out, w, i)`) is a view of its window, as for an inline helper or a program's function:
the kernel is specialised on the view's type and its descriptor's start_offset points at the row.
pypto-lib's decode_fwd.py passes its per-layer norm weights to the CCE attention kernel this way.
Inside `with pl.spmd(...)` the view is defined before the launch, which stays one kernel call."""

import pypto.language as pl
import torch


@pl.jit.extern(core_type="aiv", source="kernels/views/scale_row.cpp")
def scale_row(out: pl.InOut[pl.Tensor], w: pl.Tensor, row: pl.Scalar[pl.INDEX]) -> pl.Tensor: ...


@pl.jit
def rows_in_spmd(ws: pl.Tensor[[3, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]):
    for i in pl.range(2):
        w = pl.slice(ws, [1, 64], [i + 1, 0])
        with pl.spmd(1, name_hint="scale"):
            out = scale_row(out, w, i)
    return out


@pl.jit
def row_called_directly(ws: pl.Tensor[[3, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]):
    w = pl.slice(ws, [1, 64], [2, 0])
    out = scale_row(out, w, 1)
    return out


def test_a_slice_passed_in_a_spmd_scope_is_the_row_it_names():
    ws = torch.randn(3, 64)
    out = torch.zeros(2, 64)
    rows_in_spmd(ws, out)
    torch.testing.assert_close(out, 2 * ws[1:3], rtol=0, atol=0)


def test_a_slice_passed_to_a_direct_call_is_the_row_it_names():
    ws = torch.randn(3, 64)
    out = torch.zeros(2, 64)
    row_called_directly(ws, out)
    torch.testing.assert_close(out[1], 2 * ws[2], rtol=0, atol=0)
