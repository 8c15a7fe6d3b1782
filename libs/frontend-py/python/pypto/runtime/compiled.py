"""A compiled program: its build directory, and the call that runs it on the program's platform."""

from typing import Sequence

from pypto import _core
from pypto.runtime.torch_interop import TORCH_TO_DSL


def list_platforms() -> list:
    """Platforms served by the backend plugins found on this machine."""
    return _core.list_platforms()


class CompiledProgram:
    """What ``fn.compile(...)`` returns: call it with the tensors to run (outputs are written in place).

    The first call opens a session of the platform's backend for the program (the simulator decodes
    the kernels and sets up its cores there); every later call reuses it, so a call costs little
    more than its kernels. The session lives in the compiled artifacts, as long as this object does.
    Calls from several threads are safe: they take turns on the session.
    """

    def __init__(self, artifacts, param_names: Sequence[str]):
        self._artifacts = artifacts
        self.param_names = list(param_names)

    @property
    def output_dir(self) -> str:
        return self._artifacts.output_dir

    @property
    def platform(self) -> str:
        return self._artifacts.platform

    @property
    def program(self):
        """The lowered IR program."""
        return self._artifacts.program

    def __call__(self, *args, config=None, **kwargs):
        if config is not None and config.platform != self.platform:
            raise ValueError(
                f"this program was compiled for {self.platform!r}, not {config.platform!r}; compile it again"
            )
        tensors = _bind(self.param_names, args, kwargs)
        _run(self._artifacts, self.param_names, tensors)
        return None


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


# torch dtype -> DSL dtype name (None: unsupported), filled as dtypes are met: a call looks each up once.
_DSL_DTYPES = {}


def _dsl_dtype(torch_dtype):
    try:
        return _DSL_DTYPES[torch_dtype]
    except KeyError:
        name = _DSL_DTYPES[torch_dtype] = TORCH_TO_DSL.get(str(torch_dtype).removeprefix("torch."))
        return name


def _run(artifacts, names, tensors):
    import torch

    staged = []  # (original, contiguous copy) pairs whose results are copied back
    described = []
    for name, tensor in zip(names, tensors):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"argument {name!r} must be a torch.Tensor, got {type(tensor).__name__}")
        if not tensor.is_cpu:
            raise ValueError(f"argument {name!r} is on {tensor.device}; the simulator needs CPU tensors")
        dtype = _dsl_dtype(tensor.dtype)
        if dtype is None:
            raise TypeError(f"argument {name!r} has dtype {tensor.dtype}, which PyPTO does not support")
        data = tensor if tensor.is_contiguous() else tensor.contiguous()
        if data is not tensor:
            staged.append((tensor, data))
        described.append((data.data_ptr(), list(data.shape), dtype))
    _core.execute(artifacts, artifacts.platform, described)
    for original, copy in staged:
        original.copy_(copy)
