"""A mixed kernel whose vector member leaves no room in UB for PTOAS's frontend pipe ring (8 slots of
the largest crossing tile past every tile): memory allocation reserves a pipe slot region at the
bottom of UB instead, as deep as the popped tiles read at once, and the vector member's end of the
pipe consumes only that (pto.initialize_l2g2l_pipe's local_slot_num). The numbers stay torch's."""

import torch

N = 16
COLS = 256
ROWS = 176  # 180224 bytes of FP32: with the two popped tiles, UB is used up to byte 182272
A5_ROWS = 232  # 237568 bytes of FP32: with 8 slots of 1024 bytes past them, more than a5's 245760 of UB

# out = a @ b + b @ a, and big_out = big: the vector core holds `big` ([ROWS, COLS]) while it adds the
# products; ROWS is chosen per platform to fill its UB.
SOURCE = '''
N, ROWS, COLS = 16, {rows}, 256


@pl.program
class TwoProductsBesideAFullUb:
    """out = a @ b + b @ a, and big_out = big: the vector core holds `big` while it adds the products."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             big: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             big_out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        ta = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [N, N], target_memory=pl.Mem.Mat)
        ab = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(ab, split=0)
        ba = pl.matmul(pl.move(tb, target_memory=pl.Mem.Left), pl.move(ta, target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(ba, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            big: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
            big_out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        held = pl.load(big, [0, 0], [ROWS, COLS])
        ab = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
        pl.tfree_to_aic(ab)
        ba = pl.tpop_from_aic(shape=[N, N], dtype=pl.FP32, split=0)
        pl.tfree_to_aic(ba)
        total = pl.add(ab, ba)
        out = pl.store(total, [0, 0], out)
        big_out = pl.store(held, [0, 0], big_out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
              big: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
              big_out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        self.cube(a, b, big, out, big_out)
        out = self.vec(a, b, big, out, big_out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             big: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             big_out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, big, out, big_out)
        return out
'''


def _program(write_dsl, rows):
    module, _ = write_dsl(f"two_products_beside_{rows}_rows", SOURCE.format(rows=rows))
    return module.TwoProductsBesideAFullUb


def test_the_vector_member_reads_its_pops_in_a_two_slot_ring(tmp_path, write_dsl):
    from pypto.ir import compile

    compiled = compile(_program(write_dsl, ROWS), output_dir=str(tmp_path / "build"))
    a, b, big = torch.randn(N, N), torch.randn(N, N), torch.randn(ROWS, COLS)
    out, big_out = torch.zeros(N, N), torch.zeros(ROWS, COLS)
    compiled(a, b, big, out, big_out)
    torch.testing.assert_close(out, a @ b + b @ a, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(big_out, big)

    lowered = (tmp_path / "build" / "lowered_program.py").read_text()
    assert '"pipe_slot_region": 2048' in lowered, lowered
    pto = (tmp_path / "build" / "kernels" / "aiv" / "vec.pto").read_text()
    # 8 slots of 1024 bytes would not fit past the tiles; the ring below them holds the 2 read at once.
    assert ('%fused_c2v_slot_buffer = pto.reserve_buffer {name = "fused_c2v_slot_buffer", size = 2048, '
            'location = #pto.address_space<vec>, auto = false, base = 0} -> i32') in pto, pto
    assert ("pto.initialize_l2g2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, local_slot_num = 2}"
            "(%arg5 : !pto.ptr<f32>, %fused_c2v_slot_buffer : i32) -> !pto.pipe") in pto, pto
    assert "pto.tpop(%ab, %fused_pipe : " in pto and "pto.tfree(%fused_pipe : !pto.pipe) {split = 0}" in pto, pto


A5_ROWS = 232  # 237568 bytes of FP32: with 8 slots of 1024 bytes past them, more than a5's 245760 of UB


def test_on_a5_both_members_rings_are_the_regions_two_slots(tmp_path, write_dsl):
    """a5 has no pipe through GM: the cube writes into the vector member's region itself, so both
    members' frontend setup carries its depth as upstream pypto's `slot_num`, and the pops are read in
    their slots."""
    from pypto.ir import compile

    from pto_dialect import pto_check

    build = tmp_path / "build"
    compiled = compile(_program(write_dsl, A5_ROWS), platform="a5sim", output_dir=str(build))
    a, b, big = torch.randn(N, N), torch.randn(N, N), torch.randn(A5_ROWS, COLS)
    out, big_out = torch.zeros(N, N), torch.zeros(A5_ROWS, COLS)
    compiled(a, b, big, out, big_out)
    torch.testing.assert_close(out, a @ b + b @ a, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(big_out, big)

    assert '"pipe_slot_region": 2048' in (build / "lowered_program.py").read_text()
    vec = (build / "kernels" / "aiv" / "vec.pto").read_text()
    assert ('%fused_c2v_slot_buffer = pto.reserve_buffer {name = "fused_c2v_slot_buffer", size = 2048, '
            'location = #pto.address_space<vec>, auto = false, base = 0} -> i32') in vec, vec
    assert ("pto.aiv_initialize_pipe {dir_mask = 1, slot_size = 1024, slot_num = 2} "
            "(c2v_consumer_buf = %fused_c2v_slot_buffer : i32, v2c_consumer_buf = %c0_i32 : i32)") in vec, vec
    assert "%ab = pto.tpop_from_aic(" in vec and "pto.tmov ins(%ab" not in vec, vec
    # The module holds both members; the cube's end of the pipe is as deep.
    assert ("pto.aic_initialize_pipe {dir_mask = 1, slot_size = 1024, slot_num = 2} "
            "(c2v_consumer_buf = %fused_c2v_slot_buffer_import : i32, v2c_consumer_buf = %c0_i32 : i32)") in vec, vec
    report = pto_check.check_paths([build])
    assert not report.problems, "\n".join(map(str, report.problems))

    # pto-check knows slot_num and local_slot_num from upstream's form of the op: a ring depth of the
    # wrong kind is rejected at its line.
    generic = build / "kernels" / "aiv" / "vec.generic.mlir"
    lines = generic.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith('"pto.aiv_initialize_pipe"'))
    lines[number - 1] = lines[number - 1].replace("slot_num = 2 : i32", "slot_num = 2 : i32, local_slot_num = true")
    mutated = tmp_path / "mutated.generic.mlir"
    mutated.write_text("\n".join(lines) + "\n")
    assert [str(p) for p in pto_check.check_paths([mutated]).problems] == [
        f"{mutated}:{number}: op 'pto.aiv_initialize_pipe': attribute 'local_slot_num' must be an i32 integer "
        "('N : i32') (I32Attr), got true"]
