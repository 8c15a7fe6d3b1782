"""The JIT's disk cache: a second process reuses what the first compiled; editing the kernel or a
header a hand-written kernel includes misses; two processes compiling at once both succeed and leave
one valid entry; every compile gets a build directory of its own; an entry is served only when it
holds its own key and every file it was stored with, unchanged; a cache that cannot be written warns
once and compiling carries on."""

import json
import os
import re
import shutil
import subprocess
import time
import warnings
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


def _run(project, *, wait=True, script="prog.py"):
    command = [sys.executable, str(project / script)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYPTO_PROG_BUILD_DIR": str(project / "builds")}
    process = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    return _result(process)


def _result(process, *, with_stderr=False):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    return (result, err) if with_stderr else result


def _use_factor(project, factor, script="prog.py"):
    (project / script).write_text(textwrap.dedent(_SCRIPT.format(factor=factor)))


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


def test_build_directories_are_unique_per_compile(tmp_path, monkeypatch):
    from pypto.runtime.config import RunConfig, new_build_dir

    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    # Two compiles that pick their directory in the same second (before either writes anything)
    # must not share it: that is what two processes compiling one function at once do.
    first, second = new_build_dir(RunConfig(), "_jit_kernel"), new_build_dir(RunConfig(), "_jit_kernel")
    assert first != second and first.is_dir() and second.is_dir()
    for path in (first, second):
        assert re.fullmatch(rf"_jit_kernel_\d{{8}}_\d{{6}}_{os.getpid()}_\d+", path.name), path.name


def test_two_processes_compiling_two_specialisations_at_once_each_keep_their_own(project):
    _use_factor(project, "2.0", "two.py")
    _use_factor(project, "3.0", "three.py")
    processes = [_run(project, wait=False, script=s) for s in ("two.py", "three.py", "two.py", "three.py")]
    results = [_result(p) for p in processes]
    assert [r["value"] for r in results] == [3.0, 4.0, 3.0, 4.0]
    assert len({r["output_dir"] for r in results}) == 4, "each compile writes a build directory of its own"
    assert len(_entries(project)) == 2
    for script, value in (("two.py", 3.0), ("three.py", 4.0)):
        warm = _run(project, script=script)
        assert warm["output_dir"].startswith(str(project / "cache")) and warm["value"] == value


def _two_entries(project):
    """Entries for factor 2.0 (returned first) and 3.0; prog.py is left at factor 2.0."""
    _run(project)
    (two,) = _entries(project)
    _use_factor(project, "3.0")
    _run(project)
    (three,) = set(_entries(project)) - {two}
    _use_factor(project, "2.0")
    return project / "cache" / two, project / "cache" / three


def test_an_entry_whose_lowered_program_was_edited_is_not_served(project):
    two, three = _two_entries(project)
    shutil.copy(three / "artifacts" / "lowered_program.py", two / "artifacts" / "lowered_program.py")
    rebuilt = _run(project)
    assert rebuilt["output_dir"].startswith(str(project / "builds")), "an edited entry must be rebuilt"
    assert rebuilt["value"] == 3.0
    warm = _run(project)
    assert warm["output_dir"] == str(two / "artifacts") and warm["value"] == 3.0


def test_an_entry_holding_another_specialisation_is_not_served(project):
    two, three = _two_entries(project)
    shutil.rmtree(two)
    shutil.copytree(three, two)
    rebuilt = _run(project)
    assert rebuilt["output_dir"].startswith(str(project / "builds")) and rebuilt["value"] == 3.0
    warm = _run(project)
    assert warm["output_dir"] == str(two / "artifacts") and warm["value"] == 3.0


def test_an_entry_with_a_deleted_manifest_is_rebuilt_not_a_permanent_miss(project):
    _run(project)
    (entry,) = _entries(project)
    (project / "cache" / entry / "artifacts" / "pypto_manifest.json").unlink()
    rebuilt = _run(project)
    assert rebuilt["output_dir"].startswith(str(project / "builds")) and rebuilt["value"] == 3.0
    assert _run(project)["output_dir"] == str(project / "cache" / entry / "artifacts")


def test_an_entry_records_the_digest_of_every_file(project):
    _run(project)
    (entry,) = _entries(project)
    metadata = json.loads((project / "cache" / entry / "entry.json").read_text())
    artifacts = project / "cache" / entry / "artifacts"
    stored = sorted(str(p.relative_to(artifacts)) for p in artifacts.rglob("*") if p.is_file())
    assert "lowered_program.py" in metadata["files"] and "pypto_manifest.json" in metadata["files"]
    assert set(metadata["files"]) <= set(stored)
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in metadata["files"].values())


def test_orphans_of_a_killed_store_are_swept_after_a_minute(project):
    _run(project)
    old, fresh = project / "cache" / ".deadbeef.4242.0a", project / "cache" / ".cafe.4242.0b"
    for orphan in (old, fresh):
        (orphan / "artifacts").mkdir(parents=True)
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    _use_factor(project, "3.0")
    _run(project)  # a store sweeps
    assert not old.exists() and fresh.exists()


def test_a_cache_that_cannot_be_created_is_one_warning_and_compiling_carries_on(project, monkeypatch):
    (project / "a_file").write_text("not a directory\n")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(project / "a_file" / "cache"))
    result, stderr = _result(_run(project, wait=False), with_stderr=True)
    assert result["value"] == 3.0 and result["output_dir"].startswith(str(project / "builds"))
    assert "Traceback" not in stderr
    assert stderr.count("CacheWarning") == 1, stderr
    assert (f"CacheWarning: the JIT's disk cache '{project / 'a_file' / 'cache'}' cannot be written (Not a "
            "directory): builds are not kept for other processes; set PYPTO_CACHE_DIR to a writable directory, "
            "or PYPTO_CACHE=0 to turn the cache off") in stderr


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_cache_is_one_warning_and_compiling_carries_on(project):
    (project / "cache").mkdir()
    (project / "cache").chmod(0o555)
    try:
        result, stderr = _result(_run(project, wait=False), with_stderr=True)
    finally:
        (project / "cache").chmod(0o755)
    assert result["value"] == 3.0 and "Traceback" not in stderr
    assert stderr.count("CacheWarning") == 1, stderr


def test_an_unwritable_cache_warns_once_per_process(tmp_path, monkeypatch):
    from pypto.jit import disk_cache

    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    build = tmp_path / "build"
    (build / "x").mkdir(parents=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert disk_cache.store(("one",), build) is None
        assert disk_cache.store(("two",), build) is None
    assert [w.category.__name__ for w in caught] == ["CacheWarning"]
