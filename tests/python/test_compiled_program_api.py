"""The compiled program as upstream's harnesses use it: the metadata a caller reads off it, the call
that leaves out the outputs and gets them back, the JIT's cache of compiled programs, and the
``debug/run.py`` every build directory carries."""

import subprocess
import sys

import pytest
import torch

import pypto.ir
from pypto.ir.compiled_program import CompiledProgram
from pypto.runtime import CompiledProgram as RuntimeCompiledProgram
from sample_programs import ADD_KERNELS, TWICE_PROGRAM

KERNELS = ADD_KERNELS + """

@pl.jit
def sum_and_product(x: pl.Tensor, y: pl.Tensor, total: pl.Out[pl.Tensor], product: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a = pl.load(x, [0, 0], [32, 64])
        b = pl.load(y, [0, 0], [32, 64])
        pl.store(pl.add(a, b), [0, 0], total)
        pl.store(pl.mul(a, b), [0, 0], product)
    return total, product


@pl.jit
def accumulate(x: pl.Tensor, acc: pl.InOut[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.add(pl.load(x, [0, 0], [32, 64]), pl.load(acc, [0, 0], [32, 64]))
        pl.store(s, [0, 0], acc)
        pl.store(s, [0, 0], out)
    return acc, out


@pl.jit
def add_no_return(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [32, 64]), pl.load(y, [0, 0], [32, 64])), [0, 0], out)
"""


@pytest.fixture
def kernels(write_kernel):
    module, _ = write_kernel("api_kernels", KERNELS)
    return module


def _inputs():
    return torch.randn(32, 64), torch.randn(32, 64)


def test_upstreams_module_path_names_the_same_class(kernels):
    x, y = _inputs()
    compiled = kernels.add.compile(x, y, torch.zeros(32, 64))
    assert CompiledProgram is RuntimeCompiledProgram
    assert isinstance(compiled, CompiledProgram)


def test_a_call_with_the_inputs_only_returns_the_output(kernels):
    x, y = _inputs()
    out = torch.zeros(32, 64)
    compiled = kernels.add.compile(x, y, out)
    result = compiled(x, y)
    assert isinstance(result, torch.Tensor) and result.shape == (32, 64) and result.dtype == torch.float32
    torch.testing.assert_close(result, x + y)
    assert not out.any(), "the tensor compiled with is not the one written"
    torch.testing.assert_close(compiled(x=x, y=y), x + y)


def test_a_call_with_every_tensor_writes_in_place_and_returns_nothing(kernels):
    x, y = _inputs()
    out = torch.zeros(32, 64)
    compiled = kernels.add.compile(x, y, out)
    assert compiled(x, y, out) is None
    torch.testing.assert_close(out, x + y)


def test_several_outputs_come_back_as_a_tuple_in_parameter_order(kernels):
    x, y = _inputs()
    compiled = kernels.sum_and_product.compile(x, y, torch.zeros(32, 64), torch.zeros(32, 64))
    total, product = compiled(x, y)
    torch.testing.assert_close(total, x + y)
    torch.testing.assert_close(product, x * y)


def test_a_scalar_is_an_input_of_a_return_style_call(kernels):
    (x, _) = _inputs()
    compiled = kernels.add_scalar.compile(x, 1.5, torch.zeros(32, 64))
    assert compiled.param_names == ["x", "a", "y"]
    assert compiled.output_indices == [2]
    torch.testing.assert_close(compiled(x, 1.5), x + 1.5)


def test_metadata_names_parameters_and_the_positions_of_the_outputs(kernels):
    x, y = _inputs()
    compiled = kernels.add.compile(x, y, torch.zeros(32, 64))
    assert compiled.param_names == ["x", "y", "out"]
    assert compiled.output_indices == [2]
    assert compiled.has_return is True
    assert compiled.output_dir.is_dir() and (compiled.output_dir / "pypto_manifest.json").is_file()


def test_an_in_out_tensor_is_passed_by_the_caller_even_in_a_return_style_call(kernels):
    x, acc = _inputs()
    compiled = kernels.accumulate.compile(x, acc, torch.zeros(32, 64))
    assert compiled.output_indices == [2], "pl.InOut is read, so it is never allocated"
    assert compiled.output_names == ["acc", "out"]
    before = acc.clone()
    out = compiled(x, acc)
    torch.testing.assert_close(out, x + before)
    torch.testing.assert_close(acc, x + before)


def test_a_return_style_call_with_the_wrong_number_of_arguments_says_what_it_takes(kernels):
    x, y = _inputs()
    compiled = kernels.add.compile(x, y, torch.zeros(32, 64))
    expected = r"^add expects 3 arguments \(x, y, out\), or its 2 inputs \(x, y\) to get its outputs returned; got 1$"
    with pytest.raises(TypeError, match=expected):
        compiled(x)
    with pytest.raises(TypeError, match=r"got 4$"):
        compiled(x, y, x, y)
    with pytest.raises(TypeError, match=r"or its 2 inputs \(x, y\) .*; got 2$"):
        compiled(x, out=torch.zeros(32, 64))  # an output named: not a call with the inputs only


def test_a_program_that_returns_nothing_takes_its_outputs_from_the_caller(kernels):
    x, y = _inputs()
    compiled = kernels.add_no_return.compile(x, y, torch.zeros(32, 64))
    assert compiled.has_return is False
    assert compiled.output_indices == [2]
    with pytest.raises(TypeError, match=r"^add_no_return expects 3 arguments \(x, y, out\); its entry returns "
                                        r"nothing, so it writes its outputs into tensors the caller passes; got 2$"):
        compiled(x, y)


def test_the_jit_cache_reuses_a_specialisation_and_compiles_a_new_one(kernels):
    kernels.add._cache.clear()
    x, y = _inputs()
    out = torch.zeros(32, 64)
    kernels.add(x, y, out)
    (compiled,) = kernels.add._cache.values()
    assert isinstance(compiled, CompiledProgram)
    kernels.add(2 * x, y, out)
    assert list(kernels.add._cache.values()) == [compiled]
    torch.testing.assert_close(out, 2 * x + y)
    # Another dtype is another specialisation.
    half = torch.zeros(32, 64, dtype=torch.float16)
    kernels.add(x.half(), y.half(), half)
    assert len(kernels.add._cache) == 2
    torch.testing.assert_close(half, x.half() + y.half())
    # A Python number is compiled in, so another value compiles again.
    kernels.add_scalar._cache.clear()
    kernels.add_scalar(x, 1.0, out)
    kernels.add_scalar(x, 2.0, out)
    assert len(kernels.add_scalar._cache) == 2
    torch.testing.assert_close(out, x + 2.0)


def _run_script(script, *args):
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)


def test_a_jit_build_carries_a_run_script_that_runs_it_again(kernels, tmp_path):
    x, y = _inputs()
    compiled = kernels.add.compile(x, y, torch.zeros(32, 64))
    script = compiled.output_dir / "debug" / "run.py"
    text = script.read_text()
    assert "    x = torch.randn((32, 64), dtype=torch.float32)\n" in text
    assert "    out = torch.zeros((32, 64), dtype=torch.float32)\n" in text
    assert "default_platform='a2a3sim'" in text

    result = _run_script(script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("out: [32, 64] float32, min ")

    # Saved inputs (data/in/NAME.pt, as pypto-lib's golden harness saves them) replace the inline ones.
    saved = compiled.output_dir / "data" / "in"
    saved.mkdir(parents=True)
    torch.save(x, saved / "x.pt")
    torch.save(y, saved / "y.pt")
    result = _run_script(script, "--save-outputs", str(tmp_path / "outputs"))
    assert result.returncode == 0, result.stderr
    torch.testing.assert_close(torch.load(tmp_path / "outputs" / "out.pt"), x + y)

    # An output that differs from its saved expectation fails the run.
    expected = compiled.output_dir / "data" / "out"
    expected.mkdir()
    torch.save(x - y, expected / "out.pt")
    result = _run_script(script)
    assert result.returncode == 1
    assert "differs (largest difference " in result.stdout and str(expected / "out.pt") in result.stdout
    torch.save(x + y, expected / "out.pt")
    result = _run_script(script)
    assert result.returncode == 0 and "matches" in result.stdout, result.stdout + result.stderr


def test_a_run_script_passes_a_compiled_in_scalar_with_its_value(kernels):
    (x, _) = _inputs()
    compiled = kernels.add_scalar.compile(x, 1.5, torch.zeros(32, 64))
    script = compiled.output_dir / "debug" / "run.py"
    assert "    a = 1.5  # compiled with this value" in script.read_text()
    result = _run_script(script)
    assert result.returncode == 0, result.stderr


def test_a_compiled_program_class_gets_a_run_script_too(write_dsl, tmp_path):
    module, _ = write_dsl("twice", TWICE_PROGRAM)
    compiled = pypto.ir.compile(module.Twice, platform="a2a3sim", output_dir=str(tmp_path / "twice"))
    assert compiled.output_dir == tmp_path / "twice"
    result = _run_script(tmp_path / "twice" / "debug" / "run.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("out: [16, 16] float32")
    x = torch.randn(16, 16)
    torch.testing.assert_close(compiled(x), 2 * x)


def test_dispatching_by_hand_on_a_simpler_worker_is_refused_with_the_way_to_run(kernels):
    x, y = _inputs()
    compiled = kernels.add.compile(x, y, torch.zeros(32, 64))
    with pytest.raises(NotImplementedError, match="call the compiled program to run it"):
        compiled.build_orch_args(x, y)
    with pytest.raises(NotImplementedError, match="CompiledProgram.chip_callable"):
        compiled.chip_callable


TOO_BIG = '''
import pypto.language as pl


@pl.program
class TooBig:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[512, 1024], pl.FP32], y: pl.Out[pl.Tensor[[512, 1024], pl.FP32]]) -> pl.Tensor[[512, 1024], pl.FP32]:
        t: pl.Tile[[512, 1024], pl.FP32] = pl.load(x, [0, 0], [512, 1024])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[512, 1024], pl.FP32], y: pl.Out[pl.Tensor[[512, 1024], pl.FP32]]) -> pl.Tensor[[512, 1024], pl.FP32]:
        y = self.k(x, y)
        return y
'''


def test_a_compile_that_fails_leaves_no_build_directory(write_kernel, tmp_path, monkeypatch):
    module, _ = write_kernel("too_big", TOO_BIG)
    builds = tmp_path / "builds"
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(builds))
    with pytest.raises(Exception, match="does not fit in UB"):
        pypto.ir.compile(module.TooBig, platform="a2a3sim")
    assert list(builds.iterdir()) == []
