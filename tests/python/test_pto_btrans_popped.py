"""A b_trans matmul whose right operand is computed on the vector core: the mixed kernel's cube member
pops it into a pipe slot (which owns no buffer of the kernel's) and reads it transposed through a
`pto.treshape` of the pop, a [K, N] ZN view of the slot's bytes, as upstream pypto views a tpop slot.
The module conforms to PTOAS a56b18c32af3, and the numbers stay torch's."""

import re
import warnings
from pathlib import Path

import pypto.language as pl
import torch

from pto_dialect import pto_check

M, K, N = 16, 32, 48


@pl.program
class ProductWithASum:
    """out = a @ (w0 + w1)^T: the sum is the vector core's, the product the cube's."""

    @pl.function(type=pl.FunctionType.InCore)
    def fused(self, a: pl.Tensor[[M, K], pl.FP32], w0: pl.Tensor[[N, K], pl.FP32], w1: pl.Tensor[[N, K], pl.FP32],
              out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        w = pl.add(w0, w1)
        product = pl.matmul(a, w, b_trans=True, out_dtype=pl.FP32)
        return pl.assemble(out, product, offset=[0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], w0: pl.Tensor[[N, K], pl.FP32], w1: pl.Tensor[[N, K], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        out = self.fused(a, w0, w1, out)
        return out


def test_the_popped_sum_is_read_transposed_in_its_slot(tmp_path):
    from pypto.ir import compile

    build = tmp_path / "build"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto is a warning
        compiled = compile(ProductWithASum, output_dir=str(build))
    a, w0, w1 = torch.randn(M, K), torch.randn(N, K), torch.randn(N, K)
    out = torch.zeros(M, N)
    compiled(a, w0, w1, out)
    torch.testing.assert_close(out, a @ (w0 + w1).T, rtol=1e-4, atol=1e-4)

    (pto,) = Path(build / "kernels" / "aic").glob("*.pto")
    lines = [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.read_text().splitlines()]
    mat = ("!pto.tile_buf<loc=mat, dtype=f32, rows=48, cols=32, v_row=?, v_col=?, blayout=col_major, "
           "slayout=row_major, fractal=512, pad=0>")
    view = ("!pto.tile_buf<loc=mat, dtype=f32, rows=32, cols=48, v_row=32, v_col=48, blayout=row_major, "
            "slayout=col_major, fractal=512, pad=0>")
    (pop,) = [i for i, line in enumerate(lines) if "pto.tpop_from_aiv" in line]
    name = lines[pop].split(" = ")[0]
    assert lines[pop] == f"{name} = pto.tpop_from_aiv(%c48_index, %c32_index) {{split = 0}} -> {mat}"
    assert lines[pop + 1] == f"{name}_t = pto.treshape {name} : {mat} -> {view}"
    assert lines[pop + 2].startswith(f"pto.tmov ins({name}_t : {view}) outs(")
    assert lines[pop + 3] == "pto.tfree_from_aiv {split = 0}"
    report = pto_check.check_paths([build])
    assert not report.problems, "\n".join(map(str, report.problems))
