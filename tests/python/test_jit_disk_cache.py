"""The JIT's disk cache: a second process reuses what the first compiled; editing the kernel or a
header a hand-written kernel includes misses; two processes compiling at once both succeed and leave
one valid entry."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_SCRIPT = """
import json, sys, time, torch
import pypto.language as pl


@pl.jit.extern(core_type="aiv", source="k.cpp")
def bump(out: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]: ...


@pl.jit
def kernel(a: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:, :] = pl.mul(a[:, :], {factor})
    c = bump(c)
    return c


a, c = torch.ones(4, 8), torch.zeros(4, 8)
start = time.perf_counter()
compiled = kernel.compile(a, c)
seconds = time.perf_counter() - start
compiled(a, c)
print(json.dumps({{"output_dir": str(compiled.output_dir), "seconds": seconds, "value": c[0, 0].item()}}))
"""

_KERNEL = """
#include <cstdint>
#include "tensor.h"
#include "step.h"
extern "C" void kernel_entry(int64_t* args) {
  ChipTensor* t = reinterpret_cast<ChipTensor*>(args[0]);
  float* out = reinterpret_cast<float*>(t->buffer.addr) + t->start_offset;
  for (int i = 0; i < 32; ++i) out[i] += kStep;
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "k.cpp").write_text(_KERNEL)
    (tmp_path / "step.h").write_text("#pragma once\nstatic constexpr float kStep = 1.0f;\n")
    (tmp_path / "prog.py").write_text(textwrap.dedent(_SCRIPT.format(factor="2.0")))
    return tmp_path


def _run(project, *, wait=True):
    command = [sys.executable, str(project / "prog.py")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYPTO_PROG_BUILD_DIR": str(project / "builds")}
    process = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    return _result(process)


def _result(process):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _entries(project):
    return sorted(p.name for p in (project / "cache").iterdir())


def test_a_second_process_hits_the_cache(project):
    cold = _run(project)
    assert cold["value"] == 3.0
    assert cold["output_dir"].startswith(str(project / "builds"))
    warm = _run(project)
    assert warm["value"] == 3.0
    (entry,) = _entries(project)
    assert warm["output_dir"] == str(project / "cache" / entry / "artifacts")
    assert json.loads((project / "cache" / entry / "artifacts" / "pypto_manifest.json").read_text())["platform"] == "a2a3sim"


def test_editing_the_kernel_or_an_included_header_misses(project):
    _run(project)
    (project / "step.h").write_text("#pragma once\nstatic constexpr float kStep = 5.0f;\n")
    header_edit = _run(project)
    assert header_edit["output_dir"].startswith(str(project / "builds")), "a header edit must recompile"
    assert header_edit["value"] == 7.0
    (project / "prog.py").write_text(textwrap.dedent(_SCRIPT.format(factor="3.0")))
    source_edit = _run(project)
    assert source_edit["output_dir"].startswith(str(project / "builds"))
    assert source_edit["value"] == 8.0
    assert len(_entries(project)) == 3
    # An unrelated file changes nothing.
    (project / "notes.txt").write_text("unrelated\n")
    again = _run(project)
    assert again["output_dir"].startswith(str(project / "cache")) and again["value"] == 8.0


def test_two_processes_compiling_at_once_both_succeed_and_leave_one_entry(project):
    first, second = _run(project, wait=False), _run(project, wait=False)
    results = [_result(first), _result(second)]
    assert [r["value"] for r in results] == [3.0, 3.0]
    entries = _entries(project)
    assert len(entries) == 1 and not entries[0].startswith("."), entries
    assert (project / "cache" / entries[0] / "artifacts" / "lowered_program.py").is_file()
    assert _run(project)["output_dir"] == str(project / "cache" / entries[0] / "artifacts")


def test_off_turns_the_cache_off(project, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", "off")
    assert _run(project)["output_dir"].startswith(str(project / "builds"))
    assert _run(project)["output_dir"].startswith(str(project / "builds"))
    assert not (project / "cache").exists()


def test_pypto_cache_0_turns_the_cache_off(project, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE", "0")
    assert _run(project)["output_dir"].startswith(str(project / "builds"))
    assert not (project / "cache").exists()


def test_a_corrupt_entry_is_rebuilt_not_trusted(project):
    _run(project)
    (entry,) = _entries(project)
    (project / "cache" / entry / "artifacts" / "lowered_program.py").write_text("this is not a program\n")
    rebuilt = _run(project)
    assert rebuilt["output_dir"].startswith(str(project / "builds")) and rebuilt["value"] == 3.0
    assert _entries(project) == [entry]
    assert "this is not" not in (project / "cache" / entry / "artifacts" / "lowered_program.py").read_text()
    assert _run(project)["output_dir"] == str(project / "cache" / entry / "artifacts")


def test_warmup_fills_the_cache_and_cache_info_counts(tmp_path, monkeypatch, write_kernel):
    import torch

    import pypto.jit

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    module, _ = write_kernel("warm", textwrap.dedent("""
        import pypto.language as pl


        @pl.jit
        def double(a: pl.Tensor[[8, 8], pl.FP32], c: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                c[:, :] = pl.mul(a[:, :], 2.0)
            return c
    """))
    before = pypto.jit.cache_info()
    build = module.double.warmup(torch.zeros(8, 8), torch.zeros(8, 8))
    assert Path(build, "lowered_program.py").is_file()
    module.double.clear_cache()  # the in-memory cache forgets; the disk keeps it
    assert module.double.warmup(torch.zeros(8, 8), torch.zeros(8, 8)).startswith(str(tmp_path / "cache"))
    after = pypto.jit.cache_info()
    assert after["directory"] == str(tmp_path / "cache")
    assert (after["entries"], after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 1, 1)
    assert after["stores"] - before["stores"] == 1 and after["bytes"] > 0
