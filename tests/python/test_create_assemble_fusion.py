"""A tensor created in orchestration code, filled by kernels and then assembled whole into a window of
another (FuseCreateAssembleToSlice): it becomes that window, so no copy kernel runs, checked against
torch and in the lowered program; one a kernel reads before the assemble keeps its copy. A tensor with
a starting value (init_value) fuses too, and what the kernels leave unwritten still holds that value:
a fill kernel sets it in the window first, in UB-sized blocks when the window is bigger than UB. A
tensor only read after the assemble fuses as well (the window holds its values); one written again
keeps its copy."""

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


@pl.jit
def double_first_rows(x: pl.Tensor[[256, 1024], pl.FP32], out: pl.Out[pl.Tensor[[2, 128, 4, 256], pl.FP32]]):
    out_flat = pl.reshape(out, [256, 4, 256])
    for i in pl.range(2):
        # 512 KiB: its copy kernel would not fit in UB. The kernel writes only its first 64 rows.
        tmp = pl.create_tensor([128, 4, 256], dtype=pl.FP32, init_value=-2.0)
        tmp_flat = pl.reshape(tmp, [128, 1024])
        with pl.spmd(4, name_hint="double"):
            b = pl.tile.get_block_idx()
            rows = i * 128 + b * 16
            tmp_flat[b * 16 : b * 16 + 16, :] = pl.mul(x[rows : rows + 16, :], 2.0)
        out_flat = pl.assemble(out_flat, tmp, [i * 128, 0, 0])
    return out


@pl.jit
def bump_first_rows(x: pl.Tensor[[16, 4], pl.INT32], out: pl.Out[pl.Tensor[[64, 4], pl.INT32]]):
    for i in pl.range(2):
        tmp = pl.create_tensor([32, 4], dtype=pl.INT32, init_value=-1)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):
            tmp[0:8, :] = pl.add(x[i * 8 : i * 8 + 8, :], 1)
        out = pl.assemble(out, tmp, [i * 32, 0])
    return out


@pl.jit
def double_then_peek(x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
                     firsts: pl.Out[pl.Tensor[[4, 128], pl.FP32]]):
    for i in pl.range(4):
        tmp = pl.create_tensor([16, 128], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            tmp[:, :] = pl.mul(x[i * 16 : i * 16 + 16, :], 2.0)
        out = pl.assemble(out, tmp, [i * 16, 0])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="peek"):  # reads tmp after: the window holds it
            firsts[i : i + 1, :] = pl.add(tmp[0:1, :], 1.0)
    return out


@pl.jit
def double_then_triple(x: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
                       y: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
    for i in pl.range(4):
        tmp = pl.create_tensor([16, 128], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            tmp[:, :] = pl.mul(x[i * 16 : i * 16 + 16, :], 2.0)
        out = pl.assemble(out, tmp, [i * 16, 0])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="triple"):  # writes tmp after: the copy stays
            tmp[:, :] = pl.mul(x[i * 16 : i * 16 + 16, :], 3.0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="keep"):
            y[:, :] = pl.add(tmp[:, :], 0.0)
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


def test_a_starting_value_survives_in_the_part_no_kernel_writes():
    x, out = torch.randn(256, 1024), torch.zeros(2, 128, 4, 256)
    lowered = str(double_first_rows.lower(x, out))
    assert "= pl.tensor.slice(out_flat, [128, 4, 256], [i * 128, 0, 0])" in lowered, lowered
    assert "def assemble" not in lowered, lowered
    assert "pl.tile.full([4, 256], dtype=pl.FP32, value=-2.0)" in lowered, lowered
    double_first_rows(x, out)
    expected = torch.full((2, 128, 1024), -2.0)
    expected[:, 0:64] = (x * 2).reshape(2, 128, 1024)[:, 0:64]
    torch.testing.assert_close(out.reshape(2, 128, 1024), expected)


def test_an_integer_starting_value_survives_in_narrow_rows():
    x, out = torch.randint(-5, 5, (16, 4), dtype=torch.int32), torch.zeros(64, 4, dtype=torch.int32)
    assert "def assemble" not in str(bump_first_rows.lower(x, out))
    bump_first_rows(x, out)
    expected = torch.full((64, 4), -1, dtype=torch.int32)
    expected[0:8], expected[32:40] = x[0:8] + 1, x[8:16] + 1
    torch.testing.assert_close(out, expected)


def test_a_tensor_only_read_after_the_assemble_is_the_window_itself():
    x, out, firsts = torch.randn(64, 128), torch.zeros(64, 128), torch.zeros(4, 128)
    lowered = str(double_then_peek.lower(x, out, firsts))
    assert "= pl.tensor.slice(out, [16, 128], [i * 16, 0])" in lowered, lowered
    assert "def assemble" not in lowered, lowered
    double_then_peek(x, out, firsts)
    torch.testing.assert_close(out, x * 2)
    torch.testing.assert_close(firsts, x[0::16] * 2 + 1)


def test_a_tensor_written_after_the_assemble_keeps_its_copy():
    x, out, y = torch.randn(64, 128), torch.zeros(64, 128), torch.zeros(16, 128)
    assert "def assemble" in str(double_then_triple.lower(x, out, y))
    double_then_triple(x, out, y)
    torch.testing.assert_close(out, x * 2)
    torch.testing.assert_close(y, x[48:64] * 3)
