#!/usr/bin/env python3
"""Per-call cost of a compiled program called from Python, next to torch doing the same adds.

    .venv/bin/python bench/py_call.py [--calls N] [--repetitions R]

Compiles two small programs with @pl.jit on a2a3sim, then times repeated calls of the
CompiledProgram (what `fn(...)` runs once compiled):
  add16  one 16x16 fp32 add task
  dag5   five dependent 16x16 fp32 add tasks (x1 = a + b; x2 = b + b; x3 = x1 + x2; x4 = x3 + b;
         c = x4 + x3), one pl.at region each
and torch doing the same adds on the same tensors as the in-process reference. Prints the median
of R repetitions of N calls, per call. The pypto package is whichever `import pypto` finds (put a
build tree's libs/frontend-py/python first on PYTHONPATH to choose one).
"""

import argparse
import statistics
import sys
import time

import pypto.language as pl
import torch


@pl.jit
def add16(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
    return c


@pl.jit
def dag5(a: pl.Tensor, b: pl.Tensor, x1: pl.Out[pl.Tensor], x2: pl.Out[pl.Tensor], x3: pl.Out[pl.Tensor],
         x4: pl.Out[pl.Tensor], c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], x1)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(b, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], x2)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x1, [0, 0], [16, 16]), pl.load(x2, [0, 0], [16, 16])), [0, 0], x3)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x3, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], x4)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x4, [0, 0], [16, 16]), pl.load(x3, [0, 0], [16, 16])), [0, 0], c)
    return c


def per_call_us(fn, calls, repetitions):
    fn()  # warm: the first call opens the session
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(0)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    xs = [torch.empty(16, 16) for _ in range(5)]

    program16 = add16.compile(a, b, xs[4])
    program5 = dag5.compile(a, b, *xs)

    def torch16():
        torch.add(a, b, out=xs[4])

    def torch5():
        torch.add(a, b, out=xs[0])
        torch.add(b, b, out=xs[1])
        torch.add(xs[0], xs[1], out=xs[2])
        torch.add(xs[2], b, out=xs[3])
        torch.add(xs[3], xs[2], out=xs[4])

    rows = []
    for name, program, arguments, reference, expected in (
        ("add16", program16, (a, b, xs[4]), torch16, lambda: a + b),
        ("dag5", program5, (a, b, *xs), torch5, lambda: 2 * a + 7 * b),
    ):
        xs[4].fill_(-1)
        program(*arguments)
        torch.testing.assert_close(xs[4], expected())
        sim = per_call_us(lambda: program(*arguments), args.calls, args.repetitions)
        ref = per_call_us(reference, args.calls, args.repetitions)
        rows.append((name, sim, ref))

    import pypto
    print(f"pypto from {pypto.__file__}; {args.repetitions} x {args.calls} calls, median per call")
    print(f"{'plan':<7} {'CompiledProgram [us]':>21} {'torch [us]':>11} {'sim/torch':>10}")
    for name, sim, ref in rows:
        print(f"{name:<7} {sim:21.1f} {ref:11.1f} {sim / ref:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
