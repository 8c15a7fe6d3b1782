#!/usr/bin/env python3
"""Runs public PyPTO programs the way their own repositories run them, against this toolchain's
``pypto``, and prints one table row per program: id, program, verdict, seconds, first error line.

    .venv/bin/python tools/conformance/run.py --repo pypto=/path/to/pypto --repo pypto-lib=/path/to/pypto-lib

Verdicts: PASS (exit status 0), FAIL (the program's own check failed: an assertion, a golden
mismatch), ERROR (anything else: an exception, a crash, the time limit). Each program runs in a
fresh process, in a fresh scratch directory (its build_output/ lands there), with the Python that
runs this script; the public checkouts are only read.

With --mlir-opt, every kernels/*/*.generic.mlir the program's compiles wrote (the PTO modules in
MLIR's generic form) is then parsed by `mlir-opt-16 --allow-unregistered-dialect`; a module it
rejects makes the verdict FAIL, with mlir-opt's first error.

Every .pto the programs' compiles wrote is also checked against the PTO dialect's op table
(tools/pto-check: op names, operand and result counts and types, attributes, as PTOAS defines
them), and the closing lines count, per run, the kernels compiled (kernel_config.py entries), the
.pto modules written and how many conform. A nonconforming module is reported, with its first
problem, but does not change the verdict unless --pto-strict is given; --no-pto-check skips it.

With --sweep, the programs are pypto-lib's model sweep, computed from the checkout given as
--repo pypto-lib=PATH the way its daily CI computes it: every models/**/*.py holding `__main__`,
except *_draft.py files and files with a `# ci: no-sim` line, each run as `python FILE -p PLATFORM`
under a 300 s limit (unless --timeout says otherwise). New models join the sweep by themselves.

With --dump-passes, the programs run with $PYPTO_DUMP_PASSES=1 (which turns RunConfig.dump_passes on
whatever the program asks), and every build directory they wrote must hold passes_dump/ with the
program before the pipeline and after each of its passes; one that does not makes the verdict FAIL.
"""

import argparse
import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent / "pto-check"))
import pto_check  # noqa: E402  (tools/pto-check/pto_check.py)

# The sizes pypto-lib's CI gives the runtime rings; harmless where unused.
_GOLDEN_ENV = {"PTO2_RING_DEP_POOL": "16384", "PTO2_RING_TASK_WINDOW": "16384", "PTO2_RING_HEAP": "1073741824"}

# Where Debian's mlir-16-tools puts mlir-opt.
_MLIR_OPT_CANDIDATES = ("mlir-opt-16", "/usr/lib/llvm-16/bin/mlir-opt")


@dataclasses.dataclass
class Entry:
    ident: str
    repo: str
    path: str
    convention: str
    args: list


@dataclasses.dataclass
class Outcome:
    verdict: str
    seconds: float
    first_error: str
    output: str = ""
    modules: int = 0  # generic modules mlir-opt parsed (--mlir-opt)
    cases: str = ""  # a pytest file's "passed/run" cases (pytest convention)
    dumps: int = 0  # build directories with a complete pass dump (--dump-passes)
    kernels: int = 0  # kernels the program's compiles declared (kernel_config.py KERNELS entries)
    ptos: int = 0  # .pto modules they wrote
    ptos_conforming: int = 0  # of which pto-check found no problem in (with the .generic.mlir next to it)
    pto_problem: str = ""  # pto-check's first problem, "" when none


def read_list(path: Path) -> list:
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = shlex.split(line)
        if len(fields) < 4 or fields[3] not in ("example", "golden", "pytest"):
            raise SystemExit(f"{path}:{number}: expected 'id repo path example|golden|pytest [args...]'")
        entries.append(Entry(fields[0], fields[1], fields[2], fields[3], fields[4:]))
    return entries


_NO_SIM_MARKER = re.compile(r"^#\s*ci:\s*no-sim", re.MULTILINE)

# Upstream's daily CI gives each model program this long.
_SWEEP_TIMEOUT = 300.0


def sweep_entries(root: Path) -> list:
    """pypto-lib's model sweep: the runnable model files of the checkout at `root`, sorted by path.
    A file without `__main__` is a shared module (config, helpers), not a program."""
    entries = []
    for program in sorted((root / "models").rglob("*.py")):
        if program.name.endswith("_draft.py"):
            continue
        text = program.read_text(errors="replace")
        if "__main__" not in text or _NO_SIM_MARKER.search(text):
            continue
        path = program.relative_to(root).as_posix()
        entries.append(Entry(f"M{len(entries) + 1}", "pypto-lib", path, "golden", []))
    return entries


_RELATIVE_IMPORT = re.compile(r"^\s*from \.", re.MULTILINE)


def package_module(program: Path, root: Path):
    """The dotted module name of an example that imports its siblings relatively (`from .config
    import ...`): such a program runs as `python -m examples.models.x.main` from its repository root,
    as its docstring says. None for a standalone script."""
    if not _RELATIVE_IMPORT.search(program.read_text(errors="replace")):
        return None
    return ".".join(program.relative_to(root).with_suffix("").parts)


def command_for(entry: Entry, program: Path, platform: str, root: Path = None) -> list:
    python = [sys.executable]
    if entry.convention == "example":
        module = package_module(program, root) if root is not None else None
        # An example that takes the platform on its command line names it `{platform}` in the list.
        args = [arg.replace("{platform}", platform) for arg in entry.args]
        return python + (["-m", module] if module else [str(program)]) + args
    if entry.convention == "golden":
        return python + [str(program), "-p", platform] + entry.args
    # A system test runs re-hosted: its own directory's conftest files are not loaded (they need
    # upstream's build), st_host supplies the harness package and the test_runner fixture.
    return python + ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "st_host_plugin",
                     f"--confcutdir={program.parent}", f"--rootdir={program.parent}", str(program),
                     f"--platform={platform}"] + entry.args


def environment_for(entry: Entry, root: Path) -> dict:
    # The caller's PYTHONPATH stays (it may point at the pypto under test); never the checkout's own
    # python/ package.
    env = dict(os.environ)
    # Programs run in their own directories: a relative entry (`PYTHONPATH=build/...`) is taken from
    # the directory the tool was started in, as the caller meant it.
    caller_path = [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(caller_path)
    if entry.convention == "golden":
        # The golden package and the model files' sibling imports live at the repository root.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
        env.update(_GOLDEN_ENV)
    elif entry.convention == "example" and package_module(root / entry.path, root):
        # Run as a module of the repository's packages (see package_module).
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    elif entry.convention == "pytest":
        # System tests import the repository's examples (`from examples.models.paged_attention import
        # ...`), as they do when pytest runs from the repository root.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_HERE / "st_host"), str(root), env.get("PYTHONPATH")]))
    return env


def time_report_of(output: str) -> tuple:
    """The last "pypto time report" line of a run's output, shortened to its split ("" if none), and
    the output without those lines (so that they are never taken for the run's error)."""
    kept, split = [], ""
    for line in output.splitlines(keepends=True):
        found = re.match(r"pypto time report after [\d.]+ s: (.*)", line.strip())
        if found:
            split = found.group(1)
        else:
            kept.append(line)
    return split, "".join(kept)


def first_error(output: str) -> str:
    """The line that says what went wrong: the first exception line, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if re.match(r"^(E\s+)?[\w.]*(Error|Exception)\b", line):
            return line[:200]
    return lines[-1][:200] if lines else ""


def cases_of(output: str) -> str:
    """"passed/run" from pytest's summary line ("3 failed, 13 passed, 2 skipped in 1.6s"), where skipped
    and deselected cases are not run; "" when there is no summary."""
    summary = next((line for line in reversed(output.splitlines()) if re.search(r"\d+ \w+.* in [\d.]+s", line)),
                   "")
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?)", summary)}
    if not counts:
        return ""
    ran = sum(counts.values())
    return f"{counts.get('passed', 0)}/{ran}"


def verdict_for(returncode: int, output: str) -> str:
    if returncode == 0:
        return "PASS"
    if "AssertionError" in output or re.search(r"^\[RUN\].*\bFAIL\b", output, re.M):
        return "FAIL"
    return "ERROR"


def find_mlir_opt(path: str) -> str:
    """`path` when given, else mlir-opt-16 from PATH or its Debian location; "" when none is found."""
    for candidate in ([path] if path else _MLIR_OPT_CANDIDATES):
        found = shutil.which(candidate)
        if found:
            return found
    return ""


def check_modules(build_root: Path, mlir_opt: str) -> tuple:
    """(modules checked, the first rejection or "", mlir-opt's whole report on it or ""). A rejection
    reads "mlir-opt rejects build_output/<dir>/kernels/aiv/<kernel>.generic.mlir:LINE:COL: error: ..."."""
    modules = sorted(build_root.rglob("kernels/*/*.generic.mlir"))
    for module in modules:
        done = subprocess.run([mlir_opt, "--allow-unregistered-dialect", str(module), "-o", os.devnull],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if done.returncode != 0 or done.stderr:
            # The scratch directory is gone by the time anyone reads the table: name the module by its
            # place in the build output.
            report = done.stderr.replace(str(module), str(module.relative_to(build_root)))
            lines = [line for line in report.splitlines() if line.strip()]
            first = lines[0] if lines else f"{module.relative_to(build_root)}: exit status {done.returncode}"
            return len(modules), f"mlir-opt rejects {first}"[:200], report
    return len(modules), "", ""


_KERNEL_ENTRY = re.compile(r'^\s*\{"func_id":', re.M)


def count_kernels(build_root: Path) -> int:
    """The kernels every build under `build_root` declares to the runtime: hand-written ones included,
    which have no .pto."""
    return sum(len(_KERNEL_ENTRY.findall(config.read_text(errors="replace")))
               for config in build_root.rglob("kernel_config.py"))


def check_ptos(build_root: Path) -> tuple:
    """(.pto modules, those conforming, the first problem or "", every problem as text): each
    kernels/*/*.pto and its .generic.mlir checked against the PTO dialect, named relative to
    `build_root` (the scratch directory is gone by the time anyone reads the table)."""
    ptos = sorted(build_root.rglob("kernels/*/*.pto"))
    conforming, problems = 0, []
    for pto in ptos:
        report = pto_check.check_paths([p for p in (pto, pto.with_name(pto.stem + ".generic.mlir")) if p.is_file()],
                                       relative_to=build_root)
        conforming += not report.problems
        problems += report.problems
    first = f"pto-check: {problems[0]}"[:200] if problems else ""
    return len(ptos), conforming, first, "\n".join(str(p) for p in problems)


def check_dumps(build_root: Path) -> tuple:
    """(build directories with a complete pass dump, the first one without or "")."""
    expected = ["00_frontend.py"] + [f"{i:02}_after_{name}.py" for i, name in enumerate(_pipeline_passes(), 1)]
    complete, first_incomplete = 0, ""
    for build in sorted(manifest.parent for manifest in build_root.rglob("pypto_manifest.json")):
        dump = build / "passes_dump"
        found = sorted(p.name for p in dump.iterdir()) if dump.is_dir() else []
        if found == expected:
            complete += 1
        elif not first_incomplete:
            missing = [name for name in expected if name not in found] or ["nothing (extra files)"]
            first_incomplete = f"{build.relative_to(build_root)}/passes_dump lacks {', '.join(missing)}"
    return complete, first_incomplete


def run_one(entry: Entry, roots: dict, platform: str, timeout: float, mlir_opt: str = "",
            dump_passes: bool = False, pto_check_mode: str = "report") -> Outcome:
    root = roots.get(entry.repo)
    if root is None:
        return Outcome("ERROR", 0.0, f"no checkout given for repository {entry.repo!r} (--repo {entry.repo}=PATH)")
    program = root / entry.path
    if not program.is_file():
        return Outcome("ERROR", 0.0, f"{program} does not exist")
    with tempfile.TemporaryDirectory(prefix=f"conformance_{entry.ident}_") as scratch:
        env = environment_for(entry, root)
        # The build directories land in the scratch directory whatever the caller's environment says,
        # so that --mlir-opt finds them.
        env["PYPTO_PROG_BUILD_DIR"] = str(Path(scratch) / "build_output")
        # Every program is compiled from its source: a run measures the toolchain, not the JIT's
        # disk cache (whose hits would also write no build directory here).
        env["PYPTO_CACHE"] = "0"
        if dump_passes:
            env["PYPTO_DUMP_PASSES"] = "1"
        # Where the time goes (pypto/runtime/time_report.py): also said just before the limit, so that
        # a program stopped by it tells how much of its time was pypto's.
        env["PYPTO_TIME_REPORT"] = "1"
        env["PYPTO_TIME_REPORT_AFTER"] = str(max(timeout - 3, 1))
        start = time.time()
        try:
            done = subprocess.run(command_for(entry, program, platform, root), cwd=scratch, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout.decode(errors="replace") if isinstance(expired.stdout, bytes) else expired.stdout
            split, output = time_report_of(output or "")
            why = f"time limit of {timeout:.0f}s reached" + (f": {split}" if split else "")
            return Outcome("ERROR", time.time() - start, why, output + f"\n[conformance] {why}\n")
        seconds = time.time() - start
        split, output = time_report_of(done.stdout)
        verdict = verdict_for(done.returncode, output)
        outcome = Outcome(verdict, seconds, "" if verdict == "PASS" else first_error(output), output)
        if split:
            outcome.output += f"\n[conformance] {split}\n"
        if entry.convention == "pytest":
            outcome.cases = cases_of(output)
        if mlir_opt:
            outcome.modules, rejection, report = check_modules(Path(scratch), mlir_opt)
            if rejection:
                outcome.verdict, outcome.first_error = "FAIL", rejection
                outcome.output += f"\n[conformance] {rejection}\n{report}"
        if pto_check_mode != "off":
            outcome.kernels = count_kernels(Path(scratch))
            outcome.ptos, outcome.ptos_conforming, outcome.pto_problem, report = check_ptos(Path(scratch))
            if report:
                outcome.output += f"\n[conformance] {outcome.pto_problem}\n{report}"
            if outcome.pto_problem and pto_check_mode == "strict" and outcome.verdict == "PASS":
                outcome.verdict, outcome.first_error = "FAIL", outcome.pto_problem
        if dump_passes:
            outcome.dumps, incomplete = check_dumps(Path(scratch))
            if incomplete and outcome.verdict == "PASS":
                outcome.verdict, outcome.first_error = "FAIL", incomplete
    return outcome


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=PATH",
                        help="a checkout of a public repository named in the list (pypto, pypto-lib)")
    parser.add_argument("--list", type=Path, default=_HERE / "visible_set.txt", help="the programs to run")
    parser.add_argument("--sweep", action="store_true",
                        help="run pypto-lib's model sweep (computed from --repo pypto-lib=PATH) instead of a list")
    parser.add_argument("-p", "--platform", default="a2a3sim", choices=["a2a3sim", "a5sim", "a2a3", "a5"])
    parser.add_argument("--timeout", type=float, default=None,
                        help=f"seconds per program (default 600, {_SWEEP_TIMEOUT:.0f} with --sweep)")
    parser.add_argument("--only", default="", help="comma-separated ids to run (default: all)")
    parser.add_argument("--log-dir", type=Path, help="write each program's full output to LOG_DIR/<id>.log")
    parser.add_argument("--mlir-opt", nargs="?", const="", default=None, metavar="PATH",
                        help="parse every generic PTO module a program wrote with mlir-opt (default: mlir-opt-16); "
                             "a module it rejects fails the program")
    parser.add_argument("--no-pto-check", dest="pto_check", action="store_false",
                        help="do not count kernels and .pto modules nor check them against the PTO dialect")
    parser.add_argument("--pto-strict", action="store_true",
                        help="a .pto that does not conform to the PTO dialect fails its program")
    parser.add_argument("--dump-passes", action="store_true",
                        help="dump the IR after every pass and require the dump of every build")
    args = parser.parse_args(argv)
    mlir_opt = ""
    if args.mlir_opt is not None:
        mlir_opt = find_mlir_opt(args.mlir_opt)
        if not mlir_opt:
            wanted = args.mlir_opt or "mlir-opt-16"
            parser.error(f"--mlir-opt: {wanted} not found (Debian: apt-get install mlir-16-tools)")

    roots = {}
    for item in args.repo:
        name, _, path = item.partition("=")
        if not path or not Path(path).is_dir():
            parser.error(f"--repo {item!r}: expected NAME=PATH to an existing directory")
        roots[name] = Path(path).resolve()
    if args.sweep:
        if "pypto-lib" not in roots:
            parser.error("--sweep needs a pypto-lib checkout: --repo pypto-lib=PATH")
        entries = sweep_entries(roots["pypto-lib"])
    else:
        entries = read_list(args.list)
    if args.timeout is None:
        args.timeout = _SWEEP_TIMEOUT if args.sweep else 600.0
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e.ident in wanted]

    rows = []
    for entry in entries:
        pto_mode = "off" if not args.pto_check else ("strict" if args.pto_strict else "report")
        outcome = run_one(entry, roots, args.platform, args.timeout, mlir_opt, args.dump_passes, pto_mode)
        label = " ".join([entry.repo + ":" + entry.path] + entry.args)
        rows.append((entry.ident, label, outcome))
        if args.log_dir:
            args.log_dir.mkdir(parents=True, exist_ok=True)
            (args.log_dir / f"{entry.ident}.log").write_text(outcome.output)
        modules = f"  (mlir-opt: {outcome.modules} modules)" if mlir_opt else ""
        modules += f"  (pass dumps: {outcome.dumps} builds)" if args.dump_passes else ""
        if args.pto_check:
            modules += (f"  (kernels: {outcome.kernels}, .pto: {outcome.ptos}, "
                        f"pto-check: {outcome.ptos_conforming}/{outcome.ptos} conform)")
            modules += f"\n      {outcome.pto_problem}" if outcome.pto_problem else ""
        cases = f"  ({outcome.cases} cases)" if outcome.cases else ""
        print(f"{entry.ident:5} {outcome.verdict:5} {outcome.seconds:7.1f}s  {label}{cases}{modules}",
              file=sys.stderr, flush=True)

    with_cases = any(outcome.cases for _, _, outcome in rows)
    print("| id | program | verdict |" + (" cases |" if with_cases else "") + " seconds | first error |")
    print("|---|---|---|" + ("---|" if with_cases else "") + "---|---|")
    for ident, label, outcome in rows:
        error = outcome.first_error.replace("|", "\\|")
        cases = f" {outcome.cases} |" if with_cases else ""
        print(f"| {ident} | {label} | {outcome.verdict} |{cases} {outcome.seconds:.1f} | {error} |")
    passed = sum(1 for _, _, outcome in rows if outcome.verdict == "PASS")
    print(f"\n{passed}/{len(rows)} passed on {args.platform}")
    if with_cases:
        counted = [outcome.cases.split("/") for _, _, outcome in rows if outcome.cases]
        print(f"{sum(int(p) for p, _ in counted)}/{sum(int(r) for _, r in counted)} test cases passed")
    if mlir_opt:
        # A program that wrote no module (a hand-written kernel, a failure before compiling) has none rejected.
        parsed = sum(1 for _, _, outcome in rows if not outcome.first_error.startswith("mlir-opt rejects"))
        writers = sum(1 for _, _, outcome in rows if outcome.modules)
        total = sum(outcome.modules for _, _, outcome in rows)
        print(f"{parsed}/{len(rows)} programs' PTO modules all parse with {mlir_opt} "
              f"({total} modules, written by {writers} programs)")
    if args.pto_check:
        print(pto_summary(rows))
    if args.dump_passes:
        print(f"{sum(outcome.dumps for _, _, outcome in rows)} builds dumped the IR after each of "
              f"{len(_pipeline_passes())} passes")
    return 0 if passed == len(rows) else 1


def pto_summary(rows: list) -> str:
    """The closing count: kernels and .pto modules, and how many modules conform to the dialect."""
    outcomes = [outcome for _, _, outcome in rows]
    ptos = sum(o.ptos for o in outcomes)
    commit = pto_check.load_table()["source"]["commit"][:12]
    return (f"pto-check: {sum(o.kernels for o in outcomes)} kernels, {ptos} .pto modules "
            f"(written by {sum(1 for o in outcomes if o.ptos)} of {len(outcomes)} programs); "
            f"{sum(o.ptos_conforming for o in outcomes)}/{ptos} conform to the PTO dialect of PTOAS {commit}, "
            f"{sum(1 for o in outcomes if o.pto_problem)} programs wrote one that does not")


def _pipeline_passes() -> list:
    from pypto import _core

    return _core.pipeline_passes()


if __name__ == "__main__":
    sys.exit(main())
