"""pypto-opt: the pass pipeline as a command-line tool over printed programs."""

import subprocess
from pathlib import Path

import pytest
import torch

from conftest import pypto_opt_path

KERNEL = """
import pypto.language as pl


@pl.jit
def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [{rows}, {cols}])
        tb = pl.load(b, [0, 0], [{rows}, {cols}])
        pl.store(pl.exp(pl.add(ta, tb)), [0, 0], c)
    return c
"""

PASSES = [
    "UnrollLoops",
    "CtrlFlowTransform",
    "FuseCreateAssembleToSlice",
    "FlattenCallExpr",
    "SplitMixedScopes",
    "OutlineIncoreScopes",
    "FlattenTileNdTo2D",
    "LegalizeTileCast",
    "InferTileMemorySpace",
    "AutoTileMatmulL0",
    "ExpandMixedKernel",
    "NormalizeReturnOrder",
    "TransposeScratchTiles",
    "ScatterMaskBlend",
    "AllocateMemoryAddr",
    "DeriveCallDirections",
    "MaterializeRuntimeScopes",
    "ClassifyIterArgCarry",
]


def _opt(*args, cwd=None):
    return subprocess.run([pypto_opt_path(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def dumps(write_kernel, tmp_path):
    """The passes_dump/ directory of compiling a 32x32 kernel with dump_passes=True."""
    from pypto.runtime import RunConfig

    module, _ = write_kernel("opt_kernel", KERNEL.format(rows=32, cols=32))
    out = tmp_path / "out"
    module.kernel(torch.ones(32, 32), torch.ones(32, 32), torch.empty(32, 32),
                  config=RunConfig(dump_passes=True, save_kernels_dir=str(out)))
    return out / "passes_dump"


def test_the_whole_pipeline_reproduces_the_compilers_result(dumps):
    result = _opt(dumps / "00_frontend.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (dumps / f"{len(PASSES):02}_after_ClassifyIterArgCarry.py").read_text()


@pytest.mark.parametrize("slot", range(1, len(PASSES) + 1))
def test_each_pass_alone_reproduces_its_dump(dumps, slot):
    before = sorted(dumps.glob(f"{slot - 1:02}_*.py"))[0]
    result = _opt(before, "--passes", PASSES[slot - 1], "--verify")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (dumps / f"{slot:02}_after_{PASSES[slot - 1]}.py").read_text()


def test_dump_dir_and_output_file(dumps, tmp_path):
    out = tmp_path / "lowered.py"
    result = _opt(dumps / "00_frontend.py", "--dump-dir", tmp_path / "mine", "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert out.read_text() == (dumps / f"{len(PASSES):02}_after_ClassifyIterArgCarry.py").read_text()
    written = sorted(p.name for p in (tmp_path / "mine").iterdir())
    assert written == ["00_input.py"] + [f"{i:02}_after_{name}.py" for i, name in enumerate(PASSES, 1)]
    for i, name in enumerate(PASSES, 1):
        assert (tmp_path / "mine" / f"{i:02}_after_{name}.py").read_text() == (dumps / written[i]).read_text()


def test_list_passes_prints_each_contract():
    result = _opt("--list-passes")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if not line.startswith(" ")] == PASSES
    assert lines[:12] == [
        "UnrollLoops",
        "  requires {}",
        "  produces {NoUnrollLoops}",
        "  invalidates {}",
        "CtrlFlowTransform",
        "  requires {}",
        "  produces {StructuredCtrlFlow}",
        "  invalidates {}",
        "FuseCreateAssembleToSlice",
        "  requires {}",
        "  produces {}",
        "  invalidates {}",
    ]


def test_platform_selects_the_soc(write_kernel, tmp_path):
    # 256x96 f32 operands overflow the a2a3's UB but fit the a5's.
    from pypto.runtime import RunConfig

    module, _ = write_kernel("opt_large", KERNEL.format(rows=256, cols=96))
    args = torch.ones(256, 96), torch.ones(256, 96), torch.empty(256, 96)
    module.kernel(*args, config=RunConfig(platform="a5sim", dump_passes=True, save_kernels_dir=str(tmp_path / "a5")))
    frontend = tmp_path / "a5" / "passes_dump" / "00_frontend.py"
    a2a3 = _opt(frontend)
    assert a2a3.returncode == 1
    assert "does not fit in UB (Vec)" in a2a3.stderr and "Ascend910B has 188416 bytes" in a2a3.stderr
    a5 = _opt(frontend, "-p", "a5sim")
    assert a5.returncode == 0, a5.stderr


def test_a_pass_missing_its_required_property_is_refused_at_the_source(dumps):
    result = _opt(dumps / "00_frontend.py", "--passes", "AllocateMemoryAddr")
    assert result.returncode == 1
    assert result.stderr.startswith(f"pypto-opt: {dumps / '00_frontend.py'}:")
    assert "error: pass AllocateMemoryAddr requires NoNestedCalls: property NoNestedCalls does not hold" in result.stderr


def test_unknown_pass_and_platform(dumps):
    result = _opt(dumps / "00_frontend.py", "--passes", "FlattenCallExpr,Inline")
    assert result.returncode == 1
    assert result.stderr == (
        "pypto-opt: unknown pass 'Inline'; the passes are " + ", ".join(PASSES) + "\n"
    )
    # The plugins say which platforms exist (pypto-opt asks the registry for the platform's SoC).
    result = _opt(dumps / "00_frontend.py", "-p", "tpu")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "pypto-opt: unknown platform 'tpu'; available platforms: a2a3, a2a3sim, a5, a5sim (plugins searched in: ")


def test_bad_inputs_are_reported_and_leave_the_output_alone(tmp_path):
    missing = _opt(tmp_path / "nope.py")
    assert (missing.returncode, missing.stderr) == (1, f"pypto-opt: {tmp_path / 'nope.py'}: no such file\n")
    broken = tmp_path / "broken.py"
    broken.write_text("import pypto.language as pl\n\n@pl.program\nclass P:\n    def main(self x):\n        pass\n")
    out = tmp_path / "keep.py"
    out.write_text("what the user had\n")
    result = _opt(broken, "-o", out)
    assert result.returncode == 1
    assert result.stderr.startswith(f"pypto-opt: {broken}:5:")
    assert out.read_text() == "what the user had\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.py", "keep.py"]


def test_standard_input(dumps):
    source = (dumps / "00_frontend.py").read_text()
    result = subprocess.run([pypto_opt_path(), "-", "--passes", "FlattenCallExpr"], input=source,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (dumps / "04_after_FlattenCallExpr.py").read_text()


def test_a_program_file_with_a_docstring_and_imports_is_read(tmp_path):
    source = tmp_path / "program.py"
    source.write_text('''"""A program as a user keeps it."""
import pypto.language as pl
from pypto import language


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.exp(pl.load(x, [0, 0], [16, 16])), [0, 0], y)
        return y
''')
    result = _opt(source, "--no-passes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("@pl.program\nclass P:\n")
    # Anything else beside the class is still refused, at the top of the file.
    source.write_text(source.read_text() + "\nX = 1\n")
    result = _opt(source, "--no-passes")
    assert (result.returncode, result.stderr) == (
        1, f"pypto-opt: {source}:1:1: error: expected exactly one class definition (a @pl.program)\n")
