"""A ``@pl.program`` built inside a function per configuration: the dtypes and integer lists it
names from the enclosing scope stand for what they hold, as upstream's op tests write them."""

import pytest
import torch

import pypto.ir
from pypto.language.parser import ParserTypeError

from conftest import import_source

BUILDER = '''
import pypto.language as pl


def build(dt, rows, cols, off, vshape):
    @pl.program
    class Scaled:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[rows, cols], dt], out: pl.InOut[pl.Tensor[[2 * rows, cols], dt]]) -> pl.Tensor[[2 * rows, cols], dt]:
            t: pl.Tile[[rows, cols], dt] = pl.load(a, [0, 0], [rows, cols], valid_shape=vshape)
            out = pl.store(pl.add(t, t), off, out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[rows, cols], dt], out: pl.InOut[pl.Tensor[[2 * rows, cols], dt]]) -> pl.Tensor[[2 * rows, cols], dt]:
            out = self.kernel(a, out)
            return out

    return Scaled


def misuse(dt):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])
            out = pl.store(pl.mul(t, dt), [0, 0], out)
            return out

    return Misuse


def none_as_value(vshape):
    @pl.program
    class NoneValue:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16])
            out = pl.store(pl.mul(t, vshape), [0, 0], out)
            return out

    return NoneValue


def corner(vshape, which):
    @pl.program
    class Corner:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32] = pl.load(a, [0, 0], [16, 16], valid_shape=[vshape[which], vshape[-1]])
            out = pl.store(t, [0, 0], out)
            return out

    return Corner
'''


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("closures") / "closure_builder.py", BUILDER)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_a_dtype_and_lists_from_the_enclosing_function(builder, tmp_path, dtype):
    import pypto.language as pl

    dt = pl.FP32 if dtype == torch.float32 else pl.INT32
    program = builder.build(dt, 16, 32, [16, 0], (16, 8))
    text = str(program)
    assert f"a: pl.Tensor[[16, 32], pl.{dt.name}]" in text
    assert "pl.tile.load(a, [0, 0], [16, 32], [16, 8])" in text
    assert "[16, 0], out)" in text
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a, out = (torch.randn(16, 32) * 100).to(dtype), torch.full((32, 32), -1, dtype=dtype)
    compiled(a, out)
    # The tile holds only its valid [16, 8] corner, and the store writes only that.
    expected = torch.full((32, 32), -1, dtype=dtype)
    expected[16:32, :8] = a[:, :8] * 2
    torch.testing.assert_close(out, expected)


def test_a_dtype_used_as_a_value_is_an_error(builder):
    import pypto.language as pl

    with pytest.raises(ParserTypeError) as info:
        builder.misuse(pl.FP32)
    assert info.value.message == "'pl.mul' argument 'rhs' must be a value, got pl.FP32"
    assert info.value.location.endswith("closure_builder.py:28:38")


def test_a_name_bound_to_none_leaves_the_keyword_argument_out(builder, tmp_path):
    """`valid_shape=vshape` with vshape = None is `valid_shape=None`: the whole tile is loaded."""
    import pypto.language as pl

    program = builder.build(pl.FP32, 16, 32, [0, 0], None)
    assert "pl.tile.load(a, [0, 0], [16, 32])" in str(program)
    compiled = pypto.ir.compile(program, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a, out = torch.randn(16, 32), torch.zeros(32, 32)
    compiled(a, out)
    expected = torch.zeros(32, 32)
    expected[:16] = a * 2
    torch.testing.assert_close(out, expected)


def test_a_name_bound_to_none_used_as_a_value_is_an_error(builder):
    with pytest.raises(ParserTypeError) as info:
        builder.none_as_value(None)
    assert info.value.message == "'vshape' is None, not a value"
    assert info.value.location.endswith("closure_builder.py:40:38")


def test_an_element_of_a_list_from_the_enclosing_function_is_a_constant(builder):
    text = str(builder.corner([4, 9, 12], 1))
    assert "pl.tile.load(a, [0, 0], [16, 16], [9, 12])" in text


def test_an_index_past_the_end_of_a_list_is_an_error(builder):
    with pytest.raises(ParserTypeError) as info:
        builder.corner([4, 9, 12], 3)
    assert info.value.message == "the index of a list of 3 must be an integer constant in [-3, 3)"
    assert info.value.location.endswith("closure_builder.py:51:94")
