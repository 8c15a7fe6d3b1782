"""Scalar arguments as callers pass them: Python numbers, 0-d torch tensors, or ctypes values (the
runtime ABI form the golden harnesses build, where FP16/BF16 travel as 16-bit patterns)."""

import ctypes
import math
import struct

_HALF_TYPES = ("FP16", "BF16")

# The values each integer dtype holds. A scalar reaches a kernel as a 64-bit slot (a negative one in
# two's complement, as upstream's `(uint64_t)value` packs it); compile-time scalars are carried as
# 64-bit signed integers, so UINT64 stops at 2**63 - 1 here.
_INTEGER_RANGES = {
    "BOOL": (0, 1),
    "INT4": (-(2**3), 2**3 - 1),
    "UINT4": (0, 2**4 - 1),
    "INT8": (-(2**7), 2**7 - 1),
    "UINT8": (0, 2**8 - 1),
    "INT16": (-(2**15), 2**15 - 1),
    "UINT16": (0, 2**16 - 1),
    "INT32": (-(2**31), 2**31 - 1),
    "UINT32": (0, 2**32 - 1),
    "INT64": (-(2**63), 2**63 - 1),
    "INDEX": (-(2**63), 2**63 - 1),
    "UINT64": (0, 2**63 - 1),
}

# The largest finite value of each floating-point dtype.
_FLOAT_LIMITS = {"FP16": 65504.0, "BF16": 3.3895313892515355e38, "FP32": 3.4028234663852886e38}


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


def check_scalar_range(name: str, value, dtype: str) -> None:
    """Refuses a Python number that a ``dtype`` scalar cannot hold (an integer outside the dtype's
    range, a finite float beyond its largest value) instead of letting it wrap or saturate."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, int) and dtype in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[dtype]
        if not low <= value <= high:
            note = " (compile-time scalars are carried as 64-bit signed integers)" if dtype == "UINT64" else ""
            raise ValueError(
                f"argument {name!r} is a pl.{dtype} scalar, which holds {low} to {high}{note}; got {value}"
            )
    elif dtype in _FLOAT_LIMITS and abs(value) > _FLOAT_LIMITS[dtype] and not _is_infinity(value):
        raise ValueError(
            f"argument {name!r} is a pl.{dtype} scalar, whose largest finite value is {_FLOAT_LIMITS[dtype]!r}; "
            f"got {value!r}"
        )


def _is_infinity(value) -> bool:
    return isinstance(value, float) and math.isinf(value)  # asked for, not overflowed


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
