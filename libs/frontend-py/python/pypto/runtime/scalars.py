"""Scalar arguments as callers pass them: Python numbers, 0-d torch tensors, or ctypes values (the
runtime ABI form the golden harnesses build, where FP16/BF16 travel as 16-bit patterns)."""

import ctypes
import struct

_HALF_TYPES = ("FP16", "BF16")


def scalar_value(value, dtype: str, name: str):
    """The Python number ``value`` stands for, read as a ``dtype`` scalar."""
    if isinstance(value, ctypes._SimpleCData):
        raw = value.value
        if dtype in _HALF_TYPES and isinstance(raw, int):
            return _half_from_bits(raw, dtype)
        return raw
    if isinstance(value, (bool, int, float)):
        return value
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a requirement
        torch = None
    if torch is not None and isinstance(value, torch.Tensor) and value.ndim == 0:
        return value.item()
    raise TypeError(
        f"argument {name!r} is a {dtype} scalar: pass a Python number, a 0-d tensor or a ctypes value, "
        f"got {type(value).__name__}"
    )


def same_scalar(actual, expected, dtype: str) -> bool:
    """Equality as the kernel would see it: both values rounded to ``dtype``."""
    if dtype == "BOOL":
        return bool(actual) == bool(expected)
    if dtype.startswith(("FP", "BF")):
        return _round(float(actual), dtype) == _round(float(expected), dtype)
    return int(actual) == int(expected)


def _round(value: float, dtype: str) -> float:
    if dtype == "FP32":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if dtype in _HALF_TYPES:
        import torch

        torch_dtype = torch.float16 if dtype == "FP16" else torch.bfloat16
        return torch.tensor(value, dtype=torch_dtype).item()
    return value


def _half_from_bits(bits: int, dtype: str) -> float:
    import torch

    torch_dtype = torch.float16 if dtype == "FP16" else torch.bfloat16
    signed = bits - 0x10000 if bits >= 0x8000 else bits
    return torch.tensor([signed], dtype=torch.int16).view(torch_dtype).item()
