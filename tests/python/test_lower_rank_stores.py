"""A tile stored (or assembled) into a tensor of higher rank lands in the tensor's last dimensions,
as upstream's FlattenTileNdTo2D gives tile.store its partition shape ([1, ..., 1, rows, cols]): an
[8, 128] tile at [h, 0, b, 0] of a [4, 1, 16, 128] tensor is rows b..b+7 of axis 2, never heads
h..h+7. pypto-lib's qwen3_32b/decode_4d.py stores a block of heads that way, and its batch index
runs up to 15: the simulator stops the store that leaves the tensor's view."""

import pytest
import torch
from conftest import kernels_fixture

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit
def heads_at(x: pl.Tensor, b: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pl.load(x, [0, 0], [8, 128])
        y = pl.assemble(y, ctx, [1, 0, b, 0])
    return y


@pl.jit
def heads_per_batch(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    # decode_4d.py's shape: each batch row's kernel assembles its block of 8 heads at [h, 0, b, 0]
    # (here rows 0 and 9 only, so that one store fails whichever task runs first).
    for b in pl.parallel(0, 16, 9):
        with pl.at(level=pl.Level.CORE_GROUP):
            ctx = pl.load(x, [0, 0], [8, 128])
            y = pl.assemble(y, ctx, [1, 0, b, 0])
    return y
'''

kernels = kernels_fixture("lower_rank_stores.py", KERNELS)


def _config():
    return RunConfig(platform="a2a3sim", report_unwritten=False)


def test_a_2d_tile_fills_rows_of_the_last_two_dimensions(kernels):
    x, y = torch.randn(8, 128), torch.zeros(4, 1, 16, 128)
    kernels.heads_at(x, 4, y, config=_config())
    torch.testing.assert_close(y[1, 0, 4:12], x)
    written = torch.zeros(4, 1, 16, 128, dtype=torch.bool)
    written[1, 0, 4:12] = True
    assert torch.isnan(y[~written]).all()  # nothing else of the pure output was touched


def test_a_constant_offset_past_the_end_is_refused_where_it_is_written(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    with pytest.raises(ParserTypeError) as error:
        kernels.heads_at(torch.randn(8, 128), 9, torch.zeros(4, 1, 16, 128), config=_config())
    assert str(error.value).splitlines()[:2] == [
        "error: pl.store: region at offsets [1, 0, 9, 0] with shape [1, 1, 8, 128] is outside tensor "
        "pl.Tensor[[4, 1, 16, 128], pl.FP32] (dimension 2)",
        f"  --> {kernels.path}:9:13",
    ]


def test_a_batch_index_past_the_end_stops_the_store_at_run_time(kernels):
    with pytest.raises(RuntimeError) as error:
        kernels.heads_per_batch(torch.randn(8, 128), torch.zeros(4, 1, 16, 128), config=_config())
    assert str(error.value) == (
        "sim: fatal error 203 (KernelFailed): kernel 'heads_per_batch_incore_0' instruction #1 (store) "
        f"`pl.tile.store(ctx, [1, 0, b, 0], y)` at {kernels.path}:20:17: out-of-bounds global write: "
        "region [1:2, 0:1, 9:17, 0:128] is outside the view of tensor 'y' (args[1]) with shape [4, 1, 16, 128]")
