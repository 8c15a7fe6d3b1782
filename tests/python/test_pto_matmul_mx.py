"""The .pto of MX block-scale matmul (platform a5), as upstream pypto's PTO emitter writes it:

- the scale tensors' views and loads carry their layout, `{layout = #pto.layout<mx_a_zz|mx_b_nn>}`;
- a scale tile is typed in its layout's 32-byte boxes (left scales row_major/row_major, right ones
  col_major/col_major), in Mat and in ptoas's one `scaling` buffer that tmov fills from it;
- before each product both scale tiles are bound to their data tiles (pto.tget_scale_addr), then
  pto.tmatmul.mx / .mx.bias / .mx.acc (the accumulator in ins() is outs()' value);
- packed FP4 is !pto.f4E2M1x2, a Vec tile of it counting pairs along the row.

PTOAS a56b18c32af3 (pto-check's table) has neither the two element types nor the MX layouts, so the
table's upstream_emitter source does; the modules conform, and mutated ones are rejected by line.
The numbers these programs give on a5sim are test_matmul_mx.py's.
"""

import re
import warnings
from pathlib import Path

from pypto.ir import compile

from pto_dialect import pto_check
from test_matmul_mx import G, K, M, N, Fp4Product, MxProducts


def build(program, tmp_path):
    """Compiles for a5 (the device build: no run), failing on any warning (a kernel without a .pto
    is one); the build directory."""
    out = tmp_path / "build"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(program, platform="a5", output_dir=str(out))
    report = pto_check.check_paths([out])
    assert not report.problems, "\n".join(map(str, report.problems))
    return out


def body(pto):
    """The .pto's lines without their loc()."""
    return [re.sub(r" loc\(.*\)$", "", line).strip() for line in pto.splitlines()]


def tile(loc, dtype, rows, cols, blayout, slayout, fractal):
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row=?, v_col=?, "
            f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


LEFT = tile("left", "f8E4M3FN", M, K, "col_major", "row_major", 512)
RIGHT = tile("right", "f8E4M3FN", K, N, "row_major", "col_major", 512)
LEFT_SCALE = tile("scaling", "!pto.f8E8M0", M, G, "row_major", "row_major", 32)
RIGHT_SCALE = tile("scaling", "!pto.f8E8M0", G, N, "col_major", "col_major", 32)
ACC = tile("acc", "f32", M, N, "col_major", "row_major", 1024)


def test_scale_tensors_are_viewed_and_loaded_in_their_mx_layout(tmp_path):
    (pto,) = (build(MxProducts, tmp_path) / "kernels" / "aic").glob("*.pto")
    lines = body(pto.read_text())
    assert any(re.fullmatch(r"%sa_view = pto\.make_tensor_view %arg1, shape = \[%c32_index, %c4_index\], "
                            r"strides = \[%c4_index, %c1_index\] \{layout = #pto\.layout<mx_a_zz>\} : "
                            r"!pto\.tensor_view<\?x\?x!pto\.f8E8M0>", line) for line in lines)
    assert any(line.endswith("{layout = #pto.layout<mx_b_nn>} : !pto.tensor_view<?x?x!pto.f8E8M0>")
               and line.startswith("%sb_view = ") for line in lines)
    mat_scale = tile("mat", "!pto.f8E8M0", M, G, "row_major", "row_major", 32)
    (load,) = [line for line in lines if line.startswith("pto.tload ins(%sa_pview")]
    assert load == (f"pto.tload ins(%sa_pview : !pto.partition_tensor_view<{M}x{G}x!pto.f8E8M0>) "
                    f"outs(%{load.split('outs(%')[1].split(' ')[0]} : {mat_scale}) {{layout = #pto.layout<mx_a_zz>}}")
    assert any(line.startswith("pto.tmov ins(") and f": {mat_scale}) outs(%lhs_scale : {LEFT_SCALE})" in line
               for line in lines)
    assert any(line.startswith("pto.tmov ins(") and f") outs(%rhs_scale : {RIGHT_SCALE})" in line for line in lines)


def test_each_product_binds_both_scale_tiles_first(tmp_path):
    (pto,) = (build(MxProducts, tmp_path) / "kernels" / "aic").glob("*.pto")
    lines = body(pto.read_text())
    bind_left = f"pto.tget_scale_addr ins(%lhs : {LEFT}) outs(%lhs_scale : {LEFT_SCALE})"
    bind_right = f"pto.tget_scale_addr ins(%rhs : {RIGHT}) outs(%rhs_scale : {RIGHT_SCALE})"
    operands = f"%lhs, %lhs_scale, %rhs, %rhs_scale : {LEFT}, {LEFT_SCALE}, {RIGHT}, {RIGHT_SCALE}"
    products = [i for i, line in enumerate(lines) if line.startswith("pto.tmatmul.mx")]
    assert len(products) == 3 and sum(line.startswith("pto.tget_scale_addr") for line in lines) == 6
    for i in products:
        assert lines[i - 2:i] == [bind_left, bind_right]
    plain, biased, accumulated = (lines[i] for i in products)
    assert plain == f"pto.tmatmul.mx ins({operands}) outs(%product : {ACC})"
    assert re.fullmatch(rf"pto\.tmatmul\.mx\.bias ins\(%lhs, %lhs_scale, %rhs, %rhs_scale, %row : .*\) "
                        rf"outs\(%with_bias : {re.escape(ACC)}\)", biased)
    assert accumulated == (f"pto.tmatmul.mx.acc ins(%again, {operands.replace(' : ', ' : ' + ACC + ', ')}) "
                           f"outs(%again : {ACC})")


def test_packed_fp4_is_a_tile_of_pairs(tmp_path):
    out = build(Fp4Product, tmp_path)
    (aiv,) = (out / "kernels" / "aiv").glob("*.pto")
    text = aiv.read_text()
    assert "%arg0: !pto.ptr<!pto.f4E2M1x2>" in text
    fp4 = tile("vec", "!pto.f4E2M1x2", M, K // 2, "row_major", "none_box", 512)
    assert re.search(rf"pto\.tload ins\(%a_pview : !pto\.partition_tensor_view<{M}x{K}x!pto\.f4E2M1x2>\) "
                     rf"outs\(%\w+ : {re.escape(fp4)}\)", text)
    assert re.search(rf"pto\.tcvt ins\(%\w+ \{{rmode = #pto<round_mode \w+>\}} : {re.escape(fp4)}\) "
                     rf"outs\(%\w+ : !pto\.tile_buf<loc=vec, dtype=bf16, rows={M}, cols={K},", text)


def mutated(path, tmp_path, op, old, new):
    """A copy of the module at `path` with `old` replaced by `new` on the first line of `op`: (path, line)."""
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if op in line and old in line)
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    copy = tmp_path / ("mutated" + "".join(path.suffixes))
    copy.write_text("\n".join(lines) + "\n")
    return copy, number


def problems(path):
    return [str(p) for p in pto_check.check_paths([path]).problems]


def test_the_checker_rejects_what_upstream_does_not_write(tmp_path):
    (generic,) = (build(MxProducts, tmp_path) / "kernels" / "aic").glob("*.generic.mlir")
    (pto,) = generic.parent.glob("*.pto")
    path, line = mutated(generic, tmp_path, '"pto.tload"', "#pto.layout<mx_a_zz>", "#pto.layout<mx_a_nn>")
    assert f"{path}:{line}: attribute '#pto.layout<mx_a_nn>': 'mx_a_nn' is not one of nd, dn, nz, mx_a_zz, mx_b_nn" \
        in problems(path)
    path, line = mutated(generic, tmp_path, '"pto.tload"', "layout = #pto.layout<mx_a_zz>", "layout = 1 : i32")
    # As far from the mx_layout form as from PTOAS's own, which is then the one reported against.
    assert f"{path}:{line}: op 'pto.tload': unknown attribute 'layout' (PTOAS's pto.tload takes pad_mode, " \
        "init_out_buffer)" in problems(path)
    path, line = mutated(pto, tmp_path, "pto.tget_scale_addr", "!pto.f8E8M0", "!pto.f8E8M1")
    assert any(p.startswith(f"{path}:{line}: unknown type '!pto.f8E8M1'") for p in problems(path))
    path, line = mutated(generic, tmp_path, '"pto.tget_scale_addr"', '"pto.tget_scale_addr"(%lhs, ',
                         '"pto.tget_scale_addr"(')
    assert any(p.startswith(f"{path}:{line}: op 'pto.tget_scale_addr': ") for p in problems(path))
