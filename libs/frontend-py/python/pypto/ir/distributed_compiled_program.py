"""Distributed (L3, several chips) programs: what ``@pl.jit.host`` functions compile to.

A ``DistributedCompiledProgram`` holds the host function's plan (``pypto/jit/host_plan.py``) and one
compiled chip program per dispatch. A call allocates every rank's window (zeroed: each call starts
from a fresh communication state), registers the ranks' windows as one communication domain (so
that a kernel's comm ops reach a peer's window, at the same offset as its own), and runs the ranks
at the same time, one thread each: a kernel on one rank may wait for a signal another rank's kernel
sends, so running the ranks one after another could never finish. A rank runs its dispatches in the
order the host function made them. On the simulator all ranks share this process; each runs on a
session of its own. With ``RunConfig(comm_backend="mpi")`` the ranks are MPI processes instead
(``pypto/ir/distributed_mpi.py``)."""

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any, Sequence


@dataclasses.dataclass
class DistributedConfig:
    """The devices an L3 program spans: rank r runs on ``device_ids[r]``, and the world size is
    ``len(device_ids)``. ``num_sub_workers`` (host-side helper processes) has no use on the simulator."""

    device_ids: Sequence[int] = dataclasses.field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0
    options: Any = None

    def __post_init__(self):
        ids = list(self.device_ids) if self.device_ids is not None else [0]
        if not ids:
            raise ValueError("DistributedConfig.device_ids must not be empty")
        if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in ids):
            raise ValueError(f"DistributedConfig.device_ids must be non-negative integers, got {ids!r}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig.device_ids has a device twice: {ids!r} (one rank per device)")
        if isinstance(self.num_sub_workers, bool) or not isinstance(self.num_sub_workers, int) or self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be a non-negative integer, got {self.num_sub_workers!r}")
        self.device_ids = ids

    @property
    def world_size(self) -> int:
        return len(self.device_ids)


class DistributedRunError(RuntimeError):
    """A rank of a distributed program failed; ``rank`` says which (the other ranks' errors follow it
    in the message when they failed too)."""

    def __init__(self, message: str, rank: int):
        super().__init__(message)
        self.rank = rank


@dataclasses.dataclass(frozen=True)
class _ParamInfo:
    name: str
    direction: "ParamDirection"  # noqa: F821 - pypto.ir.ParamDirection


class DistributedCompiledProgram:
    """What ``host_fn.compile(...)`` returns: call it with the host function's arguments (outputs are
    written into the caller's tensors in place)."""

    def __init__(self, name, platform, output_dir, config, params, plan, programs, comm_backend=None):
        self.name = name
        self.comm_backend = comm_backend  # the compile's RunConfig.comm_backend (None: see distributed_mpi)
        self.platform = platform
        self._output_dir = Path(output_dir)
        self.distributed_config = config
        self._params = params  # name -> HostTensor (the compiled shape and dtype) or number
        self.plan = plan
        self._programs = programs  # one CompiledProgram per dispatch, in plan order
        self._sessions = None  # one CompiledProgram handle per dispatch, no two ranks sharing one

    @property
    def output_dir(self) -> Path:
        """The build directory: ``distributed_plan.json`` and one chip build per distinct chip program
        under ``next_levels/``."""
        return self._output_dir

    def __fspath__(self) -> str:
        return str(self._output_dir)

    @property
    def param_names(self) -> list:
        return list(self._params)

    @property
    def world_size(self) -> int:
        return self.plan.world_size

    @property
    def chip_programs(self) -> list:
        """The compiled chip program of each dispatch, in the order the host function made them."""
        return list(self._programs)

    def prepare(self, config=None, *, persistent=False, reset_persistent_windows=True):
        """A worker holding tensors on the devices across calls (``with compiled.prepare() as rt:``,
        ``rt.alloc_tensor(...)``, ``rt(*args)``). Each call still starts from zeroed windows, so
        ``persistent`` and ``reset_persistent_windows`` change nothing here."""
        from pypto.runtime.resident import PreparedWorker

        return PreparedWorker(self, config)

    def _get_metadata(self):
        """Upstream's (parameters, _, _): each host parameter with its name and direction, the
        direction read off the chip programs the plan passes it (or a part of it) to."""
        from pypto.ir import ParamDirection

        reads, writes = set(), set()
        for dispatch, program in zip(self.plan.dispatches, self._programs):
            for arg, param in zip(dispatch.args, program.parameters):
                name = getattr(arg, "param", None)
                if name is None or param.kind != "tensor":
                    continue
                (writes if param.direction == "Out" else reads).add(name)
                if param.direction == "InOut":
                    writes.add(name)
        infos = []
        for name in self._params:
            direction = (ParamDirection.InOut if name in reads and name in writes
                         else ParamDirection.Out if name in writes else ParamDirection.In)
            infos.append(_ParamInfo(name, direction))
        return infos, None, None

    @classmethod
    def from_dir(cls, work_dir, **kwargs):
        raise NotImplementedError(
            f"{work_dir}: loading a distributed (L3) build directory is not supported by this pypto yet; "
            "compile the @pl.jit.host function again"
        )

    def __call__(self, *args, config=None, **kwargs):
        if config is not None and config.platform != self.platform:
            raise ValueError(
                f"this program was compiled for {self.platform!r}, not {config.platform!r}; compile it again"
            )
        values = self._bind(args, kwargs)
        from pypto.ir import distributed_mpi

        if distributed_mpi.resolve_comm_backend(getattr(config, "comm_backend", None), self.comm_backend) == "mpi":
            distributed_mpi.run(self, values)
            return None
        windows = self._allocate_windows()
        sessions = self._rank_sessions()
        with _CommDomain(windows):
            self._run_ranks(values, windows, sessions)
        return None

    # -- internals --------------------------------------------------------------------------
    def _bind(self, args, kwargs) -> dict:
        import torch

        from pypto.jit.host_plan import HostTensor
        from pypto.runtime.torch_interop import dsl_dtype_name

        names = self.param_names
        if len(args) > len(names):
            raise TypeError(f"{self.name} expects {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                raise TypeError(f"{self.name}: unexpected or repeated argument {key!r}")
            bound[key] = value
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"{self.name}: missing argument(s): {', '.join(missing)}")
        for name, compiled in self._params.items():
            value = bound[name]
            if isinstance(compiled, HostTensor):
                if not isinstance(value, torch.Tensor):
                    raise TypeError(f"argument {name!r} must be a torch.Tensor, got {type(value).__name__}")
                dtype = dsl_dtype_name(value.dtype)
                if tuple(value.shape) != compiled.shape or dtype != compiled.dtype:
                    raise ValueError(
                        f"argument {name!r} is a {list(value.shape)} {dtype} tensor, but the program was compiled "
                        f"for {list(compiled.shape)} {compiled.dtype}; compile it again"
                    )
            elif value != compiled:
                raise ValueError(f"scalar {name!r} was compiled with the value {compiled!r}; got {value!r}")
        return bound

    def _allocate_windows(self) -> list:
        """One zeroed window per rank, holding every window buffer at the same offset."""
        import torch

        size = self.plan.window_bytes
        return [torch.zeros(size, dtype=torch.uint8) for _ in range(self.world_size)] if size else []

    def _rank_sessions(self) -> list:
        """A handle of each dispatch's program that no other rank uses: a session runs one call at a
        time, and ranks running one program at once each need their own."""
        if self._sessions is None:
            owner = {}  # id(program) -> the rank using the original handle
            sessions = []
            for dispatch, program in zip(self.plan.dispatches, self._programs):
                first = owner.setdefault(id(program), dispatch.rank)
                sessions.append(program if first == dispatch.rank else None)
            replicas = {}
            for i, (dispatch, program) in enumerate(zip(self.plan.dispatches, self._programs)):
                if sessions[i] is None:
                    key = (id(program), dispatch.rank)
                    if key not in replicas:
                        replicas[key] = program.replica()
                    sessions[i] = replicas[key]
            self._sessions = sessions
        return self._sessions

    def _arguments(self, dispatch, values, windows) -> list:
        from pypto.jit.host_plan import HostTensor, WindowView
        from pypto.runtime.torch_interop import torch_dtype

        result = []
        buffers = {w.name: w for w in self.plan.windows}
        for arg in dispatch.args:
            if isinstance(arg, HostTensor):
                result.append(arg.of(values[arg.param]))
            elif isinstance(arg, WindowView):
                buffer = buffers[arg.buffer]
                dtype = torch_dtype(arg.dtype)
                region = windows[dispatch.rank][buffer.offset:buffer.offset + buffer.nbytes]
                count = 1
                for dim in arg.shape:
                    count *= dim
                result.append(region.view(dtype)[:count].view(arg.shape))
            else:
                result.append(arg)
        return result

    def _dispatch_config(self):
        from pypto.runtime.config import RunConfig

        # A dispatch is a launch inside the distributed program, not a host-to-device call: its pl.Out
        # arguments are parts of the host's tensors that earlier dispatches may have written, or
        # windows, which start zeroed and carry signals between ranks. Poisoning them per dispatch
        # would erase both, so the dispatches run without it. For the same reason what a kernel writes
        # reaches them whatever the chip entry declared (a window is device memory, never copied back).
        return RunConfig(platform=self.platform, poison_outputs=False, copy_back_inputs=True)

    def _run_ranks(self, values, windows, sessions) -> None:
        dispatch_config = self._dispatch_config()
        work = {}
        for dispatch, session in zip(self.plan.dispatches, sessions):
            work.setdefault(dispatch.rank, []).append((dispatch, session))
        errors = {}

        def run_rank(rank):
            try:
                for dispatch, session in work[rank]:
                    session(*self._arguments(dispatch, values, windows), config=dispatch_config)
            except BaseException as error:  # noqa: BLE001 - reported for the rank below
                errors[rank] = error

        threads = [threading.Thread(target=run_rank, args=(rank,), name=f"rank{rank}") for rank in sorted(work)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            first = min(errors)
            devices = self.distributed_config.device_ids
            lines = [f"rank {r} (device {devices[r]}): {errors[r]}" for r in sorted(errors)]
            raise DistributedRunError("\n".join(lines), first) from errors[first]


class _CommDomain:
    """The ranks' windows registered with the runtime for the length of a call, so that comm ops
    address a peer's window (on the simulator, that rank's window in this process)."""

    def __init__(self, windows):
        self._windows = windows
        self._handle = None

    def __enter__(self):
        if self._windows:
            from pypto import _core

            register = getattr(_core, "register_comm_domain", None)
            if register is not None:
                self._handle = register([w.data_ptr() for w in self._windows], self._windows[0].numel())
        return self

    def __exit__(self, *exc):
        if self._handle is not None:
            from pypto import _core

            _core.unregister_comm_domain(self._handle)
        return False


def write_plan(output_dir: Path, name: str, platform: str, config: DistributedConfig, plan, chip_dirs) -> None:
    """``distributed_plan.json``: the plan a build directory was compiled to, for people to read."""
    described = plan.describe()
    for entry, chip_dir in zip(described["dispatches"], chip_dirs):
        entry["chip_build"] = str(Path(chip_dir).relative_to(output_dir)) if chip_dir else None
    described.update(name=name, platform=platform, device_ids=list(config.device_ids))
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "distributed_plan.json").write_text(json.dumps(described, indent=2) + "\n")


__all__ = ["DistributedConfig", "DistributedCompiledProgram", "DistributedRunError"]
