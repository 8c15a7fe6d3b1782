"""AscendC data movement on the simulator: DataCopy in its count and DataCopyParams forms (GM to UB,
UB to UB, UB to GM, strides in 32-byte blocks) and DataCopyPad with DataCopyExtParams and padding,
in FP32 and FP16, against torch."""

import pytest
import torch
from ascendc_kernels import declare

ROWS, COLS = 8, 64
PAD_ROWS, PAD_COLS, PADDED = 4, 13, 16

_STRIDED = """
@pl.jit.extern(core_type="aiv", source="{source}")
def strided(x: pl.Tensor[[8, 64], {dtype}], left: pl.InOut[pl.Tensor[[8, 32], {dtype}]],
            out: pl.InOut[pl.Tensor[[8, 64], {dtype}]]) -> pl.Tensor[[8, 32], {dtype}]: ...


@pl.jit
def entry(x: pl.Tensor[[8, 64], {dtype}], left: pl.Out[pl.Tensor[[8, 32], {dtype}]],
          out: pl.InOut[pl.Tensor[[8, 64], {dtype}]]):
    left = strided(x, left, out)
    return left
"""

_PAD = """
@pl.jit.extern(core_type="aiv", source="{source}")
def pad(x: pl.Tensor[[4, 13], {dtype}], padded: pl.InOut[pl.Tensor[[4, 16], {dtype}]],
        tight: pl.InOut[pl.Tensor[[4, 13], {dtype}]]) -> pl.Tensor[[4, 16], {dtype}]: ...


@pl.jit
def entry(x: pl.Tensor[[4, 13], {dtype}], padded: pl.Out[pl.Tensor[[4, 16], {dtype}]],
          tight: pl.InOut[pl.Tensor[[4, 13], {dtype}]]):
    padded = pad(x, padded, tight)
    return padded
"""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_block_strides_pick_and_place_half_rows(tmp_path, dtype):
    entry = declare(tmp_path, _STRIDED, dtype, kernel="strided_copy").entry
    x = torch.randn(ROWS, COLS).to(dtype)
    left = torch.zeros(ROWS, COLS // 2, dtype=dtype)
    out = torch.zeros(ROWS, COLS, dtype=dtype)
    entry(x, left, out)
    torch.testing.assert_close(left, x[:, : COLS // 2], rtol=0, atol=0)
    expected = torch.zeros_like(x)
    expected[:, : COLS // 2] = x[:, : COLS // 2]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_data_copy_pad_pads_rows_and_writes_back_exact_bytes(tmp_path, dtype):
    entry = declare(tmp_path, _PAD, dtype, kernel="pad_copy").entry
    x = torch.randn(PAD_ROWS, PAD_COLS).to(dtype)
    padded = torch.zeros(PAD_ROWS, PADDED, dtype=dtype)
    tight = torch.zeros(PAD_ROWS, PAD_COLS, dtype=dtype)
    entry(x, padded, tight)
    expected = torch.full((PAD_ROWS, PADDED), -1.0, dtype=dtype)
    expected[:, :PAD_COLS] = x
    torch.testing.assert_close(padded, expected, rtol=0, atol=0)
    torch.testing.assert_close(tight, x, rtol=0, atol=0)
