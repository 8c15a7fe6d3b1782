"""The scatters by index in a .pto: pto.tscatter's index form into zeros, blended with the destination
by tcmps / tsel, the flat indices built row by row (backend-ptoas index_scatter_blend.cpp). The
modules conform, and their ops, run here one by one on a model of the vector core's buffer (every
tile a view of its bytes at its alloc_tile address), give torch's scatter_ and the row update, as the
simulator does for the IR's op."""

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
def scatter_f32(base: pl.Tensor[[8, 16], pl.FP32], idx: pl.Tensor[[8, 8], pl.INT32],
                val: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.tensor.scatter(base, dim=-1, index=idx, src=val), [0, 0])
    return out


@pl.jit
def scatter_bf16(base: pl.Tensor[[16, 32], pl.BF16], idx: pl.Tensor[[16, 16], pl.INT16],
                 val: pl.Tensor[[16, 16], pl.BF16], out: pl.Out[pl.Tensor[[16, 32], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.tensor.scatter(base, dim=-1, index=idx, src=val), [0, 0])
    return out


@pl.jit
def update_rows(table: pl.Tensor[[32, 32], pl.FP16], rows: pl.Tensor[[2, 8], pl.INT32],
                new: pl.Tensor[[16, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.scatter_update(table, -2, rows, new), [0, 0])
    return out
'''

kernels = kernels_fixture("pto_index_scatter.py", KERNELS)

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
          "i16": torch.int16, "ui8": torch.uint8}
_TILE = re.compile(r"dtype=(\w+), rows=(\d+), cols=(\d+)")


class VectorCore:
    """The .pto's body run op by op: tiles are [rows, cols] views of one byte buffer at their
    alloc_tile addresses; tload reads the named input tensor whole, tstore writes the output."""

    def __init__(self, pto, tensors):
        self.ub = torch.zeros(192 * 1024, dtype=torch.uint8)
        self.values, self.tiles, self.tensors = {}, {}, dict(tensors)
        for name, value, kind in re.findall(r"(%\w+) = arith\.constant (\S+) : (\w+)", pto):
            self.values[name] = float(value) if kind.startswith(("f", "bf")) else int(value)
        self.views = dict(re.findall(r"(%\w+)_pview = pto\.partition_view (%\w+)_view", pto))

    def tile(self, addr, dtype, rows, cols):
        size = torch.tensor([], dtype=DTYPES[dtype]).element_size()
        return self.ub[addr:addr + rows * cols * size].view(DTYPES[dtype]).view(rows, cols)

    def run(self, lines):
        i = 0
        while i < len(lines):
            line = re.sub(r" loc\(.*\)$", "", lines[i]).strip()
            if line.startswith("scf.for"):
                var, lo, hi = re.match(r"scf\.for (%\w+) = (%\w+) to (%\w+) step", line).groups()
                depth, j = 1, i + 1
                while depth:
                    depth += lines[j].count("{") - lines[j].count("}")
                    j += 1
                for k in range(self.values[lo], self.values[hi]):
                    self.values[var] = k
                    self.run(lines[i + 1:j - 1])
                i = j
                continue
            self.step(line)
            i += 1

    def step(self, line):
        v, t = self.values, self.tiles
        if m := re.match(r"(%\w+) = pto\.alloc_tile addr = (%\w+) .*: (.*)$", line):
            t[m[1]] = self.tile(v[m[2]], *_shape(m[3]))
        elif m := re.match(r"(%\w+) = pto\.subset (%\w+)\[(%\w+), (%\w+)\] sizes \[1, (\d+)\]", line):
            t[m[1]] = t[m[2]][v[m[3]]:v[m[3]] + 1, v[m[4]]:v[m[4]] + int(m[5])]
        elif m := re.match(r"(%\w+) = arith\.(muli|index_cast) (%\w+)(?:, (%\w+))?", line):
            v[m[1]] = v[m[3]] * v[m[4]] if m[2] == "muli" else v[m[3]]
        elif m := re.match(r"(%\w+) = pto\.tgetval ins\((%\w+), (%\w+) :", line):
            v[m[1]] = int(t[m[2]].reshape(-1)[v[m[3]]])
        elif m := re.match(r"pto\.tload ins\((%\w+) .* outs\((%\w+) :", line):
            tensor = self.tensors[self.views[m[1][:-len("_pview")]].lstrip("%")]
            t[m[2]].copy_(tensor.view(t[m[2]].dtype).view(t[m[2]].shape))
        elif m := re.match(r"pto\.tstore ins\((%\w+) :", line):
            self.tensors["out"] = t[m[1]].clone()
        elif m := re.match(r"pto\.(texpands|tci) ins\((%\w+) .* outs\((%\w+) :", line):
            dst = t[m[3]]
            start = v[m[2]]
            if m[1] == "texpands":
                dst.fill_(start)
            else:
                dst.copy_(torch.arange(start, start + dst.shape[1], dtype=dst.dtype).view(1, -1))
        elif m := re.match(r"pto\.tadds ins\((%\w+), (%\w+) .* outs\((%\w+) :", line):
            t[m[3]].copy_(t[m[1]] + v[m[2]])
        elif m := re.match(r"pto\.tscatter ins\((%\w+), (%\w+) .* outs\((%\w+) :", line):
            src, idx, dst = t[m[1]].reshape(-1), t[m[2]].reshape(-1), t[m[3]].reshape(-1)
            for k in range(src.numel()):  # a2a3's TSCATTER: a scalar loop, in order
                dst[int(idx[k])] = src[k]
        elif m := re.match(r"pto\.tcmps ins\((%\w+), (%\w+) \{cmpMode = #pto<cmp ne>\} .* outs\((%\w+) :", line):
            bits = (t[m[1]] != v[m[2]]).to(torch.uint8)
            pred = t[m[3]]
            pred.zero_()
            for c in range(bits.shape[1]):  # bit c % 8 of byte c / 8 of each row
                pred[:, c // 8] |= bits[:, c] << (c % 8)
        elif m := re.match(r"pto\.tsel ins\((%\w+), (%\w+), (%\w+), %\w+ .* outs\((%\w+) :", line):
            pred, a, b, dst = t[m[1]], t[m[2]], t[m[3]], t[m[4]]
            cols = torch.arange(a.shape[1])
            mask = ((pred[:, cols // 8] >> (cols % 8)) & 1).bool()
            dst.copy_(torch.where(mask, a, b))
        elif line.startswith(("%", "pto.")) and not re.search(r"arith\.constant|make_tensor_view|partition_view", line):
            raise AssertionError(f"the model has no rule for: {line}")


def _shape(tile_type):
    dtype, rows, cols = _TILE.search(tile_type).groups()
    return dtype, int(rows), int(cols)


def run_pto(kernel, tensors):
    """Compiles for a2a3sim (no warning: every kernel has a .pto, and it conforms), then runs the .pto's
    body on the model and runs the simulator on the IR: (model's output, simulator's output)."""
    args = list(tensors.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform="a2a3sim"))
    assert not pto_check.check_paths([Path(compiled.output_dir)]).problems
    (path,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    pto = path.read_text()
    body = pto.split("{\n", 2)[2].splitlines()  # after the module's and the function's openers
    core = VectorCore(pto, tensors)
    core.run(body)
    compiled(*args)
    return core.tensors["out"], args[-1], pto


def distinct_columns(rows, count, cols):
    return torch.stack([torch.randperm(cols)[:count] for _ in range(rows)])


def test_fp32_scatter_dim_is_torchs_scatter(kernels):
    torch.manual_seed(1)
    base, val = torch.randn(8, 16), torch.randn(8, 8)
    idx = distinct_columns(8, 8, 16).to(torch.int32)
    device, simulated, pto = run_pto(kernels.scatter_f32, {"base": base, "idx": idx, "val": val,
                                                           "out": torch.empty(8, 16)})
    expected = base.scatter(-1, idx.long(), val)
    assert torch.equal(device, expected) and torch.equal(simulated, expected)
    assert pto.count("pto.tscatter ins(") == 2 and "pto.tadds ins(" in pto


def test_bf16_scatter_dim_moves_its_bits_as_i16(kernels):
    torch.manual_seed(2)
    base, val = torch.randn(16, 32).to(torch.bfloat16), torch.randn(16, 16).to(torch.bfloat16)
    idx = distinct_columns(16, 16, 32).to(torch.int16)
    device, simulated, pto = run_pto(kernels.scatter_bf16, {"base": base, "idx": idx, "val": val,
                                                            "out": torch.empty(16, 32, dtype=torch.bfloat16)})
    expected = base.scatter(-1, idx.long(), val)
    assert torch.equal(device.view(torch.bfloat16), expected) and torch.equal(simulated, expected)
    assert "dtype=bf16" not in re.search(r"pto\.tsel ins\(.*", pto)[0]


def test_scatter_update_writes_whole_rows_at_the_index(kernels):
    torch.manual_seed(3)
    table, new = torch.randn(32, 32).to(torch.float16), torch.randn(16, 32).to(torch.float16)
    rows = torch.randperm(32)[:16].to(torch.int32).view(2, 8)
    device, simulated, pto = run_pto(kernels.update_rows, {"table": table, "rows": rows, "new": new,
                                                           "out": torch.empty(32, 32, dtype=torch.float16)})
    expected = table.clone()
    expected[rows.view(-1).long()] = new
    assert torch.equal(device, expected) and torch.equal(simulated, expected)
    assert "pto.tgetval ins(" in pto and "pto.tci ins(" in pto
