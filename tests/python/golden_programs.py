"""Small programs whose generated artifacts (orchestration C++, PTO modules) are compared with the
texts checked in under golden/ (test_golden_artifacts.py). One of each shape a backend emits:
element-wise, matmul, a mixed cube + vector scope, an SPMD kernel scope, and hand-written kernels
launched on blocks and as an AIC + AIV group."""

import pypto.language as pl


@pl.jit
def elementwise(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.exp(pl.add(x[:, :], y[:, :]))
    return out


@pl.jit
def matmul(a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 16], pl.FP16],
           c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.matmul(a, b, out_dtype=pl.FP32)
    return c


@pl.jit
def mixed(a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 16], pl.FP16], bias: pl.Tensor[[32, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)], name_hint="mixed"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        out[:] = pl.add(acc, bias)
    return out


@pl.jit
def spmd(x: pl.Tensor[[64, 32], pl.FP32], out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.spmd(4, name_hint="rows"):
        block = pl.tile.get_block_idx()
        out[block * 16 : block * 16 + 16, :] = pl.mul(x[block * 16 : block * 16 + 16, :], 2.0)
    return out


EXTERN_SPMD = """
import pypto.language as pl


@pl.program
class ExternRows:
    @pl.function(type=pl.FunctionType.AIV, external_source="rows.cpp")
    def rows(self, scale: pl.Scalar[pl.INDEX],
             out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        with pl.spmd(core_num=4):
            out = self.rows(3, out)
        return out
"""

EXTERN_GROUP = """
import pypto.language as pl


@pl.program
class ExternGroup:
    @pl.function(type=pl.FunctionType.AIC, external_source="cube.cpp")
    def k_aic(self, a: pl.Tensor[[8, 8], pl.FP32],
              out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.AIV, external_source="vec.cpp", attrs={"dual_aiv_dispatch": True})
    def k_aiv(self, a: pl.Tensor[[8, 8], pl.FP32],
              out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Group)
    def k(self, a: pl.Tensor[[8, 8], pl.FP32],
          out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        self.k_aic(a, out)
        out = self.k_aiv(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        out = self.k(a, out)
        return out
"""
