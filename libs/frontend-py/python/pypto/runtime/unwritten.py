"""Poisoned outputs: finding the parts of a ``pl.Out`` tensor that no kernel wrote.

A kernel that forgets a tile of its output passes every test whose output tensor happens to start
as the expected value (``torch.zeros`` and a zero golden tail, say). With ``poison_outputs`` the
simulator's caller fills every ``pl.Out`` tensor with a poison pattern before the run, so that what
nobody wrote reads as garbage, as fresh device memory would; ``report_unwritten`` also lists the
regions still holding the pattern after the run, as an ``UnwrittenOutputWarning``.

The pattern is a NaN with a payload no arithmetic produces for floats (NaNs a kernel computes are
the canonical quiet NaN), and the byte 0xA5 repeated for integers: an element is "unwritten" when
its bits equal the pattern, which a kernel can write on purpose only for integers.

Upstream's runtime zero-fills pure outputs on the device (``device_memset`` before a run), so both
switches are off by default: a program that relies on those zeros runs as it does upstream.
"""

import os
import warnings

# Bit patterns by element size; floats get a signalling-NaN-free quiet NaN with a payload.
_FLOAT_POISON = {"float32": 0x7FE5A5A5, "float16": 0x7DA5, "bfloat16": 0x7FE5, "float64": 0x7FFDA5A5A5A5A5A5}
_INT_VIEW = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


class UnwrittenOutputWarning(UserWarning):
    """Part of a ``pl.Out`` tensor still held the poison pattern after the run."""


def _signed(bits: int, size: int) -> int:
    limit = 1 << (8 * size)
    return bits - limit if bits >= limit // 2 else bits


def _pattern(tensor):
    """(integer view of the tensor, the pattern as a value of that view), or None for bool."""
    import torch

    name = str(tensor.dtype).removeprefix("torch.")
    if name == "bool":
        return None
    size = tensor.element_size()
    bits = _FLOAT_POISON.get(name, int.from_bytes(b"\xa5" * size, "little"))
    view = tensor.view(getattr(torch, _INT_VIEW[size]))
    return view, _signed(bits, size)


def poison(tensor) -> None:
    """Fills a contiguous tensor with its dtype's poison pattern, in place."""
    found = _pattern(tensor)
    if found is not None:
        view, value = found
        view.fill_(value)


def _ranges(indices) -> str:
    """"3..5, 9" for [3, 4, 5, 9]."""
    parts, start, previous = [], None, None
    for index in indices:
        if start is None:
            start = previous = index
        elif index == previous + 1:
            previous = index
        else:
            parts.append(f"{start}" if start == previous else f"{start}..{previous}")
            start = previous = index
    if start is not None:
        parts.append(f"{start}" if start == previous else f"{start}..{previous}")
    if len(parts) > 8:
        parts = parts[:8] + [f"... ({len(parts) - 8} more ranges)"]
    return ", ".join(parts)


def unwritten_report(name: str, tensor):
    """One line describing where ``tensor`` still holds the poison pattern, or None if nowhere."""
    found = _pattern(tensor)
    if found is None:
        return None
    view, value = found
    mask = view == value
    count = int(mask.sum())
    if count == 0:
        return None
    shape = list(tensor.shape)
    where = f"elements {_ranges(mask.nonzero().flatten().tolist())}"
    if tensor.dim() >= 2:
        rows = mask.reshape(shape[0], -1)
        full = rows.all(dim=1)
        partial = rows.any(dim=1) & ~full
        pieces = []
        if bool(full.any()):
            pieces.append(f"all of rows {_ranges(full.nonzero().flatten().tolist())}")
        if bool(partial.any()):
            columns = rows[partial].any(dim=0).nonzero().flatten().tolist() if tensor.dim() == 2 else None
            text = f"part of rows {_ranges(partial.nonzero().flatten().tolist())}"
            if columns is not None:
                text += f" (columns {_ranges(columns)})"
            pieces.append(text)
        where = "; ".join(pieces)
    dtype = str(tensor.dtype).removeprefix("torch.")
    return f"output '{name}' {shape} {dtype}: {count} of {tensor.numel()} elements were never written: {where}"


class UnwrittenCheck:
    """What one run does about unwritten outputs (from RunConfig, or $PYPTO_POISON_OUTPUTS /
    $PYPTO_REPORT_UNWRITTEN = 1 for programs run unmodified)."""

    def __init__(self, poison: bool = False, report: bool = False):
        self.report = report or os.environ.get("PYPTO_REPORT_UNWRITTEN") == "1"
        self.poison = poison or self.report or os.environ.get("PYPTO_POISON_OUTPUTS") == "1"

    @classmethod
    def from_config(cls, config) -> "UnwrittenCheck":
        if config is None:
            return cls()
        return cls(bool(getattr(config, "poison_outputs", False)), bool(getattr(config, "report_unwritten", False)))

    def before(self, outputs) -> None:
        """outputs: (name, contiguous tensor) of every pl.Out parameter."""
        if self.poison:
            for _, tensor in outputs:
                poison(tensor)

    def after(self, outputs) -> None:
        if not self.report:
            return
        lines = [line for name, tensor in outputs if (line := unwritten_report(name, tensor))]
        if lines:
            warnings.warn("; ".join(lines), UnwrittenOutputWarning, stacklevel=4)
