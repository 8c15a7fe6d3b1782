"""A mixed kernel whose program sets up two pipes of one direction (``id=0`` and ``id=1``) and rings of
its own depth (``slot_num``, ``local_slot_num``), as upstream pypto's cross-core tests do. PTOAS
a56b18c32af3 carries one pipe per direction with a fixed ring; the .pto follows upstream pypto's
emitter (e2d0f78ae), for a later PTOAS: each pipe set up on its own with its own slot buffer and, on
a2a3, its own region of the GM slot buffer; every pipe op names its pipe's `id`. tools/pto-check has
those attributes from upstream's emitter; the numbers stay torch's."""

import pypto.language as pl
import torch

from pto_dialect import pto_check

N = 16
SLOT = N * N * 4


@pl.program
class TwoPipes:
    """out = (a + b) @ (a - b): the sum crosses on pipe 0, the difference on pipe 1, pushed in reverse."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
            out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        peer0 = pl.import_peer_buffer(name="v2c_0", peer_func="cube")
        peer1 = pl.import_peer_buffer(name="v2c_1", peer_func="cube")
        pl.aiv_initialize_pipe(pl.const(0, pl.INT32), peer0, dir_mask=2, slot_size=SLOT, slot_num=4,
                               local_slot_num=2, id=0)
        pl.aiv_initialize_pipe(pl.const(0, pl.INT32), peer1, dir_mask=2, slot_size=SLOT, id=1)
        ta = pl.load(a, [0, 0], [N, N])
        tb = pl.load(b, [0, 0], [N, N])
        pl.tpush_to_aic(pl.sub(ta, tb), split=0, id=1)
        pl.tpush_to_aic(pl.add(ta, tb), split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        buf0 = pl.reserve_buffer(name="v2c_0", size=2 * SLOT, base=pl.AUTO)
        buf1 = pl.reserve_buffer(name="v2c_1", size=8 * SLOT, base=pl.AUTO)
        pl.aic_initialize_pipe(pl.const(0, pl.INT32), buf0, dir_mask=2, slot_size=SLOT, slot_num=4,
                               local_slot_num=2, id=0)
        pl.aic_initialize_pipe(pl.const(0, pl.INT32), buf1, dir_mask=2, slot_size=SLOT, id=1)
        total: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        diff: pl.Tile[[N, N], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
        product = pl.matmul(pl.move(total, target_memory=pl.Mem.Left), pl.move(diff, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(total, id=0)
        pl.tfree_to_aiv(diff, id=1)
        return pl.store(product, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def fused(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
              out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        result = self.cube(a, b, out)
        self.vec(a, b, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.fused(a, b, out)
        return out


def compiled_module(tmp_path):
    """Compiles TwoPipes for a2a3sim and runs it: the group's module (its text, and its generic form's path)."""
    from pypto.ir import compile

    build = tmp_path / "build"
    compiled = compile(TwoPipes, output_dir=str(build))
    a, b = torch.randn(N, N), torch.randn(N, N)
    out = torch.zeros(N, N)
    compiled(a, b, out)
    torch.testing.assert_close(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-4)
    pto = build / "kernels" / "aic" / "cube.pto"
    return pto.read_text(), pto.with_name("cube.generic.mlir"), build


def lines_of(pto, needle):
    """The module's lines holding `needle`, stripped, without their loc()."""
    return [line.split(" loc(")[0].strip() for line in pto.splitlines() if needle in line]


def test_two_pipes_of_one_direction_are_set_up_apart_and_their_ops_name_them(tmp_path):
    pto, _, build = compiled_module(tmp_path)
    # Pipe 0 keeps the 2-slot local ring its setup asks for (a 4-slot GM ring); pipe 1 PTOAS's 8 slots,
    # its GM ring past pipe 0's 4 slots of 1024 bytes (1024 f32 elements in).
    assert lines_of(pto, "pto.aic_initialize_pipe") == [
        "pto.aic_initialize_pipe {id = 0, dir_mask = 2, slot_size = 1024, slot_num = 4, local_slot_num = 2} "
        "(gm_slot_buffer = %arg3 : !pto.ptr<f32>, c2v_consumer_buf = %c0_i32 : i32, "
        "v2c_consumer_buf = %fused_v2c_slot_buffer : i32)",
        "pto.aic_initialize_pipe {id = 1, dir_mask = 2, slot_size = 1024} "
        "(gm_slot_buffer = %fused_gm_slot_buffer_1 : !pto.ptr<f32>, c2v_consumer_buf = %c0_i32 : i32, "
        "v2c_consumer_buf = %fused_v2c_slot_buffer_1 : i32)"]
    assert lines_of(pto, "pto.addptr") == [
        "%fused_gm_slot_buffer_1 = pto.addptr %arg3, %c1024_index : !pto.ptr<f32> -> !pto.ptr<f32>"] * 2
    reserves = lines_of(pto, "pto.reserve_buffer")
    assert [r.split("{")[1].split(", location")[0] for r in reserves] == [
        'name = "fused_v2c_slot_buffer", size = 2048', 'name = "fused_v2c_slot_buffer_1", size = 8192']
    assert [line.split(") {")[1] for line in lines_of(pto, "pto.tpush_to_aic(")] == [
        "id = 1, split = 0}", "id = 0, split = 0}"]
    assert [line.split(") {")[1].split(" ->")[0] for line in lines_of(pto, "pto.tpop_from_aiv(")] == [
        "id = 0, split = 0}", "id = 1, split = 0}"]
    assert lines_of(pto, "pto.tfree_from_aiv") == ["pto.tfree_from_aiv {id = 0, split = 0}",
                                                    "pto.tfree_from_aiv {id = 1, split = 0}"]
    report = pto_check.check_paths([build])
    assert not report.problems, "\n".join(map(str, report.problems))


def mutated(generic, tmp_path, op, old, new):
    """A copy of the generic module with `old` replaced by `new` on the first line of `op`: (path, line)."""
    lines = generic.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith(f'"{op}"'))
    assert old in lines[number - 1], lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    return path, number


def test_pto_check_knows_a_pipes_id_and_ring_from_upstreams_emitter(tmp_path):
    _, generic, _ = compiled_module(tmp_path)
    path, number = mutated(generic, tmp_path, "pto.tfree_from_aiv", "id = 0 : i32", "id = 0 : i32, ring = 1 : i32")
    assert [str(p) for p in pto_check.check_paths([path]).problems] == [
        f"{path}:{number}: op 'pto.tfree_from_aiv': unknown attribute 'ring' (PTOAS's pto.tfree_from_aiv takes id, "
        "split)"]
    path, number = mutated(generic, tmp_path, "pto.tpush_to_aic", "id = 1 : i32, split = 0 : i8", "id = 1 : i32")
    assert [str(p) for p in pto_check.check_paths([path]).problems] == [
        f"{path}:{number}: op 'pto.tpush_to_aic': missing required attribute 'split' (an i8 integer ('N : i8'))"]
    path, number = mutated(generic, tmp_path, "pto.aic_initialize_pipe", "slot_num = 4 : i32", "slot_num = 4 : i8")
    assert [str(p) for p in pto_check.check_paths([path]).problems] == [
        f"{path}:{number}: op 'pto.aic_initialize_pipe': attribute 'slot_num' must be an i32 integer ('N : i32') "
        "(I32Attr), got 4 : i8"]
