"""Distributed programs with ranks as MPI processes (RunConfig(comm_backend="mpi"), docs/distributed.md):
upstream's distributed examples under `mpirun -n 2` and `-n 4`, the comm programs of
test_distributed_comm.py and stores of strided and counted regions giving the thread backend's
results under MPI (bit for bit, but for the order of atomic adds) (in a job mpirun started, where
rank 0 alone compiles, and in one the program launches itself), a compile error raised on every
process, and a wait nobody answers ending with the diagnosis. Skipped where this build has no MPI
or mpirun is missing."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pypto import _core

from test_distributed_comm import SOURCE, line_of

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parent
UPSTREAM = Path(os.environ.get("PYPTO_UPSTREAM_CHECKOUT", "/work/ext/pypto"))

pytestmark = pytest.mark.skipif(
    not _core.mpi_available() or shutil.which("mpirun") is None,
    reason=_core.mpi_unavailable_reason() or "mpirun is not on PATH (apt-get install openmpi-bin)",
)


def mpi_env(**extra) -> dict:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **extra)
    env.pop("PYPTO_COMM_BACKEND", None)
    env.update(extra)
    return env


def mpirun(n: int) -> list:
    return ["mpirun", "--oversubscribe", "-n", str(n)]


# -- upstream's distributed examples (tools/conformance/distributed_examples.txt) ----------------
def distributed_examples():
    entries = []
    for line in (ROOT / "tools/conformance/distributed_examples.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            ident, _repo, path, _convention, *args = line.split()
            entries.append(pytest.param(path, [a.replace("{platform}", "a2a3sim") for a in args], id=ident))
    return entries


@pytest.mark.parametrize("processes", [2, 4])
@pytest.mark.parametrize("path,args", distributed_examples())
def test_upstream_distributed_example_passes_under_mpirun(path, args, processes, tmp_path):
    program = UPSTREAM / path
    if not program.exists():
        pytest.skip(f"no upstream checkout at {UPSTREAM} ($PYPTO_UPSTREAM_CHECKOUT)")
    ranks = len(args[args.index("-d") + 1].split(",")) if "-d" in args else 2
    run = subprocess.run(mpirun(processes) + [sys.executable, str(program)] + args, cwd=tmp_path, env=mpi_env(),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    if processes < ranks:
        assert run.returncode != 0
        assert (f"spans {ranks} ranks (DistributedConfig.device_ids) but this MPI job has {processes} process(es): "
                f"start it with `mpirun -n {ranks}` (or more; the processes beyond rank {ranks - 1} only receive the "
                "results)") in run.stderr
        return
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.count("OK") + run.stdout.count("PASS") >= processes, run.stdout  # every process checked


# -- the same results as the thread backend -------------------------------------------------------
# Stores whose written bytes MPI puts without running them twice (the region the store names): rows
# of a column block, each a piece of its own, and a tile's valid rows only, counted at run time.
# Every rank first fills its own window with marks, which must survive wherever the stores do not write.
REGIONS = '''

@pl.jit.incore
def put_regions(
    x: pl.Tensor[[4, C], pl.FP32],
    count: pl.Tensor[[1], pl.INT32],
    marks: pl.Tensor[[8, N * C], pl.FP32],
    y: pl.Out[pl.Tensor[[8, N * C], pl.FP32]],
    window: pld.DistributedTensor[[8, N * C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    me = pld.rank(window)
    nxt = (me + 1) % pld.nranks(window)
    window = pl.store(pl.load(marks, [0, 0], [8, N * C]), [0, 0], window)
    signal = pld.tensor.barrier(signal)
    block = pl.load(x, [0, 0], [4, C])
    pld.tile.remote_store(block, window, peer=nxt, offsets=[0, me * C])
    rows = pl.read(count, [0])
    counted = pl.load(x, [0, 0], [4, C], valid_shape=[rows, C])
    pld.tile.remote_store(counted, window, peer=nxt, offsets=[4, me * C])
    signal = pld.tensor.barrier(signal)
    y = pl.store(pl.load(window, [0, 0], [8, N * C]), [0, 0], y)
    return y


@pl.jit
def chip_put_regions(
    x: pl.Tensor[[4, C], pl.FP32],
    count: pl.Tensor[[1], pl.INT32],
    marks: pl.Tensor[[8, N * C], pl.FP32],
    y: pl.Out[pl.Tensor[[8, N * C], pl.FP32]],
    window: pld.DistributedTensor[[8, N * C], pl.FP32],
    signal: pld.DistributedTensor[[N], pl.INT32],
):
    return put_regions(x, count, marks, y, window, signal)


@pl.jit.host
def host_put_regions(x: pl.Tensor[[N, 4, C], pl.FP32], count: pl.Tensor[[N, 1], pl.INT32],
                     marks: pl.Tensor[[N, 8, N * C], pl.FP32], y: pl.Out[pl.Tensor[[N, 8, N * C], pl.FP32]]):
    window_buf = pld.alloc_window_buffer([8, N * C], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([N], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_put_regions(x[r], count[r], marks[r], y[r], pld.window(window_buf, [8, N * C], dtype=pl.FP32),
                         pld.window(signal_buf, [N], dtype=pl.INT32), device=r)
'''

# A chip kernel the parser rejects: under mpirun only rank 0 compiles it, and every process raises
# its error.
BROKEN = '''
import pypto.language as pl
import pypto.language.distributed as pld


@pl.jit.incore
def broken(x: pl.Tensor[[1, 32], pl.FP32], y: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, 32])
    y = pl.store(pl.add(t, undefined_tile), [0, 0], y)
    return y


@pl.jit
def chip_broken(x: pl.Tensor[[1, 32], pl.FP32], y: pl.Out[pl.Tensor[[1, 32], pl.FP32]]):
    return broken(x, y)


@pl.jit.host
def host_broken(x: pl.Tensor[[3, 1, 32], pl.FP32], y: pl.Out[pl.Tensor[[3, 1, 32], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_broken(x[r], y[r], device=r)
'''


DRIVER = r'''
import os, sys
import torch
sys.path.insert(0, sys.argv[3])
from conftest import import_source
from test_distributed_comm import SOURCE
from test_distributed_mpi import BROKEN, REGIONS
from pypto.ir.distributed_compiled_program import DistributedConfig, DistributedRunError
from pypto.runtime import RunConfig

N, C = 3, 32
here = os.path.join(sys.argv[2] + ".d", str(os.getpid()))
os.makedirs(here, exist_ok=True)
k = import_source(__import__("pathlib").Path(here) / "distributed_comm_kernels.py", SOURCE + REGIONS)
config = RunConfig(distributed_config=DistributedConfig(device_ids=[0, 1, 2]))
results = {}
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
if sys.argv[1] == "programs":
    torch.manual_seed(11)
    x, xs = torch.randn(N, 1, C), torch.randn(N, 16, C)
    count = torch.tensor([[13], [13], [13]], dtype=torch.int32)  # a run-time row count, chunked 4 rows at a time
    def run(name, fn, *args):
        fn(*args, config=config)
        results[name] = [a.clone() for a in args]
    run("gather", k.host_gather, x, torch.zeros(N, N, C))
    run("handoff", k.host_handoff, x, torch.zeros(N, 1, C))
    run("two_rounds", k.host_two_rounds, x, torch.zeros(N, 2, C), torch.full((N, 1, N), -1, dtype=torch.int32))
    run("sum_into_first", k.host_sum_into_first, x, torch.full((N, 1, C), float("nan")))
    halves = torch.arange(N * C, dtype=torch.float16).reshape(N, 1, C) - 40  # exact sums in any order
    run("half_sum_into_first", k.host_half_sum_into_first, halves, torch.full((N, 1, C), float("nan"), dtype=torch.float16))
    run("pull_next", k.host_pull_next, x, torch.zeros(N, 1, C))
    run("put_counted_rows", k.host_put_counted_rows, xs, count, torch.zeros(N, N * 16, C))
    run("push_doubled", k.host_push_doubled, x, torch.zeros(N, 1, N * C))
    marks = torch.arange(N * 8 * N * C, dtype=torch.float32).reshape(N, 8, N * C) + 0.5
    run("put_regions", k.host_put_regions, xs[:, :4], torch.tensor([[3], [0], [1]], dtype=torch.int32), marks,
        torch.zeros(N, 8, N * C))
elif sys.argv[1] == "broken":  # every process reports what it raised
    b = import_source(__import__("pathlib").Path(here) / "broken_kernels.py", BROKEN)
    try:
        b.host_broken(torch.zeros(N, 1, C), torch.zeros(N, 1, C), config=config)
    except Exception as error:
        torch.save({"type": type(error).__name__, "message": str(error), "location": error.location},
                   f"{sys.argv[2]}.{rank}")
    sys.exit(0)
else:  # a wait nobody answers
    try:
        k.host_lonely_wait(torch.zeros(N, 1, 2, dtype=torch.int32), config=config)
    except DistributedRunError as error:
        results = {"message": str(error), "rank": error.rank}
if rank == 0:
    torch.save(results, sys.argv[2])
'''


def drive(tmp_path, what: str, launch: list, name: str, **env) -> dict:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = tmp_path / f"{name}.pt"
    run = subprocess.run(launch + [sys.executable, str(driver), what, str(out), str(TESTS)], cwd=tmp_path,
                         env=mpi_env(**env), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return torch.load(out, weights_only=False) if out.exists() else {}


@pytest.fixture(scope="module")
def thread_results(tmp_path_factory):
    return drive(tmp_path_factory.mktemp("threads"), "programs", [], "threads", PYPTO_COMM_BACKEND="threads")


@pytest.mark.parametrize("how", ["mpirun -n 3", "mpirun -n 4", "launched by the program"])
def test_comm_programs_give_the_thread_backends_results(thread_results, tmp_path, how):
    builds = tmp_path / "builds"
    if how.startswith("mpirun"):
        results = drive(tmp_path, "programs", mpirun(int(how[-1])), "mpi", PYPTO_PROG_BUILD_DIR=str(builds))
        # rank 0 compiled each program for the whole job: one build directory per host function
        built = sorted(re.fullmatch(r"_jit_(\w+?)_\d{8}_\d{6}_\d+_\d+", p.name)[1] for p in builds.iterdir())
        assert built == sorted(f"host_{name}" for name in thread_results)
    else:  # a plain `python prog.py` with the MPI backend starts the mpirun processes itself
        results = drive(tmp_path, "programs", [], "mpi", PYPTO_COMM_BACKEND="mpi")
    assert results.keys() == thread_results.keys()
    for name, tensors in thread_results.items():
        for got, want in zip(results[name], tensors):
            if name == "sum_into_first":  # the ranks' atomic adds land in either backend in any order
                torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
            else:
                assert torch.equal(got, want), name
    # and those are right: the thread backend's checks (test_distributed_comm.py) in brief
    x = thread_results["gather"][0]
    assert torch.equal(results["gather"][1][1], x.view(3, 32))
    assert torch.equal(results["pull_next"][1], torch.roll(x, shifts=-1, dims=0))
    # each rank's window: its marks, but for the block and the counted rows its previous rank put
    block, count, marks, got = results["put_regions"]
    want = marks.clone()
    for r in range(3):
        p, c = (r + 2) % 3, 32
        want[r, :4, p * c:(p + 1) * c] = block[p]
        rows = int(count[p, 0])
        want[r, 4:4 + rows, p * c:(p + 1) * c] = block[p, :rows]
    assert torch.equal(got, want)


@pytest.mark.parametrize("how", ["mpirun -n 3", "launched by the program"])
def test_a_wait_nobody_answers_ends_with_the_diagnosis_under_mpi(tmp_path, how):
    launch, env = (mpirun(3), {}) if how.startswith("mpirun") else ([], {"PYPTO_COMM_BACKEND": "mpi"})
    outcome = drive(tmp_path, "lonely", launch, "lonely", PYPTO_SIM_COMM_TIMEOUT_S="1", **env)
    message = outcome["message"]
    assert outcome["rank"] == 0
    line = line_of("pld.system.wait(flag, offsets=[0, 0], expected=3")
    for r in range(3):
        assert f"rank {r} (device {r}): " in message, message
        assert (f"rank {r} waited 1 s for signal 'flag'[0, 0] >= 3, but it holds 0: no peer notified it "
                "(PYPTO_SIM_COMM_TIMEOUT_S sets the limit)") in message, message
    # the ranks the program launched itself point at the user's source too, not at the chip builds
    assert f"distributed_comm_kernels.py:{line}:5" in message, message


def test_a_compile_error_under_mpirun_is_raised_on_every_process(tmp_path):
    drive(tmp_path, "broken", mpirun(3), "broken")
    line = BROKEN.splitlines().index("    y = pl.store(pl.add(t, undefined_tile), [0, 0], y)") + 1
    for rank in range(3):
        error = torch.load(tmp_path / f"broken.pt.{rank}", weights_only=False)
        assert error["type"] == "UndefinedVariableError", error
        assert error["message"].startswith("error: name 'undefined_tile' is not defined\n"), error["message"]
        assert error["location"].endswith(f"broken_kernels.py:{line}:28"), error["location"]


def test_the_backend_option_is_checked():
    from pypto.runtime import RunConfig

    with pytest.raises(ValueError, match=r"RunConfig.comm_backend must be one of 'threads', 'mpi' or None, got 'tcp'"):
        RunConfig(comm_backend="tcp")
