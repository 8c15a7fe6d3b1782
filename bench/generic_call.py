#!/usr/bin/env python3
"""Per-call cost of a program compiled once for every extent, next to one compiled for the extent.

    .venv/bin/python bench/generic_call.py [--tokens 40] [--calls 300] [--repetitions 9]

Two @pl.jit functions with the same body (the models' ragged token loop: 16-row tiles of a
[tokens, 64] fp32 add, the last tile ragged), compiled for a2a3sim in this process:
  generic     the token axis a bare pl.dynamic name: one build for every extent, whose task plan
              is expanded at each call (docs/language.md, "One compile for every extent")
  per-extent  plain pl.Tensor parameters: a build for this shape, its plan fixed at compile time
Both run side by side on the same tensors; each is checked against torch first. Prints the median of
R repetitions of N calls, per call, of the CompiledProgram and of the @pl.jit call (key, cache
look-up, run), the four taking turns within each repetition, and the ratio generic/per-extent. The pypto package is whichever `import pypto`
finds (put a build tree's libs/frontend-py/python first on PYTHONPATH to choose one).
"""

import argparse
import statistics
import sys
import time

import pypto.language as pl
import torch

TOKENS = pl.dynamic("TOKENS")
COLS = 64
TILE = 16


@pl.jit
def add_generic(x: pl.Tensor[[TOKENS, COLS], pl.FP32], y: pl.Tensor[[TOKENS, COLS], pl.FP32],
                out: pl.Out[pl.Tensor[[TOKENS, COLS], pl.FP32]]):
    for r in pl.range(0, TOKENS, TILE):
        rows = pl.min(TILE, TOKENS - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            b = pl.load(y, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.add(a, b), [r, 0], out)
    return out


@pl.jit
def add_per_extent(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    tokens = pl.tensor.dim(x, 0)
    for r in pl.range(0, tokens, TILE):
        rows = pl.min(TILE, tokens - r)
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            b = pl.load(y, [r, 0], [TILE, COLS], valid_shape=[rows, COLS])
            pl.store(pl.add(a, b), [r, 0], out)
    return out


def per_call_us(cases, calls, repetitions):
    """The median per call of each case's N calls, the cases taking turns in every repetition so that
    the machine's load drifts over all of them alike."""
    for fn in cases.values():
        fn()  # warm: the first call opens the session
    samples = {name: [] for name in cases}
    for _ in range(repetitions):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repetitions", type=int, default=9)
    args = parser.parse_args()

    torch.manual_seed(0)
    x, y = torch.randn(args.tokens, COLS), torch.randn(args.tokens, COLS)
    out = torch.empty(args.tokens, COLS)
    builds = {"generic": add_generic, "per-extent": add_per_extent}
    programs = {}
    for name, fn in builds.items():
        out.fill_(-1)
        fn(x, y, out)
        torch.testing.assert_close(out, x + y)
        programs[name] = fn.compile(x, y, out)

    cases = {}
    for name, fn in builds.items():
        program = programs[name]
        cases[(name, "program")] = lambda program=program: program(x, y, out)
        cases[(name, "call")] = lambda fn=fn: fn(x, y, out)
    medians = per_call_us(cases, args.calls, args.repetitions)
    times = {name: (medians[(name, "program")], medians[(name, "call")]) for name in builds}

    import pypto
    print(f"pypto from {pypto.__file__}")
    print(f"{args.tokens} tokens, {args.repetitions} x {args.calls} calls, median per call")
    print(f"{'build':<11} {'CompiledProgram [us]':>21} {'@pl.jit call [us]':>18}")
    for name, (program_us, call_us) in times.items():
        print(f"{name:<11} {program_us:21.1f} {call_us:18.1f}")
    (g_program, g_call), (p_program, p_call) = times["generic"], times["per-extent"]
    print(f"{'generic/per-extent':<19} {g_program / p_program:13.2f} {g_call / p_call:18.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
