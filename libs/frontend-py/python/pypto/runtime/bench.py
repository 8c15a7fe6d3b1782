"""Device-side benchmarking (``PYPTO_BENCH=1`` in the golden harness)."""


def benchmark(compiled, args, *, rounds: int = 100, warmup: int = 5, platform=None, device_id=None, **kwargs):
    """On-device timing of ``rounds`` launches, read from the runtime's trace markers.

    The simulators have no device clock and this pypto has no device backend yet, so this raises
    NotImplementedError (a RuntimeError: harnesses report "benchmark unavailable" and go on). Time
    simulator runs with ``bench/`` (Google Benchmark) instead."""
    raise NotImplementedError("device-side benchmarking is not supported by this pypto yet")
