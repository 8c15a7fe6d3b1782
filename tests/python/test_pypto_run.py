"""pypto-run runs kernel scripts exactly as the project's python does."""

import subprocess
import sys

from conftest import REPO, pypto_run_path

HELLO = str(REPO / "examples" / "hello_add.py")


def _run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)


def test_pypto_run_prints_ok():
    result = _run([pypto_run_path(), HELLO])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK\n"


def test_python_prints_ok():
    result = _run([sys.executable, HELLO])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK\n"


def test_platform_flag_reaches_run_config(tmp_path):
    script = tmp_path / "which.py"
    script.write_text("from pypto.runtime import RunConfig\nimport sys\nprint(RunConfig().platform, sys.argv[1:])\n")
    result = _run([pypto_run_path(), "-p", "a5sim", str(script), "--flag"])
    assert result.stdout == "a5sim ['--flag']\n", result.stderr
    result = _run([pypto_run_path(), str(script), "-p", "a5sim"])
    assert result.stdout == "a5sim ['-p', 'a5sim']\n", result.stderr


def test_list_platforms():
    result = _run([pypto_run_path(), "--list-platforms"])
    assert result.returncode == 0
    platforms = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert {"a2a3sim", "a5sim"} <= set(platforms)


def test_script_errors_propagate(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('before')\nsys.exit(3)\n")
    result = _run([pypto_run_path(), str(script)])
    assert (result.returncode, result.stdout) == (3, "before\n")
    result = _run([pypto_run_path(), str(tmp_path / "missing.py")])
    assert result.returncode == 2
    assert "missing.py: no such file" in result.stderr


def test_explain_abi_prints_each_compiled_programs_table():
    # --explain-abi is the driver's switch: every program the script compiles prints its hand-written
    # kernels' args[] tables (here: none) to stderr; the script's own output is unchanged.
    result = _run([pypto_run_path(), "--explain-abi", HELLO])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK\n"
    assert "program '_jit_vector_add' has no hand-written kernels" in result.stderr
