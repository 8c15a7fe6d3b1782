"""Kernels that loop over chunks of a tensor larger than one tile, with offsets computed per iteration."""

import torch

from pypto.runtime import RunConfig

from conftest import is_poison, unwritten

CHUNKED = """
import pypto.language as pl

ROWS = 512
COLS = 128
TILE_ROWS = 128


@pl.jit
def chunked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(ROWS // TILE_ROWS):
            tile_a = pl.load(a, [i * TILE_ROWS, 0], [TILE_ROWS, COLS])
            tile_b = pl.load(b, [i * TILE_ROWS, 0], [TILE_ROWS, COLS])
            pl.store(pl.add(tile_a, tile_b), [i * TILE_ROWS, 0], c)
    return c


@pl.jit
def grid_mul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            for j in pl.parallel(0, 128, 32):
                ta = pl.load(a, [i * 32, j], [32, 32])
                tb = pl.load(b, [i * 32, j], [32, 32])
                pl.store(pl.mul(ta, tb), [i * 32, j], c)
    return c
"""


def test_chunked_add_over_module_constants(write_kernel):
    module, _ = write_kernel("chunked", CHUNKED)
    torch.manual_seed(0)
    a, b = torch.randn(512, 128), torch.randn(512, 128)
    c = torch.zeros(512, 128)
    module.chunked_add(a, b, c, config=RunConfig())
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_nested_loops_cover_a_grid(write_kernel):
    module, _ = write_kernel("grid", CHUNKED)
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    c = torch.zeros(128, 128)
    module.grid_mul(a, b, c, config=RunConfig(platform="a5sim"))
    torch.testing.assert_close(c, a * b, rtol=0, atol=0)


def test_constants_are_part_of_the_specialisation(write_kernel):
    module, _ = write_kernel("chunked_consts", CHUNKED)
    a, b = torch.ones(512, 128), torch.ones(512, 128)
    c = torch.zeros(512, 128)
    module.chunked_add(a, b, c)
    assert torch.equal(c, torch.full((512, 128), 2.0))
    # Halving the loop count (a module constant) recompiles: only the first half is written now.
    module.ROWS = 256
    c = torch.zeros(512, 128)
    with unwritten("output 'c' [512, 128] float32: 32768 of 65536 elements were never written: all of rows 256..511"):
        module.chunked_add(a, b, c)
    assert torch.equal(c[:256], torch.full((256, 128), 2.0))
    assert is_poison(c[256:])


def test_scalar_temporaries_run_on_the_simulator(write_kernel):
    module, _ = write_kernel(
        "row_temp",
        """
import pypto.language as pl

@pl.jit
def shifted(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(1, 4, 2):
            row = i * 32
            t = pl.load(a, [row, 0], [32, 64])
            pl.store(pl.add(t, t), [row - 32, 0], c)
    return c
""",
    )
    import warnings
    from pathlib import Path

    a = torch.randn(128, 64)
    c = torch.zeros(128, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the .pto is written too: `row` is index arithmetic
        compiled = module.shifted.compile(a, c)
    pto = (Path(compiled.output_dir) / "kernels" / "aiv" / "shifted_incore_0.pto").read_text()
    # `row` is computed once per iteration and both windows use it.
    assert "%0 = arith.muli %i, %c32_index : index" in pto
    assert "offsets = [%0, %c0_index]" in pto
    assert "%1 = arith.subi %0, %c32_index : index" in pto
    with unwritten("output 'c' [128, 64] float32: 4096 of 8192 elements were never written: "
                   "all of rows 32..63, 96..127"):
        module.shifted(a, c)
    torch.testing.assert_close(c[0:32], 2 * a[32:64], rtol=0, atol=0)
    torch.testing.assert_close(c[64:96], 2 * a[96:128], rtol=0, atol=0)
    assert is_poison(c[32:64]) and is_poison(c[96:128])  # the two iterations store two blocks only
