"""``@pl.jit``: a kernel entry specialised on the torch tensors it is called with."""

from pypto.jit.decorator import JITFunction, jit
from pypto.jit.disk_cache import cache_info

__all__ = ["JITFunction", "jit", "cache_info"]
