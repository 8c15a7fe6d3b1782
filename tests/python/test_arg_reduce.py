"""The index-of-extremum reductions pl.row_argmax/row_argmin/col_argmax/col_argmin on the simulator,
against torch.argmax/argmin: INT32 indices, the first of equal values, FP16 operands, a ragged valid
region, and the errors for operands the instructions do not take."""

import re

import pytest
import torch

from pypto.language.parser import ParserTypeError
from conftest import is_poison, kernels_fixture, unwritten

KERNELS = '''
import pypto.language as pl


@pl.jit
def arg_reduce(x: pl.Tensor[[16, 64], pl.FP32],
               row_max: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
               row_min: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
               col_max: pl.Out[pl.Tensor[[1, 64], pl.INT32]],
               col_min: pl.Out[pl.Tensor[[1, 64], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        tmp = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        pl.store(pl.tile.row_argmax(t, tmp), [0, 0], row_max)
        pl.store(pl.tile.row_argmin(t, tmp), [0, 0], row_min)
        pl.store(pl.col_argmax(t, tmp), [0, 0], col_max)
        pl.store(pl.col_argmin(t), [0, 0], col_min)   # the unified spelling creates its scratch tile
    return row_max, row_min, col_max, col_min


@pl.jit
def half_arg_reduce(x: pl.Tensor[[8, 128], pl.FP16],
                    row_max: pl.Out[pl.Tensor[[8, 1], pl.INT32]],
                    col_min: pl.Out[pl.Tensor[[1, 128], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [8, 128])
        pl.store(pl.row_argmax(t), [0, 0], row_max)
        pl.store(pl.col_argmin(t), [0, 0], col_min)
    return row_max, col_min


@pl.jit
def ragged_arg_reduce(x: pl.Tensor[[16, 16], pl.FP32], rows: pl.Scalar[pl.INDEX], cols: pl.Scalar[pl.INDEX],
                      row_min: pl.Out[pl.Tensor[[16, 1], pl.INT32]],
                      col_max: pl.Out[pl.Tensor[[1, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16], valid_shape=[rows, cols])
        pl.store(pl.row_argmin(t), [0, 0], row_min)
        pl.store(pl.col_argmax(t), [0, 0], col_max)
    return row_min, col_max


@pl.jit
def int_arg_reduce(x: pl.Tensor[[16, 16], pl.INT32], out: pl.Out[pl.Tensor[[16, 1], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(pl.row_argmax(t), [0, 0], out)
    return out


@pl.jit
def wide_scratch(x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[1, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        tmp = pl.tile.create([16, 128], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        pl.store(pl.tile.col_argmax(t, tmp), [0, 0], out)
    return out
'''

kernels = kernels_fixture("arg_reduce_kernels.py", KERNELS)


def line_of(text):
    """The 1-based line of the kernel source holding `text`."""
    return KERNELS[: KERNELS.index(text)].count("\n") + 1


def run_arg_reduce(kernels, x):
    outs = (torch.full((16, 1), -1, dtype=torch.int32), torch.full((16, 1), -1, dtype=torch.int32),
            torch.full((1, 64), -1, dtype=torch.int32), torch.full((1, 64), -1, dtype=torch.int32))
    kernels.arg_reduce(x, *outs)
    return outs


def expected_arg_reduce(x):
    return (x.argmax(dim=1, keepdim=True).int(), x.argmin(dim=1, keepdim=True).int(),
            x.argmax(dim=0, keepdim=True).int(), x.argmin(dim=0, keepdim=True).int())


def test_indices_of_distinct_values_match_torch(kernels):
    torch.manual_seed(0)
    x = torch.randperm(16 * 64).reshape(16, 64).float() - 500.0
    for got, want in zip(run_arg_reduce(kernels, x), expected_arg_reduce(x)):
        assert torch.equal(got, want)


def test_the_first_of_equal_values_wins(kernels):
    torch.manual_seed(1)
    x = torch.randint(0, 3, (16, 64)).float()  # every row and column repeats its extremum
    x[5, :] = 7.0                              # a row of equal values: index 0; row 5 holds each column's max
    for got, want in zip(run_arg_reduce(kernels, x), expected_arg_reduce(x)):
        assert torch.equal(got, want)
    assert run_arg_reduce(kernels, x)[0][5, 0] == 0


def test_a_nan_is_the_extremum_as_in_torch(kernels):
    x = torch.randn(16, 64)
    x[2, 40] = float("nan")
    x[2, 50] = float("nan")
    got = run_arg_reduce(kernels, x)
    assert got[0][2, 0] == 40 and got[1][2, 0] == 40
    assert got[2][0, 40] == 2 and got[3][0, 40] == 2
    for g, want in zip(got, expected_arg_reduce(x)):
        assert torch.equal(g, want)


def test_fp16_operands(kernels):
    torch.manual_seed(2)
    x = (torch.randperm(8 * 128).reshape(8, 128) - 512).half()  # distinct and exact in FP16
    x[3, 7] = x[3, 100] = 1000.0                                 # a tie: the first column wins
    row_max = torch.full((8, 1), -1, dtype=torch.int32)
    col_min = torch.full((1, 128), -1, dtype=torch.int32)
    kernels.half_arg_reduce(x, row_max, col_min)
    assert torch.equal(row_max, x.float().argmax(dim=1, keepdim=True).int())
    assert row_max[3, 0] == 7
    assert torch.equal(col_min, x.float().argmin(dim=0, keepdim=True).int())


@pytest.mark.parametrize("rows,cols", [(16, 16), (8, 16), (16, 8), (8, 12), (1, 1)])
def test_a_ragged_region_reduces_its_valid_part_and_writes_its_valid_indices(kernels, rows, cols):
    torch.manual_seed(rows * 100 + cols)
    x = torch.randn(16, 16)
    row_min = torch.full((16, 1), -1, dtype=torch.int32)
    col_max = torch.full((1, 16), -1, dtype=torch.int32)
    # Only the valid indices are stored: the run names the rest, which holds the simulator's poison.
    reports = []
    if rows < 16:
        reports.append(f"output 'row_min' [16, 1] int32: {16 - rows} of 16 elements were never written: "
                       f"all of rows {rows}..15")
    if cols < 16:
        reports.append(f"output 'col_max' [1, 16] int32: {16 - cols} of 16 elements were never written: "
                       f"part of rows 0 (columns {cols}..15)")
    with unwritten(*reports):
        kernels.ragged_arg_reduce(x, rows, cols, row_min, col_max)
    assert torch.equal(row_min[:rows, 0], x[:rows, :cols].argmin(dim=1).int())
    assert torch.equal(col_max[0, :cols], x[:rows, :cols].argmax(dim=0).int())
    assert is_poison(row_min[rows:]) and is_poison(col_max[:, cols:])


def test_the_result_type_is_int32_along_the_kept_axis(kernels):
    x = torch.randn(16, 16)
    text = str(kernels.ragged_arg_reduce.lower(x, 8, 12, torch.zeros(16, 1, dtype=torch.int32),
                                               torch.zeros(1, 16, dtype=torch.int32)))
    memref = r"pl\.MemRef\(\d+, \d+\)"
    assert re.search(rf"pl\.Tile\[\[16, 1\], pl\.INT32, {memref}, pl\.Mem\.Vec, "
                     r"pl\.TileView\(valid_shape=\[8, 1\]\)\] = pl\.tile\.row_argmin\(t, ", text)
    assert re.search(rf"pl\.Tile\[\[1, 16\], pl\.INT32, {memref}, pl\.Mem\.Vec, "
                     r"pl\.TileView\(valid_shape=\[1, 12\]\)\] = pl\.tile\.col_argmax\(t, ", text)


def test_integer_operands_are_refused_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.int_arg_reduce(torch.zeros(16, 16, dtype=torch.int32), torch.zeros(16, 1, dtype=torch.int32))
    message = str(info.value)
    assert ("the operand of tile.row_argmax must be an FP16 or FP32 tile, got pl.Tile[[16, 16], pl.INT32, "
            "pl.Mem.Vec]") in message
    assert f"arg_reduce_kernels.py:{line_of('pl.row_argmax(t), [0, 0], out')}:" in message


def test_a_scratch_tile_unlike_the_operand_is_refused(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.wide_scratch(torch.randn(16, 16), torch.zeros(1, 16, dtype=torch.int32))
    message = str(info.value)
    assert ("the scratch tile of tile.col_argmax must be a [16, 16] FP32 tile like its operand, got "
            "pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec]") in message
    assert f"arg_reduce_kernels.py:{line_of('pl.tile.col_argmax(t, tmp)')}:" in message


PROGRAM = '''import pypto.language as pl


@pl.program
class TensorArgmax:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[32, 64], pl.FP32],
               out: pl.InOut[pl.Tensor[[32, 1], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        r: pl.Tensor[[32, 1], RESULT_DTYPE] = pl.row_argmax(a)
        return pl.assemble(out, r, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[32, 64], pl.FP32],
                     out: pl.InOut[pl.Tensor[[32, 1], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        return self.kernel(a, out)
'''


def import_program(tmp_path, name, source):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_names_the_index_tile_of_whole_tensors_a_tensor(tmp_path):
    # Upstream's tensor-level spelling: inside an InCore function pl.row_argmax(a) of a whole tensor
    # loads it and computes a tile, which a pl.Tensor annotation of its shape and dtype may name.
    import pypto.ir

    module = import_program(tmp_path, "tensor_argmax", PROGRAM.replace("RESULT_DTYPE", "pl.INT32"))
    compiled = pypto.ir.compile(module.TensorArgmax, platform="a2a3sim", output_dir=str(tmp_path / "out"))
    a = torch.randn(32, 64)
    out = torch.full((32, 1), -1, dtype=torch.int32)
    compiled(a, out)
    assert torch.equal(out, a.argmax(dim=1, keepdim=True).int())


def test_a_tensor_annotation_of_another_dtype_is_refused(tmp_path):
    with pytest.raises(ParserTypeError) as info:
        import_program(tmp_path, "tensor_argmax_fp32", PROGRAM.replace("RESULT_DTYPE", "pl.FP32"))
    message = str(info.value)
    assert ("'r' is declared pl.Tensor[[32, 1], pl.FP32] but the value assigned is pl.Tile[[32, 1], pl.INT32, "
            "pl.Mem.Vec]") in message
    assert "tensor_argmax_fp32.py:9:12" in message
