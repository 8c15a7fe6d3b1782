"""Element-wise addition of two 128x128 tensors on the PyPTO simulator.

Run it with the project's Python (`python examples/hello_add.py`) or with the launcher
(`pypto-run examples/hello_add.py`); either prints OK when the result matches torch.
"""

import pypto.language as pl
import torch
from pypto.runtime import RunConfig


@pl.jit
def vector_add(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    # One pl.at region becomes one kernel on a vector core; the rest is orchestration.
    with pl.at(level=pl.Level.CORE_GROUP):
        x_tile = pl.load(x, [0, 0], [128, 128])
        y_tile = pl.load(y, [0, 0], [128, 128])
        sum_tile = pl.add(x_tile, y_tile)
        pl.store(sum_tile, [0, 0], out)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(128, 128)
    y = torch.randn(128, 128)
    out = torch.empty(128, 128)
    vector_add(x, y, out, config=RunConfig())
    torch.testing.assert_close(out, x + y)
    print("OK")
