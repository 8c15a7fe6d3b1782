"""tools/conformance/run.py: each convention runs, and each kind of outcome gets its verdict."""

import subprocess
import sys
import textwrap
from pathlib import Path

from sample_programs import TWICE_PROGRAM

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "conformance" / "run.py"

SYSTEM_TEST = '''
import pypto.language as pl
import torch
from harness.core.harness import DataType, PTOTestCase, TensorSpec
''' + TWICE_PROGRAM + '''

class TwiceCase(PTOTestCase):
    __test__ = False

    def get_name(self):
        return "twice"

    def define_tensors(self):
        return [TensorSpec("x", [16, 16], DataType.FP32, init_value=torch.randn),
                TensorSpec("out", [16, 16], DataType.FP32, is_output=True)]

    def get_program(self):
        return Twice

    def compute_expected(self, tensors, params=None):
        tensors["out"][:] = tensors["x"] * WANT


class TestTwice:
    def test_twice(self, test_runner):
        result = test_runner.run(TwiceCase())
        assert result.passed, result.error
'''


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def test_the_table_gives_each_program_its_verdict(tmp_path):
    demo = tmp_path / "demo"
    _write(demo, "ok.py", "print('OK')\n")
    _write(demo, "check_fails.py", "assert 1 + 1 == 3, 'arithmetic'\n")
    _write(demo, "crashes.py", "raise RuntimeError('boom')\n")
    _write(demo, "slow.py", "import time\ntime.sleep(60)\n")
    _write(demo, "st/test_good.py", SYSTEM_TEST.replace("WANT", "2"))
    _write(demo, "st/test_wrong.py", SYSTEM_TEST.replace("WANT", "3"))
    listing = tmp_path / "list.txt"
    listing.write_text(textwrap.dedent("""\
        # id repo path convention args
        A1 demo ok.py example --ignored-arg
        A2 demo check_fails.py example
        A3 demo crashes.py example
        A4 demo slow.py example
        A5 demo st/test_good.py pytest
        A6 demo st/test_wrong.py pytest
        A7 other missing.py example
        """))
    done = subprocess.run(
        [sys.executable, str(TOOL), "--repo", f"demo={demo}", "--list", str(listing), "--timeout", "15"],
        capture_output=True, text=True, timeout=300,
    )
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in done.stdout.splitlines() if line.startswith("| A")}
    # Columns: program, verdict, cases (a pytest file's passing/run cases), seconds, first error.
    assert rows["A1"][:3] == ["demo:ok.py --ignored-arg", "PASS", ""]
    assert rows["A2"][1] == "FAIL" and "AssertionError: arithmetic" in rows["A2"][4]
    assert rows["A3"][1] == "ERROR" and rows["A3"][4] == "RuntimeError: boom"
    assert rows["A4"][1] == "ERROR" and rows["A4"][4] == "time limit of 15s reached"
    assert rows["A5"][1:3] == ["PASS", "1/1"], rows["A5"]
    assert rows["A6"][1:3] == ["FAIL", "0/1"], rows["A6"]
    assert rows["A7"][1] == "ERROR" and "no checkout given for repository 'other'" in rows["A7"][4]
    assert "2/7 passed on a2a3sim" in done.stdout
    assert "1/2 test cases passed" in done.stdout
    assert done.returncode == 1


def test_a_relative_pythonpath_is_taken_from_where_the_tool_starts(tmp_path):
    # Programs run in their own directories; `PYTHONPATH=lib` still means the caller's lib/.
    _write(tmp_path / "lib", "marker.py", "VALUE = 'found'\n")
    _write(tmp_path / "demo", "uses_marker.py", "import marker\nassert marker.VALUE == 'found'\n")
    listing = tmp_path / "list.txt"
    listing.write_text("B1 demo uses_marker.py example\n")
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, ["lib", os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, str(TOOL), "--repo", f"demo={tmp_path / 'demo'}", "--list", str(listing)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )
    assert "| B1 | demo:uses_marker.py | PASS |" in done.stdout, done.stdout + done.stderr


def test_platform_placeholder_in_arguments_is_the_chosen_platform(tmp_path):
    # Examples that take `-p PLATFORM` (the distributed ones) name it `{platform}` in their list.
    _write(tmp_path / "demo", "wants_a5.py", "import sys\nassert sys.argv[1:] == ['-p', 'a5sim'], sys.argv\n")
    listing = tmp_path / "list.txt"
    listing.write_text("P1 demo wants_a5.py example -p {platform}\n")
    done = subprocess.run(
        [sys.executable, str(TOOL), "--repo", f"demo={tmp_path / 'demo'}", "--list", str(listing), "-p", "a5sim"],
        capture_output=True, text=True, timeout=120,
    )
    assert "| P1 | demo:wants_a5.py -p {platform} | PASS |" in done.stdout, done.stdout + done.stderr


COMPILES_TWICE = "import pypto.ir\nimport pypto.language as pl\n" + TWICE_PROGRAM + "\npypto.ir.compile(Twice)\n"

# A program whose build directory holds a module MLIR cannot parse: %x is used but never defined.
WRITES_A_BROKEN_MODULE = '''
import os
from pathlib import Path

kernels = Path(os.environ["PYPTO_PROG_BUILD_DIR"]) / "broken" / "kernels" / "aiv"
kernels.mkdir(parents=True)
(kernels / "k.generic.mlir").write_text("module {\\n  func.func @k() {\\n    \\"pto.tadd\\"(%x) : (f32) -> ()\\n"
                                        "    return\\n  }\\n}\\n")
'''


def _run_programs(tmp_path, programs: dict, *flags):
    """Runs the tool on `programs` ({id: (file name, source)}) of a demo repository; returns the table's
    rows by id ([program, verdict, seconds, first error]) and the finished process."""
    demo = tmp_path / "demo"
    listing = tmp_path / "list.txt"
    for name, source in programs.values():
        _write(demo, name, source)
    listing.write_text("".join(f"{ident} demo {name} example\n" for ident, (name, _) in programs.items()))
    done = subprocess.run([sys.executable, str(TOOL), "--repo", f"demo={demo}", "--list", str(listing), *flags],
                          capture_output=True, text=True, timeout=300)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| id")}
    return rows, done


def test_mlir_opt_parses_the_modules_each_program_wrote(tmp_path):
    rows, done = _run_programs(tmp_path, {"C1": ("twice.py", COMPILES_TWICE), "C2": ("broken.py", WRITES_A_BROKEN_MODULE)},
                               "--mlir-opt")
    assert rows["C1"][1] == "PASS", done.stdout + done.stderr
    assert "(mlir-opt: 1 modules)" in done.stderr.splitlines()[0], done.stderr
    assert rows["C2"][1] == "FAIL"
    assert rows["C2"][3] == ("mlir-opt rejects build_output/broken/kernels/aiv/k.generic.mlir:3:16: error: use of "
                             "undeclared SSA value name"), rows["C2"]
    assert "1/2 programs' PTO modules all parse" in done.stdout
    assert done.returncode == 1


def test_mlir_opt_that_is_not_there_is_an_error(tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text("")
    done = subprocess.run([sys.executable, str(TOOL), "--list", str(listing), "--mlir-opt=/no/such/mlir-opt"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--mlir-opt: /no/such/mlir-opt not found" in done.stderr


# A program that asks for no dumps still gets them; one that writes a build directory by hand does not.
COMPILES_WITHOUT_DUMPS = COMPILES_TWICE.replace("pypto.ir.compile(Twice)", "pypto.ir.compile(Twice, dump_passes=False)")
WRITES_A_BUILD_BY_HAND = """
import os
from pathlib import Path

build = Path(os.environ["PYPTO_PROG_BUILD_DIR"]) / "by_hand"
build.mkdir(parents=True)
(build / "pypto_manifest.json").write_text("{}")
"""


def test_dump_passes_requires_every_build_to_dump_each_pass(tmp_path):
    rows, done = _run_programs(
        tmp_path, {"D1": ("twice.py", COMPILES_WITHOUT_DUMPS), "D2": ("by_hand.py", WRITES_A_BUILD_BY_HAND)},
        "--dump-passes")
    assert rows["D1"][1] == "PASS", done.stdout + done.stderr
    assert "(pass dumps: 1 builds)" in done.stderr.splitlines()[0], done.stderr
    assert rows["D2"][1] == "FAIL"
    assert rows["D2"][3] == ("build_output/by_hand/passes_dump lacks 00_frontend.py, 01_after_UnrollLoops.py, "
                             "02_after_CtrlFlowTransform.py, 03_after_FuseCreateAssembleToSlice.py, "
                             "04_after_FlattenCallExpr.py, 05_after_SplitMixedScopes.py, "
                             "06_after_OutlineIncoreScopes.py, 07_after_FlattenTileNdTo2D.py, "
                             "08_after_LegalizeTileCast.py, "
                             "09_after_InferTileMemorySpace.py, 10_after_AutoTileMatmulL0.py, "
                             "11_after_ExpandMixedKernel.py, 12_after_NormalizeReturnOrder.py, "
                             "13_after_TransposeScratchTiles.py, 14_after_ScatterMaskBlend.py, "
                             "15_after_AllocateMemoryAddr.py, 16_after_DeriveCallDirections.py, "
                             "17_after_MaterializeRuntimeScopes.py, 18_after_ClassifyIterArgCarry.py"), rows["D2"]
    assert "2 builds dumped the IR after each of 18 passes" not in done.stdout
    assert "1 builds dumped the IR after each of 18 passes" in done.stdout


def test_st_host_binds_specs_to_parameters_by_position_as_upstream_does(tmp_path):
    # Upstream's harness passes the tensors in order, so a spec may name its parameter otherwise (`y`
    # for `out`); the reference still reads and writes them by the spec's names.
    import os

    for want, verdict in (("2", "1 passed"), ("3", "1 failed")):
        _write(tmp_path, f"test_renamed_{want}.py", SYSTEM_TEST.replace("WANT", want).replace('"out"', '"y"'))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [str(REPO / "tools" / "conformance" / "st_host"), os.environ.get("PYTHONPATH")])))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "st_host_plugin",
                               f"test_renamed_{want}.py"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
        assert verdict in done.stdout, done.stdout + done.stderr


def test_an_example_that_imports_its_siblings_relatively_runs_as_a_module(tmp_path):
    # Upstream's qwen3_jit example is run with `python -m examples.models.qwen3_jit.qwen3_decode`.
    programs = {
        "M1": ("examples/pkg/__init__.py", ""),
        "M2": ("examples/pkg/config.py", "SIZE = 16\n"),
        "M3": ("examples/pkg/main.py", "from .config import SIZE\nassert __name__ == '__main__'\nprint(SIZE)\n"),
    }
    rows, done = _run_programs(tmp_path, programs)
    assert rows["M3"][:2] == ["demo:examples/pkg/main.py", "PASS"], done.stdout + done.stderr


def test_sweep_runs_the_model_files_upstream_ci_runs(tmp_path):
    # The list comes from the checkout: a model file holding __main__ runs as `python FILE -p PLATFORM`
    # with the checkout on PYTHONPATH; shared modules, *_draft.py and `# ci: no-sim` files do not.
    lib = tmp_path / "pypto-lib"
    main = "if __name__ == '__main__':\n    import sys\n"
    _write(lib, "models/a/config.py", "N = 3\n")
    _write(lib, "models/a/good.py", main + "    from models.a.config import N\n    assert sys.argv[1:] == ['-p', 'a5sim']\n")
    _write(lib, "models/a/wrong.py", main + "    assert False, 'golden mismatch'\n")
    _write(lib, "models/b/deep/nested.py", main + "    pass\n")
    _write(lib, "models/b/skipped_draft.py", main + "    raise SystemExit(1)\n")
    _write(lib, "models/b/device_only.py", "# ci: no-sim\n" + main + "    raise SystemExit(1)\n")
    _write(lib, "examples/not_a_model.py", main + "    raise SystemExit(1)\n")
    done = subprocess.run(
        [sys.executable, str(TOOL), "--repo", f"pypto-lib={lib}", "--sweep", "-p", "a5sim"],
        capture_output=True, text=True, timeout=300,
    )
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in done.stdout.splitlines() if line.startswith("| M")]
    assert [row[:3] for row in rows] == [
        ["M1", "pypto-lib:models/a/good.py", "PASS"],
        ["M2", "pypto-lib:models/a/wrong.py", "FAIL"],
        ["M3", "pypto-lib:models/b/deep/nested.py", "PASS"],
    ], done.stdout + done.stderr
    assert "2/3 passed on a5sim" in done.stdout
    assert done.returncode == 1


def test_sweep_without_a_pypto_lib_checkout_is_an_error(tmp_path):
    done = subprocess.run([sys.executable, str(TOOL), "--sweep"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--sweep needs a pypto-lib checkout: --repo pypto-lib=PATH" in done.stderr
