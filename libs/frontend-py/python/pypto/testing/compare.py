"""Comparators: ``cmp(actual, expected) -> (ok, detail)``. ``allclose`` is the default; the others
are for outputs where bit-for-bit agreement with the reference is not the right question."""

from typing import Callable, Optional

Comparator = Callable[..., tuple]


def _mismatch_report(actual, expected, bad, limit: int = 8) -> str:
    import torch

    count = int(bad.sum())
    positions = torch.nonzero(bad)[:limit].tolist()
    rows = [f"    at {tuple(p)}: got {actual[tuple(p)].item()!r}, expected {expected[tuple(p)].item()!r}" for p in positions]
    more = f"\n    ... and {count - len(positions)} more" if count > len(positions) else ""
    return f"{count} of {bad.numel()} elements differ\n" + "\n".join(rows) + more


def _bad_points(actual, expected, rtol: float, atol: float):
    """Elements outside ``atol + rtol * |expected|``; NaN and Inf where the reference is finite are bad."""
    a = actual.double()
    e = expected.double()
    close = (a - e).abs() <= atol + rtol * e.abs()
    same_special = (a == e) | (a.isnan() & e.isnan())
    return ~(close | same_special)


def allclose(rtol: float = 1e-5, atol: float = 1e-5, *, nan_ok: bool = False) -> Comparator:
    """Every element within ``atol + rtol * |expected|``.

    Where the reference holds NaN the element is don't-care, as in upstream's harness: a reference
    marks so what the program may leave as it likes (the unused tail of a scratch buffer), and the
    detail says how many there were.

    ``nan_ok=True`` is for outputs a kernel writes only where the data says so: elements the program
    left NaN (the harness fills outputs with NaN before the run, see ``run(poison_outputs=True)``)
    are not compared, and the detail says how many there were."""

    def compare(actual, expected, **_):
        notes = []
        bad = _bad_points(actual, expected, rtol, atol)
        dont_care = expected.isnan() & ~actual.isnan()
        if dont_care.any():
            notes.append(f"{int(dont_care.sum())} elements the reference marks NaN (don't-care) not compared")
            bad &= ~dont_care
        if nan_ok:
            unwritten = actual.isnan() & ~expected.isnan()
            if unwritten.any():
                notes.append(f"{int(unwritten.sum())} unwritten elements not compared")
            bad &= ~unwritten
        if bad.any():
            return False, _mismatch_report(actual, expected, bad)
        return True, "; ".join(notes)

    return compare


def ratio_allclose(atol: float = 1e-5, rtol: float = 1e-5, max_error_ratio: float = 0.005, *,
                   valid_rows: Optional[int] = None, valid_axis: int = 0, zero_tail: bool = False) -> Comparator:
    """Passes when at most ``max_error_ratio`` of the elements are outside tolerance (NaN and Inf
    always count as errors). ``valid_rows`` compares only the leading ``valid_rows`` along
    ``valid_axis``; with ``zero_tail`` the rest must be exactly zero."""

    def compare(actual, expected, **_):
        if valid_rows is not None:
            tail_actual = actual.narrow(valid_axis, valid_rows, actual.shape[valid_axis] - valid_rows)
            if zero_tail and tail_actual.numel() and (tail_actual != 0).any():
                return False, f"{int((tail_actual != 0).sum())} elements beyond row {valid_rows} are not zero"
            actual = actual.narrow(valid_axis, 0, valid_rows)
            expected = expected.narrow(valid_axis, 0, valid_rows)
        bad = _bad_points(actual, expected, rtol, atol) | ~actual.double().isfinite()
        ratio = float(bad.sum()) / max(bad.numel(), 1)
        detail = f"error ratio {ratio:.5f} (limit {max_error_ratio})"
        if ratio > max_error_ratio:
            return False, detail + "\n" + _mismatch_report(actual, expected, bad)
        return True, detail

    return compare


def topk_pair_compare(values_name: str, dim: int = -1) -> Comparator:
    """For top-k indices: an index may differ from the reference where the values it selects are
    equal (ties); checked by gathering the input at both index sets. ``values_name`` names the input
    the indices point into."""

    def compare(actual, expected, *, inputs=None, **_):
        import torch

        if inputs is None or values_name not in inputs:
            return False, f"topk_pair_compare needs the input {values_name!r}"
        source = inputs[values_name]
        extent = source.shape[dim]
        if ((actual < 0) | (actual >= extent)).any():
            return False, f"indices outside [0, {extent}):\n" + _mismatch_report(actual, expected, (actual < 0) | (actual >= extent))
        got = torch.gather(source, dim, actual.long())
        want = torch.gather(source, dim, expected.long())
        if not torch.equal(got, want):
            return False, "indices select different values:\n" + _mismatch_report(got, want, got != want)
        return True, ""

    return compare
