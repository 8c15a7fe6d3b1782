"""The generated orchestration C++ and PTO modules of small programs, compared with checked-in texts
(golden/<program>/...). Paths of the machine that generated them are written as <SRC> (where the
program's file is) and <BUILD> (the build directory), and the pypto version as <VERSION>.

After an intended change of the generated code: PYPTO_UPDATE_GOLDEN=1 pytest tests/python/test_golden_artifacts.py
rewrites the texts; review the diff before committing it."""

import os
from pathlib import Path

import pytest
import torch

import golden_programs as programs
from pypto import _core
from pypto.runtime import RunConfig

GOLDEN = Path(__file__).parent / "golden"
_KERNEL = 'extern "C" void kernel_entry(long* args) { (void)args; }\n'


def _artifacts(build: Path) -> dict:
    """The generated texts of a build directory, by path relative to it."""
    files = sorted(build.glob("orchestration/*.cpp")) + sorted(build.glob("kernels/*/*.pto"))
    return {str(path.relative_to(build)): path.read_text() for path in files}


def _normalised(text: str, src: Path, build: Path) -> str:
    return (text.replace(str(build), "<BUILD>").replace(str(src), "<SRC>")
            .replace(f"pypto {_core.version()}", "pypto <VERSION>"))


def _check(name: str, build: Path, src: Path):
    found = {path: _normalised(text, src, build) for path, text in _artifacts(build).items()}
    assert found, f"{build} holds no generated artifacts"
    golden_dir = GOLDEN / name
    if os.environ.get("PYPTO_UPDATE_GOLDEN"):
        for path, text in found.items():
            (golden_dir / path).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / path).write_text(text)
    expected = {str(p.relative_to(golden_dir)): p.read_text() for p in sorted(golden_dir.rglob("*")) if p.is_file()}
    assert sorted(found) == sorted(expected), "the set of generated files changed"
    for path in expected:
        assert found[path] == expected[path], f"{name}/{path} differs from its golden text"


_JIT_ARGS = {
    "elementwise": lambda: (torch.zeros(16, 32), torch.zeros(16, 32), torch.zeros(16, 32)),
    "matmul": lambda: (torch.zeros(32, 64, dtype=torch.float16), torch.zeros(64, 16, dtype=torch.float16),
                       torch.zeros(32, 16)),
    "mixed": lambda: (torch.zeros(32, 64, dtype=torch.float16), torch.zeros(64, 16, dtype=torch.float16),
                      torch.zeros(32, 16), torch.zeros(32, 16)),
    "spmd": lambda: (torch.zeros(64, 32), torch.zeros(64, 32)),
}


@pytest.mark.parametrize("name", sorted(_JIT_ARGS))
def test_jit_program_artifacts(name, tmp_path):
    build = tmp_path / "build"
    getattr(programs, name).compile(*_JIT_ARGS[name](), config=RunConfig(save_kernels_dir=str(build)))
    _check(name, build, Path(programs.__file__).parent)


@pytest.mark.parametrize("name, source, kernels", [
    ("extern_spmd", programs.EXTERN_SPMD, ["rows.cpp"]),
    ("extern_group", programs.EXTERN_GROUP, ["cube.cpp", "vec.cpp"]),
])
def test_extern_program_artifacts(name, source, kernels, write_kernel, tmp_path):
    from pypto.ir import compile

    for kernel in kernels:
        (tmp_path / kernel).write_text(_KERNEL)
    module, _ = write_kernel(name, source)
    program = next(value for key, value in vars(module).items() if isinstance(value, _core.Program))
    build = tmp_path / "build"
    compile(program, output_dir=str(build))
    _check(name, build, tmp_path)
