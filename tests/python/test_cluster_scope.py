"""`with pl.cluster():` around the launches of orchestration code (upstream's SPMD paged attention wraps
its mixed softmax and update kernels in one): a co-scheduling request that changes nothing computed,
so its body runs as written. Checked against torch, and the errors for a cluster inside a kernel and
for launch options a clustered pl.spmd does not take, with their line and column."""

import re

import pytest
import torch

import pypto.language as pl
from pypto.language.parser import ParserSyntaxError
from pypto.testing import TensorSpec, run

PROGRAM = '''
R, C = 16, 32


@pl.program
class Clustered:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        t: pl.Tile[[R, C], pl.FP32] = pl.load(x, [0, 0], [R, C])
        return pl.store(pl.mul(t, 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
             out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        BODY
        return out
'''

CLUSTERED = """with pl.cluster(name_hint="pair"):
            with pl.spmd(core_num=2):
                y = self.scale(x, y)
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(y, [0, 0], [R, C])
                out = pl.store(pl.add(t, 1.0), [0, 0], out)"""


def test_the_launches_in_a_cluster_run_as_written(write_dsl):
    module, _ = write_dsl("clustered", PROGRAM.replace("BODY", CLUSTERED))
    specs = [TensorSpec("x", [16, 32], torch.float32, init_value=torch.randn(16, 32)),
             TensorSpec("y", [16, 32], torch.float32), TensorSpec("out", [16, 32], torch.float32)]

    def golden(t):
        t["y"][:] = t["x"] * 2.0
        t["out"][:] = t["y"] + 1.0

    result = run(module.Clustered, specs, golden)
    assert result.passed, result.error


@pytest.mark.parametrize("body, message, line, column", [
    ("""with pl.at(level=pl.Level.CORE_GROUP):
            with pl.cluster():
                out = self.scale(x, out)""",
     "'with pl.cluster()' groups kernel launches in orchestration code", 18, 18),
    ("""with pl.cluster():
            with pl.spmd(core_num=2, allow_early_resolve=True):
                out = self.scale(x, out)""",
     "pl.spmd(allow_early_resolve=...) is not accepted on a pl.spmd inside 'with pl.cluster()'", 18, 18),
    ("""with pl.cluster(4):
            out = self.scale(x, out)""",
     "pl.cluster() takes only name_hint=...", 17, 14),
], ids=["inside_a_kernel", "early_resolve_in_cluster", "positional_argument"])
def test_a_misplaced_cluster_is_an_error_at_its_line(write_dsl, body, message, line, column):
    with pytest.raises(ParserSyntaxError) as error:
        write_dsl(f"bad_cluster_{line}_{column}_{len(body)}", PROGRAM.replace("BODY", body))
    text = str(error.value)
    assert message in text, text
    assert re.search(rf"\.py:{line}:{column}\b", text), text
