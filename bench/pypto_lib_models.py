"""What the benchmarks that run pypto-lib's programs share: loading a model file as upstream's harness
does (its folder and the checkout on sys.path, so `from golden import ...` and its sibling imports
work), and timing repeated calls."""

import importlib.util
import statistics
import sys
import time
from pathlib import Path


def load_model_file(path: Path, name: str):
    """Imports the pypto-lib file `path` (models/<model>/<file>.py of a checkout) as module `name`."""
    pypto_lib = path.parents[2]
    sys.path[:0] = [str(pypto_lib), str(path.parent)]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, repetitions: int) -> tuple[float, float, float]:
    """The median, fastest and slowest seconds of `repetitions` calls of fn."""
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)
