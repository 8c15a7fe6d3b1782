"""Gathers and scatters by index on the simulator, checked against torch: the flat forms
(pl.tile.gather, pl.tile.scatter), the forms along an axis (pl.gather / pl.scatter with dim=, as
torch.gather and Tensor.scatter_), the mask-pattern scatter, whole-row updates (pl.scatter_update),
the compare form of the gather, tensor-level spellings inside pl.at, and pl.random (Philox4x32)."""

import warnings
from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig
from pypto.runtime.unwritten import UnwrittenOutputWarning

from conftest import is_poison, kernels_fixture

KERNELS = '''
import pypto.language as pl


@pl.jit
def flat_gather(x: pl.Tensor[[8, 64], pl.FP32], idx: pl.Tensor[[8, 32], pl.INT32],
                out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.tile.gather(x[:, :], idx[:, :])
    return out


@pl.jit
def gather_rows_of_3d(x: pl.Tensor[[2, 8, 8], pl.FP32], idx: pl.Tensor[[2, 3, 8], pl.INT32],
                      out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        g = pl.tensor.gather(x, dim=1, index=idx)
        out = pl.assemble(out, g, [0, 0, 0])
    return out


@pl.jit
def gather_columns(x: pl.Tensor[[16, 64], pl.FP32], idx: pl.Tensor[[16, 32], pl.INT32],
                   out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.gather(x, dim=-1, index=idx), [0, 0])
    return out


@pl.jit
def gather_fewer_rows(x: pl.Tensor[[4, 16], pl.FP16], idx: pl.Tensor[[2, 8], pl.INT16],
                      out: pl.Out[pl.Tensor[[2, 8], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.gather(x, -1, idx), [0, 0])
    return out


@pl.jit
def scatter_columns(base: pl.Tensor[[8, 16], pl.FP32], idx: pl.Tensor[[8, 8], pl.INT32],
                    val: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.tensor.scatter(base, dim=-1, index=idx, src=val)
        out = pl.assemble(out, s, [0, 0])
    return out


@pl.jit
def scatter_half_columns(base: pl.Tensor[[16, 32], pl.FP16], idx: pl.Tensor[[16, 16], pl.INT16],
                         val: pl.Tensor[[16, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.scatter(base, -1, idx, val), [0, 0])
    return out


@pl.jit
def flat_scatter(dst: pl.Tensor[[4, 32], pl.INT32], val: pl.Tensor[[2, 8], pl.INT32],
                 idx: pl.Tensor[[2, 8], pl.INT32], out: pl.Out[pl.Tensor[[4, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.tile.scatter(dst[:, :], val[:, :], idx[:, :])
    return out


@pl.jit
def interleave(even: pl.Tensor[[8, 16], pl.FP32], odd: pl.Tensor[[8, 16], pl.FP32],
               dst: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.scatter(even, mask_pattern=pl.tile.MaskPattern.P0101, dst=dst)
        t = pl.scatter(odd, mask_pattern=pl.tile.MaskPattern.P1010, dst=t)
        out = pl.assemble(out, t, [0, 0])
    return out


@pl.jit
def update_rows(cache: pl.Tensor[[32, 16], pl.FP32], index: pl.Tensor[[2, 4], pl.INT32],
                rows: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.scatter_update(cache, -2, index, rows), [0, 0])
    return out


@pl.jit
def update_pages(cache: pl.Tensor[[4, 8, 1, 16], pl.FP32], index: pl.Tensor[[2, 3], pl.INT32],
                 rows: pl.Tensor[[2, 3, 1, 16], pl.FP32], out: pl.Out[pl.Tensor[[4, 8, 1, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.load(cache, [0, 0, 0, 0], [4, 8, 1, 16])
        u = pl.tile.scatter_update(c, pl.load(index, [0, 0], [2, 3]), pl.load(rows, [0, 0, 0, 0], [2, 3, 1, 16]),
                                   dim=-2)
        out = pl.store(u, [0, 0, 0, 0], out)
    return out


@pl.jit
def matches(src: pl.Tensor[[4, 64], pl.INT32], kv: pl.Tensor[[1], pl.INT32],
            cols: pl.Out[pl.Tensor[[4, 8], pl.INT32]], counts: pl.Out[pl.Tensor[[1, 4], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        k: pl.Scalar[pl.INT32] = pl.tensor.read(kv, [0])
        dst, cdst = pl.tensor.gather(src, kvalue=k, cmp_mode="ge", out_cols=8, offset=100)
        cols = pl.assemble(cols, dst, [0, 0])
        counts = pl.assemble(counts, cdst, [0, 0])
    return cols, counts


@pl.jit
def scatter_store(src: pl.Tensor[[4, 32], pl.FP16], idx: pl.Tensor[[4, 32], pl.INT32],
                  out: pl.Out[pl.Tensor[[256], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.mscatter(pl.load(src, [0, 0], [4, 32]), pl.load(idx, [0, 0], [4, 32]), out)
    return out


@pl.jit
def paged_rows(pool: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[8], pl.INT32], table: pl.Tensor[[4], pl.INT32],
               out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.paged_gather(pool, idx, table, block_size=16, size=16, max_indices=8, space=pl.Mem.Vec, col_off=8)
        out = pl.assemble(out, rows, [0, 0])
    return out


@pl.jit
def tensor_topk(src: pl.Tensor[[1, 512], pl.FP32], out: pl.Out[pl.Tensor[[1, 512], pl.FP32]],
                idx_out: pl.Out[pl.Tensor[[1, 512], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        sorted_t = pl.tensor.sort32(src, pl.tensor.arange(0, [1, 512], dtype=pl.UINT32))
        merged = pl.tensor.mrgsort(sorted_t, block_len=64)
        merged = pl.tensor.mrgsort(merged, block_len=256)
        out = pl.assemble(out, pl.tensor.gather(merged, mask_pattern=pl.tile.MaskPattern.P0101), [0, 0])
        idx_out = pl.assemble(idx_out, pl.tensor.gather(merged, mask_pattern=pl.tile.MaskPattern.P1010,
                                                        output_dtype=pl.UINT32), [0, 0])
    return out, idx_out


@pl.jit
def philox(out: pl.Out[pl.Tensor[[2, 512], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.random(0, 0, 0, 0, 0, 0, [2, 512], dtype=pl.INT32)
        out = pl.assemble(out, r, [0, 0])
    return out


@pl.jit
def philox7(out: pl.Out[pl.Tensor[[3, 320], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r = pl.tile.random(0x1234, 0x5678, -1, -1, 2, 3, [3, 320], dtype=pl.INT32, rounds=7)
        out = pl.assemble(out, r, [0, 0])
    return out
'''

kernels = kernels_fixture("index_ops.py", KERNELS)


def test_the_tile_gather_picks_by_flat_indices(kernels):
    x = torch.randn(8, 64)
    idx = torch.randint(0, 8 * 64, (8, 32), dtype=torch.int32)
    out = torch.zeros(8, 32)
    kernels.flat_gather(x, idx, out)
    torch.testing.assert_close(out, x.flatten()[idx.long()], rtol=0, atol=0)


def test_gather_along_the_middle_axis_of_a_3d_tensor(kernels):
    x = torch.randn(2, 8, 8)
    idx = torch.randint(0, 8, (2, 3, 8), dtype=torch.int32)
    out = torch.zeros(2, 3, 8)
    kernels.gather_rows_of_3d(x, idx, out)
    torch.testing.assert_close(out, torch.gather(x, 1, idx.long()), rtol=0, atol=0)


def test_a_gather_along_the_last_axis_is_lowered_for_the_device(kernels):
    """pl.gather(x, dim=-1, ...) gets its .pto (pto.tgather's index form, one row at a time; the
    conftest checks the module against the PTO dialect) and computes torch.gather."""
    x = torch.randn(16, 64)
    idx = torch.randint(0, 64, (16, 32), dtype=torch.int32)
    out = torch.zeros(16, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no .pto written for kernel ..." is a warning on a simulator
        compiled = kernels.gather_columns.compile(x, idx, out, config=RunConfig(platform="a2a3sim"))
    (pto,) = Path(compiled.output_dir).glob("kernels/aiv/*.pto")
    assert "pto.tgather ins(" in pto.read_text()
    compiled(x, idx, out)
    torch.testing.assert_close(out, torch.gather(x, 1, idx.long()), rtol=0, atol=0)


def test_gather_with_fewer_index_rows_and_int16_indices(kernels):
    x = torch.randn(4, 16, dtype=torch.float16)
    idx = torch.randint(0, 16, (2, 8), dtype=torch.int16)
    out = torch.zeros(2, 8, dtype=torch.float16)
    kernels.gather_fewer_rows(x, idx, out)
    torch.testing.assert_close(out, torch.gather(x, 1, idx.long()), rtol=0, atol=0)


def test_a_gather_index_out_of_range_names_its_position(kernels):
    x = torch.randn(2, 8, 8)
    idx = torch.zeros(2, 3, 8, dtype=torch.int32)
    idx[1, 2, 5] = 8
    with pytest.raises(RuntimeError,
                       match=r"the index 8 at \[1, 2, 5\] is outside \[0, 8\) along axis 1 of the source"):
        kernels.gather_rows_of_3d(x, idx, torch.zeros(2, 3, 8))


def test_scatter_along_columns_keeps_the_base_and_the_last_write_wins(kernels):
    base = -torch.arange(1, 8 * 16 + 1, dtype=torch.float32).reshape(8, 16)
    idx = ((torch.arange(8).reshape(8, 1) + torch.arange(8).reshape(1, 8) // 2) % 16).to(torch.int32)
    val = torch.arange(1, 65, dtype=torch.float32).reshape(8, 8)
    out = torch.zeros(8, 16)
    kernels.scatter_columns(base, idx, val, out)
    torch.testing.assert_close(out, base.clone().scatter_(1, idx.long(), val), rtol=0, atol=0)


def test_scatter_of_fp16_values_at_int16_indices(kernels):
    base = torch.randn(16, 32, dtype=torch.float16)
    idx = torch.stack([torch.randperm(32)[:16] for _ in range(16)]).to(torch.int16)
    val = torch.randn(16, 16, dtype=torch.float16)
    out = torch.zeros(16, 32, dtype=torch.float16)
    kernels.scatter_half_columns(base, idx, val, out)
    torch.testing.assert_close(out, base.clone().scatter_(1, idx.long(), val), rtol=0, atol=0)


def test_the_tile_scatter_writes_at_flat_indexes(kernels):
    dst = torch.arange(128, dtype=torch.int32).reshape(4, 32)
    val = -torch.arange(1, 17, dtype=torch.int32).reshape(2, 8)
    idx = torch.randperm(128)[:16].to(torch.int32).reshape(2, 8)
    out = torch.zeros(4, 32, dtype=torch.int32)
    kernels.flat_scatter(dst, val, idx, out)
    expected = dst.flatten().clone()
    expected[idx.flatten().long()] = val.flatten()
    assert torch.equal(out, expected.reshape(4, 32))


def test_mask_scatters_interleave_two_halves(kernels):
    even, odd = torch.randn(8, 16), torch.randn(8, 16)
    out = torch.zeros(8, 32)
    kernels.interleave(even, odd, torch.full((8, 32), -7.0), out)
    assert torch.equal(out[:, 0::2], even)
    assert torch.equal(out[:, 1::2], odd)


def test_scatter_update_writes_whole_rows(kernels):
    cache = torch.randn(32, 16)
    index = torch.tensor([[3, 30, 7, 0], [12, 3, 25, 19]], dtype=torch.int32)
    rows = torch.randn(8, 16)
    out = torch.zeros(32, 16)
    kernels.update_rows(cache, index, rows, out)
    expected = cache.clone()
    for i, row in enumerate(index.flatten().tolist()):
        expected[row] = rows[i]
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_scatter_update_counts_rows_across_the_pages_of_a_4d_cache(kernels):
    cache = torch.randn(4, 8, 1, 16)
    index = torch.tensor([[0, 9, 31], [17, 8, 2]], dtype=torch.int32)
    rows = torch.randn(2, 3, 1, 16)
    out = torch.zeros(4, 8, 1, 16)
    kernels.update_pages(cache, index, rows, out)
    expected = cache.clone().reshape(32, 16)
    expected[index.flatten().long()] = rows.reshape(6, 16)
    torch.testing.assert_close(out, expected.reshape(4, 8, 1, 16), rtol=0, atol=0)


def test_the_compare_gather_lists_matching_columns_and_counts_them(kernels):
    src = torch.randint(0, 10, (4, 64), dtype=torch.int32)
    src[2] = 0  # a row without matches
    cols = torch.full((4, 8), -1, dtype=torch.int32)
    counts = torch.zeros(1, 4, dtype=torch.int32)
    kernels.matches(src, torch.tensor([7], dtype=torch.int32), cols, counts)
    for r in range(4):
        hits = (src[r] >= 7).nonzero().flatten().to(torch.int32)
        expected = torch.zeros(8, dtype=torch.int32)
        expected[: min(8, len(hits))] = hits[:8] + 100
        assert torch.equal(cols[r], expected), r
        assert counts[0, r] == len(hits)


def test_random_is_philox4x32_10(kernels):
    out = torch.zeros(2, 512, dtype=torch.int32)
    kernels.philox(out)
    words = out.view(torch.uint32) if hasattr(torch, "uint32") else out
    bits = [int(v) & 0xFFFFFFFF for v in words[0, [0, 64, 128, 192]].tolist()]
    # Random123's known answer for Philox4x32-10 with a zero key and counter.
    assert bits == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    # Each row draws from its own counters: row 1 starts where row 0's 512 / 4 counters end.
    assert not torch.equal(out[0], out[1])
    again = torch.zeros(2, 512, dtype=torch.int32)
    kernels.philox(again)
    assert torch.equal(out, again)


def test_mscatter_stores_each_element_at_its_flat_index(kernels):
    src = torch.randn(4, 32, dtype=torch.float16)
    idx = torch.randperm(256)[:128].to(torch.int32).reshape(4, 32)
    out = torch.zeros(256, dtype=torch.float16)
    # The 128 elements no index names are never written: they keep the simulator's poison.
    with pytest.warns(UnwrittenOutputWarning, match=r"^output 'out' \[256\] float16: 128 of 256 elements were never "
                                                    r"written: elements "):
        kernels.scatter_store(src, idx, out)
    named = torch.zeros(256, dtype=torch.bool)
    named[idx.flatten().long()] = True
    assert torch.equal(out[idx.flatten().long()], src.flatten())
    assert is_poison(out[~named])
    idx[3, 31] = 256
    with pytest.raises(RuntimeError, match=r"the index 256 at position 127 of the indices is outside the 256 elements"):
        kernels.scatter_store(src, idx, out)


def test_paged_gather_reads_rows_through_the_block_table(kernels):
    pool = torch.randn(64, 32)
    idx = torch.tensor([0, 17, 5, 63, 31, 40, 16, 9], dtype=torch.int32)
    table = torch.tensor([2, 0, 3, 1], dtype=torch.int32)
    out = torch.zeros(8, 16)
    kernels.paged_rows(pool, idx, table, out)
    phys = [int(table[i // 16]) * 16 + i % 16 for i in idx.tolist()]
    torch.testing.assert_close(out, pool[phys, 8:24], rtol=0, atol=0)


def test_tensor_spellings_inside_pl_at_sort_a_row(kernels):
    src = torch.randn(1, 512)
    out = torch.zeros(1, 512)
    idx = torch.zeros(1, 512, dtype=torch.int32)
    kernels.tensor_topk(src, out, idx.view(torch.uint32) if hasattr(torch, "uint32") else idx)
    expected = torch.sort(src, dim=1, descending=True, stable=True)
    torch.testing.assert_close(out, expected.values, rtol=0, atol=0)
    assert torch.equal(idx.long(), expected.indices)


def philox4x32(counter, key, rounds):
    """Random123's Philox4x32 on one 128-bit counter (4 words) and 64-bit key (2 words)."""
    mask = 0xFFFFFFFF
    c, k = list(counter), list(key)
    for _ in range(rounds):
        p0, p1 = c[0] * 0xD2511F53, c[2] * 0xCD9E8D57
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & mask, p1 & mask, ((p0 >> 32) ^ c[3] ^ k[1]) & mask, p0 & mask]
        k = [(k[0] + 0x9E3779B9) & mask, (k[1] + 0xBB67AE85) & mask]
    return c


def trandom_layout(rows, cols, counter, key, rounds):
    """pto.trandom's tile: per row, 64 lanes of counters give 4 words each for columns 64 apart,
    the counter advancing by cols / 4 after each 256 columns."""
    words = [[0] * cols for _ in range(rows)]
    base = counter[0] | counter[1] << 32 | counter[2] << 64 | counter[3] << 96
    for r in range(rows):
        for block in range((cols + 255) // 256):
            for lane in range(64):
                value = (base + lane) % (1 << 128)
                out = philox4x32([(value >> (32 * i)) & 0xFFFFFFFF for i in range(4)], key, rounds)
                for repeat in range(4):
                    col = block * 256 + repeat * 64 + lane
                    if col < cols:
                        words[r][col] = out[repeat]
            base += cols // 4
    return torch.tensor(words, dtype=torch.int64).to(torch.int32)


def test_random_follows_the_trandom_layout_with_seven_rounds(kernels):
    out = torch.zeros(3, 320, dtype=torch.int32)
    kernels.philox7(out)
    # The counter words -1, -1 are 0xFFFFFFFF: the lanes carry into the third word.
    assert torch.equal(out, trandom_layout(3, 320, [0xFFFFFFFF, 0xFFFFFFFF, 2, 3], [0x1234, 0x5678], 7))


def test_the_printed_program_spells_the_index_ops_and_parses_back(kernels, write_dsl):
    lowered = kernels.scatter_columns.lower(torch.zeros(8, 16), torch.zeros(8, 8, dtype=torch.int32),
                                            torch.zeros(8, 8), torch.zeros(8, 16))
    text = str(lowered)
    assert "pl.tile.scatter_dim(" in text and "dim=-1)" in text
    reparsed = getattr(write_dsl("printed_scatter", text)[0], lowered.name)
    assert str(reparsed) == text


def test_mixing_the_scatter_forms_is_an_error_at_the_call(write_dsl):
    from pypto.language.parser.diagnostics import InvalidOperationError

    source = (
        "@pl.jit\n"
        "def mixed(x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32],\n"
        "          out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n"
        "        out = pl.assemble(out, pl.scatter(x, dim=-1, index=i, src=x, mask_pattern=1), [0, 0])\n"
        "    return out\n")
    module, path = write_dsl("mixed_scatter", source)
    with pytest.raises(InvalidOperationError) as error:
        module.mixed(torch.zeros(8, 16), torch.zeros(8, 8, dtype=torch.int32), torch.zeros(8, 16))
    assert error.value.message == ("'pl.scatter' takes either dim, index and src (the index form) or mask_pattern and "
                                   "dst (the mask form), not both")
    assert error.value.location == f"{path}:7:32"
