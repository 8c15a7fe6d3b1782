#!/usr/bin/env python3
"""Runs bench/sim_bench and prints the simulator against the scalar reference, as ratios.

Both sides run in the same process, with their repetitions randomly interleaved, so that a machine
that is busier at one moment than another slows both alike; the ratios are the result, the absolute
times only say what this machine did this time.

    python3 bench/compare.py [build/bench/sim_bench] [--repetitions N] [-- extra benchmark flags]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

TIME_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("executable", nargs="?", default="build/bench/sim_bench",
                        help="the sim_bench binary (default: %(default)s)")
    parser.add_argument("--repetitions", type=int, default=5, help="repetitions per benchmark (default: %(default)s)")
    parser.add_argument("extra", nargs=argparse.REMAINDER,
                        help="after --: more flags for the binary, e.g. --benchmark_min_time=1")
    args = parser.parse_args()
    if args.extra and args.extra[0] == "--":
        args.extra = args.extra[1:]
    return args


def run(executable, repetitions, extra):
    if not os.path.isfile(executable):
        sys.exit(f"compare.py: {executable} does not exist; build it first "
                 "(e.g. meson compile -C build bench/sim_bench)")
    command = [executable, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
               "--benchmark_enable_random_interleaving=true", *extra]
    print(f"running {' '.join(command)}", file=sys.stderr, flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, check=False)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        sys.exit(f"compare.py: {executable} exited with status {result.returncode} without a JSON report")
    return report, result.returncode


def collect(report):
    """Wall times in microseconds per benchmark name (without /real_time), one per repetition; the
    names of every benchmark that ran, in order; and the errors of those that failed."""
    times, names, errors = {}, [], []
    for entry in report["benchmarks"]:
        name = entry["run_name"].removesuffix("/real_time")
        if name not in names:
            names.append(name)
        if entry.get("error_occurred"):
            errors.append(f"{name}: {entry.get('error_message', 'error')}")
            continue
        if entry.get("run_type", "iteration") != "iteration":
            continue  # aggregates: recomputed below from the repetitions
        times.setdefault(name, []).append(entry["real_time"] * TIME_TO_US[entry["time_unit"]])
    return times, names, sorted(set(errors))


class Stat:
    def __init__(self, samples):
        self.median = statistics.median(samples)
        self.n = len(samples)
        self.cv = statistics.stdev(samples) / statistics.fmean(samples) if len(samples) > 1 else 0.0

    def __str__(self):
        return f"{self.median:10.1f} ±{self.cv * 100:3.0f}%"


def times_faster(ratio):
    if ratio >= 1:
        return f"sim is {ratio:.1f}x faster"
    return f"sim is {1 / ratio:.1f}x slower"


def chain_fit(chain):
    """time = fixed + N * per_task through the chain medians, by Theil-Sen: the slope is the median of
    the slopes between every pair of points, so one disturbed point cannot swing it as it would a
    least-squares fit; the fixed cost is the median of time - slope * N."""
    points = sorted((n, stat.median) for n, stat in chain.items())
    if len(points) < 2:
        return None
    slopes = [(t2 - t1) / (n2 - n1) for i, (n1, t1) in enumerate(points) for n2, t2 in points[i + 1:]]
    per_task = statistics.median(slopes)
    fixed = statistics.median(t - per_task * n for n, t in points)
    return fixed, per_task


def size_key(size):
    """"64x256" -> (elements, cols), for ordering; unparsable names go last."""
    try:
        rows, cols = (int(part) for part in size.split("x"))
        return (rows * cols, cols, "")
    except ValueError:
        return (float("inf"), 0, size)


def print_tile_add(stats, names, fixed):
    sizes = []
    for name in names:
        family, _, size = name.partition("/")
        if family in ("BM_SimTileAdd", "BM_SimTileAddSession", "BM_ScalarReference") and size not in sizes:
            sizes.append(size)
    if not sizes:
        return  # filtered out (e.g. --benchmark_filter=Repeat)
    sizes.sort(key=size_key)  # repetitions are interleaved at random, so the report's order is too
    print("Element-wise add, fp32: one execute() through the sim plugin vs the scalar reference")
    print("(median wall time of the repetitions, ± coefficient of variation)")
    print()
    print(f"{'size':<9} {'sim [us]':>16} {'scalar ref [us]':>16} {'ref/sim':>8}")
    for size in sizes:
        sim, ref = stats.get(f"BM_SimTileAdd/{size}"), stats.get(f"BM_ScalarReference/{size}")
        if sim is None or ref is None:
            print(f"{size:<9} (no time: {'the sim' if sim is None else 'the scalar reference'} failed or was filtered out)")
            continue
        ratio = ref.median / sim.median
        print(f"{size:<9} {str(sim):>16} {str(ref):>16} {ratio:8.2f}  {times_faster(ratio)}")
    sessions = [size for size in sizes if f"BM_SimTileAddSession/{size}" in stats]
    if sessions:
        print()
        print("The same add called again on a session opened once (run_session(): what a CompiledProgram call")
        print("runs from its second call on), next to the one-shot execute() above")
        print()
        print(f"{'size':<9} {'session [us]':>16} {'execute/session':>16} {'ref/session':>12}")
        for size in sessions:
            session = stats[f"BM_SimTileAddSession/{size}"]
            sim, ref = stats.get(f"BM_SimTileAdd/{size}"), stats.get(f"BM_ScalarReference/{size}")
            speedup = f"{sim.median / session.median:15.1f}x" if sim else ""
            versus = f"{ref.median / session.median:12.2f}  {times_faster(ref.median / session.median)}" if ref else ""
            print(f"{size:<9} {str(session):>16} {speedup:>16} {versus}")
    if fixed is not None:
        print()
        print("The chain fit below puts the fixed cost of one execute() (decode, runtime start-up and teardown),")
        print(f"whatever the tile size, at about {fixed:.0f} us of these sim times.")


def print_chain(chain, fit):
    print()
    print("Per-task runtime overhead: BM_SimChain/N, N dependent 16x16 add tasks in one execute()")
    print()
    print(f"{'N':>5} {'time [us]':>16} {'per task [us]':>14} {'marginal [us/task]':>19}")
    previous = None
    for n in sorted(chain):
        stat = chain[n]
        marginal = ""
        if previous is not None:
            marginal = f"{(stat.median - previous[1]) / (n - previous[0]):19.2f}"
        print(f"{n:>5} {str(stat):>16} {stat.median / n:14.2f} {marginal}")
        previous = (n, stat.median)
    if fit:
        fixed, per_task = fit
        print()
        print(f"fit (Theil-Sen over the medians): time = {fixed:.1f} us + N x {per_task:.2f} us")
        print(f"  per-task overhead (scheduling, dispatch, a 16x16 kernel): {per_task:.2f} us")
        print(f"  fixed cost of one execute() (decode, runtime start-up and teardown): {fixed:.1f} us")


def print_repeat(stats, names):
    plans = []
    for name in names:
        family, _, rest = name.partition("/")
        plan = rest.partition("/")[0]
        if family == "BM_Repeat" and plan not in plans:
            plans.append(plan)
    if not plans:
        return
    plans.sort()
    print()
    print("Repeated calls of one compiled plan (16x16 fp32 adds): the one-shot execute() (decode, executor and")
    print("runtime per call: every call before sessions) vs run_session() on a session opened once, and the scalar")
    print("reference doing the same adds (add16: one task; dag5: five tasks in a diamond)")
    print()
    print(f"{'plan':<7} {'execute [us]':>16} {'session [us]':>16} {'scalar ref [us]':>16} {'execute/session':>16} "
          f"{'ref/session':>12}")
    for plan in plans:
        execute, session, ref = (stats.get(f"BM_Repeat/{plan}/{how}") for how in ("execute", "session", "scalar_ref"))
        cells = [str(stat) if stat else "(failed)" for stat in (execute, session, ref)]
        speedup = f"{execute.median / session.median:15.1f}x" if execute and session else ""
        versus_ref = f"{ref.median / session.median:12.2f}" if ref and session else ""
        print(f"{plan:<7} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} {speedup:>16} {versus_ref}")


def main():
    args = parse_args()
    report, status = run(args.executable, args.repetitions, args.extra)
    times, names, errors = collect(report)
    stats = {name: Stat(samples) for name, samples in times.items()}
    chain = {int(name.split("/", 1)[1]): stat for name, stat in stats.items() if name.startswith("BM_SimChain/")}
    fit = chain_fit(chain)

    context = report.get("context", {})
    print(f"{context.get('host_name', '?')}: {context.get('num_cpus', '?')} CPUs, "
          f"{args.repetitions} repetitions, build type of the benchmark library: "
          f"{context.get('library_build_type', '?')}")
    print()
    print_tile_add(stats, names, fit[0] if fit else None)
    if chain:
        print_chain(chain, fit)
    print_repeat(stats, names)
    if errors:
        print()
        print("benchmarks that failed:")
        for error in errors:
            print(f"  {error}")
    if errors or status != 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
