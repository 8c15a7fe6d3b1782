"""Integer indices in tensor and tile subscripts, with numpy's meaning (as upstream PyPTO gives them):
an index selects one position of its axis and drops the axis, a slice keeps it, and axes left
unindexed are whole. `x[i]` of a [4, 16, 32] tensor is its [16, 32] block i; `x[i, j]` of a 2-D
tensor (every axis indexed) is the element, read as `pl.read(x, [i, j])` reads it. Run on the
simulator and compared with torch."""

import pytest
import torch

from pypto.runtime import RunConfig

KERNELS = '''
import pypto.language as pl


@pl.jit.incore
def double_block(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    y[:, :] = pl.mul(x[:, :], 2.0)
    return y


@pl.jit
def block_of_3d(x: pl.Tensor[[4, 16, 32], pl.FP32], k: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    xk = x[k]
    y = double_block(xk, y)
    return y


@pl.jit
def blocks_in_a_loop(x: pl.Tensor[[4, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]):
    for b in pl.range(4):
        y_b = y[b]
        y_b = double_block(x[3 - b], y_b)
    return y


@pl.jit.incore
def add_into_cache(cache: pl.InOut[pl.Tensor[[4, 16, 1, 32], pl.FP32]], x: pl.Tensor[[16, 32], pl.FP32]):
    for b in pl.range(4):
        cache[b, :, 0, :] = pl.add(cache[b, :, 0, :], x[:, :])
    return cache


@pl.jit
def layer_caches(caches: pl.InOut[pl.Tensor[[3, 4, 16, 1, 32], pl.FP32]], x: pl.Tensor[[16, 32], pl.FP32]):
    cache_2 = caches[2]
    cache_2 = add_into_cache(cache_2, x)
    cache_0 = caches[-3]
    cache_0 = add_into_cache(cache_0, x)
    return caches


@pl.jit
def steered(x: pl.Tensor[[32, 64], pl.FP32], table: pl.Tensor[[2, 4], pl.INT32],
            y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    count = table[0, 1]
    row = table[1, 3]
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = x[row + r : row + r + 1, :]
    return y


@pl.jit
def gathered_rows(x: pl.Tensor[[64, 32], pl.FP32], order: pl.Tensor[[8], pl.INT32],
                  y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for s in pl.range(8):
            src = order[s]
            y[s : s + 1, :] = x[src : src + 1, :]
    return y


@pl.jit.inline
def picked_half(x: pl.Tensor[[4, 16, 32], pl.FP32], picks: pl.Tensor[[2], pl.INT32],
                y: pl.Tensor[[16, 32], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        b = picks[1]
        y[:, :] = pl.mul(x[b], 0.5)
    return y


@pl.jit
def through_inline(x: pl.Tensor[[4, 16, 32], pl.FP32], picks: pl.Tensor[[2], pl.INT32],
                   y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    y = picked_half(x, picks, y)
    return y


@pl.jit
def kernel_indices(x: pl.Tensor[[4, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[4, 16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for b in pl.range(4):
            y[b] = pl.add(x[b], x[3 - b])
    return y


@pl.jit
def tile_rows(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        acc = pl.full([16, 32], dtype=pl.FP32, value=0.0)
        for r in pl.range(16):
            acc[r] = pl.mul(t[15 - r], 3.0)
        y[:, :] = acc
    return y


@pl.jit
def tile_element(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        y[:, :] = pl.mul(t, t[2, 5])
    return y


@pl.jit
def out_of_range(x: pl.Tensor[[4, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = x[4]
    return y


@pl.jit
def too_many(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.mul(x[:, :], x[0, 1, 2])
    return y


@pl.jit
def element_assign(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = x[:, :]
        y[0, 1] = pl.read(x, [0, 0])
    return y


@pl.jit
def column_view(x: pl.Tensor[[8, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    column = x[:, 3]
    y = double_block(column, y)
    return y
'''


def line_of(text: str) -> int:
    """The line of KERNELS (as written to its file) holding `text`."""
    return next(n for n, line in enumerate(KERNELS.split("\n"), 1) if text in line)


@pytest.fixture
def kernels(write_kernel):
    return write_kernel("tensor_subscripts", KERNELS)


@pytest.mark.parametrize("k", [0, 3])
def test_an_index_drops_the_axis_of_a_3d_tensor_passed_to_a_kernel(kernels, k):
    module, _ = kernels
    x, y = torch.randn(4, 16, 32), torch.zeros(16, 32)
    module.block_of_3d(x, k, y)
    torch.testing.assert_close(y, x[k] * 2.0)


def test_indices_computed_by_an_orchestration_loop_view_each_block(kernels):
    module, _ = kernels
    x, y = torch.randn(4, 16, 32), torch.zeros(4, 16, 32)
    module.blocks_in_a_loop(x, y)
    torch.testing.assert_close(y, x.flip(0) * 2.0)


def test_an_index_of_a_5d_tensor_is_a_4d_view_the_kernel_writes_in_place(kernels):
    module, _ = kernels
    caches, x = torch.randn(3, 4, 16, 1, 32), torch.randn(16, 32)
    expected = caches.clone()
    expected[2] += x[None, :, None, :]
    expected[0] += x[None, :, None, :]  # caches[-3] counts from the end
    module.layer_caches(caches, x)
    torch.testing.assert_close(caches, expected)


def test_element_reads_in_orchestration_steer_the_launches(kernels):
    module, _ = kernels
    x = torch.randn(32, 64)
    table = torch.tensor([[0, 5, 0, 0], [0, 0, 0, 9]], dtype=torch.int32)
    y = torch.zeros(32, 64)
    module.steered(x, table, y, config=RunConfig(poison_outputs=False))
    torch.testing.assert_close(y[:5], x[9:14])
    assert torch.count_nonzero(y[5:]) == 0


def test_an_element_of_a_1d_tensor_read_in_a_kernel_offsets_a_load(kernels):
    module, _ = kernels
    x, order = torch.randn(64, 32), torch.tensor([7, 0, 63, 12, 12, 40, 1, 2], dtype=torch.int32)
    y = torch.zeros(8, 32)
    module.gathered_rows(x, order, y)
    torch.testing.assert_close(y, x[order.long()])


@pytest.mark.parametrize("pick", [0, 2])
def test_an_inline_function_indexes_by_an_element_it_reads(kernels, pick):
    module, _ = kernels
    x, y = torch.randn(4, 16, 32), torch.zeros(16, 32)
    module.through_inline(x, torch.tensor([3, pick], dtype=torch.int32), y)
    torch.testing.assert_close(y, x[pick] * 0.5)


def test_indices_in_a_kernel_load_and_store_blocks(kernels):
    module, _ = kernels
    x, y = torch.randn(4, 16, 32), torch.zeros(4, 16, 32)
    module.kernel_indices(x, y)
    torch.testing.assert_close(y, x + x.flip(0))


def test_a_tile_row_stays_2d_and_is_assembled_back(kernels):
    module, _ = kernels
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    with pytest.warns(UserWarning, match=r"tiles keep two, so it is a \[1, 32\] tile"):
        module.tile_rows(x, y)
    torch.testing.assert_close(y, x.flip(0) * 3.0)


def test_a_tile_element_is_a_scalar(kernels):
    module, _ = kernels
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    module.tile_element(x, y)
    torch.testing.assert_close(y, x * x[2, 5])


def test_an_index_outside_its_axis_is_reported_at_the_index(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = kernels
    with pytest.raises(ParserTypeError) as error:
        module.out_of_range(torch.zeros(4, 16, 32), torch.zeros(16, 32))
    message = str(error.value)
    assert "index 4 is out of range for axis 0 of pl.Tensor[[4, 16, 32], pl.FP32], whose extent is 4" in message
    assert "an index of this axis is in [-4, 4)" in message
    assert f"--> {path}:{line_of('= x[4]')}:21" in message


def test_more_indices_than_axes_are_reported_at_the_subscript(kernels):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = kernels
    with pytest.raises(ParserTypeError) as error:
        module.too_many(torch.zeros(16, 32), torch.zeros(16, 32))
    message = str(error.value)
    assert "3 indices for the 2-d tensor pl.Tensor[[16, 32], pl.FP32]" in message
    assert f"--> {path}:{line_of('x[0, 1, 2]')}:35" in message


def test_an_element_assignment_names_pl_write(kernels):
    from pypto.language.parser.diagnostics import ParserSyntaxError

    module, path = kernels
    with pytest.raises(ParserSyntaxError) as error:
        module.element_assign(torch.zeros(16, 32), torch.zeros(16, 32))
    message = str(error.value)
    assert "'y[0, 1] = ...' indexes every axis: a subscript assignment writes a window of a tensor" in message
    assert "write the element with pl.write(y, [0, 1], value)" in message
    assert f"--> {path}:{line_of('y[0, 1] =')}:9" in message


def test_a_strided_view_in_orchestration_cannot_drop_its_axis(kernels):
    from pypto.language.parser.diagnostics import ParserSyntaxError

    module, path = kernels
    with pytest.raises(ParserSyntaxError) as error:
        module.column_view(torch.zeros(8, 16, 32), torch.zeros(16, 32))
    message = str(error.value)
    assert ("in orchestration code this subscript is a view of the window [8, 1, 32] of "
            "pl.Tensor[[8, 16, 32], pl.FP32], which is not contiguous") in message
    assert f"--> {path}:{line_of('= x[:, 3]')}:14" in message
