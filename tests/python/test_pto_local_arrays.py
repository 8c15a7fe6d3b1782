"""On-core arrays (pl.array.create in a kernel) in its .pto: stack-local arrays, as upstream pypto's
PTO emitter (hw-native-sys/pypto e2d0f78ae) writes them. Every array value a loop, an if or an update
derives from one pl.array.create names that one storage, declared once and written in place; the
elements are read into index values. The module conforms to pto-check's table (the local array ops
from its separate upstream-emitter source), and the kernel still counts right on the simulator."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms, pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def count(idx: pl.Tensor[[4, 2], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.array.create(4, pl.INT32)
        for d in pl.range(4):
            c[d] = 0
        for t in pl.range(4):
            for k in pl.range(2):
                e = pl.read(idx, [t, k])
                if e != 2:
                    c[e] = c[e] + 1
        row = pl.tile.full([1, 8], dtype=pl.INT32, value=0)
        for d in pl.range(4):
            pl.tile.write(row, [0, d], c[d])
        pl.store(row, [0, 0], out)
    return out
'''

kernels = kernels_fixture("pto_local_arrays.py", KERNELS)
IDX = torch.tensor([[0, 1], [1, 2], [3, 3], [0, 3]], dtype=torch.int32)


@pytest.fixture(scope="module")
def compiled(kernels):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        return kernels.count.compile(IDX, torch.zeros(1, 8, dtype=torch.int32), config=RunConfig(platform="a2a3sim"))


def module_lines(compiled, suffix=".pto"):
    (path,) = Path(compiled.output_dir).glob(f"kernels/*/*{suffix}")
    return [re.sub(r" loc\(.*\)$", "", line).strip() for line in path.read_text().splitlines()]


def test_the_array_is_declared_once_and_updated_in_place(compiled):
    lines = module_lines(compiled)
    assert lines.count("%c = pto.declare_local_array -> !pto.local_array<4xi32>") == 1
    assert [line for line in lines if "local_array" in line and "declare" not in line] == [
        "pto.local_array_set %c[%d], %c0_i32 : !pto.local_array<4xi32>, i32",
        "%4 = pto.local_array_get %c[%e] : !pto.local_array<4xi32> -> i32",
        "pto.local_array_set %c[%e], %6 : !pto.local_array<4xi32>, i32",
        "%8 = pto.local_array_get %c[%7] : !pto.local_array<4xi32> -> i32",
    ]
    at = lines.index("%4 = pto.local_array_get %c[%e] : !pto.local_array<4xi32> -> i32")
    assert lines[at + 1:at + 4] == ["%__tmp_v0 = arith.index_cast %4 : i32 to index",
                                    "%5 = arith.addi %__tmp_v0, %c1_index : index",
                                    "%6 = arith.index_cast %5 : index to i32"]


def test_the_module_conforms_and_the_kernel_counts(compiled):
    assert_conforms(compiled.output_dir)
    generic = "\n".join(module_lines(compiled, ".generic.mlir"))
    assert ('"pto.local_array_set"(%c, %e, %6) : (!pto.local_array<4xi32>, index, i32) -> ()') in generic
    out = torch.zeros(1, 8, dtype=torch.int32)
    compiled(IDX, out)
    expected = torch.zeros(1, 8, dtype=torch.int32)
    for e in IDX.flatten().tolist():
        if e != 2:
            expected[0, e] += 1
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_the_checker_rejects_a_local_array_get_without_its_index(compiled, tmp_path):
    lines = module_lines(compiled, ".generic.mlir")
    number = next(i for i, line in enumerate(lines, 1) if '"pto.local_array_get"(%c, %e)' in line)
    lines[number - 1] = lines[number - 1].replace('"pto.local_array_get"(%c, %e)', '"pto.local_array_get"(%c)')
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    assert [str(p) for p in pto_check.check_paths([path]).problems] == [
        f"{path}:{number}: op 'pto.local_array_get': expected 2 operands (array, index), got 1"]
