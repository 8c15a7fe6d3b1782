"""An element read in orchestration code (`scale = pl.read(scales, [1])`, as pypto-lib's hc_pre reads
its gate scales) and used by kernels is read by each kernel that uses it, when it runs. A read whose
value the orchestration itself needs (a loop bound, a branch condition, a kernel's scalar argument)
is read from the caller's tensor when the run expands its task plan."""

from pathlib import Path

import pytest
import torch

import pypto.language as pl

from conftest import is_poison, unwritten


@pl.jit
def scaled_sum(x: pl.Tensor[[32, 64], pl.FP32], scales: pl.Tensor[[3], pl.FP32],
               y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    first = pl.read(scales, [0])
    second = pl.read(scales, [2])
    for r in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            t = x[r * 16 : r * 16 + 16, :]
            y[r * 16 : r * 16 + 16, :] = pl.add(pl.mul(t, first), second)
    return y


def test_a_read_used_by_kernels_matches_torch():
    x, scales = torch.randn(32, 64), torch.tensor([1.5, 7.0, -0.25])
    y = torch.full((32, 64), float("nan"))
    scaled_sum(x, scales, y)
    torch.testing.assert_close(y, x * 1.5 - 0.25)


def test_the_kernel_reads_the_elements_and_the_orchestration_does_not():
    x, scales = torch.zeros(32, 64), torch.zeros(3)
    text = str(scaled_sum.lower(x, scales, torch.zeros(32, 64)))
    kernel, orchestration = text.split("@pl.function(type=pl.FunctionType.Orchestration)")
    assert "first: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [0])" in kernel, text
    assert "second: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [2])" in kernel, text
    assert "read" not in orchestration, text


COUNTED_COPY = """
import pypto.language as pl

@pl.jit
def counted_copy(x: pl.Tensor[[32, 64], pl.FP32], n: pl.Tensor[[1], pl.INT32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    count = pl.read(n, [0])
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = x[r : r + 1, :]
    return y
"""


def test_a_read_may_bound_an_orchestration_loop(write_kernel):
    # The task plan is expanded at each run from the value the tensor holds.
    module, _ = write_kernel("counted_copy", COUNTED_COPY)
    x = torch.randn(32, 64)
    for count in (3, 11):
        y = torch.zeros(32, 64)
        with unwritten(f"output 'y' [32, 64] float32: {(32 - count) * 64} of 2048 elements were never written: "
                       f"all of rows {count}..31"):
            module.counted_copy(x, torch.tensor([count], dtype=torch.int32), y)
        torch.testing.assert_close(y[:count], x[:count])
        assert is_poison(y[count:])  # the loop ran `count` times: no row past them is written


def test_the_orchestration_cpp_reads_the_element_through_the_runtime(write_kernel):
    module, _ = write_kernel("counted_copy_cpp", COUNTED_COPY)
    compiled = module.counted_copy.compile(torch.zeros(32, 64), torch.ones(1, dtype=torch.int32), torch.zeros(32, 64))
    source = next(Path(compiled.output_dir).glob("orchestration/*.cpp")).read_text()
    assert "uint32_t count_index[1] = {static_cast<uint32_t>(0)};" in source, source
    assert "int32_t count = get_tensor_data<int32_t>(ext_n, 1, count_index);" in source, source


SCALED = """
import pypto.language as pl


@pl.program
class Scaled:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], config: pl.Tensor[[2], pl.FP32],
             flags: pl.Tensor[[1], pl.INT64], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        scale: pl.Scalar[pl.FP32] = pl.tensor.read(config, [1])
        negate = pl.tensor.read(flags, [0])
        if negate == 1:
            out = self.scale(x, -scale, out)
        else:
            out = self.scale(x, scale, out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[16, 32], pl.FP32], s: pl.Scalar[pl.FP32],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        out = pl.store(pl.mul(t, s), [0, 0], out)
        return out
"""


def test_reads_choose_the_branch_and_pass_a_kernel_its_scalar(write_kernel):
    import pypto.ir

    module, _ = write_kernel("scaled", SCALED)
    compiled = pypto.ir.compile(module.Scaled, platform="a2a3sim")
    x = torch.randn(16, 32)
    for negate, expected in ((0, x * 0.75), (1, x * -0.75)):
        out = torch.zeros(16, 32)
        compiled(x, torch.tensor([9.0, 0.75]), torch.tensor([negate]), out)
        torch.testing.assert_close(out, expected)


def test_a_read_outside_the_tensor_is_reported_at_the_read(write_kernel):
    module, path = write_kernel("counted_copy_oob", COUNTED_COPY.replace("pl.read(n, [0])", "pl.read(n, [n_index])")
                                .replace("    count =", "    n_index = 1\n    count ="))
    with pytest.raises(Exception) as error:
        module.counted_copy(torch.zeros(32, 64), torch.ones(1, dtype=torch.int32), torch.zeros(32, 64))
    assert "reads 'n' at [1], outside its shape [1]" in str(error.value), str(error.value)
    assert f"{path}:7:" in str(error.value), str(error.value)


def test_a_tensor_a_kernel_writes_cannot_be_read_afterwards(write_kernel):
    module, path = write_kernel("read_after_write", """
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[16, 64], pl.FP32], n: pl.InOut[pl.Tensor[[16, 64], pl.INT32]], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        n[0:16, :] = pl.cast(x[0:16, :], pl.INT32)
    count = pl.read(n, [0, 0])
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = x[r : r + 1, :]
    return y
""")
    with pytest.raises(Exception) as error:
        module.k(torch.ones(16, 64), torch.zeros(16, 64, dtype=torch.int32), torch.zeros(16, 64))
    assert "orchestration code reads 'n' after a kernel writes it" in str(error.value), str(error.value)
    assert f"{path}:8:" in str(error.value), str(error.value)


def test_an_intermediate_cannot_be_read_in_orchestration_code(write_kernel):
    module, path = write_kernel("read_intermediate", """
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    tmp = pl.create_tensor([16, 64], dtype=pl.INT32)
    count = pl.read(tmp, [0, 0])
    for r in pl.range(count):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 1, :] = x[r : r + 1, :]
    return y
""")
    with pytest.raises(Exception) as error:
        module.k(torch.ones(16, 64), torch.zeros(16, 64))
    assert "reads an element of 'tmp', which is not a parameter of the orchestration" in str(error.value), str(error.value)
    assert f"{path}:7:" in str(error.value), str(error.value)


def test_an_index_tensor_takes_int64_values(write_kernel):
    # pl.INDEX elements are 64-bit integers: the caller passes a torch.int64 tensor.
    from pypto.testing import TensorSpec, run

    module, _ = write_kernel("index_rows", """
import pypto.language as pl


@pl.program
class IndexRows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], rows: pl.Tensor[[2], pl.INDEX],
             y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        first = pl.tensor.read(rows, [0])
        count = pl.tensor.read(rows, [1])
        for r in pl.range(first, first + count):
            y = self.copy_row(x, r, y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def copy_row(self, x: pl.Tensor[[64, 32], pl.FP32], r: pl.Scalar[pl.INDEX],
                 y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        t = pl.load(x, [r, 0], [1, 32])
        y = pl.store(t, [r, 0], y)
        return y
""")
    specs = [TensorSpec("x", [64, 32], torch.float32, init_value=torch.randn),
             TensorSpec("rows", [2], torch.int64, init_value=torch.tensor([5, 9])),
             TensorSpec("y", [64, 32], torch.float32)]

    def golden(t):
        t["y"][5:14] = t["x"][5:14]
        t["y"][:5] = t["y"][14:] = float("nan")  # not compared here: checked to be unwritten below

    with unwritten("output 'y' [64, 32] float32: 1760 of 2048 elements were never written: all of rows 0..4, 14..63"):
        result = run(module.IndexRows, specs, golden, platform="a2a3sim")
    assert result.passed, result.error
    # Only rows 5..13 (first 5, count 9, each read as a whole int64) are copied.
    assert is_poison(result.outputs["y"][:5]) and is_poison(result.outputs["y"][14:])
