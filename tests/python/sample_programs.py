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
