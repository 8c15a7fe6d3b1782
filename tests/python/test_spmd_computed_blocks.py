"""pl.spmd launches whose block count the orchestration computes from a scalar argument and a dynamic
dimension, clamped by orchestration ifs (pypto-lib's DeepSeek-V4 hc_post_prefill and gate, written
small): the count is evaluated when the launch is submitted, 0 blocks launch nothing, and a negative
count is an error naming the launch. Checked against torch on the simulator."""

import pytest
import torch
from conftest import is_poison, kernels_fixture, unwritten

KERNELS = """
import pypto.language as pl

T = pl.dynamic("T")
COLS = 64
T_TILE = 4


@pl.jit
def active_prefix_exp(x: pl.Tensor[[T, COLS], pl.FP32], num_tokens: pl.Scalar[pl.INT32],
                      y: pl.Out[pl.Tensor[[T, COLS], pl.FP32]]):
    y.bind_dynamic(0, T)
    t_dim = pl.tensor.dim(x, 0)
    active = pl.cast(num_tokens, pl.INDEX)
    if active < 0:
        active = pl.cast(0, pl.INDEX)
    if active > t_dim:
        active = t_dim
    tiles = (active + T_TILE - 1) // T_TILE
    # Two blocks per tile of T_TILE rows, each exponentiating one half of the columns.
    for b in pl.spmd(tiles * 2, name_hint="prefix_exp"):
        r0 = (b // 2) * T_TILE
        c0 = (b % 2) * (COLS // 2)
        y[r0 : r0 + T_TILE, c0 : c0 + COLS // 2] = pl.exp(x[r0 : r0 + T_TILE, c0 : c0 + COLS // 2])
    return y


@pl.jit
def shifted_count(x: pl.Tensor[[T, COLS], pl.FP32], shift: pl.Scalar[pl.INT32],
                  y: pl.Out[pl.Tensor[[T, COLS], pl.FP32]]):
    y.bind_dynamic(0, T)
    tiles = pl.tensor.dim(x, 0) // T_TILE
    n = tiles - pl.cast(shift, pl.INDEX)
    if n > tiles:
        n = tiles
    with pl.spmd(n, name_hint="shifted") as tid:
        b = pl.tile.get_block_idx()
        y[b * T_TILE : b * T_TILE + T_TILE, :] = pl.add(x[b * T_TILE : b * T_TILE + T_TILE, :], 1.0)
    return y


@pl.jit
def given_count(x: pl.Tensor[[T, COLS], pl.FP32], blocks: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[T, COLS], pl.FP32]]):
    y.bind_dynamic(0, T)
    for b in pl.spmd(pl.tensor.dim(x, 0) // T_TILE - blocks):
        y[b * T_TILE : b * T_TILE + T_TILE, :] = pl.mul(x[b * T_TILE : b * T_TILE + T_TILE, :], 3.0)
    return y
"""


kernels = kernels_fixture("spmd_computed_blocks_kernels.py", KERNELS)


def rows_past(rows: int):
    """Expects the run to leave rows `rows`..11 of y [12, 64] unwritten (no block covers them)."""
    if rows == 12:
        return unwritten()
    return unwritten(f"output 'y' [12, 64] float32: {(12 - rows) * 64} of 768 elements were never written: "
                     f"all of rows {rows}..11")


@pytest.mark.parametrize("num_tokens, active_rows", [(5, 8), (8, 8), (100, 12), (0, 0), (-3, 0)])
def test_the_block_count_follows_the_clamped_scalar(kernels, num_tokens, active_rows):
    torch.manual_seed(num_tokens + 10)
    x = torch.randn(12, 64)
    y = torch.full((12, 64), -1.0)
    with rows_past(active_rows):
        kernels.active_prefix_exp(x, num_tokens, y)
    torch.testing.assert_close(y[:active_rows], torch.exp(x[:active_rows]), rtol=1e-5, atol=1e-5)
    assert is_poison(y[active_rows:])  # 0 blocks write nothing


def test_the_printed_program_computes_the_count_and_parses_back(kernels, write_dsl):
    x, y = torch.randn(12, 64), torch.zeros(12, 64)
    lowered = kernels.active_prefix_exp.lower(x, 5, y)
    text = str(lowered)
    assert "        with pl.spmd(core_num=tiles * 2):\n" in text, text
    reparsed = getattr(write_dsl("printed", text)[0], lowered.name)
    assert str(reparsed) == text


def test_the_generated_cpp_skips_a_launch_of_no_blocks(kernels):
    from pathlib import Path

    compiled = kernels.active_prefix_exp.compile(torch.randn(12, 64), 5, torch.zeros(12, 64))
    cpp = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert "const int64_t prefix_exp_blocks = (tiles * 2);\n" in cpp, cpp
    assert "if (prefix_exp_blocks != 0) {\n" in cpp
    assert "params_t0.launch_spec.set_block_num(prefix_exp_blocks);\n" in cpp


def test_a_negative_block_count_names_the_launch(kernels):
    x, y = torch.randn(12, 64), torch.zeros(12, 64)
    with rows_past(8):
        kernels.shifted_count(x, 1, y)  # 2 of the 3 tiles
    torch.testing.assert_close(y[:8], x[:8] + 1.0)
    assert is_poison(y[8:])
    with pytest.raises(Exception) as info:
        kernels.shifted_count(x, 5, y)  # 3 - 5 blocks
    message = str(info.value)
    assert "the pl.spmd launch of 'shifted' has -2 blocks; a block count must be at least 0" in message, message
    assert f"--> {kernels.path}:36:10" in message, message


@pytest.mark.parametrize("skipped", [0, 2, 3])
def test_a_count_known_when_compiling_may_be_zero(kernels, skipped):
    # The jit compiles each value of `blocks` on its own: the count folds to a constant, 0 included.
    x, y = torch.randn(12, 64), torch.full((12, 64), -1.0)
    rows = 12 - 4 * skipped
    with rows_past(rows):
        kernels.given_count(x, skipped, y)
    torch.testing.assert_close(y[:rows], 3 * x[:rows])
    assert is_poison(y[rows:])
