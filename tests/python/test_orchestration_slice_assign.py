"""Slice assignments in orchestration code (`t[a:b, :] = src`), upstream's `t = tensor.assemble(t, src,
offsets)`: a copy of src into the window, or nothing when src is the slice of t at that window that a
call wrote through (in either spelling); and an orchestration slice returned by the inline function it was passed to stays
that slice, so a loop rebinding it carries nothing. Results are compared with torch."""

import torch

KERNELS = '''
import pypto.language as pl


@pl.jit.inline
def _doubled_into(src: pl.Tensor[[16, 32], pl.FP32], dst: pl.Tensor[[16, 32], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        dst[0:16, :] = pl.mul(src[0:16, :], 2.0)
    return dst


@pl.jit
def written_back(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for i in pl.range(4):
        r0 = i * 16
        part = pl.slice(out, [16, 32], [r0, 0])
        part = _doubled_into(pl.slice(x, [16, 32], [r0, 0]), part)
        out[r0 : r0 + 16, 0:32] = part
    return out


@pl.jit
def doubled_back(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    for i in pl.range(4):
        r0 = i * 16
        part = pl.slice(out, [16, 32], [r0, 0])
        part = _doubled_into(pl.slice(x, [16, 32], [r0, 0]), part)
        out = pl.assemble(out, part, [r0, 0])
    return out


@pl.jit
def copied(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[64, 32], pl.FP32],
           out: pl.InOut[pl.Tensor[[3, 64, 32], pl.FP32]]):
    for b in pl.range(3):
        out[b, 16:32, :] = x
    part = pl.slice(y, [16, 32], [48, 0])
    out[0, 0:16, :] = part
    return out


@pl.jit.inline
def _accumulate(state: pl.Tensor[[2, 8, 16], pl.FP32], x: pl.Tensor[[8, 16], pl.FP32]):
    flat = pl.reshape(state, [16, 16])
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(flat, [0, 0], [8, 16]), pl.load(x, [0, 0], [8, 16])), [0, 0], flat)
    return state


@pl.jit
def accumulated(x: pl.Tensor[[8, 16], pl.FP32], state: pl.InOut[pl.Tensor[[4, 8, 16], pl.FP32]]):
    for part in pl.range(2):
        state_part = pl.slice(state, [2, 8, 16], [part * 2, 0, 0])
        for step in pl.range(3):
            state_part = _accumulate(state_part, x)
    return state
'''


def test_a_slice_written_through_and_assigned_back_is_not_copied(write_kernel):
    kernels, _ = write_kernel("slice_written_back", KERNELS)
    x, out = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.written_back(x, out)
    torch.testing.assert_close(out, 2 * x)
    lowered = kernels.written_back.lower(x, out)
    assert not any("assemble" in function.name for function in lowered.functions.values())


def test_a_slice_written_through_and_assembled_back_is_not_copied(write_kernel):
    kernels, _ = write_kernel("slice_assembled_back", KERNELS)
    x, out = torch.randn(64, 32), torch.zeros(64, 32)
    kernels.doubled_back(x, out)
    torch.testing.assert_close(out, 2 * x)
    lowered = kernels.doubled_back.lower(x, out)
    assert not any("assemble" in function.name for function in lowered.functions.values())


def test_a_tensor_assigned_into_a_slice_in_orchestration_is_copied(write_kernel):
    kernels, _ = write_kernel("slice_copied", KERNELS)
    x, y, out = torch.randn(16, 32), torch.randn(64, 32), torch.zeros(3, 64, 32)
    kernels.copied(x, y, out)
    expected = torch.zeros(3, 64, 32)
    expected[:, 16:32] = x
    expected[0, 0:16] = y[48:64]
    torch.testing.assert_close(out, expected)


def test_an_inline_returning_its_slice_parameter_leaves_the_slice(write_kernel):
    kernels, _ = write_kernel("slice_returned", KERNELS)
    x, state = torch.randn(8, 16), torch.zeros(4, 8, 16)
    kernels.accumulated(x, state)
    expected = torch.zeros(4, 8, 16)
    expected[0] = 3 * x
    expected[2] = 3 * x
    torch.testing.assert_close(state, expected)
