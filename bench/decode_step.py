#!/usr/bin/env python3
"""One model decode step on the simulator against the same step computed by the program's own torch golden.

    .venv/bin/python bench/decode_step.py --pypto-lib PATH [--model qwen3_32b/decode.py] [--repetitions R]

Loads a pypto-lib model file (a program builder, its tensor specs and its golden function, as upstream's
harness uses them), compiles it once for a2a3sim, then times R calls of the compiled program and R calls of
the golden on copies of the same inputs, with torch on as many threads as the simulator has workers (one per CPU). Prints
the median per step of each and their ratio, and checks the last simulated outputs against the golden's
with the model's own tolerance so a fast wrong answer cannot pass for a result.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from pypto_lib_models import load_model_file, timed

# A model file names its builder, specs and golden after the model; these are the ones we know.
MODELS = {
    "qwen3_32b/decode.py": ("build_qwen3_decode_program", "golden_qwen3_decode", 3e-3),
}


def _inputs(specs):
    """Each spec's tensor (or Python scalar), in orchestration parameter order, made once."""
    from golden.spec import TensorSpec

    return [(s.name, s.create_tensor() if isinstance(s, TensorSpec) else s.to_python(), s) for s in specs]


def _clones(inputs):
    return {name: value.clone() if isinstance(value, torch.Tensor) else value for name, value, _ in inputs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pypto-lib", type=Path, required=True, help="a pypto-lib checkout")
    parser.add_argument("--model", default="qwen3_32b/decode.py", choices=sorted(MODELS))
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()

    import pypto.ir

    builder_name, golden_name, tolerance = MODELS[args.model]
    module = load_model_file(args.pypto_lib.resolve() / "models" / args.model, Path(args.model).stem)
    specs = module.build_tensor_specs()
    inputs = _inputs(specs)
    # The simulator's workers are one per CPU (std::thread::hardware_concurrency); torch gets as many.
    threads = os.cpu_count()
    torch.set_num_threads(threads)

    start = time.perf_counter()
    compiled = pypto.ir.compile(getattr(module, builder_name)(), platform="a2a3sim")
    compile_s = time.perf_counter() - start

    sim_values = _clones(inputs)
    ordered = [sim_values[name] for name, _, _ in inputs]
    compiled(*ordered)  # the first call loads the kernels; time the steps after it
    sim_s = timed(lambda: compiled(*ordered), args.repetitions)[0]

    golden = getattr(module, golden_name)
    golden_values = _clones(inputs)
    golden(golden_values)
    golden_s = timed(lambda: golden(golden_values), args.repetitions)[0]

    outputs = [name for name, _, s in inputs if getattr(s, "is_output", False)]
    for name in outputs:
        torch.testing.assert_close(sim_values[name].float(), golden_values[name].float(), rtol=tolerance, atol=tolerance)

    print(f"{args.model}: compile {compile_s:.2f} s (once; a disk-cache hit when run before); median of "
          f"{args.repetitions} steps, simulator workers and torch threads both {threads}")
    print(f"  simulator  {sim_s * 1e3:10.1f} ms a step")
    print(f"  torch      {golden_s * 1e3:10.1f} ms a step (the program's own golden)")
    print(f"  ratio      {sim_s / golden_s:10.2f} x torch (outputs {', '.join(outputs) or 'none'} match the golden)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
