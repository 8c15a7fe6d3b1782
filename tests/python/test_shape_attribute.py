"""`x.shape` of a tensor or tile inside a kernel (`M, N = a.shape`, `a.shape[-1]`): constants once the
jit function is specialised for its arguments. Checked against torch for two shapes, and the errors
for a wrong number of names and an index outside the shape."""

import pytest
import torch

import pypto.language as pl


@pl.jit
def add_any(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        M, N = a.shape
        ta = pl.load(a, [0, 0], [M, N])
        tb = pl.load(b, [0, 0], [M, b.shape[-1]])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pytest.mark.parametrize("shape", [(16, 32), (8, 64)])
def test_the_shape_of_a_parameter_is_its_specialised_extents(shape):
    a, b, c = torch.randn(*shape), torch.randn(*shape), torch.zeros(*shape)
    add_any(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_unpacking_a_shape_into_the_wrong_number_of_names_is_reported(write_dsl):
    module, path = write_dsl("three_names", """
@pl.jit
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        M, N, K = a.shape
        pl.store(pl.load(a, [0, 0], [M, N]), [0, 0], c)
    return c
""")
    with pytest.raises(Exception) as info:
        module.k(torch.zeros(16, 32), torch.zeros(16, 32))
    message = str(info.value)
    assert message.startswith("error: 3 names unpack a 2-d shape"), message
    assert f"{path}:7:9" in message, message


def test_a_shape_index_outside_the_rank_is_reported(write_dsl):
    module, path = write_dsl("bad_index", """
@pl.jit
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [a.shape[0], a.shape[2]]), [0, 0], c)
    return c
""")
    with pytest.raises(Exception) as info:
        module.k(torch.zeros(16, 32), torch.zeros(16, 32))
    message = str(info.value)
    assert message.startswith("error: the index of a 2-d shape must be an integer constant in [-2, 2)"), message
    assert f"{path}:7:58" in message, message
