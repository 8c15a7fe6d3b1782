"""An entry that returns the tile it computed instead of storing it into its pl.Out (issue 32): a
located error at the `return`, naming the tile and the store that is missing. It once handed back the
zeros the caller passed without a word, then an unwritten, poisoned pl.Out."""

import pytest
import torch
from conftest import kernels_fixture

KERNELS = """
import pypto.language as pl


@pl.jit
def returns_the_tile(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        doubled = pl.add(t, t)
    return doubled


@pl.jit
def stores_the_tile(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        doubled = pl.add(t, t)
        out = pl.store(doubled, [0, 0], out)
    return out
"""

kernels = kernels_fixture("entry_returns_a_tile_kernels.py", KERNELS)


def test_returning_the_tile_is_an_error_at_the_return(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    x, out = torch.randn(64, 64), torch.zeros(64, 64)
    with pytest.raises(ParserTypeError) as info:
        kernels.returns_the_tile(x, out)
    message = str(info.value)
    assert ("error: 'returns_the_tile' returns `doubled`, a tile computed in a pl.at scope "
            "(pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec]); an entry hands its results back in the tensors its caller "
            "passes, so the caller would never see it\n") in message, message
    assert f"  --> {kernels.path}:10:12\n" in message, message
    assert ("help: store the tile into the output inside the scope, `out = pl.store(doubled, [0, 0], out)`, "
            "and `return out`") in message, message
    assert torch.equal(out, torch.zeros(64, 64))  # nothing ran


def test_the_store_the_help_names_gives_torch_s_numbers(kernels):
    x, out = torch.randn(64, 64), torch.zeros(64, 64)
    kernels.stores_the_tile(x, out)
    torch.testing.assert_close(out, x + x)
