"""A slice taken in orchestration code and assigned into inside a kernel writes its tensor.

pypto-lib's deepseek_v4_pro/expert_routed quantises a tile of rows into `h_tile_i8 = h_i8[r : r + 16]`
window by window inside a kernel scope; the slice is a view of `h_i8` there, so every window written
lands in `h_i8`, which later kernels read.
"""

import pytest
import torch

import pypto.language as pl

ROWS, COLS, TILE = 64, 256, 16


@pl.jit
def doubled_then_incremented(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    h = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
    scale = pl.create_tensor([ROWS, 1], dtype=pl.FP32)
    for t in pl.parallel(ROWS // TILE):
        h_tile = h[t * TILE : t * TILE + TILE]
        scale_tile = scale[t * TILE : t * TILE + TILE]
        with pl.at(level=pl.Level.CORE_GROUP):
            scale_tile[:, :] = pl.full([TILE, 1], dtype=pl.FP32, value=3.0)
            for k in pl.pipeline(0, COLS, 128, stage=2):
                h_tile[:, k : k + 128] = pl.mul(x[t * TILE : t * TILE + TILE, k : k + 128], 2.0)
    for t in pl.parallel(ROWS // TILE):
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.row_expand_mul(h[t * TILE : t * TILE + TILE, :], scale[t * TILE : t * TILE + TILE, :])
            y[t * TILE : t * TILE + TILE, :] = pl.add(rows, 1.0)
    return y


def test_windows_written_into_an_orchestration_slice_reach_its_tensor():
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    doubled_then_incremented(x, y)
    torch.testing.assert_close(y, x * 6 + 1)


def test_the_kernel_stores_into_the_tensor_at_the_slice_offsets():
    x, y = torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)
    text = str(doubled_then_incremented.lower(x, y))
    assert "pl.tile.store(__tmp_v0, [t * 16, 0], scale)" in text, text
    assert "pl.tile.store(__tmp_v2, [t * 16, k], h)" in text, text
    assert "init_values" not in text.split("def doubled_then_incremented")[0], "no tile is carried for the slice"


def test_reading_a_slice_after_writing_through_it_is_refused(write_kernel):
    with pytest.raises(Exception) as info:
        module, path = write_kernel("stale_slice", """
import pypto.language as pl

@pl.jit
def stale(x: pl.Tensor[[16, 128], pl.FP32], y: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
    h = pl.create_tensor([32, 128], dtype=pl.FP32)
    h_tile = h[0:16]
    with pl.at(level=pl.Level.CORE_GROUP):
        h_tile[:, 0:64] = pl.mul(x[:, 0:64], 2.0)
        y[:, :] = pl.add(h_tile, 1.0)
    return y
""")
        module.stale(torch.zeros(16, 128), torch.zeros(16, 128))
    message = str(info.value)
    assert "'h_tile' is read after this kernel wrote into it; the slice is loaded once when the kernel starts, " \
           "so this read would not see the write, which went to 'h'" in message, message
    assert "stale_slice.py:10:26" in message, message
    assert "= help: keep the tile you assigned in a variable and read that, or slice 'h' again" in message, message


def test_assembling_into_an_orchestration_slice_in_a_kernel_is_refused(write_kernel):
    with pytest.raises(Exception) as info:
        module, path = write_kernel("assembled_slice", """
import pypto.language as pl

@pl.jit
def assembled(x: pl.Tensor[[16, 128], pl.FP32], y: pl.Out[pl.Tensor[[32, 128], pl.FP32]]):
    y_tile = y[0:16]
    with pl.at(level=pl.Level.CORE_GROUP):
        y_tile = pl.assemble(y_tile, pl.mul(x[:, 0:64], 2.0), [0, 0])
    return y
""")
        module.assembled(torch.zeros(16, 128), torch.zeros(32, 128))
    message = str(info.value)
    assert "'pl.assemble' into 'y_tile', a slice orchestration code took, would write only this kernel's copy of " \
           "it, never 'y'" in message, message
    assert "assembled_slice.py:8:18" in message, message
    assert "= help: assign the window instead (y_tile[...] = tile), which writes the tensor" in message, message
