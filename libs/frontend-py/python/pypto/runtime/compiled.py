"""A compiled program: its build directory, its parameters, and the call that runs it."""

import dataclasses
import os
import weakref
from pathlib import Path
from typing import Any, Optional, Sequence

from pypto import _core
from pypto.runtime import time_report
from pypto.runtime.declared_inputs import copy_back_inputs
from pypto.runtime.scalars import check_scalar_range, scalar_value, same_scalar
from pypto.runtime.torch_interop import dsl_dtype_name, torch_dtype
from pypto.runtime.unwritten import UnwrittenCheck


def explain_abi(program) -> str:
    """The ``args[]`` table of every hand-written kernel of ``program`` (a ``CompiledProgram``, or a
    lowered or ``@pl.program`` program): slot, parameter, tensor or scalar, direction and type, in the
    order ``kernel_entry(int64_t* args)`` receives them (tensors first, then scalars, then the runtime
    contexts at slots 48 and 49). ``pypto-run --explain-abi`` prints it for every program compiled."""
    if isinstance(program, CompiledProgram):
        program = program.program
    if not isinstance(program, _core.Program):
        raise TypeError(f"explain_abi expects a compiled or @pl.program program, got {type(program).__name__}")
    return _core.explain_extern_args(program)


def list_platforms() -> list:
    """Platforms served by the backend plugins found on this machine."""
    return _core.list_platforms()


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter of a compiled program, as its build directory records it.

    ``direction`` is read off the compiled program (``In``, ``Out`` or ``InOut`` for tensors,
    ``Scalar`` for scalars), never restated by the caller. A scalar whose value was fixed when the
    program was compiled (a Python number passed to a ``@pl.jit`` function) carries it in ``value``.
    A tensor the entry declared a plain ``pl.Tensor`` (In) although a kernel writes it has the
    direction the compiler derived and names that kernel in ``declared_in_written_by``: a run does
    not write it back into the caller's tensor, as a device does not (``pypto.runtime.declared_inputs``).
    """

    name: str
    kind: str  # "tensor" or "scalar"
    dtype: str  # DSL name: "FP32", "INT32", ...
    direction: str
    shape: Optional[tuple] = None
    value: Any = None
    declared_in_written_by: Optional[str] = None

    @property
    def is_output(self) -> bool:
        return self.direction in ("Out", "InOut")

    def to_json(self) -> dict:
        entry = dataclasses.asdict(self)
        if self.shape is not None:
            entry["shape"] = list(self.shape)
        return entry

    @staticmethod
    def from_json(entry: dict) -> "Parameter":
        shape = entry.get("shape")
        return Parameter(
            name=entry["name"],
            kind=entry["kind"],
            dtype=entry["dtype"],
            direction=entry["direction"],
            shape=tuple(shape) if shape is not None else None,
            value=entry.get("value"),
            declared_in_written_by=entry.get("declared_in_written_by"),
        )


class CompiledProgram:
    """What ``fn.compile(...)`` and ``pypto.ir.compile(...)`` return: call it with the program's
    arguments, in parameter order, to run it (outputs are written into the tensors in place). A program
    that returns its outputs may also be called with its inputs only: the ``pl.Out`` tensors are then
    allocated (zeros, of the compiled shapes and dtypes) and returned, one tensor or a tuple.

    The first call opens a session of the platform's backend for the program (the simulator decodes
    the kernels and sets up its cores there); every later call reuses it, so a call costs little
    more than its kernels. The session lives in the compiled artifacts, as long as this object does.
    Calls from several threads are safe: they take turns on the session.
    """

    def __init__(self, artifacts, parameters: Sequence[Parameter], *, register: bool = True):
        self._artifacts = artifacts
        self.parameters = list(parameters)
        self._has_return = None  # read off the entry's signature when first asked
        if register:
            _LIVE[_key(artifacts.output_dir)] = self
        if _core.abi_explanations_requested():  # pypto-run --explain-abi
            import sys

            print(explain_abi(self), file=sys.stderr, end="")

    def replica(self) -> "CompiledProgram":
        """Another handle on this build with a session of its own (the build directory loaded again,
        with this program's locations in the user's source).
        A session runs one call at a time; the ranks of a distributed program that run this program
        at the same time each need one."""
        artifacts = _core.load_compiled(self._artifacts.output_dir, self.platform,
                                        program_json=self._artifacts.program_json)
        return CompiledProgram(artifacts, self.parameters, register=False)

    @property
    def output_dir(self) -> Path:
        """The build directory."""
        return Path(self._artifacts.output_dir)

    def __fspath__(self) -> str:
        # Upstream's examples treat what pypto.ir.compile returns as its build directory
        # (`os.walk(ir.compile(program))`).
        return self._artifacts.output_dir

    @property
    def platform(self) -> str:
        return self._artifacts.platform

    @property
    def program(self):
        """The lowered IR program."""
        return self._artifacts.program

    @property
    def param_names(self) -> list:
        return [p.name for p in self.parameters]

    @property
    def output_names(self) -> list:
        """The tensors the program writes (``pl.Out`` and ``pl.InOut`` parameters)."""
        return [p.name for p in self.parameters if p.kind == "tensor" and p.is_output]

    @property
    def output_indices(self) -> list:
        """Positions of the ``pl.Out`` parameters: the tensors a call with the inputs only allocates.
        A ``pl.InOut`` tensor is read as well as written, so a caller always passes it."""
        return [i for i, p in enumerate(self.parameters) if p.kind == "tensor" and p.direction == "Out"]

    @property
    def has_return(self) -> bool:
        """Whether the program's entry returns values; only then may a call leave out the outputs."""
        if self._has_return is None:
            self._has_return = _entry_returns(self.program)
        return self._has_return

    @time_report.counted
    def __call__(self, *args, config=None, **kwargs):
        if config is not None and config.platform != self.platform:
            raise ValueError(
                f"this program was compiled for {self.platform!r}, not {config.platform!r}; compile it again"
            )
        values, allocated = self._arguments(args, kwargs)
        self._execute(values, config)
        if not allocated:
            return None
        outputs = tuple(values[i] for i in self.output_indices)
        return outputs[0] if len(outputs) == 1 else outputs

    def _run_in_place(self, args) -> None:
        """Runs the program on every argument, in parameter order (as ``execute_compiled`` passes them)."""
        self._execute(_bind(self.param_names, list(args), {}), None)

    def _execute(self, values, config) -> None:
        unwritten = UnwrittenCheck.from_config(config)
        copy_back = copy_back_inputs(config)
        tensors = []
        for param, value in zip(self.parameters, values):
            if param.kind == "scalar":
                _check_scalar(param, value)
            else:
                tensors.append((param, value))
        _run(self._artifacts, tensors, unwritten, copy_back)

    def _arguments(self, args, kwargs):
        """Every argument in parameter order, and whether the ``pl.Out`` tensors were allocated here
        (a call that passed the inputs only)."""
        names = self.param_names
        given = len(args) + len(kwargs)
        if given == len(names):
            return _bind(names, args, kwargs), False
        outputs = set(self.output_indices)
        inputs = [name for i, name in enumerate(names) if i not in outputs]
        named_output = any(names[i] in kwargs for i in outputs)
        if not outputs or given != len(inputs) or named_output or not self.has_return:
            raise TypeError(self._arity_error(given, inputs))
        bound = iter(_bind(inputs, args, kwargs))
        values = [_allocate(self.parameters[i]) if i in outputs else next(bound) for i in range(len(names))]
        return values, True

    # Upstream hands its programs to a worker of its device runtime (simpler), and lets a caller do
    # that by hand through these. This pypto runs programs itself: calling the program is the way.
    def build_call_config(self, *args, **kwargs):
        _refuse_manual_dispatch("build_call_config")

    def build_orch_args(self, *args, **kwargs):
        _refuse_manual_dispatch("build_orch_args")

    chip_callable = property(lambda self: _refuse_manual_dispatch("chip_callable"))
    runtime_name = property(lambda self: _refuse_manual_dispatch("runtime_name"))
    runtime_config = property(lambda self: _refuse_manual_dispatch("runtime_config"))

    def _arity_error(self, given: int, inputs: list) -> str:
        names = self.param_names
        expected = f"{len(names)} arguments ({', '.join(names)})"
        if len(inputs) < len(names):
            if self.has_return:
                expected += f", or its {len(inputs)} inputs ({', '.join(inputs)}) to get its outputs returned"
            else:
                expected += "; its entry returns nothing, so it writes its outputs into tensors the caller passes"
        return f"{self.program.entry_name} expects {expected}; got {given}"


# Live compiled programs by build directory, so that running a directory this process compiled
# reuses its session instead of loading it again.
_LIVE: "weakref.WeakValueDictionary[str, CompiledProgram]" = weakref.WeakValueDictionary()


def _key(output_dir: str) -> str:
    return os.path.realpath(output_dir)


def live_program(output_dir: str) -> Optional[CompiledProgram]:
    return _LIVE.get(_key(output_dir))


def _bind(names, args, kwargs):
    if len(args) > len(names):
        raise TypeError(f"expected {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"unexpected argument {key!r}; parameters are {', '.join(names)}")
        if key in bound:
            raise TypeError(f"argument {key!r} given twice")
        bound[key] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"missing argument(s): {', '.join(missing)}")
    return [bound[n] for n in names]


def _refuse_manual_dispatch(name: str):
    raise NotImplementedError(
        f"CompiledProgram.{name}: dispatching a compiled program by hand on a simpler Worker is not supported "
        "by this pypto, which has no simpler runtime; call the compiled program to run it"
    )


def _entry_returns(program) -> bool:
    """Whether ``program``'s entry function declares a result."""
    entry = next(f for f in program.functions.values() if f.name == program.entry_name)
    return bool(entry.return_types)


def _allocate(param: Parameter):
    """A zero tensor for a ``pl.Out`` parameter the caller left out, of its compiled shape and dtype."""
    import torch

    shape = param.shape or ()
    if any(not isinstance(dim, int) or dim < 0 for dim in shape):
        raise ValueError(
            f"output {param.name!r} has the dynamic shape {list(shape)}, so it cannot be allocated for you: "
            "pass it with the other arguments"
        )
    dtype = torch_dtype(param.dtype)
    if dtype is None:
        raise TypeError(f"output {param.name!r} has dtype {param.dtype}, which has no torch dtype to allocate it with")
    return torch.zeros(shape, dtype=dtype)


def _check_scalar(param: Parameter, value) -> None:
    """A scalar fixed at compile time must be passed with that value: the kernels have it built in."""
    actual = scalar_value(value, param.dtype, param.name)
    check_scalar_range(param.name, actual, param.dtype)
    if param.value is not None and not same_scalar(actual, param.value, param.dtype):
        raise ValueError(
            f"scalar {param.name!r} was compiled with the value {param.value!r} (a Python number passed at "
            f"compile time is a specialisation constant); got {actual!r}: compile again with this value"
        )


def _run(artifacts, tensors, unwritten=None, copy_back=False):
    """Runs the kernels on ``tensors`` ((Parameter, torch tensor) pairs). A tensor the entry declared
    In that a kernel writes is handed to the kernels as a private copy, unless ``copy_back``: on a
    device its copy-back is skipped, so the caller's tensor keeps what it held."""
    import torch

    staged = []  # (original, contiguous copy) pairs whose results are copied back
    private = []  # the kernels' copies of declared-In tensors they write, alive until the run ends
    described = []
    outputs = []  # (name, data) of the pl.Out parameters
    for param, tensor in tensors:
        name = param.name
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"argument {name!r} must be a torch.Tensor, got {type(tensor).__name__}")
        if not tensor.is_cpu:
            raise ValueError(f"argument {name!r} is on {tensor.device}; the simulator needs CPU tensors")
        dtype = dsl_dtype_name(tensor.dtype)
        if dtype is None:
            raise TypeError(f"argument {name!r} has dtype {tensor.dtype}, which PyPTO does not support")
        if param.declared_in_written_by is not None and not copy_back:
            # Uploaded as an In (its values reach the kernels), never copied back, never poisoned.
            private.append(tensor.clone(memory_format=torch.contiguous_format))
            described.append((private[-1].data_ptr(), list(tensor.shape), dtype))
            continue
        data = tensor if tensor.is_contiguous() else tensor.contiguous()
        if data is not tensor:
            staged.append((tensor, data))
        described.append((data.data_ptr(), list(data.shape), dtype))
        if param.direction == "Out":
            outputs.append((name, data))
    unwritten = unwritten or UnwrittenCheck()
    unwritten.before(outputs)
    _core.execute(artifacts, artifacts.platform, described)
    for original, copy in staged:
        original.copy_(copy)
    unwritten.after(outputs)
