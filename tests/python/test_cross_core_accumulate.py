"""A CORE_GROUP scope that adds a product into a tensor it also reads, column block by column block:
the cube computes each block's product and pushes it to the vector core, which adds the block of
`acc` it loaded and stores the sum back (cube -> vector); with the left operand computed on the vector
core first, the data crosses both ways. Split UP_DOWN or LEFT_RIGHT, each of the two vector lanes
takes half of every block.

`acc` is read and written, so the entry declares it pl.InOut: then every split gives torch's
numbers. Declared a plain pl.Tensor it is In (seed 001): a run leaves the caller's tensor as it was,
as a device skips its copy-back, and warns that the kernel's writes are lost."""

import pytest
import torch

import pypto.testing as testing

ROWS, INNER, COLS, BLOCK = 32, 64, 256, 64

SOURCE = '''
import pypto.language as pl

ROWS, INNER, COLS, BLOCK = {rows}, {inner}, {cols}, {block}


@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[ROWS, INNER], pl.FP32], w: pl.Tensor[[INNER, COLS], pl.FP32],
             acc: {acc_type}) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP{split}):
            for half in pl.range(0, 2):
                for quarter in pl.range(0, COLS // BLOCK // 2):
                    col = (half * (COLS // BLOCK // 2) + quarter) * BLOCK
                    block = pl.add(pl.slice(acc, [ROWS, BLOCK], [0, col]),
                                   pl.matmul({lhs}, pl.slice(w, [INNER, BLOCK], [0, col])))
                    acc = pl.assemble(acc, block, [0, col])
        return acc
'''

SPLITS = {"none": "", "up_down": ", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]",
          "left_right": ", optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]"}
LHS = {"cube_to_vector": ("x", lambda x: x), "both_ways": ("pl.add(x, 1.0)", lambda x: x + 1)}


def _program(write_kernel, split, direction, acc_type="pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]]"):
    source = SOURCE.format(rows=ROWS, inner=INNER, cols=COLS, block=BLOCK, acc_type=acc_type, split=SPLITS[split],
                           lhs=LHS[direction][0])
    module, _ = write_kernel(f"accumulate_{split}_{direction}", source)
    return module.Accumulate


def _specs():
    return [testing.TensorSpec("x", [ROWS, INNER], torch.float32, init_value=torch.randn),
            testing.TensorSpec("w", [INNER, COLS], torch.float32, init_value=torch.randn),
            testing.TensorSpec("acc", [ROWS, COLS], torch.float32, init_value=torch.randn)]


@pytest.mark.parametrize("split", list(SPLITS))
@pytest.mark.parametrize("direction", list(LHS))
def test_each_split_adds_the_product_into_the_blocks_of_acc(write_kernel, split, direction):
    lhs = LHS[direction][1]

    def golden(values):
        values["acc"] += lhs(values["x"]) @ values["w"]

    result = testing.run(_program(write_kernel, split, direction), _specs(), golden, rtol=1e-4, atol=1e-4, seed=7)
    assert result.passed, result.error


def test_a_plain_acc_keeps_the_callers_values_and_the_run_says_why(write_kernel):
    program = _program(write_kernel, "left_right", "cube_to_vector", acc_type="pl.Tensor[[ROWS, COLS], pl.FP32]")

    def golden(values):
        values["acc"] += values["x"] @ values["w"]

    with pytest.warns(UserWarning, match="parameter 'acc' of 'main' is a plain pl.Tensor, which the entry passes In"):
        kept = testing.run(program, _specs(), golden, rtol=1e-4, atol=1e-4, seed=7)
    assert not kept.passed
    assert "acc: 8192 of 8192 elements differ" in kept.error, kept.error
