"""Tiles with a valid region smaller than the tile: pl.load(..., valid_shape=...), pl.tile.fillpad,
pl.tile.set_validshape, and stores and reductions that see only the valid region, against torch."""

import pytest
import torch
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl

ROWS = 16
COLS = 100   # not a multiple of the 32-column block: the last block is a ragged tail
BLOCK = 32


@pl.jit
def padded_row_max(x: pl.Tensor, vlen: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64], valid_shape=[16, vlen])
        p = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
        m = pl.row_max(p)
        pl.store(m, [0, 0], out)
    return out


@pl.jit
def ragged_tail(x: pl.Tensor, y: pl.Out[pl.Tensor], sums: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for c in pl.range(0, COLS, BLOCK):
            vlen = min(COLS - c, BLOCK)
            t = pl.load(x, [0, c], [ROWS, BLOCK], valid_shape=[ROWS, vlen])
            pl.store(pl.exp(t), [0, c], y)
            s = pl.row_sum(t)
            pl.store(s, [0, c // BLOCK], sums)
    return y, sums


@pl.jit
def ragged_scale(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for c in pl.range(0, COLS, BLOCK):
            vlen = min(COLS - c, BLOCK)
            t = pl.load(x, [0, c], [ROWS, BLOCK], valid_shape=[ROWS, vlen])
            p = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
            u = pl.tile.set_validshape(pl.mul(p, 2.0), ROWS, vlen)
            pl.store(u, [0, c], y)
    return y


@pl.jit
def valid_from_a_tensor(x: pl.Tensor, cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.read(cfg, [0])
        cols = pl.read(cfg, [1])
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.tile.set_validshape(t, rows, cols)
        p = pl.tile.fillpad(u, pad_value=pl.PadValue.max)
        pl.store(p, [0, 0], out)
    return out
@pl.jit
def sliced_rows(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(0, 40, 16):
            rows = pl.min(16, 40 - r)
            t = pl.slice(x, [16, 32], [r, 0], valid_shape=[rows, 32])
            pl.store(pl.add(t, 1.0), [r, 0], y)
    return y
@pl.jit
def padded_vector(x: pl.Tensor, n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        row = pl.reshape(pl.slice(x, [16], [0], valid_shape=[n]), [1, 16])
        pl.store(pl.add(row, 1.0), [0, 0], out)
    return out
'''


kernels = kernels_fixture("valid_shape_kernels.py", KERNELS)


@pytest.mark.parametrize("vlen", [64, 40, 1])
def test_fillpad_min_then_row_max_ignores_the_tail(kernels, vlen):
    x = torch.randn(16, 64) - 10.0  # every element negative: a zero pad would win the max
    out = torch.zeros(16, 1)
    kernels.padded_row_max(x, vlen, out)
    torch.testing.assert_close(out, x[:, :vlen].amax(dim=1, keepdim=True))


def test_the_valid_shape_is_printed_in_the_tile_type(kernels):
    x, out = torch.randn(16, 64), torch.zeros(16, 1)
    text = str(kernels.padded_row_max.lower(x, 40, out))
    assert "pl.TileView(valid_shape=[16, 40])" in text
    assert 'pl.tile.fillpad(t, pad_value="min")' in text


def test_a_tensor_slice_with_a_valid_shape_loads_a_ragged_row_block(kernels):
    # pl.slice of a tensor inside a kernel is a load of the region: 40 rows in blocks of 16, the
    # last block valid for 8 rows only (upstream's pypto-lib models read ragged batches this way).
    x, y = torch.randn(40, 32), torch.full((40, 32), -7.0)
    kernels.sliced_rows(x, y)
    torch.testing.assert_close(y, x + 1.0)
    assert "pl.tile.load(x, [r, 0], [16, 32], [rows, 32])" in str(kernels.sliced_rows.lower(x, y))


@pytest.mark.parametrize("n", [6, 11])
def test_a_one_dimensional_slice_with_a_valid_shape_loads_its_first_elements(kernels, n):
    # pypto-lib's hc_head reads a [HC_MULT] vector padded to [HC_PAD] this way; the padding is
    # unspecified, so only the valid elements are compared.
    x, out = torch.randn(24), torch.full((1, 16), -7.0)
    kernels.padded_vector(x, n, out)
    torch.testing.assert_close(out[0, :n], x[:n] + 1.0)
    # The jit specialises on the scalar's value.
    assert f"pl.TileView(valid_shape=[{n}])] = pl.tile.load(x, [0], [16], [{n}])" in str(
        kernels.padded_vector.lower(x, n, out))


def test_a_ragged_tail_loads_stores_and_sums_only_its_columns(kernels):
    x = torch.randn(16, 100)
    y = torch.full((16, 100), -7.0)
    sums = torch.zeros(16, 4)
    kernels.ragged_tail(x, y, sums)
    torch.testing.assert_close(y, torch.exp(x), rtol=1e-5, atol=1e-5)
    expected = torch.stack([x[:, c : c + 32].sum(dim=1) for c in range(0, 100, 32)], dim=1)
    torch.testing.assert_close(sums, expected, rtol=1e-5, atol=1e-5)


def test_set_validshape_from_values_read_at_run_time(kernels):
    x = torch.randn(16, 64)
    for rows, cols in [(16, 64), (5, 9), (0, 3)]:
        out = torch.zeros(16, 64)
        kernels.valid_from_a_tensor(x, torch.tensor([rows, cols], dtype=torch.int64), out)
        expected = torch.full((16, 64), float("inf"))
        expected[:rows, :cols] = x[:rows, :cols]
        torch.testing.assert_close(out, expected)


def test_the_pto_module_takes_valid_extents_computed_in_the_loop(kernels, build_dir):
    x = torch.randn(16, 100)
    y = torch.zeros(16, 100)
    kernels.ragged_scale(x, y)
    torch.testing.assert_close(y, 2 * x)
    (pto,) = build_dir.glob("*/kernels/aiv/*.pto")
    text = pto.read_text()
    assert "arith.minsi" in text
    # t's alloc_tile is in the loop, after the extent is computed; the fillpad result declares pad=3 (min)
    loop = text[text.index("scf.for") :]
    assert "%t = pto.alloc_tile addr = %c0_i64 valid_row = %c16_index valid_col = %1" in loop, text
    assert "pto.tfillpad ins(%t" in loop and "pad=3>" in loop, text


BAD_SLICE = '''
import pypto.language as pl


@pl.jit
def dropped(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.slice(x, [16, 32], [0, 0], drop_dims=[0])
        pl.store(t, [0, 0], y)
    return y
'''


def test_a_tensor_slice_argument_not_supported_in_a_kernel_is_named(write_kernel):
    from pypto.language.parser.diagnostics import InvalidOperationError

    module, path = write_kernel("bad_slice", BAD_SLICE)
    with pytest.raises(InvalidOperationError) as error:
        module.dropped(torch.randn(16, 32), torch.zeros(16, 32))
    assert error.value.message == ("'pl.slice' of a tensor inside a kernel has no argument 'drop_dims' (arguments: x, "
                                   "shape, offset, valid_shape)")
    assert error.value.location == f"{path}:8:53"
