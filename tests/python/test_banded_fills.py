"""A constant fill stored to global memory that is larger than UB (pypto-lib's DeepSeek-V4 gate at
128 tokens: `biased_scores[:, 96:512] = pl.full([128, 416], ...)`, 208 KB of FP32 against 184 KB) is
filled once as a band of its rows and stored band by band; the tensor gets the same values."""

import pytest
import torch

import pypto.language as pl

KERNELS = '''
ROWS = 128
EXPERTS = 96
PAD = 512


@pl.jit
def pad_columns_to_minus_inf(scores: pl.Tensor, out: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, EXPERTS:PAD] = pl.full([ROWS, PAD - EXPERTS], dtype=pl.FP32, value=-3.4028234663852886e38)
    return out


@pl.jit
def pad_each_block(out: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(2):
            out[b * ROWS : (b + 1) * ROWS, EXPERTS:PAD] = pl.full([ROWS, PAD - EXPERTS], dtype=pl.FP32, value=7.0)
    return out


@pl.jit
def shifted_fill(out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.add(pl.full([ROWS, PAD - EXPERTS], dtype=pl.FP32, value=1.0), 2.0)
    return out
'''


@pytest.fixture
def kernels(write_dsl):
    module, _ = write_dsl("banded_fills", KERNELS)
    return module


def line_of(module, text):
    return next(n for n, line in enumerate(module.path.read_text().splitlines(), 1) if text in line)


def test_a_fill_larger_than_ub_is_stored_band_by_band(kernels):
    torch.manual_seed(0)
    scores = torch.randn(128, 512)
    out = scores.clone()
    kernels.pad_columns_to_minus_inf(scores, out)
    expected = scores.clone()
    expected[:, 96:] = torch.finfo(torch.float32).min
    assert torch.equal(out, expected)


def test_bands_land_at_a_row_offset_computed_in_a_loop(kernels):
    out = torch.zeros(256, 512)
    kernels.pad_each_block(out)
    expected = torch.zeros(256, 512)
    expected[:, 96:] = 7.0
    assert torch.equal(out, expected)


# Only a fill that is stored whole is banded: one a vector op reads must exist whole, and does not fit.
def test_a_fill_larger_than_ub_that_a_vector_op_reads_does_not_fit(kernels):
    with pytest.raises(Exception) as error:
        kernels.shifted_fill(torch.zeros(128, 416))
    path, scope, fill = kernels.path, line_of(kernels, "def shifted_fill") + 1, line_of(kernels, "pl.add(pl.full")
    assert str(error.value) == (
        f"error: kernel 'shifted_fill_incore_0' (from {path}:{scope}:5) does not fit in UB (Vec): tile '__tmp_v0' "
        "(pl.Tile[[128, 416], pl.FP32, pl.Mem.Vec]) needs 212992 bytes while 0 bytes are in use, and Ascend910B "
        f"has 188416 bytes\n"
        f"  --> {path}:{fill}:28\n"
        "   |\n"
        f"{fill} |         out[:, :] = pl.add(pl.full([ROWS, PAD - EXPERTS], dtype=pl.FP32, value=1.0), 2.0)\n"
        "   |                            ^^^^^^^\n"
        "  = help: use smaller tiles, or let tiles die earlier so their buffers can be reused"
    )
