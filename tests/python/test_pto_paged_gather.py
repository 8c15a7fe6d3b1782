"""pl.paged_gather in a .pto: upstream pypto's per-row loop (both INT32 tables read with
pto.load_scalar, each row loaded from its page straight into its row of the result), into a Vec
tile through PTOAS's pto.subset and into a Mat tile through upstream's pto.subview, which pto-check's
table holds under its upstream-emitter source. Both modules conform, the simulator's rows are
torch's, and a subview without its sizes is rejected with its op and line."""

import re
import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def gather_vec(src: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[16], pl.INT32], bt: pl.Tensor[[8], pl.INT32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=pl.MemorySpace.Vec)
        out = pl.assemble(out, rows, [0, 0])
    return out


@pl.jit
def gather_mat(src: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[16], pl.INT32], bt: pl.Tensor[[8], pl.INT32],
               eye: pl.Tensor[[16, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=pl.MemorySpace.Mat,
                               is_b_matrix=True)
        out = pl.assemble(out, pl.matmul(eye, rows, out_dtype=pl.FP32), [0, 0])
    return out
'''

kernels = kernels_fixture("pto_paged_gather.py", KERNELS)


def inputs():
    torch.manual_seed(0)
    src = torch.randn(64, 32).to(torch.float16)
    idx = torch.tensor([(i * 7 + 3) % 64 for i in range(16)], dtype=torch.int32)
    return src, idx, torch.randperm(8).to(torch.int32)


def golden(src, idx, bt):
    return torch.stack([src[int(bt[int(l) // 8]) * 8 + int(l) % 8] for l in idx])


def compile_strictly(kernel, core, *args):
    """Compiles for a2a3sim, failing on any warning (a kernel without a .pto is one): the .pto text and
    its generic form's path; every module conforms to the PTO dialect outright."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob(f"kernels/{core}/*.pto")
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    return compiled, pto.read_text(), pto.with_name(pto.stem + ".generic.mlir")


def loop_ops(pto):
    return re.findall(r"^\s+(?:%\w+ = )?([\w.]+) ", pto.split("scf.for")[1].split("\n    }")[0], re.M)


def test_a_vec_result_is_loaded_row_by_row_through_subset_views(kernels):
    src, idx, bt = inputs()
    out = torch.empty(16, 32, dtype=torch.float16)
    compiled, pto, _ = compile_strictly(kernels.gather_vec, "aiv", src, idx, bt, out)
    assert loop_ops(pto) == ["pto.load_scalar", "arith.index_cast", "arith.floordivsi", "arith.muli", "arith.subi",
                             "pto.load_scalar", "arith.index_cast", "arith.muli", "arith.addi", "pto.partition_view",
                             "pto.subset", "pto.tload"]
    assert "sizes = [%c1_index, %c32_index] : !pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<1x32xf16>" in pto
    compiled(src, idx, bt, out)
    assert torch.equal(out, golden(src, idx, bt))


def test_a_mat_result_is_loaded_through_upstreams_subview(kernels):
    src, idx, bt = inputs()
    out = torch.empty(16, 32)
    compiled, pto, _ = compile_strictly(kernels.gather_mat, "aic", src, idx, bt, torch.eye(16, dtype=torch.float16),
                                        out)
    assert "pto.subview" in loop_ops(pto) and "pto.subset" not in pto
    assert re.search(r"= pto\.subview %\w+\[%\w+, %c0_index\] sizes \[16, 32\] valid \[%c1_index, %c32_index\] : "
                     r"!pto\.tile_buf<loc=mat, [^>]*> -> !pto\.tile_buf<loc=mat, dtype=f16, rows=16, cols=32,", pto)
    compiled(src, idx, bt, torch.eye(16, dtype=torch.float16), out)
    assert torch.equal(out, golden(src, idx, bt).float())


def test_the_table_has_upstreams_subview_and_rejects_one_without_sizes(kernels, tmp_path):
    table = pto_check.load_table()
    subview = table["ops"]["pto.subview"]
    assert subview["source"] == "upstream pypto e2d0f78ae's PTO emitter"
    assert [(o["name"], o["arity"]) for o in subview["operands"]] == [
        ("source", "single"), ("offsets", "variadic"), ("valid_row", "optional"), ("valid_col", "optional")]
    src, idx, bt = inputs()
    _, _, generic = compile_strictly(kernels.gather_mat, "aic", src, idx, bt, torch.eye(16, dtype=torch.float16),
                                     torch.empty(16, 32))
    lines = generic.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if '"pto.subview"(' in line)
    assert "sizes = [16, 32], " in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace("sizes = [16, 32], ", "", 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    problems = [str(p) for p in pto_check.check_paths([path]).problems]
    assert problems == [f"{path}:{number}: op 'pto.subview': missing required attribute 'sizes' (an array of i64 "
                        "('[1, 2]'))"]
