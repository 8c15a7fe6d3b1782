"""Where a program's time goes: pypto's compiling and running against everything else the program
does (its own Python and torch: building weights, computing its golden).

With ``PYPTO_TIME_REPORT=1`` in the environment, ``import pypto`` times every call into the
toolchain's C++ (parsing, lowering, compiling, loading a build: *compile*; running a compiled
program: *run*) and every call of its Python entry points (a ``@pl.jit`` function, a
``CompiledProgram``, ``pypto.ir.compile``: binding arguments, cache lookups, copying tensors, all
*pypto*), and prints one line to stderr when the process exits::

    pypto time report after 301.21 s: pypto 45.40 s (compile 10.38 s, run 35.02 s), the program's own work 255.81 s

With ``PYPTO_TIME_REPORT_AFTER=S`` as well, the same line is also printed S seconds after the
process started (calls still running count up to then), so a run stopped by a time limit still
tells the split: tools/conformance's sweep sets it just under its limit. Calls made from several
threads at once (the ranks of a distributed program) count once: a category's time is the union of
its calls' intervals.
"""

import atexit
import functools
import itertools
import os
import sys
import threading
import time

_COMPILE = ("parse_jit", "parse_program", "lower", "compile", "load_compiled")
_RUN = ("execute",)

_lock = threading.Lock()
_intervals = {"compile": [], "run": [], "api": []}  # closed (start, end) pairs
_open = {}  # a call in flight (its number) -> (category, start)
_call_ids = itertools.count()
_printed_final = False


def _process_start() -> float:
    """When this process started, in time.time() seconds (when pypto was imported, off Linux)."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # starttime, in clock ticks after boot
        with open("/proc/uptime") as uptime:
            booted = time.time() - float(uptime.read().split()[0])
        return booted + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


_START = _process_start()


def _union(intervals) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def report(now: float = None) -> str:
    """The report line as of `now` (default: this moment)."""
    now = time.time() if now is None else now
    with _lock:
        spans = {name: list(closed) for name, closed in _intervals.items()}
        for category, start in _open.values():
            spans[category].append((start, now))
    compile_s, run_s = _union(spans["compile"]), _union(spans["run"])
    pypto_s = _union(spans["compile"] + spans["run"] + spans["api"])
    total = now - _START
    return (f"pypto time report after {total:.2f} s: pypto {pypto_s:.2f} s (compile {compile_s:.2f} s, run "
            f"{run_s:.2f} s), the program's own work {max(total - pypto_s, 0.0):.2f} s")


def _enabled() -> bool:
    return os.environ.get("PYPTO_TIME_REPORT", "") not in ("", "0")


def _timed(function, category: str):
    @functools.wraps(function)
    def call(*args, **kwargs):
        start = time.time()
        key = next(_call_ids)
        with _lock:
            _open[key] = (category, start)
        try:
            return function(*args, **kwargs)
        finally:
            with _lock:
                del _open[key]
                _intervals[category].append((start, time.time()))

    return call


def counted(function):
    """Counts the calls of a Python entry point of pypto as pypto's time (when the report is on)."""
    return _timed(function, "api") if _enabled() else function


def _print_report() -> None:
    sys.stderr.write(report() + "\n")
    sys.stderr.flush()


def _print_at_exit() -> None:
    global _printed_final
    _printed_final = True
    _print_report()


def _print_after(seconds: float) -> None:
    time.sleep(max(seconds - (time.time() - _START), 0.0))
    if not _printed_final:
        _print_report()


def install(core) -> None:
    """Times the toolchain's entry points of `core` (pypto._core) when PYPTO_TIME_REPORT is set."""
    if not _enabled():
        return
    for names, category in ((_COMPILE, "compile"), (_RUN, "run")):
        for name in names:
            if hasattr(core, name):
                setattr(core, name, _timed(getattr(core, name), category))
    atexit.register(_print_at_exit)
    after = os.environ.get("PYPTO_TIME_REPORT_AFTER")
    if after:
        threading.Thread(target=_print_after, args=(float(after),), daemon=True, name="pypto-time-report").start()
