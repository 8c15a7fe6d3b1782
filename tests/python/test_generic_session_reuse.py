"""A program compiled once for every extent keeps one simulator session for all its runs (issue 30):
each run's task plan, expanded for the extents passed, runs on the session opened for the program
(plugin ABI 4, run_session_plan), and a plan that depended on the shapes alone is kept for the next
call with those shapes (libs/driver/src/run.cpp). Nothing of one run may reach the next: not its
extents, not its intermediate buffers, not what it wrote, and not a plan that depended on what a
tensor held."""

import pytest
import torch

from conftest import is_poison, unwritten

KERNELS = """
import pypto.language as pl

TOKENS = pl.dynamic("TOKENS")
COLS = 64
TILE = 16


@pl.jit
def add_rows(x: pl.Tensor[[TOKENS, COLS], pl.FP32], y: pl.Tensor[[TOKENS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[TOKENS, COLS], pl.FP32]]):
    for r in pl.range(0, TOKENS, TILE):
        rows = pl.min(TILE, TOKENS - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            b = pl.load(y, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.add(a, b), [r, 0], out)
    return out


@pl.jit
def mul_of_sum(x: pl.Tensor[[TOKENS, COLS], pl.FP32], y: pl.Tensor[[TOKENS, COLS], pl.FP32],
               out: pl.Out[pl.Tensor[[TOKENS, COLS], pl.FP32]]):
    # Two tasks a tile, the second reading what the first wrote to a tensor of the run's own.
    tmp = pl.create_tensor([TOKENS, COLS], dtype=pl.FP32)
    for r in pl.range(0, TOKENS, TILE):
        rows = pl.min(TILE, TOKENS - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            b = pl.load(y, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.add(a, b), [r, 0], tmp)
        with pl.at(level=pl.Level.CORE_GROUP):
            s = pl.load(tmp, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            c = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.mul(s, c), [r, 0], out)
    return out


@pl.jit
def counted_rows(x: pl.Tensor[[TOKENS, COLS], pl.FP32], n: pl.Tensor[[1], pl.INT32],
                 out: pl.Out[pl.Tensor[[TOKENS, COLS], pl.FP32]]):
    # The plan depends on what n holds, not only on the shapes: never kept for the next call.
    count = pl.read(n, [0])
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[r : r + 1, :] = x[r : r + 1, :]
    return out
"""

EXTENTS = (7, 40, 7, 96, 1, 33, 96, 16, 7, 40) * 3


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("generic_session_kernels", KERNELS)
    return module


@pytest.mark.parametrize(
    "name, reference",
    [("add_rows", lambda x, y: x + y), ("mul_of_sum", lambda x, y: (x + y) * x)],
)
def test_alternating_extents_each_get_their_own_result(kernels, monkeypatch, name, reference):
    from pypto.jit import decorator

    fn = getattr(kernels, name)
    fn.clear_cache()
    compiles = []
    compile_once = decorator._core.compile
    monkeypatch.setattr(decorator._core, "compile", lambda *a, **k: compiles.append(1) or compile_once(*a, **k))
    torch.manual_seed(0)
    for call, tokens in enumerate(EXTENTS):
        x, y = torch.randn(tokens, 64), torch.randn(tokens, 64)
        # A guard row past the end: a run that kept an earlier, longer extent would write it.
        out = torch.full((tokens + 1, 64), 123.0)
        fn(x, y, out[:tokens])
        torch.testing.assert_close(out[:tokens], reference(x, y), msg=lambda m: f"call {call} ({tokens} rows): {m}")
        assert torch.all(out[tokens] == 123.0), f"call {call} ({tokens} rows) wrote past its extent"
    assert len(compiles) == 1
    assert fn._cache.fallback == {}  # the generic build, not one per extent
    assert len(fn._cache.by_extent) == 1


def test_one_compiled_program_called_directly_at_alternating_extents(kernels):
    """The CompiledProgram itself (what ``fn(...)`` runs once compiled), called at each extent in turn."""
    kernels.add_rows.clear_cache()
    program = kernels.add_rows.compile(torch.zeros(8, 64), torch.zeros(8, 64), torch.zeros(8, 64))
    for tokens in EXTENTS:
        x, y, out = torch.randn(tokens, 64), torch.randn(tokens, 64), torch.zeros(tokens, 64)
        program(x, y, out)
        torch.testing.assert_close(out, x + y)


def test_a_plan_that_read_a_tensor_is_expanded_again_at_the_same_shapes(kernels):
    kernels.counted_rows.clear_cache()
    for tokens, count in ((40, 3), (40, 11), (7, 5), (40, 3), (7, 7), (40, 40)):
        x, out = torch.randn(tokens, 64), torch.zeros(tokens, 64)
        reports = () if count == tokens else (
            f"output 'out' [{tokens}, 64] float32: {(tokens - count) * 64} of {tokens * 64} elements were never "
            f"written: all of rows {count}..{tokens - 1}",)
        with unwritten(*reports):
            kernels.counted_rows(x, torch.tensor([count], dtype=torch.int32), out)
        torch.testing.assert_close(out[:count], x[:count])
        assert is_poison(out[count:]), f"{tokens} rows, count {count}: rows past the count were written"
    assert kernels.counted_rows._cache.fallback == {}
