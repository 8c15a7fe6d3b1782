"""``import pypto.language.distributed as pld``: the multi-chip (L3) DSL.

Like ``pl``, these names are read from source, never run as Python: the compiler recognises
``pld.<op>`` by that alias. A ``@pl.jit.host`` function's body (``pld.world_size()``,
``pld.alloc_window_buffer``, ``pld.window`` and the per-rank dispatches) is evaluated when the
program is compiled (``pypto/jit/host.py``); the comm ops of chip kernels (``pld.get_comm_ctx``,
``pld.tile.remote_load``, ``pld.system.notify``, ...) are parsed into IR by the frontend. Names of
upstream's distributed DSL that this pypto does not implement yet still resolve, so that model files
import, and say so when a program uses them."""

import enum

from pypto.language.typing import _Annotation


class NotifyOp(enum.Enum):
    """How ``pld.system.notify`` changes the peer's signal cell."""

    Set = 0
    AtomicAdd = 1


class WaitCmp(enum.Enum):
    """How ``pld.system.wait`` compares the local signal cell with the expected value."""

    Eq = 0
    Ne = 1
    Gt = 2
    Ge = 3
    Lt = 4
    Le = 5


class AtomicType(enum.Enum):
    """How ``pld.tensor.put`` / ``pld.tile.remote_store`` combine the data with what the destination
    holds: overwrite it (``None_``) or add to it (``Add``)."""

    None_ = 0
    Add = 1


class ReduceOp(enum.Enum):
    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


class _DistributedTensorAnnotation(_Annotation):
    def __getitem__(self, args):
        return _DistributedTensorAnnotation(self._name, args if isinstance(args, tuple) else (args,))

    def __repr__(self) -> str:
        return super().__repr__().replace("pl.", "pld.", 1)


DistributedTensor = _DistributedTensorAnnotation("DistributedTensor")
CommCtx = _DistributedTensorAnnotation("CommCtx")


class _SourceOnly:
    """A ``pld`` operation: it exists in ``@pl.jit`` / ``@pl.jit.host`` source, which the compiler reads;
    called as Python it says so. Attribute access reaches the category forms (``pld.tile.remote_load``)."""

    def __init__(self, name: str):
        self._name = name

    def __getitem__(self, _args):
        return self

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _SourceOnly(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"pld.{self._name} can only be used inside a @pl.jit or @pl.jit.host function: their bodies are "
            "compiled, not run as Python"
        )

    def __repr__(self) -> str:
        return f"pld.{self._name}"


world_size = _SourceOnly("world_size")
alloc_window_buffer = _SourceOnly("alloc_window_buffer")
window = _SourceOnly("window")
get_comm_ctx = _SourceOnly("get_comm_ctx")
rank = _SourceOnly("rank")
nranks = _SourceOnly("nranks")
remote_load = _SourceOnly("remote_load")
remote_store = _SourceOnly("remote_store")
system = _SourceOnly("system")
tensor = _SourceOnly("tensor")
tile = _SourceOnly("tile")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _SourceOnly(name)
