#!/usr/bin/env python3
"""Communication between two ranks: the MPI backend against the thread backend, as ratios.

    .venv/bin/python bench/comm_ratios.py [--rounds N] [--size ROWS]

Times, for two ranks on this machine, `pld.tensor.put` and `pld.tensor.get` of a [ROWS, 128] FP32
region (64 rows, 32 KiB, unless --size says otherwise) into / out of the peer's window, and the
latency of a notify: each rank notifies the other and waits for the other's notify, round after
round (one round is one notify's one-way trip, both ways at once). Each is a chip kernel doing the
operation K times in a loop; a call's fixed cost (windows, broadcasts, launching the ranks) is
taken out by timing two loop counts and dividing the difference by the difference of the counts.

The thread backend runs in this process; the MPI backend in `mpirun -n 2` processes running this
script with --in-job (rank 0 writes its times as JSON). Each is the fastest of --rounds calls.
Prints MB/s for put and get, us for notify, each backend's figure and MPI / threads.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COLS = 128
LOOPS = (16, 2016)  # two loop counts: their difference carries the per-operation time

SOURCE = '''
import pypto.language as pl
import pypto.language.distributed as pld

R = {rows}
C = {cols}
K = {loops}


@pl.jit.incore
def puts(x: pl.Tensor[[R, C], pl.FP32], box: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]]):
    ctx = pld.get_comm_ctx(box)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    for i in pl.range(K):
        pld.tensor.put(box, peer, x, [0, 0], [0, 0], [R, C])
    return box


@pl.jit
def chip_puts(x: pl.Tensor[[R, C], pl.FP32], box: pl.InOut[pld.DistributedTensor[[R, C], pl.FP32]]):
    return puts(x, box)


@pl.jit.host
def host_puts(x: pl.Tensor[[2, R, C], pl.FP32]):
    buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        chip_puts(x[r], pld.window(buf, [R, C], dtype=pl.FP32), device=r)


@pl.jit.incore
def gets(y: pl.Out[pl.Tensor[[R, C], pl.FP32]], box: pld.DistributedTensor[[R, C], pl.FP32]):
    ctx = pld.get_comm_ctx(box)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    for i in pl.range(K):
        pld.tensor.get(y, peer=peer, src=box)
    return y


@pl.jit
def chip_gets(y: pl.Out[pl.Tensor[[R, C], pl.FP32]], box: pld.DistributedTensor[[R, C], pl.FP32]):
    return gets(y, box)


@pl.jit.host
def host_gets(y: pl.Out[pl.Tensor[[2, R, C], pl.FP32]]):
    buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        chip_gets(y[r], pld.window(buf, [R, C], dtype=pl.FP32), device=r)


@pl.jit.incore
def pings(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(flag)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    for i in pl.range(K):
        pld.system.notify(flag, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(flag, offsets=[0, 0], expected=i + 1, cmp=pld.WaitCmp.Ge)
    pl.write(y, [0, 0], pl.read(flag, [0, 0]))
    return y


@pl.jit
def chip_pings(y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    return pings(y, flag)


@pl.jit.host
def host_pings(y: pl.Out[pl.Tensor[[2, 1, 2], pl.INT32]]):
    buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        chip_pings(y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)
'''


def load_programs(rows: int, loops: int, where: Path):
    """The three host programs for `loops` operations per call, imported from a file (so the DSL
    has source lines)."""
    import importlib.util

    where.mkdir(parents=True, exist_ok=True)
    path = where / f"comm_bench_{rows}_{loops}.py"
    path.write_text(SOURCE.format(rows=rows, cols=COLS, loops=loops))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(backend: str, rows: int, rounds: int, where: Path) -> dict:
    """Seconds per operation of put, get and notify on `backend` (every process of an MPI job
    calls this; they all get the same programs and make the same calls)."""
    import torch

    from pypto.ir.distributed_compiled_program import DistributedConfig
    from pypto.runtime import RunConfig

    config = RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1]), comm_backend=backend)
    per_op = {}
    for op, make in (
        ("put", lambda: (torch.randn(2, rows, COLS),)),
        ("get", lambda: (torch.zeros(2, rows, COLS),)),
        ("notify", lambda: (torch.zeros(2, 1, 2, dtype=torch.int32),)),
    ):
        times = []
        for loops in LOOPS:
            programs = load_programs(rows, loops, where)
            host = getattr(programs, {"put": "host_puts", "get": "host_gets", "notify": "host_pings"}[op])
            args = make()
            compiled = host.compile(*args, config=config)
            compiled(*args, config=config)  # warm-up
            samples = []
            for _ in range(rounds):
                start = time.perf_counter()
                compiled(*args, config=config)
                samples.append(time.perf_counter() - start)
            times.append(min(samples))  # the least disturbed call: the machine is shared
        per_op[op] = max(times[1] - times[0], 1e-12) / (LOOPS[1] - LOOPS[0])
    return per_op


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=64, help="rows of the [ROWS, 128] FP32 region moved")
    parser.add_argument("--in-job", metavar="OUT", help=argparse.SUPPRESS)  # a rank of the MPI half
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="comm_bench_"))
    os.environ.setdefault("PYPTO_PROG_BUILD_DIR", str(where / "build_output"))
    if args.in_job:
        result = measure("mpi", args.size, args.rounds, where / str(os.getpid()))
        if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
            Path(args.in_job).write_text(json.dumps(result))
        return 0
    threads = measure("threads", args.size, args.rounds, where)
    out = where / "mpi.json"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(["mpirun", "--oversubscribe", "-n", "2", sys.executable, __file__, "--in-job", str(out),
                    "--rounds", str(args.rounds), "--size", str(args.size)], env=env, check=True,
                   stdin=subprocess.DEVNULL)
    mpi = json.loads(out.read_text())
    nbytes = args.size * COLS * 4
    print(f"two ranks on this machine; put/get of [{args.size}, {COLS}] FP32 ({nbytes // 1024} KiB), "
          f"fastest of {args.rounds} calls, loop counts {LOOPS[0]} and {LOOPS[1]}")
    print(f"{'operation':<18}{'threads':>14}{'MPI':>14}{'MPI / threads':>16}")
    for op in ("put", "get"):
        t, m = nbytes / threads[op] / 1e6, nbytes / mpi[op] / 1e6
        print(f"{op + ' MB/s':<18}{t:>14.1f}{m:>14.1f}{m / t:>16.2f}")
    t, m = threads["notify"] * 1e6, mpi["notify"] * 1e6
    print(f"{'notify us':<18}{t:>14.2f}{m:>14.2f}{m / t:>16.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
