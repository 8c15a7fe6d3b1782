"""Poisoned outputs: finding the parts of a ``pl.Out`` tensor that no kernel wrote.

On a device a pure ``pl.Out`` buffer is neither uploaded nor zero-filled: every byte no kernel
writes is whatever the allocator left there, and a golden that expects zeros there passes or fails
by luck (seed 001, "A pl.Out region the kernel does not write is undefined"). The simulators make
that visible: before a run the caller's ``pl.Out`` tensors are filled with a poison pattern, so what
nobody wrote reads as garbage rather than as the zeros the caller passed, and after the run the
regions still holding the pattern are reported as an ``UnwrittenOutputWarning``. Both are on by
default; ``RunConfig(poison_outputs=False)`` (or ``$PYPTO_POISON_OUTPUTS=0``) keeps what the caller
passed, ``RunConfig(report_unwritten=False)`` (or ``$PYPTO_REPORT_UNWRITTEN=0``) keeps the poison
without the warning. A region that must read as zeros belongs in a ``pl.InOut`` with a zero initial
value, whose contents are uploaded.

The pattern is a NaN with a payload no arithmetic produces for floats (NaNs a kernel computes are
the canonical quiet NaN), and the byte 0xA5 repeated for integers: an element is "unwritten" when
its bits equal the pattern, which a kernel can write on purpose only for integers.

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


def _ranges(mask) -> str:
    """"3..5, 9" for the 1-D bool mask set at 3, 4, 5 and 9. Works from the mask's edges, so that a
    report on an output of a billion unwritten elements costs memory for its ranges only."""
    import torch

    edges = torch.diff(mask.to(torch.int8), prepend=mask.new_zeros(1, dtype=torch.int8),
                       append=mask.new_zeros(1, dtype=torch.int8))
    starts = (edges == 1).nonzero().flatten()
    count = starts.numel()
    starts = starts[:8].tolist()
    ends = ((edges == -1).nonzero().flatten()[:8] - 1).tolist()
    parts = [f"{start}" if start == end else f"{start}..{end}" for start, end in zip(starts, ends)]
    if count > 8:
        parts.append(f"... ({count - 8} more ranges)")
    return ", ".join(parts)


# A narrow integer a kernel computes equals the pattern by chance (one int8 in 256), so for those an
# element counts as unwritten only inside a run of at least this many poison values in row-major
# order: a false report then needs 48 random bits to match. Wider types match by chance rarely
# enough element by element (one int32 in 2**32; float patterns are NaNs no arithmetic makes).
_MIN_RUN = {1: 6, 2: 3}


def _in_long_runs(mask, length: int):
    """The elements of `mask` that lie in a run of at least `length` set elements (row-major)."""
    import torch

    flat = mask.flatten()
    if flat.numel() < length:
        return torch.zeros_like(mask)
    starts = flat.unfold(0, length, 1).all(dim=1)  # a full run of `length` starts here
    covered = torch.zeros_like(flat)
    for offset in range(length):
        covered[offset:offset + starts.numel()] |= starts
    return covered.reshape(mask.shape)


def _inner_axes(rows_mask) -> str:
    """" (axis 1: 64..127)" for the partly unwritten rows of a tensor of rank 3 or more (rows_mask:
    the mask of those rows): for each later axis not unwritten along its whole length, the indices at
    which some element is. A tail no kernel reached (positions past a sequence length) then reads as
    the positions it lies at, where "part of rows 0" alone would not say."""
    axes = []
    for axis in range(1, rows_mask.dim()):
        others = [d for d in range(rows_mask.dim()) if d != axis]
        touched = rows_mask.permute(axis, *others).flatten(1).any(dim=1)
        if not bool(touched.all()):
            axes.append(f"axis {axis}: {_ranges(touched)}")
    return f" ({'; '.join(axes)})" if axes else ""


def unwritten_report(name: str, tensor):
    """One line describing where ``tensor`` still holds the poison pattern, or None if nowhere."""
    found = _pattern(tensor)
    if found is None:
        return None
    view, value = found
    mask = view == value
    if not tensor.is_floating_point() and tensor.element_size() in _MIN_RUN:
        mask = _in_long_runs(mask, _MIN_RUN[tensor.element_size()])
    count = int(mask.sum())
    if count == 0:
        return None
    shape = list(tensor.shape)
    if tensor.dim() < 2:
        where = f"elements {_ranges(mask.flatten())}"
    else:
        rows = mask.reshape(shape[0], -1)
        full = rows.all(dim=1)
        partial = rows.any(dim=1) & ~full
        pieces = []
        if bool(full.any()):
            pieces.append(f"all of rows {_ranges(full)}")
        if bool(partial.any()):
            text = f"part of rows {_ranges(partial)}"
            if tensor.dim() == 2:
                text += f" (columns {_ranges(rows[partial].any(dim=0))})"
            else:
                text += _inner_axes(mask[partial])
            pieces.append(text)
        where = "; ".join(pieces)
    dtype = str(tensor.dtype).removeprefix("torch.")
    return f"output '{name}' {shape} {dtype}: {count} of {tensor.numel()} elements were never written: {where}"


def _switch(variable: str, configured: bool) -> bool:
    """$variable = 0 or 1 overrides the configured value, so that programs run unmodified can be steered."""
    value = os.environ.get(variable)
    return {"0": False, "1": True}.get(value, configured)


class UnwrittenCheck:
    """What one run does about unwritten outputs: from RunConfig (both on by default), overridden by
    $PYPTO_POISON_OUTPUTS / $PYPTO_REPORT_UNWRITTEN (0 or 1). The report needs the poison."""

    def __init__(self, poison: bool = True, report: bool = True):
        self.poison = _switch("PYPTO_POISON_OUTPUTS", poison)
        self.report = self.poison and _switch("PYPTO_REPORT_UNWRITTEN", report)

    @classmethod
    def from_config(cls, config) -> "UnwrittenCheck":
        if config is None:
            return cls()
        return cls(bool(getattr(config, "poison_outputs", True)), bool(getattr(config, "report_unwritten", True)))

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
