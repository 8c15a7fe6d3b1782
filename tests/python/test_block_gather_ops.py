"""The gathers that move runs of bytes, on the simulator and checked against torch: pl.tile.gatherb
(32-byte blocks of a tile at UINT32 byte offsets, read as output_dtype) and pl.tile.mgather (rows or
elements of a global tensor at INT32 indices, into a Vec tile or, with scratch for elements, a Mat
tile), with the out-of-bounds policies and valid regions."""

import pytest
import torch
from pypto.runtime import RunConfig

from conftest import is_poison, kernels_fixture, unwritten

KERNELS = '''
import pypto.language as pl


@pl.jit
def gather_blocks(src: pl.Tensor[[1, 256], pl.FP32], offset: pl.Tensor[[4, 8], pl.UINT32],
                  out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.load(src, [0, 0], [1, 256])
        o = pl.load(offset, [0, 0], [4, 8], valid_shape=[3, 5])
        out = pl.store(pl.tile.gatherb(s, o), [0, 0], out)
    return out


@pl.jit
def gather_bytes(src: pl.Tensor[[1, 512], pl.INT16], offset: pl.Tensor[[2, 16], pl.UINT32],
                 out: pl.Out[pl.Tensor[[2, 512], pl.UINT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.load(src, [0, 0], [1, 512])
        o = pl.load(offset, [0, 0], [2, 16])
        out = pl.store(pl.gatherb(s, o, output_dtype=pl.UINT8), [0, 0], out)
    return out


@pl.jit
def gather_rows_clamped(mem: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[1, 16], pl.INT32],
                        out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [1, 16], valid_shape=[1, 9])
        out = pl.store(pl.tile.mgather(mem, i, coalesce="row", gather_oob="clamp"), [0, 0], out)
    return out


@pl.jit
def gather_rows_by_column(mem: pl.Tensor[[64, 32], pl.INT32], idx: pl.Tensor[[16, 1], pl.INT32],
                          out: pl.Out[pl.Tensor[[16, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [16, 1])
        out = pl.store(pl.mgather(mem, i, gather_oob="wrap"), [0, 0], out)
    return out


@pl.jit
def gather_elements(mem: pl.Tensor[[256], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
                    out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [8, 32], valid_shape=[5, 19])
        out = pl.store(pl.tile.mgather(mem, i, coalesce="elem", gather_oob="zero"), [0, 0], out)
    return out


@pl.jit
def gather_elements_strictly(mem: pl.Tensor[[256], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
                             out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [8, 32])
        out = pl.store(pl.tile.mgather(mem, i, coalesce="elem"), [0, 0], out)
    return out


@pl.jit
def gather_elements_into_mat(mem: pl.Tensor[[1024], pl.FP16], idx: pl.Tensor[[32, 32], pl.INT32],
                             scratch: pl.Tensor[[1024], pl.FP16], eye: pl.Tensor[[32, 32], pl.FP16],
                             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.tile.mgather(mem, idx, coalesce="elem", gather_oob="wrap", target_memory=pl.Mem.Mat,
                            scratch=scratch, valid_shape=[16, 21])
        e = pl.load(eye, [0, 0], [32, 32], valid_shape=[32, 16], target_memory=pl.Mem.Mat)
        product = pl.matmul(e, g)
        out = pl.store(pl.tile.slice(product, [16, 32], [0, 0]), [0, 0], out)
    return out


@pl.jit
def gather_rows_into_mat(mem: pl.Tensor[[64, 32], pl.FP16], idx: pl.Tensor[[1, 32], pl.INT32],
                         eye: pl.Tensor[[32, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.tile.mgather(mem, idx, target_memory=pl.Mem.Mat)
        e = pl.load(eye, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        out = pl.store(pl.matmul(e, g), [0, 0], out)
    return out
'''

kernels = kernels_fixture("block_gather_ops.py", KERNELS)


def as_uint32(t):
    return t.view(torch.uint32) if hasattr(torch, "uint32") else t


def test_gatherb_copies_the_blocks_its_valid_offsets_name(kernels):
    src = torch.randn(1, 256)
    blocks = torch.randperm(32).to(torch.int32).reshape(4, 8)
    out = torch.zeros(4, 64)
    # Only the valid offsets [3, 5] name blocks: the rest of the pl.Out tensor is never written.
    with unwritten("output 'out' [4, 64] float32: 136 of 256 elements were never written: all of rows 3; "
                   "part of rows 0..2 (columns 40..63)"):
        kernels.gather_blocks(src, as_uint32(blocks * 32), out)
    expected = torch.zeros(3, 40)
    source_blocks = src.reshape(32, 8)
    for r in range(3):
        for c in range(5):
            expected[r, c * 8:(c + 1) * 8] = source_blocks[blocks[r, c]]
    assert torch.equal(out[:3, :40], expected)
    assert is_poison(out[3:]) and is_poison(out[:, 40:])


def test_gatherb_reads_the_gathered_bytes_as_the_output_dtype(kernels):
    src = torch.randint(-30000, 30000, (1, 512), dtype=torch.int16)
    blocks = torch.tensor([(7 * i + 3) % 32 for i in range(32)], dtype=torch.int32).reshape(2, 16)
    out = torch.zeros(2, 512, dtype=torch.uint8)
    kernels.gather_bytes(src, as_uint32(blocks * 32), out)
    source_bytes = src.view(torch.uint8).reshape(32, 32)
    assert torch.equal(out, source_bytes[blocks.long()].reshape(2, 512))


def test_gatherb_refuses_an_offset_past_the_source(kernels):
    blocks = torch.zeros(4, 8, dtype=torch.int32)
    blocks[2, 4] = 1024  # the source holds 1024 bytes
    with pytest.raises(RuntimeError, match=r"the byte offset 1024 at \[2, 4\] of the offsets is not the start of a "
                                           r"32-byte block of the 1024-byte source"):
        kernels.gather_blocks(torch.zeros(1, 256), as_uint32(blocks), torch.zeros(4, 64))


def test_mgather_rows_clamp_past_the_end_and_stop_at_the_valid_indices(kernels):
    mem = torch.randn(64, 32).half()
    idx = torch.tensor([[-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60]], dtype=torch.int32)
    out = torch.zeros(16, 32).half()
    with unwritten("output 'out' [16, 32] float16: 224 of 512 elements were never written: all of rows 9..15"):
        kernels.gather_rows_clamped(mem, idx, out)
    # Indices are unsigned: -1 is past the end as well, and clamps to the last row.
    assert torch.equal(out[:9], mem[(idx[0, :9].long() & 0xFFFFFFFF).clamp(max=63)])
    assert is_poison(out[9:])  # no row past the 9 valid indices is gathered


def test_mgather_rows_by_a_column_of_indices_wrap_around_on_a5(kernels):
    mem = torch.randint(-1000, 1000, (64, 32), dtype=torch.int32)
    idx = torch.tensor([[63], [2], [-1], [64], [130], [0], [5], [9], [1], [2], [3], [4], [5], [6], [7], [8]],
                       dtype=torch.int32)
    out = torch.zeros(16, 32, dtype=torch.int32)
    kernels.gather_rows_by_column(mem, idx, out, config=RunConfig(platform="a5sim"))
    assert torch.equal(out, mem[(idx[:, 0].long() & 0xFFFFFFFF) % 64])
    # The a2a3 vector unit takes row indices only as a row [1, R].
    with pytest.raises(RuntimeError, match=r"pl.mgather of rows picked by a column of indices \[16, 1\] runs on a5 "
                                           r"only; on a2a3 the indices must be a row \[1, 16\]"):
        kernels.gather_rows_by_column(mem, idx, out, config=RunConfig(platform="a2a3sim"))


def test_mgather_elements_read_zero_past_the_end(kernels):
    mem = torch.randn(256)
    idx = torch.randint(0, 300, (8, 32), dtype=torch.int32)
    idx[0, 0] = -1
    out = torch.zeros(8, 32)
    # Zero past the end of mem, within the valid indices [5, 19]; outside them nothing is written.
    with unwritten("output 'out' [8, 32] float32: 161 of 256 elements were never written: all of rows 5..7; "
                   "part of rows 0..4 (columns 19..31)"):
        kernels.gather_elements(mem, idx, out)
    flat = idx[:5, :19].long() & 0xFFFFFFFF
    assert torch.equal(out[:5, :19], torch.where(flat < 256, mem[flat.clamp(max=255)], torch.zeros(())))
    assert is_poison(out[5:]) and is_poison(out[:, 19:])


def test_mgather_with_undefined_out_of_bounds_reports_the_index(kernels):
    idx = torch.arange(256, dtype=torch.int32).reshape(8, 32)
    idx[3, 4] = 256
    with pytest.raises(RuntimeError, match=r"the index 256 at position 100 of the indices is past the 256 elements of "
                                           r"tensor 'mem'"):
        kernels.gather_elements_strictly(torch.zeros(256), idx, torch.zeros(8, 32))


def test_mgather_elements_into_mat_feed_a_matmul(kernels):
    mem = (torch.arange(1024) % 53).half()
    idx = torch.arange(1023, -1, -1, dtype=torch.int32).reshape(32, 32) + 5  # the last 5 wrap
    eye = torch.eye(32).half()
    out = torch.zeros(16, 32)
    kernels.gather_elements_into_mat(mem, idx, torch.zeros(1024).half(), eye, out)
    expected = torch.zeros(16, 32)
    expected[:, :21] = mem[(idx[:16, :21].long() % 1024)].float()
    assert torch.equal(out, expected)


def test_mgather_rows_into_mat_feed_a_matmul(kernels):
    mem = torch.randn(64, 32).half()
    idx = torch.tensor([[(i * 29 + 7) % 64 for i in range(32)]], dtype=torch.int32)
    out = torch.zeros(32, 32)
    kernels.gather_rows_into_mat(mem, idx, torch.eye(32).half(), out)
    torch.testing.assert_close(out, mem[idx[0].long()].float(), rtol=0, atol=0)


ERRORS = '''
@pl.jit
def signed_offsets(src: pl.Tensor[[1, 256], pl.FP32], offset: pl.Tensor[[4, 8], pl.INT32],
                   out: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.load(src, [0, 0], [1, 256])
        out = pl.store(pl.tile.gatherb(s, pl.load(offset, [0, 0], [4, 8])), [0, 0], out)
    return out


@pl.jit
def vec_with_scratch(mem: pl.Tensor[[256], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
                     out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        i = pl.load(idx, [0, 0], [8, 32])
        out = pl.store(pl.tile.mgather(mem, i, coalesce="elem", scratch=mem), [0, 0], out)
    return out
'''


def test_gatherb_with_signed_offsets_is_an_error_at_the_call(write_dsl):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_dsl("gatherb_errors", ERRORS)
    with pytest.raises(ParserTypeError) as error:
        module.signed_offsets(torch.zeros(1, 256), torch.zeros(4, 8, dtype=torch.int32), torch.zeros(4, 64))
    assert error.value.message == ("pl.tile.gatherb: the offsets of tile.gatherb must be UINT32 byte offsets, got "
                                   "INT32")
    assert error.value.location == f"{path}:9:24"


def test_mgather_into_vec_refuses_scratch(write_dsl):
    from pypto.language.parser.diagnostics import ParserTypeError

    module, path = write_dsl("mgather_errors", ERRORS)
    with pytest.raises(ParserTypeError) as error:
        module.vec_with_scratch(torch.zeros(256), torch.zeros(8, 32, dtype=torch.int32), torch.zeros(8, 32))
    assert error.value.message == ("pl.tile.mgather: tile.mgather into a Vec tile takes neither scratch= nor "
                                   "valid_shape= (its valid region is the indices')")
    assert error.value.location == f"{path}:18:24"
