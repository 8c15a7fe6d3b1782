"""Rebuilding kernels from edited ``.pto`` files of a build directory."""

from pathlib import Path

from pypto.runtime.build_dir import MANIFEST


def rebuild_kernel_cpp_from_pto(work_dir) -> list:
    """Returns the kernels rebuilt from ``.pto`` files edited since compiling.

    The simulator does not run the ``.pto`` files (they are for ptoas and the device); a run takes
    the kernels from ``lowered_program.py``. An edited ``.pto`` would silently not take effect, so
    that is refused: edit ``lowered_program.py`` instead."""
    work_dir = Path(work_dir)
    if not work_dir.is_dir():
        raise FileNotFoundError(f"build directory {str(work_dir)!r} does not exist")
    manifest = work_dir / MANIFEST
    if not manifest.is_file():
        return []  # not compiled by this pypto: execute_compiled says so when it is run
    compiled_at = manifest.stat().st_mtime
    edited = [p for p in sorted(work_dir.glob("kernels/*/*.pto")) if p.stat().st_mtime > compiled_at]
    if edited:
        names = ", ".join(str(p.relative_to(work_dir)) for p in edited)
        raise NotImplementedError(
            f"rebuilding kernels from edited .pto files ({names}) is not supported by this pypto yet; the simulator "
            "runs lowered_program.py, so edit that file instead"
        )
    return []
