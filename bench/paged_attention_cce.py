#!/usr/bin/env python3
"""pypto-lib's Qwen3-14B paged-attention CCE kernel on the simulator against the same attention in torch.

    .venv/bin/python bench/paged_attention_cce.py [--pypto-lib PATH] [--context-len N] [--repetitions R]

Loads models/qwen3_14b/test_paged_attention_cce.py (its tensor specs and its torch golden) and compiles
`qwen_decode_attention_cce` once for a2a3sim: the AscendC tiling kernel, then the mixed attention kernel
on 24 blocks, run for real (docs/cce-kernels.md). Then times R calls of the compiled program and R calls
of the program's golden (the same attention over the paged cache, in float) with torch on one thread,
on the same inputs (batch 16, the program's default 3338 tokens of a 4096-token capacity), and prints
the median of each and their ratio. The last simulated output is checked against the golden with the
program's own tolerance, so a fast wrong answer cannot pass for a result.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from pypto_lib_models import load_model_file, timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pypto-lib", type=Path, default=Path(os.environ.get("PYPTO_LIB_DIR", "/work/ext/pypto-lib")))
    parser.add_argument("--context-len", type=int, default=3338)
    parser.add_argument("--capacity", type=int, default=4096)
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()

    model = load_model_file(args.pypto_lib / "models" / "qwen3_14b" / "test_paged_attention_cce.py",
                            "paged_attention_cce_driver")
    from pypto.runtime import RunConfig

    torch.set_num_threads(1)
    torch.manual_seed(1234)
    values = {}
    for spec in model.build_specs(model.BATCH_PAD, args.context_len, args.capacity, random_data=True):
        init = spec.init_value() if callable(spec.init_value) else spec.init_value
        values[spec.name] = torch.zeros(spec.shape, dtype=spec.dtype) if init is None else init.to(spec.dtype)
    inputs = [values[name] for name in ("query", "key_cache", "value_cache", "block_table", "seq_lens", "out")]

    start = time.perf_counter()
    compiled = model.qwen_decode_attention_cce.compile(*inputs, config=RunConfig(platform="a2a3sim"))
    compiled(*inputs)  # the first call builds the kernels' shared objects
    first = time.perf_counter() - start

    golden = {name: value.clone() for name, value in values.items()}
    sim = timed(lambda: compiled(*inputs), args.repetitions)
    ref = timed(lambda: model.golden_attention(golden), args.repetitions)

    torch.testing.assert_close(values["out"].float(), golden["out"].float(), rtol=5e-3, atol=2e-2)
    print(f"paged attention, batch {model.BATCH_PAD}, {args.context_len} tokens, {model.NUM_HEADS} heads / "
          f"{model.NUM_KV_HEADS} KV heads, head dim {model.HEAD_DIM} (output checked against the golden)")
    print(f"  compile + first call            {first:8.2f} s")
    print(f"  simulator (24 blocks, real body) {sim[0] * 1e3:8.1f} ms  ({sim[1] * 1e3:.1f}-{sim[2] * 1e3:.1f})")
    print(f"  torch golden, one thread        {ref[0] * 1e3:8.1f} ms  ({ref[1] * 1e3:.1f}-{ref[2] * 1e3:.1f})")
    print(f"  simulator / torch               {sim[0] / ref[0]:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
