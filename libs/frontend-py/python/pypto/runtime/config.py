"""``RunConfig``: where and how a program is compiled and run (the fields upstream PyPTO has)."""

import dataclasses
import datetime
import itertools
import os
from pathlib import Path
from typing import Any, Optional

from pypto.runtime import platforms as _platforms


def __getattr__(name: str):
    # PLATFORMS: the platforms the backend plugins describe ("a2a3sim", "a2a3", "a5sim", "a5" with the
    # plugins of this tree), found on first use rather than at import.
    if name == "PLATFORMS":
        return _platforms.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _default_platform() -> str:
    # `pypto-run -p PLATFORM` sets this, so scripts that build RunConfig() follow the command line.
    return os.environ.get("PYPTO_PLATFORM", "a2a3sim")


# The ways the ranks of a distributed program run (RunConfig.comm_backend).
COMM_BACKENDS = ("threads", "mpi")


@dataclasses.dataclass
class RunConfig:
    platform: str = dataclasses.field(default_factory=_default_platform)
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: Any = None
    backend_type: Any = None
    dump_passes: Any = False
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    enable_chip_swimlane: int = 0
    enable_l2_swimlane: int = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: Optional[str] = None
    aicpu_thread_num: Optional[int] = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False
    # Ours, not upstream's (pypto/runtime/unwritten.py): a pure pl.Out buffer is not uploaded to the
    # device, so the simulators fill it with a poison pattern before a run (what no kernel writes is
    # undefined, seed 001) and warn with the regions no kernel wrote. False turns either off.
    poison_outputs: bool = True
    report_unwritten: bool = True
    # Ours (pypto/runtime/declared_inputs.py): a plain pl.Tensor entry parameter is In, so a device
    # skips its copy-back and the simulators leave the caller's tensor as it was; True copies the
    # kernels' writes back, as this toolchain did before ($PYPTO_COPY_BACK_INPUTS=1 too).
    copy_back_inputs: bool = False
    # Ours (docs/distributed.md): how the ranks of a distributed program run. "threads": threads of
    # this process; "mpi": MPI processes (those of the `mpirun` that started this one, or, started
    # otherwise, `mpirun` processes this one launches for the call). None: $PYPTO_COMM_BACKEND, else
    # "mpi" under mpirun, else "threads".
    comm_backend: Optional[str] = None

    def __post_init__(self):
        # $PYPTO_DUMP_PASSES=1 turns the pass dumps on for every run, whatever the program asks: tools
        # that run unmodified programs (tools/conformance --dump-passes) rely on it.
        if os.environ.get("PYPTO_DUMP_PASSES") == "1":
            self.dump_passes = True
        if self.comm_backend not in COMM_BACKENDS + (None,):
            raise ValueError(f"RunConfig.comm_backend must be one of {', '.join(map(repr, COMM_BACKENDS))} or None, "
                             f"got {self.comm_backend!r}")
        known = _platforms.names()
        if self.platform not in known:
            raise ValueError(f"RunConfig.platform must be one of {', '.join(known)}, got {self.platform!r}")
        window = self.ring_task_window
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 2 or window & (window - 1)
        ):
            raise ValueError(f"RunConfig.ring_task_window must be a power of two of at least 2, got {window!r}")
        if self.ring_heap is not None:
            _check_ring_limit("RunConfig.ring_heap", "ring_heap", self.ring_heap)
        if self.ring_dep_pool is not None:
            _check_ring_limit("RunConfig.ring_dep_pool", "ring_dep_pool", self.ring_dep_pool)

    @property
    def dfx(self):
        """The profiling and dump switches, as ``pypto.runtime.runner.DfxOptions`` (``enable_l2_swimlane``
        is the deprecated name of ``enable_chip_swimlane``)."""
        from pypto.runtime.runner import DfxOptions

        return DfxOptions(
            enable_chip_swimlane=self.enable_chip_swimlane or self.enable_l2_swimlane,
            enable_dump_args=self.enable_dump_args,
            enable_pmu=self.enable_pmu,
            enable_dep_gen=self.enable_dep_gen,
            enable_scope_stats=self.enable_scope_stats,
        )

    def compile_dfx(self) -> dict:
        """The keyword arguments of ``_core.compile`` for the debugging outputs. Checks the switches first:
        on a simulator an unimplemented one is refused here (a device platform only writes artifacts, and
        running them says that a device is needed)."""
        dfx = self.dfx
        if _platforms.is_simulator(self.platform):
            dfx.check_supported(self.platform)
        return {
            "dump_args": dfx.enable_dump_args,
            "chip_swimlane": dfx.enable_chip_swimlane,
            "dep_gen": bool(dfx.enable_dep_gen),
        }

    @property
    def ring_heap_sizes(self) -> list:
        """Bytes of each of the four heap rings for this run's compile (0: that ring's default), or []
        for the defaults: $PTO2_RING_HEAP when the program runs, else 256 MiB a ring, as upstream."""
        if self.ring_heap is None:
            return []
        if isinstance(self.ring_heap, (list, tuple)):
            return list(self.ring_heap)
        return [self.ring_heap] * _RING_DEPTH

    @property
    def ring_dep_pool_sizes(self) -> list:
        """Entries of each of the four rings' dependency pools for this run's compile (0: that ring's
        default), or [] for the defaults: $PTO2_RING_DEP_POOL when the program runs, else 16384 a ring, as
        upstream. A submit that needs more than its ring's pool can give it fails with fatal error 4
        (DepPoolOverflow), as on a device (docs/simulator.md)."""
        if self.ring_dep_pool is None:
            return []
        if isinstance(self.ring_dep_pool, (list, tuple)):
            return list(self.ring_dep_pool)
        return [self.ring_dep_pool] * _RING_DEPTH

    @property
    def task_window(self) -> int:
        """The runtime's task window for this run: ``ring_task_window``, or 0 for the default
        (``$PTO2_RING_TASK_WINDOW`` if set, else 16384). Every compile reads it, so this is where the
        ring sizes given in the environment are checked. pypto-lib's CI sets them for every program,
        device and simulator alike, so they are accepted without a warning."""
        for name, variable in (("ring_heap", "PTO2_RING_HEAP"), ("ring_dep_pool", "PTO2_RING_DEP_POOL")):
            if os.environ.get(variable):
                _check_ring_limit(f"${variable}", name, os.environ[variable])
        return self.ring_task_window or 0


# Upstream's rules for a ring size (a scalar, or one entry per scope-depth ring; 0 in a list keeps that
# ring's default).
_RING_LIMITS = {
    "ring_heap": ("a power of two of at least 1024 (bytes per ring)", lambda v: v >= 1024 and v & (v - 1) == 0),
    "ring_dep_pool": ("an integer from 4 to 2**31 - 1 (entries per ring)", lambda v: 4 <= v <= 2**31 - 1),
}
_RING_DEPTH = 4


def _check_ring_limit(spelling: str, name: str, value) -> None:
    """Checks a ring_heap / ring_dep_pool value as upstream does: a ValueError names what is wrong."""
    phrase, fits = _RING_LIMITS[name]
    if isinstance(value, str):  # the environment variable
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"{spelling} must be {phrase}, got {value!r}") from None
    is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    entries = list(value) if isinstance(value, (list, tuple)) else None
    if entries is not None and len(entries) != _RING_DEPTH:
        raise ValueError(f"{spelling} must have {_RING_DEPTH} entries (one per scope-depth ring), got {len(entries)}")
    for entry in entries if entries is not None else [value]:
        if not is_int(entry) or not (fits(entry) or (entries is not None and entry == 0)):
            raise ValueError(f"{spelling} must be {phrase}, got {entry!r}")


def new_build_dir(config: RunConfig, program_name: str) -> Path:
    """``build_output/<program>_<timestamp>_<pid>_<n>`` (under ``$PYPTO_PROG_BUILD_DIR`` if set),
    created here, or ``config.save_kernels_dir``. The process id and a per-process counter make the
    name unique: two processes (or two specialisations of one function) compiling in the same second
    never share a directory, so neither can overwrite what the other wrote. Creating it claims it,
    so a name some other writer took in between is skipped."""
    if config.save_kernels_dir:
        return Path(config.save_kernels_dir).resolve()
    base = Path(os.environ.get("PYPTO_PROG_BUILD_DIR", "build_output"))
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    base.mkdir(parents=True, exist_ok=True)
    while True:
        candidate = base / f"{program_name}_{stamp}_{os.getpid()}_{next(_BUILD_DIR_COUNTER)}"
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate.resolve()


_BUILD_DIR_COUNTER = itertools.count()


def remove_if_empty(directory) -> None:
    """Removes a build directory ``new_build_dir`` made for a compile that then failed, if nothing was
    written into it (a pass dump, for one, is kept for the user to read)."""
    try:
        Path(directory).rmdir()
    except OSError:
        pass


def verify_requested() -> bool:
    """``PYPTO_VERIFY_LEVEL=1`` (or ``all``/``true``): check every pass's products with the verifiers."""
    return os.environ.get("PYPTO_VERIFY_LEVEL", "").lower() in ("1", "all", "true")
