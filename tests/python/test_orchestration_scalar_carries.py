"""Scalars carried by orchestration loops (`longest = pl.max(longest, n)` over a batch, as upstream's
batched paged attention computes its block count): the loop runs when the plan is expanded, also
when it submits nothing, and later loops and kernels read the result. Checked against torch, in the
generated C++, and when carried scalars are updated from each other. Also: an integer scalar takes
the dtype its annotation declares (an INT32 element and an INT64 one give an INT64 block count)."""

import pytest
import torch

import pypto.language as pl

from conftest import is_poison, unwritten


@pl.jit
def prefix_rows(lens: pl.Tensor[[4], pl.INT32], x: pl.Tensor[[8, 32], pl.FP32],
                y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    longest: pl.Scalar[pl.INT64] = 0
    for b in pl.range(4):
        longest = pl.max(longest, pl.read(lens, [b]))
    total: pl.Scalar[pl.INT64] = 0
    for i in pl.range(longest):
        total = total + i
        with pl.at(level=pl.Level.CORE_GROUP):
            y[i : i + 1, :] = pl.add(x[i : i + 1, :], pl.cast(total, pl.FP32))
    return y


def _expected(lens, x):
    y = torch.zeros_like(x)
    total: pl.Scalar[pl.INT64] = 0
    for i in range(int(lens.max())):
        total += i
        y[i] = x[i] + total
    return y


@pytest.mark.parametrize("lens", [[3, 5, 2, 1], [1, 2, 7, 1]])
def test_a_scalar_carried_by_a_loop_without_kernels_bounds_a_later_loop(lens):
    lens = torch.tensor(lens, dtype=torch.int32)
    x, y = torch.randn(8, 32), torch.zeros(8, 32)
    longest = int(lens.max())
    rows = f"{longest}..7" if longest < 7 else "7"
    # The carried bound is the longest length: the later loop writes that many rows and no more.
    with unwritten(f"output 'y' [8, 32] float32: {(8 - longest) * 32} of 256 elements were never written: "
                   f"all of rows {rows}"):
        prefix_rows(lens, x, y)
    torch.testing.assert_close(y[:longest], _expected(lens, x)[:longest])
    assert is_poison(y[longest:])


def test_the_carried_scalar_is_a_cpp_variable_assigned_where_the_body_ends():
    compiled = prefix_rows.compile(torch.ones(4, dtype=torch.int32), torch.zeros(8, 32), torch.zeros(8, 32))
    source = compiled._artifacts.orchestration_source
    # Declared before the loop from its starting value, assigned the body's value at its end.
    assert "  int64_t longest_1 = longest;\n    for (int64_t b = 0; b < 4; b += 1) {\n" in source, source
    assert "int64_t longest_2 = std::max<int64_t>(longest_1, t___tmp_v0);\n" in source, source
    assert "const int64_t longest_next = longest_2;\n        longest_1 = longest_next;\n" in source, source


def test_carried_scalars_take_their_next_values_together(write_dsl):
    # Each new value is computed from the iteration's old ones: a Fibonacci step, then a swap.
    module, _ = write_dsl(
        "fibonacci",
        "\n@pl.jit\n"
        "def fib(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n"
        "    a: pl.Scalar[pl.INT64] = 0\n"
        "    b: pl.Scalar[pl.INT64] = 1\n"
        "    for i in pl.range(6):\n"
        "        c = a + b\n"
        "        a = b\n"
        "        b = c\n"
        "    p: pl.Scalar[pl.INT64] = 2\n"
        "    q: pl.Scalar[pl.INT64] = 100\n"
        "    for i in pl.range(3):\n"
        "        t = p\n"
        "        p = q\n"
        "        q = t\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n"
        "        y[:] = pl.add(pl.mul(x, pl.cast(b, pl.FP32)), pl.cast(p, pl.FP32))\n"
        "    return y\n",
    )
    x, y = torch.randn(16, 32), torch.zeros(16, 32)
    module.fib(x, y)
    torch.testing.assert_close(y, x * 13.0 + 100.0)


@pl.program
class BlockCount:
    @pl.function(type=pl.FunctionType.InCore)
    def add_row(self, x: pl.Tensor[[8, 32], pl.FP32], i: pl.Scalar[pl.INDEX],
                y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        row = pl.load(x, [i, 0], [1, 32])
        y = pl.store(pl.add(row, 1.0), [i, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lens: pl.Tensor[[2], pl.INT32], config: pl.Tensor[[1], pl.INT64],
             x: pl.Tensor[[8, 32], pl.FP32], y: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        seq = pl.tensor.read(lens, [0])
        block = pl.tensor.read(config, [0])
        # An INT32 element with an INT64 one: the annotation's dtype is the variable's.
        blocks: pl.Scalar[pl.INT64] = (seq + block - 1) // block
        for i in pl.range(blocks):
            y = self.add_row(x, i, y)
        return y


def test_an_integer_scalar_takes_the_dtype_its_annotation_declares():
    text = str(BlockCount)
    assert "blocks: pl.Scalar[pl.INT64] = pl.scalar.cast(((seq + block) - 1) // block, target_type=pl.INT64)" in text, text
    x, y = torch.randn(8, 32), torch.zeros(8, 32)
    import pypto.runtime

    with unwritten("output 'y' [8, 32] float32: 160 of 256 elements were never written: all of rows 3..7"):
        pypto.runtime.run(BlockCount, torch.tensor([10, 1], dtype=torch.int32), torch.tensor([4]), x, y)
    torch.testing.assert_close(y[:3], x[:3] + 1.0)  # ceil(10 / 4) rows
    assert is_poison(y[3:])
