"""PYPTO_TIME_REPORT (pypto/runtime/time_report.py): where a program's time goes, pypto's compiling
and running against the program's own work, at exit and (PYPTO_TIME_REPORT_AFTER) before a time
limit stops it; and the conformance sweep's table showing that split for a program over its limit."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "conformance" / "run.py"

REPORT = re.compile(r"pypto time report after ([\d.]+) s: pypto ([\d.]+) s \(compile ([\d.]+) s, run ([\d.]+) s\), "
                    r"the program's own work ([\d.]+) s")

PROGRAM = textwrap.dedent('''\
    import sys, time
    import torch
    import pypto.language as pl

    @pl.jit
    def twice(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [64, 64])
            b = pl.store(pl.add(t, t), [0, 0], b)
        return b

    x, y = torch.randn(64, 64), torch.zeros(64, 64)
    for _ in range(500):
        twice(x, y)
    assert torch.equal(y, 2 * x)
    time.sleep(float(sys.argv[1]))  # the program's own work
    ''')


def run_program(tmp_path, sleep: float, **env):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(script), str(sleep)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYPTO_CACHE="0", **env), cwd=tmp_path)


def test_the_report_splits_pypto_from_the_programs_own_work(tmp_path):
    done = run_program(tmp_path, 1.5, PYPTO_TIME_REPORT="1")
    assert done.returncode == 0, done.stderr
    reports = [REPORT.fullmatch(line) for line in done.stderr.splitlines() if line.startswith("pypto time report")]
    assert len(reports) == 1 and reports[0], done.stderr
    total, pypto, compile_s, run_s, own = (float(v) for v in reports[0].groups())
    assert own >= 1.5  # the sleep is the program's
    assert 0 < pypto < total - 1.5  # 500 calls, each binding its tensors and running the kernel
    assert abs(pypto + own - total) <= 0.015
    assert compile_s <= pypto and run_s <= pypto  # the C++ parts: milliseconds for this kernel


def test_without_the_variable_nothing_is_reported(tmp_path):
    done = run_program(tmp_path, 0, PYPTO_TIME_REPORT="0")
    assert done.returncode == 0, done.stderr
    assert "pypto time report" not in done.stderr


def test_a_report_comes_before_the_limit_and_again_at_exit(tmp_path):
    done = run_program(tmp_path, 3, PYPTO_TIME_REPORT="1", PYPTO_TIME_REPORT_AFTER="2")
    lines = [line for line in done.stderr.splitlines() if line.startswith("pypto time report")]
    assert len(lines) == 2, done.stderr
    early, final = (float(REPORT.fullmatch(line).group(1)) for line in lines)
    assert 2 <= early < final


def test_the_sweep_table_gives_the_split_of_a_program_over_its_limit(tmp_path):
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "slow.py").write_text(PROGRAM)
    listing = tmp_path / "list.txt"
    listing.write_text("S1 demo slow.py example 60\n")
    done = subprocess.run([sys.executable, str(TOOL), "--repo", f"demo={demo}", "--list", str(listing),
                           "--timeout", "12"], capture_output=True, text=True, timeout=120)
    row = next(line for line in done.stdout.splitlines() if line.startswith("| S1"))
    assert re.search(r"\| ERROR \| [\d.]+ \| time limit of 12s reached: pypto [\d.]+ s \(compile [\d.]+ s, run [\d.]+ s\), "
                     r"the program's own work [\d.]+ s \|", row), row
