"""pl.scatter(src, mask_pattern=p, dst=d) in a .pto. The device's mask scatter (pto.tscatter's mask
form, spelled as upstream pypto's emitter writes it) zeroes the lanes it does not write, where the
language keeps d's. A scatter into a pl.full of zero is that instruction alone; any other is
rewritten by the ScatterMaskBlend pass into a scatter into zeros and a select with d (pto.tcmps on a
mask of the same lanes, pto.tsel). Either way the simulator computes what torch does, and the
module conforms to pto-check's table (the mask form from its upstream-emitter source)."""

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
def keep_lanes(even: pl.Tensor[[8, 16], pl.FP32], dst: pl.Tensor[[8, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        d = pl.load(dst, [0, 0], [8, 32])
        t = pl.scatter(pl.load(even, [0, 0], [8, 16]), mask_pattern=pl.tile.MaskPattern.P0101, dst=d)
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def rope_pairs(even: pl.Tensor[[8, 16], pl.FP32], odd: pl.Tensor[[8, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        z = pl.full([8, 32], dtype=pl.FP32, value=0.0)
        t = pl.scatter(pl.load(even, [0, 0], [8, 16]), mask_pattern=pl.tile.MaskPattern.P0101, dst=z)
        t = pl.scatter(pl.load(odd, [0, 0], [8, 16]), mask_pattern=pl.tile.MaskPattern.P1010, dst=t)
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def third_of_four(src: pl.Tensor[[16, 8], pl.FP16], dst: pl.Tensor[[16, 32], pl.FP16],
                  out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        d = pl.load(dst, [0, 0], [16, 32])
        t = pl.scatter(pl.load(src, [0, 0], [16, 8]), mask_pattern=pl.tile.MaskPattern.P0100, dst=d)
        pl.store(t, [0, 0], out)
    return out
'''

kernels = kernels_fixture("scatter_mask.py", KERNELS)


def compile_strictly(kernel, *args):
    """Compiles for a2a3sim, failing on any warning (a kernel without a .pto is one): the program, its
    .pto text and its generic form's path; every module conforms to the PTO dialect outright."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = kernel.compile(*args, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    report = pto_check.check_paths([Path(compiled.output_dir)])
    assert not report.problems, "\n".join(map(str, report.problems))
    return compiled, pto.read_text(), pto.with_name(pto.stem + ".generic.mlir")


def vec(rows, cols, dtype="f32"):
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row=?, v_col=?, "
            "blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def body_ops(pto, *names):
    """The .pto's lines of the named ops, without their loc()."""
    return [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.splitlines()
            if any(f"pto.{name} " in line for name in names)]


def test_a_scatter_into_a_loaded_tile_keeps_its_other_lanes(kernels):
    """The blend, as the .pto writes it: the lanes scattered into zeros, ones scattered the same way,
    compared != 0, and the select of the lanes where that mask is set, the loaded tile elsewhere."""
    even, dst, out = torch.randn(8, 16), torch.randn(8, 32), torch.zeros(8, 32)
    compiled, pto, _ = compile_strictly(kernels.keep_lanes, even, dst, out)
    assert body_ops(pto, "tscatter", "tcmps", "tsel") == [
        f"pto.tscatter ins(%__tmp_v0, {{maskPattern = #pto.mask_pattern<P0101>}} : {vec(8, 16)}, \"row\") "
        f"outs(%t_lanes : {vec(8, 32)})",
        f"pto.tscatter ins(%t_ones, {{maskPattern = #pto.mask_pattern<P0101>}} : {vec(8, 16)}, \"row\") "
        f"outs(%t_mask : {vec(8, 32)})",
        f"pto.tcmps ins(%t_mask, %cst {{cmpMode = #pto<cmp ne>}} : {vec(8, 32)}, f32) "
        f"outs(%t_pred : {vec(8, 32, 'ui8')})",
        f"pto.tsel ins(%t_pred, %t_lanes, %d, %t_sel_tmp : {vec(8, 32, 'ui8')}, {vec(8, 32)}, {vec(8, 32)}, "
        f"{vec(1, 32, 'ui8')}) outs(%t : {vec(8, 32)})",
    ], pto
    compiled(even, dst, out)
    expected = dst.clone()
    expected[:, 0::2] = even
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_a_scatter_into_zeros_is_the_mask_scatter_alone(kernels):
    """dspark_attention's inverse rope: the first scatter goes into a pl.full of zero, so it needs no
    blend; the second, into the first's result, is blended."""
    even, odd, out = torch.randn(8, 16), torch.randn(8, 16), torch.zeros(8, 32)
    compiled, pto, _ = compile_strictly(kernels.rope_pairs, even, odd, out)
    assert [line.split(" outs(")[1] for line in body_ops(pto, "tscatter")] == [
        f"%t : {vec(8, 32)})", f"%t_lanes : {vec(8, 32)})", f"%t_mask : {vec(8, 32)})"], pto
    assert len(body_ops(pto, "tsel")) == 1, pto
    compiled(even, odd, out)
    torch.testing.assert_close(out, torch.stack([even, odd], dim=-1).reshape(8, 32), rtol=0, atol=0)


def test_a_half_precision_scatter_marks_its_lanes_in_fp16(kernels):
    src, dst, out = torch.randn(16, 8).half(), torch.randn(16, 32).half(), torch.zeros(16, 32).half()
    compiled, pto, _ = compile_strictly(kernels.third_of_four, src, dst, out)
    assert f"pto.tscatter ins(%t_ones, {{maskPattern = #pto.mask_pattern<P0100>}} : {vec(16, 8, 'f16')}, " \
           f"\"row\") outs(%t_mask : {vec(16, 32, 'f16')})" in body_ops(pto, "tscatter"), pto
    compiled(src, dst, out)
    expected = dst.clone()
    expected[:, 2::4] = src
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_the_checker_rejects_a_mask_pattern_of_the_wrong_kind(kernels, tmp_path):
    """The generic form's mask scatter with an integer for its pattern: the op and its line named."""
    even, dst, out = torch.randn(8, 16), torch.randn(8, 32), torch.zeros(8, 32)
    _, _, generic = compile_strictly(kernels.keep_lanes, even, dst, out)
    lines = generic.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith('"pto.tscatter"'))
    assert "maskPattern = #pto.mask_pattern<P0101>, axis = \"row\"" in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace("#pto.mask_pattern<P0101>", "1 : i32")
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    problems = [str(p) for p in pto_check.check_paths([path]).problems]
    assert problems == [f"{path}:{number}: op 'pto.tscatter': attribute 'maskPattern' must be "
                        f"#pto.mask_pattern<...> (PTO_MaskPatternAttr), got 1 : i32"]


def test_the_checker_takes_the_mask_form_from_upstreams_emitter():
    table = pto_check.load_table()
    (mask,) = table["ops"]["pto.tscatter"]["alternatives"]
    assert mask["source"] == "upstream pypto e2d0f78ae's PTO emitter"
    assert [(a["name"], a["kind"], a["presence"]) for a in mask["attributes"]] == [
        ("maskPattern", "PTO_MaskPatternAttr", "required"), ("axis", "StrAttr", "required")]
    # PTOAS's own form, the index form, is still the op's first.
    assert [o["name"] for o in table["ops"]["pto.tscatter"]["operands"]] == ["src", "indexes", "dst"]
