"""Module-level `@pl.function` kernels that a `@pl.program` calls by their bare name (`out = k(x, out)`),
as upstream's paged-attention examples share theirs between programs: from the program's own file,
from another module, and made by a factory whose arguments size them."""

import pytest
import torch

import pypto.ir
import pypto.language as pl
from pypto.language.parser import ParserSyntaxError

SHARED = '''
import pypto.language as pl

ROWS = 16


@pl.function(type=pl.FunctionType.InCore)
def double(x: pl.Tensor[[ROWS, 32], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]]) -> pl.Tensor[[ROWS, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [ROWS, 32])
    out = pl.store(pl.mul(t, 2.0), [0, 0], out)
    return out


def make_add(cols: int, value: float):
    @pl.function(type=pl.FunctionType.InCore)
    def add_value(x: pl.Tensor[[ROWS, cols], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, cols], pl.FP32]]) -> pl.Tensor[[ROWS, cols], pl.FP32]:
        t = pl.load(x, [0, 0], [ROWS, cols])
        out = pl.store(pl.add(t, value), [0, 0], out)
        return out

    return add_value
'''


@pytest.fixture
def shared(tmp_path, monkeypatch, write_kernel):
    monkeypatch.syspath_prepend(str(tmp_path))
    module, _ = write_kernel("shared_kernels", SHARED)
    return module


def program_source(body: str) -> str:
    return "import pypto.language as pl\nfrom shared_kernels import double, make_add\n\n" + body


TWO_KERNELS = program_source('''
add_three = make_add(32, 3.0)


@pl.program
class Shared:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        tmp = pl.create_tensor([16, 32], dtype=pl.FP32)
        tmp = double(x, tmp)
        out = add_three(tmp, out)
        return out
''')


def test_module_level_kernels_join_the_program_as_functions(shared, write_kernel):
    module, _ = write_kernel("two_kernels", TWO_KERNELS)
    text = str(module.Shared)
    assert "tmp_1: pl.Tensor[[16, 32], pl.FP32] = self.double(x, tmp)" in text, text
    assert "out_1: pl.Tensor[[16, 32], pl.FP32] = self.add_three(tmp_1, out)" in text, text
    # The factory's arguments size the kernel it made, under the name the program calls it by.
    assert "def add_three(self, x: pl.Tensor[[16, 32], pl.FP32]" in text, text
    assert "pl.tile.adds(t, 3.0)" in text, text


def test_module_level_kernels_run_against_torch(shared, write_kernel):
    import pypto.testing as testing

    module, _ = write_kernel("two_kernels_run", TWO_KERNELS)
    specs = [testing.TensorSpec("x", [16, 32], torch.float32, init_value=torch.randn),
             testing.TensorSpec("out", [16, 32], torch.float32)]

    def golden(t):
        t["out"][:] = t["x"] * 2.0 + 3.0

    result = testing.run(module.Shared, specs, golden, platform="a2a3sim")
    assert result.passed, result.error


def test_a_submit_may_name_a_module_level_kernel(shared, write_kernel):
    module, _ = write_kernel("submitted", program_source('''
@pl.program
class Submitted:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out, tid = pl.submit(double, x, out)
        return out
'''))
    x, out = torch.randn(16, 32), torch.zeros(16, 32)
    compiled = pypto.ir.compile(module.Submitted, platform="a2a3sim")
    compiled(x, out)
    torch.testing.assert_close(out, x * 2.0)


def test_an_error_inside_a_module_level_kernel_points_into_its_file(tmp_path, monkeypatch, write_kernel):
    monkeypatch.syspath_prepend(str(tmp_path))
    _, kernel_path = write_kernel("broken_kernels", '''import pypto.language as pl


@pl.function(type=pl.FunctionType.InCore)
def broken(x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 32])
    out = pl.store(pl.no_such_op(t), [0, 0], out)
    return out
''')
    with pytest.raises(Exception) as error:
        write_kernel("uses_broken", '''import pypto.language as pl
from broken_kernels import broken


@pl.program
class UsesBroken:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = broken(x, out)
        return out
''')
    assert "unknown operation 'pl.no_such_op'" in str(error.value), str(error.value)
    assert f"{kernel_path}:7:20" in str(error.value), str(error.value)


def test_a_method_may_not_share_a_module_level_kernels_name(shared, write_kernel):
    with pytest.raises(ParserSyntaxError) as error:
        write_kernel("clash", program_source('''
@pl.program
class Clash:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = double(x, out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return out
'''))
    assert "program 'Clash' defines 'double', which names a module-level @pl.function it calls too" in str(error.value)
    assert ":13:5" in str(error.value), str(error.value)


def test_a_module_level_kernel_takes_no_self(tmp_path, monkeypatch, write_kernel):
    monkeypatch.syspath_prepend(str(tmp_path))
    _, kernel_path = write_kernel("with_self", '''import pypto.language as pl


@pl.function(type=pl.FunctionType.InCore)
def k(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
    return x
''')
    with pytest.raises(ParserSyntaxError) as error:
        write_kernel("calls_with_self", '''import pypto.language as pl
from with_self import k


@pl.program
class CallsIt:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = k(x)
        return y
''')
    assert "module-level function 'k' takes 'self'" in str(error.value), str(error.value)
    assert f"{kernel_path}:5:7" in str(error.value), str(error.value)
