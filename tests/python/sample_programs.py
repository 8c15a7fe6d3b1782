"""Small programs more than one test file runs."""

# A @pl.program that doubles a 16x16 tensor, as the printer writes programs (an Opaque entry calling
# one InCore kernel); the importing test supplies `import pypto.language as pl`.
TWICE_PROGRAM = """
@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out_1: pl.Tensor[[16, 16], pl.FP32] = self.twice(x, out)
        return out_1

    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        pl.tile.store(pl.tile.muls(t, 2.0), [0, 0], out)
        return out
"""


# Two @pl.jit kernels on [32, 64] FP32 tensors: add(x, y, out) and add_scalar(x, a, y), as a module's
# whole source.
ADD_KERNELS = """
import pypto.language as pl


@pl.jit
def add(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [32, 64]), pl.load(y, [0, 0], [32, 64])), [0, 0], out)
    return out


@pl.jit
def add_scalar(x: pl.Tensor[[32, 64], pl.FP32], a: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:32, :] = pl.add(x[0:32, :], a)
    return y
"""
