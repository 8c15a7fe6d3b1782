"""pl.reinterpret_view on the simulator, against torch's Tensor.view(dtype): a tile's bytes read as
elements of another dtype, with no data moved. Without a shape the last dimension scales by the
ratio of the element sizes; with shape=[...] the view takes that shape over the same bytes."""

import pytest
import torch

from pypto.language.parser import ParserTypeError
from pypto.runtime import RunConfig
from conftest import import_source, kernels_fixture

KERNELS = '''import pypto.language as pl


@pl.jit
def same_width(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 16]), pl.INT32)
    return y


@pl.jit
def narrower(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.INT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.tile.reinterpret_view(pl.load(a, [0, 0], [8, 16]), pl.INT16)
    return y


@pl.jit
def wider_then_added(a: pl.Tensor[[8, 32], pl.INT16], y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        words = pl.reinterpret_view(pl.load(a, [0, 0], [8, 32]), pl.INT32)
        y[:, :] = pl.add(words, 1)
    return y


@pl.jit
def with_shape(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 16]), pl.FP16, shape=[16, 16])
    return y


@pl.jit
def bits_differ(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 16]), pl.FP16, shape=[8, 16])
    return y


@pl.jit
def odd_columns(a: pl.Tensor[[8, 15], pl.INT16], y: pl.Out[pl.Tensor[[8, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 15]), pl.INT32)
    return y


@pl.jit
def partly_valid(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 16], valid_shape=[4, 16]), pl.INT32)
    return y


@pl.jit
def own_dtype(a: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.reinterpret_view(pl.load(a, [0, 0], [8, 16]), pl.FP32)
    return y
'''

kernels = kernels_fixture("reinterpret_kernels.py", KERNELS)


def source() -> torch.Tensor:
    """Distinct values of both signs, so a converted, reordered or truncated element shows."""
    values = torch.arange(8 * 16, dtype=torch.float32).reshape(8, 16) + 0.25
    return values * torch.where(torch.arange(16) % 2 == 0, 1.0, -1.0)


def test_same_width_view_is_the_bits(kernels):
    a = source()
    y = torch.empty(8, 16, dtype=torch.int32)
    kernels.same_width(a, y)
    assert torch.equal(y, a.view(torch.int32))


def test_narrower_elements_double_the_columns(kernels):
    a = source()
    y = torch.empty(8, 32, dtype=torch.int16)
    kernels.narrower(a, y)
    assert torch.equal(y, a.view(torch.int16))


def test_wider_elements_are_computed_on(kernels):
    a = torch.arange(-128, 128, dtype=torch.int16).reshape(8, 32) * 97
    y = torch.empty(8, 16, dtype=torch.int32)
    kernels.wider_then_added(a, y)
    assert torch.equal(y, a.view(torch.int32) + 1)


def test_given_shape(kernels):
    a = source()
    y = torch.empty(16, 16, dtype=torch.float16)
    kernels.with_shape(a, y, config=RunConfig(platform="a5sim"))
    assert torch.equal(y.view(torch.int16), a.view(torch.int16).reshape(16, 16))


def location(call_text: str) -> str:
    lines = KERNELS.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if call_text in text)
    return f"reinterpret_kernels.py:{line}:{lines[line - 1].index('pl.reinterpret_view') + 1}\n"


def test_view_of_other_size_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.bits_differ(source(), torch.empty(8, 16, dtype=torch.float16))
    message = str(info.value)
    assert location("pl.FP16, shape=[8, 16]") in message
    assert (
        "tile.reinterpret_view of pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] as pl.Tile[[8, 16], pl.FP16, pl.Mem.Vec]: "
        "4096 bits against 2048" in message
    ), message


def test_view_as_own_dtype_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.own_dtype(source(), torch.empty(8, 16))
    message = str(info.value)
    assert location("pl.FP32)") in message
    assert "tile.reinterpret_view of pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] to its own dtype FP32" in message



def test_columns_that_do_not_make_whole_elements_are_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.odd_columns(torch.zeros(8, 15, dtype=torch.int16), torch.empty(8, 8, dtype=torch.int32))
    message = str(info.value)
    assert location("[8, 15]), pl.INT32)") in message
    assert (
        "the last dimension of pl.Tile[[8, 15], pl.INT16, pl.Mem.Vec] (240 bits) is not a whole number of INT32 "
        "elements" in message
    ), message


def test_a_tile_valid_only_in_part_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.partly_valid(source(), torch.empty(8, 16, dtype=torch.int32))
    message = str(info.value)
    assert location("valid_shape=[4, 16]), pl.INT32)") in message
    assert (
        "tile.reinterpret_view of pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[4, 16])], which is "
        "valid only in part" in message
    ), message
    assert "help: reinterpret a tile that is valid as a whole (pl.fillpad it first)" in message

PROGRAM = '''import pypto.language as pl


@pl.program
class Views:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.INT16]]) -> pl.Tensor[[16, 16], pl.INT16]:
        x: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [8, 16])
        w: pl.Tile[[8, 32], pl.INT16, pl.Mem.Vec] = pl.tile.reinterpret_view(x, dtype=pl.INT16)
        v: pl.Tile[[16, 16], pl.INT16, pl.Mem.Vec] = pl.tile.reinterpret_view(x, dtype=pl.INT16, shape=[16, 16])
        pl.tile.store(v, [0, 0], out)
        return out
'''


def test_printed_program_parses_back(tmp_path):
    program = import_source(tmp_path / "views.py", PROGRAM).Views
    text = str(program)
    again = import_source(tmp_path / "views_printed.py", "import pypto.language as pl\n\n" + text).Views
    assert "pl.tile.reinterpret_view(x, dtype=pl.INT16, shape=[16, 16])" in text, text
    assert str(again) == text
