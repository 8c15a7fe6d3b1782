"""Three tasks for the taskgraph platform: two independent ones, then one joining their results.

    PYPTO_PLUGIN_PATH=<the plugin's build dir> python prog.py [build dir]

writes taskgraph.dot and taskgraph.trace.json into the program's build directory: the one given, else
build_output/diamond_<timestamp>_... (under $PYPTO_PROG_BUILD_DIR if set). Nothing runs on taskgraph, so
`out` keeps what it held."""

import sys

import pypto.language as pl
import torch
from pypto.runtime import RunConfig


@pl.jit
def diamond(x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    scaled = pl.create_tensor([16, 32], dtype=pl.FP32)
    shifted = pl.create_tensor([16, 32], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.mul(pl.load(x, [0, 0], [16, 32]), 3.0), [0, 0], scaled)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(x, [0, 0], [16, 32]), 1.0), [0, 0], shifted)
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(scaled, [0, 0], [16, 32]), pl.load(shifted, [0, 0], [16, 32])), [0, 0], out)
    return out


if __name__ == "__main__":
    build_dir = sys.argv[1] if len(sys.argv) > 1 else None
    config = RunConfig(platform="taskgraph", save_kernels_dir=build_dir, report_unwritten=False)
    diamond(torch.randn(16, 32), torch.zeros(16, 32), config=config)
