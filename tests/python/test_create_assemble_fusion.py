"""A tensor created in orchestration code, filled by kernels and then assembled whole into a window of
another (FuseCreateAssembleToSlice): it becomes that window, so no copy kernel runs, checked against
torch and in the lowered program; one a kernel reads before the assemble keeps its copy."""

import torch

import pypto.language as pl


@pl.jit
def double_rows(x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[4, 16, 128], pl.FP32]]):
    out_flat = pl.reshape(out, [64, 128])
    for i in pl.range(4):
        tmp = pl.create_tensor([16, 128], dtype=pl.FP32)
        with pl.spmd(2, name_hint="double"):
            b = pl.tile.get_block_idx()
            tmp[:, b * 64 : b * 64 + 64] = pl.mul(x[i * 16 : i * 16 + 16, b * 64 : b * 64 + 64], 2.0)
        out_flat = pl.assemble(out_flat, tmp, [i * 16, 0])
    return out


@pl.jit
def double_then_bump(x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]):
    for i in pl.range(4):
        tmp = pl.create_tensor([16, 128], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            tmp[:, :] = pl.mul(x[i * 16 : i * 16 + 16, :], 2.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):  # reads tmp: the copy stays
            tmp[:, :] = pl.add(tmp[:, :], 1.0)
        out = pl.assemble(out, tmp, [i * 16, 0])
    return out


def test_a_filled_tensor_assembled_whole_is_the_window_itself():
    x, out = torch.randn(64, 128), torch.zeros(4, 16, 128)
    lowered = str(double_rows.lower(x, out))
    assert "= pl.tensor.slice(out_flat, [16, 128], [i * 16, 0])" in lowered, lowered
    assert "def assemble" not in lowered, lowered
    double_rows(x, out)
    torch.testing.assert_close(out.reshape(64, 128), x * 2)


def test_a_tensor_read_before_the_assemble_keeps_its_copy():
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    lowered = str(double_then_bump.lower(x, out))
    assert "def assemble" in lowered, lowered
    double_then_bump(x, out)
    torch.testing.assert_close(out, x * 2 + 1)
