"""Replaying a build directory (``execute_compiled(work_dir, ...)`` runs it again)."""

from pathlib import Path


def invalidate_binary_cache(work_dir) -> list:
    """Forgets compiled binaries of ``work_dir`` so that the next run rebuilds them; returns what it
    removed.

    The simulator keeps no binaries: it runs ``lowered_program.py``, reloaded whenever it changes,
    so there is nothing to remove."""
    if not Path(work_dir).is_dir():
        raise FileNotFoundError(f"build directory {str(work_dir)!r} does not exist")
    return []
