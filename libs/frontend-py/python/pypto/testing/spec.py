"""What a harness run feeds a program: one spec per parameter, in the program's parameter order.

Specs say what each argument holds, never which way it flows: whether a tensor is read, written or
both is read off the compiled program (``CompiledProgram.parameters``)."""

import dataclasses
from typing import Any, Optional, Sequence

_TORCH_FACTORIES = ("randn", "rand", "zeros", "ones", "empty")


@dataclasses.dataclass
class TensorSpec:
    """A tensor argument: ``init_value`` is ``None`` (zeros), a number (filled), a tensor (copied and
    converted to ``dtype``), a torch factory such as ``torch.randn`` (called with the shape and
    dtype), or any other callable (called with no arguments; its result converted to ``dtype``).

    ``is_output`` is optional: when given it must agree with the compiled program's direction."""

    name: str
    shape: Sequence[int]
    dtype: Any  # a torch dtype
    init_value: Any = None
    is_output: Optional[bool] = None

    def create(self):
        import torch

        shape = tuple(int(d) for d in self.shape)
        init = self.init_value
        if init is None:
            return torch.zeros(shape, dtype=self.dtype)
        if isinstance(init, (bool, int, float)):
            return torch.full(shape, init, dtype=self.dtype)
        if isinstance(init, torch.Tensor):
            return _checked(self, init.detach().clone().to(self.dtype))
        if getattr(init, "__module__", None) == "torch" and getattr(init, "__name__", "") in _TORCH_FACTORIES:
            return init(shape, dtype=self.dtype)
        if callable(init):
            value = init()
            if not isinstance(value, torch.Tensor):
                value = torch.as_tensor(value)
            return _checked(self, value.to(self.dtype))
        raise TypeError(f"TensorSpec {self.name!r}: init_value must be None, a number, a tensor or a callable, "
                        f"got {type(init).__name__}")

    create_tensor = create  # upstream's name for it


def _checked(spec: TensorSpec, tensor):
    if tuple(tensor.shape) != tuple(spec.shape):
        raise ValueError(f"TensorSpec {spec.name!r}: init_value has shape {tuple(tensor.shape)}, "
                         f"the spec says {tuple(spec.shape)}")
    return tensor.contiguous()


@dataclasses.dataclass
class ScalarSpec:
    """A scalar argument. A ``@pl.jit`` function is compiled with ``value`` as a constant."""

    name: str
    dtype: Any  # a torch dtype
    value: Any

    def python_value(self):
        import torch

        return torch.tensor(self.value, dtype=self.dtype).item()
