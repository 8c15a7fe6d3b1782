"""``@pl.jit``: a kernel entry specialised on the torch tensors it is called with."""

from pypto.jit.decorator import JITFunction, jit

__all__ = ["JITFunction", "jit"]
