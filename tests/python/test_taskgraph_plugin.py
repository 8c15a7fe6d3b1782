"""A backend plugin written in C and built out of tree (examples/plugins/taskgraph) adds a platform with
no change to pypto: the project is installed into a staging directory (`meson install --destdir`), the
plugin is built from there with pkg-config alone, and PYPTO_PLUGIN_PATH makes RunConfig(platform=
"taskgraph") use it."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, pypto_run_path

EXAMPLE = REPO / "examples" / "plugins" / "taskgraph"


def _run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout}\n{result.stderr}"
    return result


def _meson() -> str:
    beside_python = Path(sys.executable).parent / "meson"
    return str(beside_python) if beside_python.exists() else shutil.which("meson")


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    """The plugin, built against the project as `meson install` stages it."""
    root = tmp_path_factory.mktemp("taskgraph")
    stage = root / "stage"
    build = Path(pypto_run_path()).resolve().parents[2]  # build/apps/pypto-run/pypto-run
    # Headers, libraries and .pc files only: what a plugin author's machine has.
    _run([_meson(), "install", "-C", str(build), "--no-rebuild", "--quiet", "--destdir", str(stage),
          "--tags", "devel,runtime"])
    pc_dirs = {str(pc.parent) for pc in stage.rglob("pypto-runtime.pc")}
    assert len(pc_dirs) == 1, pc_dirs
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dirs.pop(), PKG_CONFIG_SYSROOT_DIR=str(stage))
    plugin_build = root / "build-taskgraph"
    _run([_meson(), "setup", str(plugin_build), str(EXAMPLE)], env=env)
    _run([_meson(), "compile", "-C", str(plugin_build)], env=env)
    assert (plugin_build / "libpypto_plugin_taskgraph.so").exists()
    # It was compiled against the staged headers, not the source tree's.
    commands = json.loads((plugin_build / "compile_commands.json").read_text())
    assert str(stage) in commands[0]["command"] and str(REPO / "libs") not in commands[0]["command"]
    return plugin_build


def test_prog_writes_the_task_graph(plugin_dir, tmp_path):
    out_dir = tmp_path / "diamond"
    env = dict(os.environ, PYPTO_PLUGIN_PATH=str(plugin_dir))
    _run([sys.executable, str(EXAMPLE / "prog.py"), str(out_dir)], env=env)

    dot = (out_dir / "taskgraph.dot").read_text()
    assert dot.startswith('digraph "diamond" {\n')
    assert re.findall(r"^  (t\d+ -> t\d+.*);$", dot, re.M) == ["t0 -> t2", "t1 -> t2"]
    labels = dict(re.findall(r'^  (t\d+) \[label="(.*)"\];$', dot, re.M))
    assert labels == {
        "t0": r"t0: diamond_incore_0 (AIV)\nin x[0,+512)\nout scaled[0,+512)",
        "t1": r"t1: diamond_incore_1 (AIV)\nin x[0,+512)\nout shifted[0,+512)",
        "t2": r"t2: diamond_incore_2 (AIV)\nin scaled[0,+512)\nin shifted[0,+512)\nout out[0,+512)",
    }

    trace = json.loads((out_dir / "taskgraph.trace.json").read_text())["traceEvents"]
    slices = {event["args"]["task"]: (event["ts"], event["name"]) for event in trace if event["ph"] == "X"}
    assert slices == {0: (0, "diamond_incore_0"), 1: (0, "diamond_incore_1"), 2: (10, "diamond_incore_2")}
    assert sorted(event["ph"] for event in trace if event["cat"] == "dep") == ["f", "f", "s", "s"]


def test_the_registry_lists_the_plugins_platform(plugin_dir):
    env = dict(os.environ, PYPTO_PLUGIN_PATH=str(plugin_dir))
    listing = _run([pypto_run_path(), "--list-platforms"], env=env).stdout.splitlines()
    rows = [line.split("\t") for line in listing]
    assert [row[0] for row in rows] == ["taskgraph", "a2a3sim", "a2a3", "a5sim", "a5"]
    assert rows[0][1:4] == ["taskgraph", "simulator", "Ascend910B"]
    assert rows[0][5] == str(plugin_dir / "libpypto_plugin_taskgraph.so")
    # RunConfig takes its platforms from the same registry.
    script = "from pypto.runtime import PLATFORMS, RunConfig\nprint(PLATFORMS)\nRunConfig(platform='tpu')\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.stdout == "('taskgraph', 'a2a3sim', 'a2a3', 'a5sim', 'a5')\n"
    assert result.stderr.endswith(
        "ValueError: RunConfig.platform must be one of taskgraph, a2a3sim, a2a3, a5sim, a5, got 'tpu'\n")


PRINTED_PROGRAM = """\
@pl.program
class exp_add:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 32])
            pl.tile.store(pl.tile.exp(ta), [0, 0], c)
        return c
"""


def test_pypto_opt_lowers_for_the_plugins_platform(plugin_dir, tmp_path):
    """pypto-opt knows no platform: it asks the registry for the SoC, so a plugin's platform works at once."""
    from conftest import pypto_opt_path

    program = tmp_path / "exp_add.py"
    program.write_text(PRINTED_PROGRAM)
    env = dict(os.environ, PYPTO_PLUGIN_PATH=str(plugin_dir))
    on_plugin = _run([pypto_opt_path(), str(program), "-p", "taskgraph"], env=env).stdout
    # The plugin describes its platform with the A2/A3 SoC table, so the passes lower as for a2a3sim.
    assert on_plugin == _run([pypto_opt_path(), str(program), "-p", "a2a3sim"], env=env).stdout
    assert "pl.FunctionType.AIV" in on_plugin
    without = subprocess.run([pypto_opt_path(), str(program), "-p", "taskgraph"], capture_output=True, text=True,
                             timeout=120)
    assert without.returncode == 1
    assert without.stderr.startswith("pypto-opt: unknown platform 'taskgraph'; available platforms: ")
