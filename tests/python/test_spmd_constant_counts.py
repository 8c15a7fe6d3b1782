"""A pl.spmd block count written as a constant must be positive, as upstream's parser requires
(`core_num must be a positive integer, got 0`): `pl.spmd(0)` once ran nothing without a word (issue
32). A count the function computes from its own values may still come to 0; the printer writes it
as a cast, which reads back as the same launch."""

import pytest
import torch
from conftest import kernels_fixture

KERNELS = """
import pypto.language as pl

EMPTY = 0


@pl.jit
def literal_zero(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for b in pl.spmd(0):
        out[0:8, :] = pl.add(x[0:8, :], 1.0)
    return out


@pl.jit
def negative_constant(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(core_num=EMPTY - 2):
        out[0:8, :] = pl.add(x[0:8, :], 1.0)
    return out


@pl.jit
def computed_zero(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    n = pl.tensor.dim(x, 0) // 8 - 1
    for b in pl.spmd(n):
        out[0:8, :] = pl.add(x[0:8, :], 1.0)
    return out
"""

kernels = kernels_fixture("spmd_constant_counts_kernels.py", KERNELS)


@pytest.mark.parametrize("entry, value, where", [("literal_zero", 0, "9:22"), ("negative_constant", -2, "16:27")])
def test_a_constant_count_below_one_is_an_error_at_the_count(kernels, entry, value, where):
    from pypto.language.parser.diagnostics import ParserTypeError

    x, out = torch.randn(8, 64), torch.zeros(8, 64)
    with pytest.raises(ParserTypeError) as info:
        getattr(kernels, entry)(x, out)
    message = str(info.value)
    assert f"error: pl.spmd core_num must be a positive integer, got {value}\n" in message, message
    assert f"  --> {kernels.path}:{where}\n" in message, message
    assert "help: a launch runs core_num blocks, at least 1: write `pl.spmd(N)` with N >= 1" in message, message


def test_a_computed_count_of_zero_prints_as_a_cast_that_parses_back(kernels, write_dsl):
    x, out = torch.randn(8, 64), torch.zeros(8, 64)
    lowered = kernels.computed_zero.lower(x, out)
    text = str(lowered)
    assert "            with pl.spmd(core_num=pl.scalar.cast(0, target_type=pl.INDEX)):\n" in text, text
    reparsed = getattr(write_dsl("printed", text)[0], lowered.name)
    assert str(reparsed) == text
