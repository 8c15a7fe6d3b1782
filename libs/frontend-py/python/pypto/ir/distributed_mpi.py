"""The MPI backend of distributed programs: each rank an MPI process running its own simulator
(docs/distributed.md, "Ranks as MPI processes").

Two ways in, both chosen by ``RunConfig(comm_backend="mpi")`` (or ``$PYPTO_COMM_BACKEND=mpi``):

* the script was started by ``mpirun -n N python prog.py``: every process runs the whole script,
  and at a call each process runs the dispatches of the rank equal to its MPI rank (processes beyond
  the program's world only take part in the collectives). Under mpirun "mpi" is the default.
* the script was started otherwise: the call launches ``mpirun -n <world size>`` processes of
  ``pypto.ir.mpi_rank_worker`` on this build, hands them the arguments, and copies the results back
  (``$PYPTO_MPIRUN`` is the launcher command, ``mpirun --oversubscribe`` unless set).

A call in the job (``run_in_job``) makes every process read the same as the thread backend leaves
the caller: rank 0's arguments are broadcast to every process first (its tensors are the program's
inputs, whatever the others hold), and afterwards every part of a host tensor a dispatch writes is
broadcast from the rank that ran it, so each process's tensors hold every rank's results and the
program's own golden check reads the same on every process. A rank that fails makes every process
raise the same ``DistributedRunError``, naming each failing rank with its error."""

import atexit
import ctypes
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Set in the processes an MPI launcher starts (Open MPI, then the PMI/PMIx of other launchers).
_LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE")


def launched_by_mpirun() -> bool:
    """Whether this process is one of an MPI job's (started by mpirun, or one like it)."""
    return any(name in os.environ for name in _LAUNCHER_VARIABLES)


def resolve_comm_backend(*choices) -> str:
    """The backend a call runs with: the first of ``choices`` (the call's RunConfig, the compile's)
    that is set, else ``$PYPTO_COMM_BACKEND``, else "mpi" under mpirun, else "threads"."""
    from pypto.runtime.config import COMM_BACKENDS

    for choice in choices:
        if choice is not None:
            return choice
    chosen = os.environ.get("PYPTO_COMM_BACKEND")
    if chosen:
        if chosen not in COMM_BACKENDS:
            raise ValueError(f"$PYPTO_COMM_BACKEND must be one of {', '.join(COMM_BACKENDS)}, got {chosen!r}")
        return chosen
    return "mpi" if launched_by_mpirun() else "threads"


def run(program, values) -> None:
    """Runs ``program`` (a DistributedCompiledProgram) on the bound ``values`` with MPI ranks."""
    from pypto import _core

    if not _core.mpi_available():
        raise RuntimeError(f"RunConfig(comm_backend=\"mpi\"): {_core.mpi_unavailable_reason()}")
    if launched_by_mpirun():
        run_in_job(program, values)
    else:
        _run_with_mpirun(program, values)


def _ensure_initialized() -> None:
    from pypto import _core

    if not _core.mpi_initialized():
        _core.mpi_init()
        atexit.register(_core.mpi_finalize)  # mpirun counts a process that exits unfinalized as failed


# -- compiling in the job -------------------------------------------------------------------------
def compiles_in_job(config) -> bool:
    """Whether compiling with ``config`` is one of an MPI job's processes compiling the same program
    (every process runs the whole script): rank 0 then compiles for all (``compile_once``)."""
    from pypto import _core

    return launched_by_mpirun() and resolve_comm_backend(config.comm_backend) == "mpi" and _core.mpi_available()


def compile_once(build, load):
    """``build()`` on rank 0 of the job, the others waiting for it and then ``load(shared)`` of what
    it built (``shared_form``): N processes cost one compile. Collective: every process of the job
    compiles the same program at the same point of the script, as every process also calls it. A
    process that does not see rank 0's build directories (another machine, without a file system
    the two share at the same path) builds them itself. A compile that fails on rank 0 raises its
    error on every process."""
    import pickle

    from pypto import _core

    _ensure_initialized()
    if _core.mpi_rank() == 0:
        try:
            built = build()
        except Exception as error:
            _broadcast_bytes(_pickled_error(error))
            raise
        _broadcast_bytes(pickle.dumps(("built", shared_form(built))))
        return built
    outcome, payload = pickle.loads(_broadcast_bytes(b""))
    if outcome == "failed":
        raise _rebuilt_error(*payload)
    if not _visible(payload):
        return build()
    return load(payload)


def shared_form(program) -> dict:
    """What another process needs to load ``program`` (a DistributedCompiledProgram): its build
    directory, and each chip build with its parameters, its lowered program's JSON form (whose
    locations are the script's, so a kernel's error points there) and its manifest's digest."""
    return {
        "output_dir": str(program.output_dir),
        "chips": [(str(chip.output_dir), chip.parameters, chip._artifacts.program_json, _manifest_digest(chip.output_dir))
                  for chip in program.chip_programs],
    }


def load_chips(shared: dict, platform: str) -> list:
    """The chip programs of ``shared_form``, each build directory loaded once."""
    from pypto import _core
    from pypto.runtime.compiled import CompiledProgram

    loaded = {}
    programs = []
    for output_dir, parameters, program_json, _digest in shared["chips"]:
        if output_dir not in loaded:
            artifacts = _core.load_compiled(output_dir, platform, program_json=program_json)
            loaded[output_dir] = CompiledProgram(artifacts, parameters)
        programs.append(loaded[output_dir])
    return programs


def _manifest_digest(build_dir) -> str:
    import hashlib

    from pypto.runtime.build_dir import MANIFEST

    path = Path(build_dir) / MANIFEST
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _visible(shared: dict) -> bool:
    """Whether this process sees rank 0's chip builds as rank 0 wrote them."""
    return all(digest and _manifest_digest(output_dir) == digest for output_dir, _p, _j, digest in shared["chips"])


def _pickled_error(error: Exception) -> bytes:
    """``error`` as it travels to the other processes: its class, arguments and attributes (a
    ParserError's arguments are its rendered text, not those of its constructor, so it is rebuilt
    from them rather than constructed again); its type and text where those do not pickle."""
    import pickle

    try:
        return pickle.dumps(("failed", (type(error), error.args, vars(error))))
    except Exception:  # noqa: BLE001 - whatever does not pickle is sent as its text
        return pickle.dumps(("failed", (RuntimeError, (f"{type(error).__name__}: {error}",), {})))


def _rebuilt_error(cls, args, state) -> Exception:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


def _broadcast_bytes(data: bytes, root: int = 0) -> bytes:
    """``data`` as ``root`` holds it, on every process (the others asleep until the root sends it)."""
    from pypto import _core

    size = ctypes.c_uint64(len(data))
    _core.mpi_broadcast(ctypes.addressof(size), ctypes.sizeof(size), root, asleep=True)  # the root compiles first
    buffer = ctypes.create_string_buffer(data, size.value) if _core.mpi_rank() == root else \
        ctypes.create_string_buffer(size.value)
    _core.mpi_broadcast(ctypes.addressof(buffer), size.value, root)
    return buffer.raw


# -- in the job ----------------------------------------------------------------------------------
def run_in_job(program, values) -> None:
    """The call, on every process of the MPI job (collective: each must make it)."""
    from pypto import _core

    _ensure_initialized()
    me, size, world = _core.mpi_rank(), _core.mpi_size(), program.world_size
    if size < world:
        raise ValueError(
            f"{program.name} spans {world} ranks (DistributedConfig.device_ids) but this MPI job has {size} "
            f"process(es): start it with `mpirun -n {world}` (or more; the processes beyond rank {world - 1} only "
            "receive the results)"
        )
    _broadcast_inputs(program, values)
    failure = None
    handle = None
    try:
        windows = [None] * world
        if program.plan.window_bytes:
            base, handle = _core.mpi_open_windows(program.plan.window_bytes, world)
            if base:
                windows[me] = _tensor_at(base, program.plan.window_bytes)
        if me < world:
            _run_rank(program, me, values, windows)
    except Exception as error:  # noqa: BLE001 - every process learns of it below, then raises
        failure = error
    messages = [m.decode() for m in _core.mpi_allgather(str(failure).encode() if failure is not None else b"")]
    failed = [m is not None for m in _failures(messages, world)]
    if handle is not None:
        _core.mpi_close_windows(handle)
    if any(failed):
        _raise_failures(program, messages, failure, me)
    _broadcast_outputs(program, values)


def _failures(messages, world):
    """Each rank's error message, None where it succeeded (an empty message)."""
    return [m if m else None for m in messages[:world]]


def _raise_failures(program, messages, local_failure, me) -> None:
    from pypto.ir.distributed_compiled_program import DistributedRunError

    devices = program.distributed_config.device_ids
    failing = [r for r, m in enumerate(messages[:program.world_size]) if m]
    if not failing:  # a process beyond the world failed before it ran anything
        raise local_failure
    lines = [f"rank {r} (device {devices[r]}): {messages[r]}" for r in failing]
    error = DistributedRunError("\n".join(lines), failing[0])
    raise error from (local_failure if me in failing else None)


def _run_rank(program, rank, values, windows) -> None:
    config = program._dispatch_config()
    for dispatch, chip in zip(program.plan.dispatches, program.chip_programs):
        if dispatch.rank == rank:
            chip(*program._arguments(dispatch, values, windows), config=config)


def _tensor_at(address: int, nbytes: int):
    """The bytes at ``address`` (this process's MPI window) as a uint8 tensor, without a copy."""
    import torch

    return torch.frombuffer((ctypes.c_uint8 * nbytes).from_address(address), dtype=torch.uint8)


def _broadcast(tensor, root: int) -> None:
    """``tensor`` on every process as it is on ``root``."""
    from pypto import _core
    import torch

    if tensor.numel() == 0:
        return
    buffer = tensor if tensor.is_contiguous() else tensor.contiguous()
    if not tensor.is_contiguous() and _core.mpi_rank() != root:
        buffer = torch.empty_like(buffer)
    _core.mpi_broadcast(buffer.data_ptr(), buffer.numel() * buffer.element_size(), root)
    if buffer is not tensor:
        tensor.copy_(buffer)


def _broadcast_inputs(program, values) -> None:
    from pypto.jit.host_plan import HostTensor

    for name, compiled in program._params.items():
        if isinstance(compiled, HostTensor):
            _broadcast(values[name], 0)


def _broadcast_outputs(program, values) -> None:
    """Every part of a host tensor a dispatch writes (a pl.Out or pl.InOut argument), from the rank
    that ran it to every process, in the order the dispatches were made."""
    from pypto.jit.host_plan import HostTensor

    for dispatch, chip in zip(program.plan.dispatches, program.chip_programs):
        for arg, param in zip(dispatch.args, chip.parameters):
            if isinstance(arg, HostTensor) and param.kind == "tensor" and param.direction != "In":
                _broadcast(arg.of(values[arg.param]), dispatch.rank)


# -- launching the job ---------------------------------------------------------------------------
def _launcher() -> list:
    command = shlex.split(os.environ.get("PYPTO_MPIRUN", "mpirun --oversubscribe"))
    if not command or shutil.which(command[0]) is None:
        raise RuntimeError(
            f"RunConfig(comm_backend=\"mpi\") launches the ranks with `{' '.join(command) or 'mpirun'}`, which is "
            "not on PATH: install Open MPI (apt-get install openmpi-bin), set $PYPTO_MPIRUN to the launcher, or "
            "start the program with `mpirun -n N python prog.py` yourself"
        )
    return command


def _run_with_mpirun(program, values) -> None:
    """Launches one MPI process per rank for this call and copies their results into ``values``."""
    import torch

    from pypto.ir.distributed_compiled_program import DistributedRunError

    command = _launcher()
    job_dir = Path(tempfile.mkdtemp(prefix="mpi_run_", dir=program.output_dir))
    job, result = job_dir / "job.pt", job_dir / "result.pt"
    torch.save(_job(program, values, result), job)
    package_root = str(Path(__file__).resolve().parents[2])  # the directory holding pypto/
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    argv = command + ["-n", str(program.world_size), sys.executable, "-m", "pypto.ir.mpi_rank_worker", str(job)]
    status = subprocess.run(argv, env=env).returncode
    if not result.exists():
        raise RuntimeError(f"{shlex.join(argv)} exited with status {status} before rank 0 wrote the results "
                           "(the ranks' output is above)")
    outcome = torch.load(result, weights_only=False)
    if outcome["error"] is not None:
        message, rank = outcome["error"]
        raise DistributedRunError(message, rank)
    for name, tensor in outcome["values"].items():
        values[name].copy_(tensor)
    shutil.rmtree(job_dir, ignore_errors=True)


def _job(program, values, result: Path) -> dict:
    """What the worker processes need: the plan without the Python functions it was made from, each
    dispatch's chip build, and the arguments."""
    import dataclasses

    from pypto.jit.host_plan import HostTensor

    plan = dataclasses.replace(
        program.plan, dispatches=[dataclasses.replace(d, entry=None) for d in program.plan.dispatches]
    )
    return {
        "name": program.name,
        "platform": program.platform,
        "output_dir": str(program.output_dir),
        "device_ids": list(program.distributed_config.device_ids),
        "params": program._params,
        "plan": plan,
        # each chip build with its lowered program's JSON form, whose locations are the user's source
        "chips": [(str(chip.output_dir), chip.parameters, chip._artifacts.program_json) for chip in program.chip_programs],
        "values": values,
        "tensors": [name for name, compiled in program._params.items() if isinstance(compiled, HostTensor)],
        "result": str(result),
    }
