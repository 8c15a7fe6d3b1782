"""pl.tile.sin / pl.tile.cos in a .pto. PTO has no sine or cosine instruction; backend-ptoas writes
upstream pypto's expansion into tile arithmetic (LowerCompositeOps: Cody-Waite range reduction and a
degree-9 odd polynomial), its intermediate tiles in the Vec scratch. The module conforms to pto-check's
table, and its ops, evaluated here one by one in FP32 with torch, give torch's sine and cosine."""

import math
import re
import warnings
from pathlib import Path

import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def trig(x: pl.Tensor[[16, 64], pl.FP32], s: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
         c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        s[:, :] = pl.tile.sin(t)
        c[:, :] = pl.tile.cos(t)
    return s, c
'''

kernels = kernels_fixture("pto_sin_cos.py", KERNELS)

_OP = re.compile(r"pto\.(tmuls|tadds|tsub|tadd|tmul|tcvt) ins\((%[\w]+)(?:, (%[\w]+))?(?: \{rmode = #pto<round_mode "
                 r"(\w+)>\})? :.*\) outs\((%[\w]+) :")
_CONSTANT = re.compile(r"(%cst\w*) = arith\.constant (\S+) : f32")


def evaluate(pto, tiles):
    """Runs the .pto's element-wise ops on `tiles` (name -> tensor) in FP32, the tcvt rounding modes
    as ptoas defines them; a tile not yet written reads as NaN."""
    values = {name: torch.tensor(float(v), dtype=torch.float32) for name, v in _CONSTANT.findall(pto)}
    rounding = {"ROUND": lambda v: torch.sign(v) * torch.floor(v.abs() + 0.5),  # half away from zero
                "RINT": torch.round, "FLOOR": torch.floor, "NONE": lambda v: v}  # half to even
    for op, a, b, mode, out in _OP.findall(pto):
        # An INT32 scratch tile is typed over an FP32 one's bytes; here both hold the integer-valued floats.
        read = lambda n: values.get(n, tiles.get(re.sub(r"_i32$", "", n), torch.full((16, 64), math.nan)))
        x, y = read(a), read(b) if b else None
        result = {"tmuls": lambda: x * y, "tadds": lambda: x + y, "tsub": lambda: x - y, "tadd": lambda: x + y,
                  "tmul": lambda: x * y, "tcvt": lambda: rounding[mode](x)}[op]()
        tiles[re.sub(r"_i32$", "", out)] = result.to(torch.float32)
    return tiles


def test_sine_and_cosine_are_upstreams_expansion_in_the_vec_scratch(kernels):
    x, s, c = torch.rand(16, 64) * 8 * math.pi - 4 * math.pi, torch.empty(16, 64), torch.empty(16, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernels.trig.compile(x, s, c, config=RunConfig(platform="a2a3sim"))
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems
    (path,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    pto = path.read_text()
    ops = re.findall(r"^\s+pto\.(t\w+) ", pto, re.M)
    # Per op 31 (sin) / 34 (cos: three more tadds) ops of tile arithmetic, the last into the result.
    assert len(ops) == 1 + 31 + 34 + 2 and ops.count("tcvt") == 2 * 4 and ops.count("tmuls") == 2 * 10, ops
    assert "{rmode = #pto<round_mode ROUND>}" in pto and "{rmode = #pto<round_mode RINT>}" in pto
    sin_out, cos_out = re.findall(r"pto\.tmul ins\(%\w+_a, %\w+_p : .*\) outs\((%\w+) :", pto)
    tiles = evaluate(pto, {"%t": x})
    torch.testing.assert_close(tiles[sin_out], torch.sin(x), rtol=0, atol=2e-6)
    torch.testing.assert_close(tiles[cos_out], torch.cos(x), rtol=0, atol=2e-6)
    compiled(x, s, c)  # the simulator's own numbers
    torch.testing.assert_close(s, torch.sin(x), rtol=1e-5, atol=1e-6)
