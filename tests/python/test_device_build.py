"""Device platforms (a2a3, a5): the ascend plugin completes the build directory with ptoas and ccec
where it finds them, and a run ends with a documented exit code instead of a traceback.

The device tools here are stand-ins (shell scripts that log their arguments and write what the
real ones would), so the tests say exactly what is run, with which flags, on any machine."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import REPO, pypto_run_path

HELLO = str(REPO / "examples" / "hello_add.py")
TOOL_VARIABLES = ("PTOAS", "PTOAS_ROOT", "ASCEND_HOME_PATH", "PTO_ISA_ROOT", "SIMPLER_ROOT")

# Writes `AICORE void <kernel>(...)` for the func.func the .pto module defines, as ptoas would.
FAKE_PTOAS = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/ptoas.log"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
name=$(sed -n 's/.*func.func @\\([A-Za-z0-9_]*\\).*/\\1/p' "$1" | head -n 1)
printf 'AICORE void %s(__gm__ float* a, __gm__ float* b, __gm__ float* c) {}\\n' "$name" > "$out"
"""
FAKE_CCEC = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/ccec.log"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo object > "$out"
"""


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _without_tools(build_dir) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in TOOL_VARIABLES}
    env["PATH"] = "/usr/bin:/bin"
    env["PYPTO_PROG_BUILD_DIR"] = str(build_dir)
    return env


def _with_tools(root: Path, build_dir) -> dict:
    """Stand-ins for every device tool and header set, pointed at the documented way."""
    _executable(root / "ptoas" / "bin" / "ptoas", FAKE_PTOAS)
    _executable(root / "cann" / "bin" / "ccec", FAKE_CCEC)
    for header in ("pto-isa/include/pto/pto-inst.hpp", "simpler/src/common/task_interface/tensor.h",
                   "simpler/src/a2a3/runtime/tensormap_and_ringbuffer/common/intrinsic.h",
                   "simpler/src/a5/runtime/tensormap_and_ringbuffer/common/intrinsic.h"):
        (root / header).parent.mkdir(parents=True, exist_ok=True)
        (root / header).write_text("\n")
    return {**_without_tools(build_dir), "PTOAS_ROOT": str(root / "ptoas"), "ASCEND_HOME_PATH": str(root / "cann"),
            "PTO_ISA_ROOT": str(root / "pto-isa"), "SIMPLER_ROOT": str(root / "simpler")}


def _run(args, env):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)


def _only_build(build_dir: Path) -> Path:
    (build,) = [p for p in build_dir.iterdir() if p.is_dir()]
    return build


@pytest.mark.parametrize("launcher", ["pypto-run", "python"])
def test_without_the_device_tools_a_run_stops_after_the_artifacts_with_exit_code_3(tmp_path, launcher):
    build_dir = tmp_path / "out"
    command = [pypto_run_path(), "-p", "a2a3", HELLO] if launcher == "pypto-run" else [sys.executable, HELLO]
    env = _without_tools(build_dir)
    if launcher == "python":
        env["PYPTO_PLATFORM"] = "a2a3"
    result = _run(command, env)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    build = _only_build(build_dir)
    assert result.stderr.startswith("pypto: platform 'a2a3' runs on an Ascend NPU, and this pypto does not launch")
    assert "Nothing ran: the device build is incomplete." in result.stderr
    assert (f"platform 'a2a3': {build} holds 4 file(s) for the device build (the orchestration C++, kernel_config.py, "
            "1 PTO module(s), the kernels' ccec commands); no kernel object was built.") in result.stderr
    assert ("  missing: ptoas: not found (set PTOAS to the ptoas binary or PTOAS_ROOT to its install, or put ptoas "
            "on PATH); 1 PTO module(s) were not assembled into kernel C++") in result.stderr
    report = json.loads((build / "device_build.json").read_text())
    assert report["complete"] is False
    assert report["written"] == ["orchestration/vector_add.cpp", "kernel_config.py",
                                 "kernels/aiv/vector_add_incore_0.pto", "kernels/aiv/vector_add_incore_0.generic.mlir"]


@pytest.mark.parametrize("platform, pto_arch, aicore_arch", [("a2a3", "a3", "dav-c220-vec"), ("a5", "a5", "dav-c310-vec")])
def test_with_the_device_tools_every_kernel_is_built_and_a_run_exits_with_code_4(tmp_path, platform, pto_arch,
                                                                                  aicore_arch):
    build_dir = tmp_path / "out"
    tools = tmp_path / "tools"
    result = _run([pypto_run_path(), "-p", platform, HELLO], _with_tools(tools, build_dir))
    assert result.returncode == 4, result.stderr
    assert result.stderr == (
        f"pypto: platform '{platform}' runs on an Ascend NPU, and this pypto does not launch work on one: the build "
        "directory is what the device runtime (hw-native-sys/simpler) loads on a machine with the NPU and its driver. "
        f"To run here, use the simulator: -p {platform}sim (RunConfig(platform=\"{platform}sim\"))\n")
    kernels = _only_build(build_dir) / "kernels" / "aiv"
    assert (kernels / "vector_add_incore_0.o").read_text() == "object\n"
    wrapper = (kernels / "vector_add_incore_0.cpp").read_text()
    assert "static __aicore__ void vector_add_incore_0(__gm__ float* a" in wrapper
    assert 'extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args)' in wrapper
    ptoas = (tools / "ptoas" / "bin" / "ptoas.log").read_text().split()
    assert ptoas[1:] == ["-o", str(kernels / "vector_add_incore_0.ptoas.cpp"), "--enable-insert-sync",
                         "--pto-level=level3", "--pto-arch", pto_arch]
    ccec = (tools / "cann" / "bin" / "ccec.log").read_text().split()
    assert f"--cce-aicore-arch={aicore_arch}" in ccec
    assert ccec[-6:-3] == [f"-I{tools}/simpler/src/common/task_interface",
                           f"-I{tools}/simpler/src/{platform}/runtime/tensormap_and_ringbuffer/common",
                           f"-I{tools}/simpler/src/common/platform/include"]
    assert json.loads((kernels.parent.parent / "device_build.json").read_text())["complete"] is True


def test_a_ptoas_error_fails_the_compile_naming_the_kernel(tmp_path, monkeypatch):
    import hello_add
    from pypto.runtime import RunConfig

    for name, value in _with_tools(tmp_path / "tools", tmp_path / "out").items():
        monkeypatch.setenv(name, value)
    _executable(tmp_path / "tools" / "ptoas" / "bin" / "ptoas", "#!/bin/sh\necho 'error: unknown op pto.tadd' >&2\nexit 2\n")
    x = torch.ones(128, 128)
    with pytest.raises(RuntimeError, match=r"(?s)kernel 'vector_add_incore_0': ptoas failed \(exit code 2\):\n"
                                           r"error: unknown op pto.tadd\n\ncommand: .*/ptoas .*vector_add_incore_0.pto"):
        hello_add.vector_add.compile(x, x, torch.empty(128, 128), config=RunConfig(platform="a2a3"))


def test_a_reloaded_incomplete_build_says_what_is_missing(tmp_path, monkeypatch):
    import hello_add
    from pypto.runtime import EXIT_DEVICE_TOOLCHAIN_MISSING, DeviceUnavailableError, RunConfig, execute_compiled

    for name in TOOL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    x, out = torch.ones(128, 128), torch.empty(128, 128)
    compiled = hello_add.vector_add.compile(x, x, out, config=RunConfig(platform="a2a3"))
    with pytest.raises(DeviceUnavailableError, match="missing: ptoas: not found") as error:
        execute_compiled(compiled.output_dir, [x, x, out])
    assert error.value.exit_code == EXIT_DEVICE_TOOLCHAIN_MISSING == 3
