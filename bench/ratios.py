#!/usr/bin/env python3
"""The simulator's tile ops and runtime against numpy/OpenBLAS doing the same work, as ratios.

    .venv/bin/python bench/ratios.py [build] [--rounds N] [--min-time S]

Runs <build>/bench/tile_bench, runtime_bench and sim_bench (Google Benchmark, JSON output) and,
in this process, times numpy doing what each tile kernel does, on arrays of the same size and
values. The rounds alternate: the binaries once (every benchmark, in random order), then every
numpy reference, N times; each ratio is the median of the rounds' ratios, so both sides of a ratio
come from the same stretch of a noisy machine. Prints one table: op, sim time, reference time,
ratio, and the issue's target with PASS/MISS where it sets one.

References (all single-threaded, as each simulated core's kernel is):
  add, exp, row_sum    np.add(a, b, out=c), np.exp(a, out=c), np.sum(a, axis=1, out=r)
  fill                 c.fill(v); a second row puts the plain std::fill_n loop FillF32 was
                       before it used Highway (BM_Tile/fill_plain) next to the same numpy fill
  f32 <-> f16 casts    np.copyto(dst, src, casting="unsafe") into a preallocated array (astype
                       without the allocation)
  f32 <-> bf16 casts   numpy has no bfloat16: torch's dst.copy_(src) into a preallocated tensor,
                       with torch.set_num_threads(1) (the row is left out if torch is missing)
  matmul               BM_Sgemm, OpenBLAS's cblas_sgemm called directly in tile_bench (the library
                       the simulator links), and np.matmul(a, b, out=c) on numpy's own OpenBLAS,
                       with OPENBLAS_NUM_THREADS=1 set before numpy is imported
Empty tasks have no numpy counterpart: their row is the runtime's time per task, against the
issue's budget of 2 us. One more row, for context, puts the add as a whole simulator task (a
session's run_session: two loads, the add, a store, scheduling and the scrub of the core's buffers
between runs; sim_bench's BM_SimTileAddSession) next to the same numpy add.
"""

import os

# numpy's bundled OpenBLAS reads this once, when numpy is imported: one thread, as the simulator's sgemm.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402

    torch.set_num_threads(1)
except ImportError:
    torch = None

TIME_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
TILE = (128, 128)
MATMUL_N = 128
EMPTY_TASKS = 4096
EMPTY_SHAPES = ("independent", "chain", "fan", "fanout", "fanin")
BUDGET_US_PER_TASK = 2.0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default="build", help="the meson build directory (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of binaries + numpy (default: %(default)s)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each benchmark and each reference runs per round (default: %(default)s)")
    return parser.parse_args()


# ---- The simulator's side: the benchmark binaries ----------------------------------------------------

def run_binary(path, pattern, min_time):
    """Real time in microseconds per benchmark name, for one run of every benchmark matching pattern;
    a counter us_per_task is taken instead of the time where the benchmark reports one, and then the
    benchmark thread's CPU time per task is kept under the name + " cpu"."""
    if not os.path.isfile(path):
        sys.exit(f"ratios.py: {path} does not exist; build it first (meson compile -C <build> "
                 f"bench/tile_bench bench/runtime_bench bench/sim_bench)")
    command = [path, "--benchmark_format=json", f"--benchmark_filter={pattern}",
               f"--benchmark_min_time={min_time}", "--benchmark_enable_random_interleaving=true"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        sys.exit(f"ratios.py: {path} exited with status {result.returncode} without a JSON report")
    times = {}
    for entry in report["benchmarks"]:
        name = entry["run_name"].removesuffix("/real_time")
        if entry.get("error_occurred"):
            sys.exit(f"ratios.py: {name} failed: {entry.get('error_message', 'error')}")
        if "us_per_task" in entry:
            times[name] = entry["us_per_task"]
            tasks = int(name.rsplit("/", 1)[1])
            times[name + " cpu"] = entry["cpu_time"] * TIME_TO_US[entry["time_unit"]] / tasks
        else:
            times[name] = entry["real_time"] * TIME_TO_US[entry["time_unit"]]
    if result.returncode != 0:
        sys.exit(f"ratios.py: {path} exited with status {result.returncode}")
    return times, report.get("context", {})


# ---- The references: numpy (and torch for bfloat16) ---------------------------------------------------

def values(shape):
    """tile_bench's Values(): i % 97 - 48, small integers exact in every type."""
    count = int(np.prod(shape))
    return ((np.arange(count) % 97) - 48).astype(np.float32).reshape(shape)


def exp_inputs(shape):
    """tile_bench's ExpInputs(): spread over [-8, 8)."""
    count = int(np.prod(shape))
    return ((np.arange(count) % 1024) / 64.0 - 8.0).astype(np.float32).reshape(shape)


def references():
    """name -> (label, a function doing the reference's work once); the names are tile_bench's."""
    size = f"{TILE[0]}x{TILE[1]}"
    a, b, c = values(TILE), exp_inputs(TILE), np.empty(TILE, np.float32)
    e = exp_inputs(TILE)
    rows = np.empty(TILE[0], np.float32)
    half = a.astype(np.float16)
    refs = {
        f"BM_Tile/add/{size}": ("numpy add", lambda: np.add(a, b, out=c)),
        f"BM_Tile/exp/{size}": ("numpy exp", lambda: np.exp(e, out=c)),
        f"BM_Tile/row_sum/{size}": ("numpy sum", lambda: np.sum(a, axis=1, out=rows)),
        f"BM_Tile/fill/{size}": ("numpy fill", lambda: c.fill(2.5)),
        f"BM_Tile/cast_f32_f16/{size}": ("numpy copyto", lambda: np.copyto(half, a, casting="unsafe")),
        f"BM_Tile/cast_f16_f32/{size}": ("numpy copyto", lambda: np.copyto(c, half, casting="unsafe")),
    }
    if torch is not None:
        ta, tc = torch.from_numpy(a), torch.from_numpy(c)
        tb16 = ta.to(torch.bfloat16)
        refs[f"BM_Tile/cast_f32_bf16/{size}"] = ("torch copy_", lambda: tb16.copy_(ta))
        refs[f"BM_Tile/cast_bf16_f32/{size}"] = ("torch copy_", lambda: tc.copy_(tb16))
    ma, mb, mc = (np.random.default_rng(0).random((MATMUL_N, MATMUL_N), dtype=np.float32) for _ in range(3))
    refs["numpy matmul"] = ("numpy matmul", lambda: np.matmul(ma, mb, out=mc))
    return refs


def time_us(work, min_time):
    """Microseconds per call: calls in batches until min_time has passed, total time / calls (what
    Google Benchmark reports for the binary's side)."""
    work()
    calls, elapsed, batch = 0, 0.0, 1
    while elapsed < min_time:
        start = time.perf_counter()
        for _ in range(batch):
            work()
        elapsed += time.perf_counter() - start
        calls += batch
        batch = min(batch * 2, 1 << 14)
    return elapsed / calls * 1e6


# ---- The table ------------------------------------------------------------------------------------------

class Row:
    """One line: the simulator's benchmark, its reference, and how the ratio is read.

    kind "time": ratio = sim time / reference time (lower is better; target: at most `limit`).
    kind "throughput": ratio = reference time / sim time, the sim's share of the reference's
    throughput (higher is better; target: at least `limit`).
    kind "budget": no reference; the sim's figure against an absolute limit (us per task)."""

    def __init__(self, op, sim, ref, kind, limit=None):
        self.op, self.sim, self.ref, self.kind, self.limit = op, sim, ref, kind, limit


def rows():
    size = f"{TILE[0]}x{TILE[1]}"
    n = MATMUL_N
    table = [
        Row(f"add f32 {size}", f"BM_Tile/add/{size}", f"BM_Tile/add/{size}", "time", 2.0),
        Row(f"add f32 {size}, one sim task", f"BM_SimTileAddSession/{size}", f"BM_Tile/add/{size}", "time"),
        Row(f"exp f32 {size}", f"BM_Tile/exp/{size}", f"BM_Tile/exp/{size}", "time"),
        Row(f"row_sum f32 {size}", f"BM_Tile/row_sum/{size}", f"BM_Tile/row_sum/{size}", "time"),
        Row(f"fill f32 {size}", f"BM_Tile/fill/{size}", f"BM_Tile/fill/{size}", "time"),
        Row(f"fill f32 {size}, plain loop", f"BM_Tile/fill_plain/{size}", f"BM_Tile/fill/{size}", "time"),
    ]
    for cast in ("f32_bf16", "f32_f16", "bf16_f32", "f16_f32"):
        name = f"BM_Tile/cast_{cast}/{size}"
        table.append(Row(f"cast {cast.replace('_', '->')} {size}", name, name, "time"))
    for dtype in ("f32", "f16", "bf16"):
        table.append(Row(f"matmul {dtype} in {n}^3", f"BM_Matmul/{dtype}/{n}", f"BM_Sgemm/{n}", "throughput", 0.5))
    table.append(Row(f"matmul f32 in {n}^3", f"BM_Matmul/f32/{n}", "numpy matmul", "throughput", 0.5))
    table.append(Row(f"matmul i8 in {n}^3", f"BM_Matmul/i8/{n}", f"BM_Sgemm/{n}", "throughput"))
    for shape in EMPTY_SHAPES:
        table.append(Row(f"empty tasks {shape} x{EMPTY_TASKS}", f"BM_EmptyTasks/{shape}/{EMPTY_TASKS}", None, "budget",
                         BUDGET_US_PER_TASK))
    return table


def ratio_of(row, sim, ref):
    if row.kind == "time":
        return sim / ref
    if row.kind == "throughput":
        return ref / sim
    return sim


def verdict(row, value):
    if row.limit is None:
        return ""
    if row.kind == "time":
        return f"<= {row.limit:g}x  {'PASS' if value <= row.limit else 'MISS'}"
    if row.kind == "throughput":
        return f">= {row.limit:g}x  {'PASS' if value >= row.limit else 'MISS'}"
    return f"< {row.limit:g} us  {'PASS' if value < row.limit else 'MISS'}"


def main():
    args = parse_args()
    tile_bench = os.path.join(args.build, "bench", "tile_bench")
    runtime_bench = os.path.join(args.build, "bench", "runtime_bench")
    sim_bench = os.path.join(args.build, "bench", "sim_bench")
    refs = references()
    table = rows()
    tile_pattern = f"^BM_Tile/[a-z0-9_]+/{TILE[0]}x{TILE[1]}$|^BM_Sgemm/{MATMUL_N}$|^BM_Matmul/[a-z0-9]+/{MATMUL_N}$"
    runtime_pattern = f"^BM_EmptyTasks/({'|'.join(EMPTY_SHAPES)})/{EMPTY_TASKS}/"  # names end in /real_time
    sim_pattern = f"^BM_SimTileAddSession/{TILE[0]}x{TILE[1]}/"

    sim_times, ref_times, ratios, cpu_per_task = {}, {}, {}, {}
    context = {}
    for round_index in range(args.rounds):
        print(f"round {round_index + 1}/{args.rounds}", file=sys.stderr, flush=True)
        times, context = run_binary(tile_bench, tile_pattern, args.min_time)
        for binary, pattern in ((runtime_bench, runtime_pattern), (sim_bench, sim_pattern)):
            more, _ = run_binary(binary, pattern, args.min_time)
            times.update(more)
        ref_round = {name: time_us(work, args.min_time) for name, (_, work) in refs.items()}
        ref_round.update({name: t for name, t in times.items() if name.startswith("BM_Sgemm/")})
        for name, value in times.items():
            if name.endswith(" cpu"):
                cpu_per_task.setdefault(name.removesuffix(" cpu"), []).append(value)
        for row in table:
            if row.sim not in times or (row.ref is not None and row.ref not in ref_round):
                continue
            sim = times[row.sim]
            ref = ref_round[row.ref] if row.ref else None
            key = (row.op, row.ref)
            sim_times.setdefault(key, []).append(sim)
            if ref is not None:
                ref_times.setdefault(key, []).append(ref)
            ratios.setdefault(key, []).append(ratio_of(row, sim, ref))

    print(f"{context.get('host_name', '?')}: {context.get('num_cpus', '?')} CPUs, {args.rounds} rounds, "
          f"{args.min_time:g} s per benchmark and reference per round; medians over the rounds, "
          "ratio range in brackets")
    print()
    print(f"{'op':<32} {'sim [us]':>9} {'reference':<14} {'ref [us]':>9} {'ratio':>8} {'(min-max)':>13}  target")
    missed = False
    for row in table:
        key = (row.op, row.ref)
        if key not in ratios:
            print(f"{row.op:<32} (not measured: no reference; torch is needed for bfloat16)")
            continue
        sim = statistics.median(sim_times[key])
        ref = statistics.median(ref_times[key]) if key in ref_times else None
        ratio = statistics.median(ratios[key])
        spread = f"({min(ratios[key]):.2f}-{max(ratios[key]):.2f})"
        label = refs[row.ref][0] if row.ref in refs else ("OpenBLAS sgemm" if row.ref else "-")
        ref_cell = f"{ref:9.2f}" if ref is not None else f"{'-':>9}"
        unit = "us" if row.kind == "budget" else "x"
        text = verdict(row, ratio)
        missed |= text.endswith("MISS")
        print(f"{row.op:<32} {sim:9.2f} {label:<14} {ref_cell} {ratio:6.2f}{unit:<2} {spread:>13}  {text}")
    if cpu_per_task:
        print()
        print("empty tasks, CPU time of the submitting thread per task (it runs the tasks too; the wall time")
        print("above also counts waiting for a CPU when other processes hold both):")
        print("  " + ", ".join(f"{name.split('/')[1]} {statistics.median(samples):.2f} us"
                               for name, samples in cpu_per_task.items()))
    print()
    print("time ratios are sim / reference (lower is better); matmul ratios are the sim's share of the")
    print("reference's throughput, reference time / sim time (higher is better); empty tasks are us per task")
    print("(for those rows the sim column is us per task too).")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
