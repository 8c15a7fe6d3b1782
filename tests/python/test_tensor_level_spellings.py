"""Upstream's tensor-level spellings inside kernels, where our values are tiles (pypto-lib's
qwen3_14b decode_layer_a8w8 writes them): `pl.mul(t, col)` of a [M, N] tile and a [M, 1] column is
the row broadcast, `pl.tensor.read(tile, [i, 0])` reads the tile's element, and
`pl.at(no_dep_args=[...])` is accepted. Checked against torch, with the errors and their line and
column."""

import re

import pytest
import torch

from pypto.language.parser import ParserSyntaxError, ParserTypeError
from pypto.testing import TensorSpec, run

PROGRAM = '''
M, N = 16, 64


@pl.program
class Forms:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, N], pl.FP32], s: pl.Tensor[[M, 1], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]], firsts: pl.Out[pl.Tensor[[M, 1], pl.FP32]]
             ) -> tuple[pl.Tensor[[M, N], pl.FP32], pl.Tensor[[M, 1], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[firsts]):
            t = pl.load(x, [0, 0], [M, N])
            col = pl.load(s, [0, 0], [M, 1])
            BODY
            out = pl.store(r, [0, 0], out)
            f = pl.full([M, 1], dtype=pl.FP32, value=0.0)
            for i in pl.range(M):
                pl.tensor.write(f, [i, 0], pl.tensor.read(r, [i, 0]))
            firsts = pl.store(f, [0, 0], firsts)
        return out, firsts
'''


@pytest.mark.parametrize("body, reference", [
    ("r = pl.mul(t, col)", lambda x, s: x * s),
    ("r = pl.add(col, t)", lambda x, s: x + s),
    ("r = pl.sub(t, col)", lambda x, s: x - s),
    ("r = pl.div(t, col)", lambda x, s: x / s),
], ids=["mul", "add_column_first", "sub", "div"])
def test_a_column_operand_broadcasts_along_the_rows(write_dsl, body, reference):
    module, _ = write_dsl(f"forms_{len(body)}_{body[6:9]}", PROGRAM.replace("BODY", body))
    specs = [TensorSpec("x", [16, 64], torch.float32, init_value=torch.randn),
             TensorSpec("s", [16, 1], torch.float32, init_value=lambda: torch.rand(16, 1) + 0.5),
             TensorSpec("out", [16, 64], torch.float32), TensorSpec("firsts", [16, 1], torch.float32)]

    def golden(t):
        t["out"][:] = reference(t["x"], t["s"])
        t["firsts"][:] = t["out"][:, 0:1]

    result = run(module.Forms, specs, golden)
    assert result.passed, result.error


def test_a_column_on_the_left_of_sub_is_an_error(write_dsl):
    with pytest.raises(ParserTypeError) as error:
        write_dsl("forms_sub_left", PROGRAM.replace("BODY", "r = pl.sub(col, t)"))
    text = str(error.value)
    assert "pl.sub: a [16, 1] column on the left of a [16, 64] tile has no row-broadcast form" in text, text
    assert re.search(r"forms_sub_left\.py:16:17\b", text), text


def test_no_dep_args_names_tensors(write_dsl):
    source = PROGRAM.replace("BODY", "r = pl.mul(t, col)").replace("no_dep_args=[firsts]", "no_dep_args=[nothing]")
    with pytest.raises(ParserSyntaxError) as error:
        write_dsl("forms_no_dep", source)
    text = str(error.value)
    assert "pl.at(no_dep_args=...) names tensors defined before the scope" in text, text
    assert re.search(r"forms_no_dep\.py:13:60\b", text), text
