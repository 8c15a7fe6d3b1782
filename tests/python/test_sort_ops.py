"""The top-k ops on the simulator: pl.arange, pl.sort32, pl.mrgsort (the runs of one tile, and 2 to 4
separate sorted tiles), tile slices and the mask and index forms of pl.gather, checked against torch
(topk, sort within 32-element blocks, a stable descending sort, strided lane selection)."""

import pytest
import torch

from pypto.language.parser import ParserTypeError
from conftest import kernels_fixture

KERNELS = '''
import pypto.language as pl

ROWS, N, K, ROW_TILE = 64, 512, 16, 8


@pl.jit
def topk(scores: pl.Tensor[[ROWS, N], pl.FP32],
         topk_vals: pl.Out[pl.Tensor[[ROWS, K], pl.FP32]],
         topk_idx: pl.Out[pl.Tensor[[ROWS, K], pl.INT32]]):
    for r0 in pl.parallel(0, ROWS, ROW_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="topk_block"):
            idx_init = pl.arange(0, [1, N], dtype=pl.UINT32)
            for ri in pl.range(ROW_TILE):
                r = r0 + ri
                score_row = scores[r : r + 1, :]
                s = pl.sort32(score_row, idx_init)                  # [1, 2N], 32-runs sorted
                s = pl.mrgsort(s, block_len=64)                     # 4-way merge -> 256-pos runs
                s = pl.mrgsort(s, block_len=256)                    # 4-way merge -> whole row, descending
                pairs = s[:, 0 : 2 * K]                             # K largest (value, index) pairs
                topk_vals[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P0101)
                topk_idx[r : r + 1, :] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
    return topk_vals, topk_idx


@pl.jit
def sort_blocks(x: pl.Tensor[[1, 128], pl.FP32], out: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        idx = pl.tile.arange(0, [1, 128], dtype=pl.UINT32)
        out[:, :] = pl.tile.sort32(x[:, :], idx)
    return out


@pl.jit
def lanes(x: pl.Tensor[[2, 32], pl.FP32],
          even: pl.Out[pl.Tensor[[2, 16], pl.FP32]],
          odd: pl.Out[pl.Tensor[[2, 16], pl.FP32]],
          first: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
          last: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
          bits: pl.Out[pl.Tensor[[2, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [2, 32])
        even[:, :] = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P0101)
        odd[:, :] = pl.tile.gather_mask(t, mask_pattern=pl.tile.MaskPattern.P1010)
        first[:, :] = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P0001)
        last[:, :] = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P1000)
        bits[:, :] = pl.gather(t, mask_pattern=pl.tile.MaskPattern.P1111, output_dtype=pl.INT32)
    return even, odd, first, last, bits


@pl.jit
def window(x: pl.Tensor[[4, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [4, 64])
        y[:, :] = t[1:3, 32:48]
    return y


@pl.jit
def countdown(y: pl.Out[pl.Tensor[[1, 32], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.arange(100, [1, 32], descending=True)
    return y


@pl.jit
def bad_block_len(x: pl.Tensor[[1, 128], pl.FP32], out: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 128], dtype=pl.UINT32))
        out[:, :] = pl.mrgsort(s, block_len=96)
    return out


@pl.jit
def merge_lists(x: pl.Tensor[[3, 128], pl.FP32], y: pl.Tensor[[1, 32], pl.FP32],
                two: pl.Out[pl.Tensor[[1, 512], pl.FP32]],
                three: pl.Out[pl.Tensor[[1, 768], pl.FP32]],
                four: pl.Out[pl.Tensor[[1, 832], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s0 = pl.mrgsort(pl.sort32(x[0:1, :], pl.arange(0, [1, 128], dtype=pl.UINT32)), block_len=64)
        s1 = pl.mrgsort(pl.sort32(x[1:2, :], pl.arange(128, [1, 128], dtype=pl.UINT32)), block_len=64)
        s2 = pl.mrgsort(pl.sort32(x[2:3, :], pl.arange(256, [1, 128], dtype=pl.UINT32)), block_len=64)
        short = pl.sort32(y[:, :], pl.arange(384, [1, 32], dtype=pl.UINT32))   # one 32-element run
        two[:, :] = pl.mrgsort(s0, s1)
        tmp = pl.tile.create([1, 768], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        three[:, :] = pl.tile.mrgsort(s0, s1, s2, tmp=tmp)
        tmp4 = pl.tile.create([1, 832], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        four[:, :] = pl.tile.mrgsort(s0, s1, s2, short, tmp4)   # upstream's 4-way spelling: tmp fifth
    return two, three, four


@pl.jit
def merge_small_scratch(x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 64], dtype=pl.UINT32))
        out[:, :] = pl.tile.mrgsort(s[:, 0:64], s[:, 64:128], tmp=pl.tile.create([1, 64], dtype=pl.FP32))
    return out


@pl.jit
def merge_until_exhausted(x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 64], dtype=pl.UINT32))
        out[:, :] = pl.mrgsort(s[:, 0:64], s[:, 64:128], exhausted=True)
    return out


@pl.jit
def merge_one(x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 64], dtype=pl.UINT32))
        out[:, :] = pl.mrgsort(s)
    return out


@pl.jit
def sort_by_growing_runs(x: pl.Tensor[[1, 512], pl.FP32], out: pl.Out[pl.Tensor[[1, 1024], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 512], dtype=pl.UINT32))
        for i in pl.range(2):
            s = pl.mrgsort(s, block_len=1 << (6 + 2 * i))   # 64, then 256 lanes
        out[:, :] = s
    return out


@pl.jit
def runs_too_short(x: pl.Tensor[[1, 512], pl.FP32], out: pl.Out[pl.Tensor[[1, 1024], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.sort32(x[:, :], pl.arange(0, [1, 512], dtype=pl.UINT32))
        for i in pl.range(2):
            s = pl.mrgsort(s, block_len=1 << (5 + i))   # 32 lanes: not a multiple of 64
        out[:, :] = s
    return out


@pl.jit
def signed_indices(x: pl.Tensor[[1, 128], pl.FP32], out: pl.Out[pl.Tensor[[1, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.sort32(x[:, :], pl.arange(0, [1, 128]))
    return out
'''


kernels = kernels_fixture("sort_kernels.py", KERNELS)


def check_topk(scores, vals, idx, k):
    """Values as torch.topk's; indices equal except where tied values may swap places."""
    expected = torch.topk(scores, k, dim=-1, largest=True, sorted=True)
    torch.testing.assert_close(vals, expected.values, rtol=1e-5, atol=1e-5)
    assert ((idx >= 0) & (idx < scores.shape[1])).all()
    torch.testing.assert_close(torch.gather(scores, 1, idx.long()), expected.values, rtol=0, atol=0)
    assert all(len(set(row.tolist())) == k for row in idx), "an index appears twice in a row"
    # A value that occurs once in its row has one possible index.
    occurrences = (scores.unsqueeze(1) == expected.values.unsqueeze(2)).sum(-1)
    unique = occurrences == 1
    assert torch.equal(idx[unique], expected.indices.int()[unique])


def test_topk_matches_torch(kernels):
    torch.manual_seed(0)
    scores = torch.randn(64, 512)
    vals, idx = torch.empty(64, 16), torch.empty(64, 16, dtype=torch.int32)
    kernels.topk(scores, vals, idx)
    check_topk(scores, vals, idx, 16)


def test_topk_with_many_ties(kernels):
    torch.manual_seed(1)
    scores = torch.randint(0, 12, (64, 512)).float()
    vals, idx = torch.empty(64, 16), torch.empty(64, 16, dtype=torch.int32)
    kernels.topk(scores, vals, idx)
    check_topk(scores, vals, idx, 16)
    # Equal values come out in index order (the sort and the merges keep ties in place).
    for row_vals, row_idx in zip(vals, idx):
        for j in range(15):
            if row_vals[j] == row_vals[j + 1]:
                assert row_idx[j] < row_idx[j + 1]


def test_sort32_sorts_each_block_of_32(kernels):
    torch.manual_seed(2)
    x = torch.randn(1, 128)
    out = torch.empty(1, 256)
    kernels.sort_blocks(x, out)
    values = out[:, 0::2]
    indices = out[:, 1::2].contiguous().view(torch.int32)
    for block in range(4):
        lo, hi = 32 * block, 32 * (block + 1)
        expected = torch.sort(x[0, lo:hi], descending=True)
        torch.testing.assert_close(values[0, lo:hi], expected.values, rtol=0, atol=0)
        assert torch.equal(indices[0, lo:hi].long(), expected.indices + lo)


def test_gather_mask_patterns(kernels):
    x = torch.randn(2, 32)
    even, odd = torch.empty(2, 16), torch.empty(2, 16)
    first, last = torch.empty(2, 8), torch.empty(2, 8)
    bits = torch.empty(2, 32, dtype=torch.int32)
    kernels.lanes(x, even, odd, first, last, bits)
    assert torch.equal(even, x[:, 0::2])
    assert torch.equal(odd, x[:, 1::2])
    assert torch.equal(first, x[:, 0::4])
    assert torch.equal(last, x[:, 3::4])
    assert torch.equal(bits, x.view(torch.int32))


def test_tile_slice_copies_a_window(kernels):
    x = torch.randn(4, 64)
    y = torch.empty(2, 16)
    kernels.window(x, y)
    assert torch.equal(y, x[1:3, 32:48])


def test_arange_descending(kernels):
    y = torch.empty(1, 32, dtype=torch.int32)
    kernels.countdown(y)
    assert torch.equal(y[0], torch.arange(100, 68, -1, dtype=torch.int32))


def test_bad_block_len_is_reported_at_the_call(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.bad_block_len(torch.randn(1, 128), torch.empty(1, 256))
    message = str(info.value)
    assert "block_len of pl.mrgsort must be a positive multiple of 64, got 96" in message
    assert "sort_kernels.py:" in message


def test_sort32_needs_unsigned_indices(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.signed_indices(torch.randn(1, 128), torch.empty(1, 256))
    assert "pl.sort32 carries UINT32 indices, got INT32" in str(info.value)


def split_pairs(lanes):
    """The values (even lanes) and the UINT32 indices (odd lanes, read as int32) of sorted pairs."""
    return lanes[0, 0::2], lanes[0, 1::2].contiguous().view(torch.int32).long()


def test_merge_of_separate_sorted_tiles_matches_a_stable_sort(kernels):
    torch.manual_seed(3)
    # Few distinct values, so that many ties cross the lists: the earlier list's come first.
    x = torch.randint(-6, 6, (3, 128)).float()
    y = torch.randint(-6, 6, (1, 32)).float()
    two, three, four = torch.empty(1, 512), torch.empty(1, 768), torch.empty(1, 832)
    kernels.merge_lists(x, y, two, three, four)
    everything = torch.cat([x.flatten(), y.flatten()])  # list k's indices start at 128 * k
    for out, length in ((two, 256), (three, 384), (four, 416)):
        values, indices = split_pairs(out)
        expected = torch.sort(everything[:length], descending=True, stable=True)
        assert torch.equal(values, expected.values)
        assert torch.equal(indices, expected.indices)


def test_merge_scratch_tile_must_hold_the_lists(kernels):
    with pytest.raises(ParserTypeError) as info:
        kernels.merge_small_scratch(torch.randn(1, 64), torch.empty(1, 128))
    message = str(info.value)
    assert ("the scratch tile of pl.mrgsort must be a [1, 128] FP32 tile (the lists together), got "
            "pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec]") in message
    assert "sort_kernels.py:" in message


def test_merge_needs_two_lists_or_a_block_len(kernels):
    from pypto.language.parser.diagnostics import InvalidOperationError

    with pytest.raises(InvalidOperationError) as error:
        kernels.merge_one(torch.randn(1, 64), torch.empty(1, 128))
    assert error.value.message == "pl.mrgsort merges 2 to 4 sorted tiles, got 1"
    assert error.value.location == f"{kernels.path}:112:21"


def test_merge_until_a_list_is_exhausted_is_refused_by_the_simulator(kernels):
    with pytest.raises(RuntimeError, match=r"pl.mrgsort with exhausted=True .* is not supported by the simulator"):
        kernels.merge_until_exhausted(torch.randn(1, 64), torch.empty(1, 128))


GATHERS = '''
import pypto.language as pl


@pl.jit
def interleave(cos: pl.Tensor[[8, 16], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]):
    # out[r, j] = cos[r, j // 2], the indices built in the kernel as upstream's rope kernels do.
    with pl.at(level=pl.Level.CORE_GROUP):
        col = pl.col_expand_mul(pl.full([8, 32], dtype=pl.FP32, value=1.0),
                                pl.cast(pl.arange(0, [1, 32], dtype=pl.INT32), target_type=pl.FP32))
        dup = pl.cast(pl.mul(col, 0.5), target_type=pl.INT32, mode="trunc")
        out[:, :] = pl.gather(cos[:, :], dim=-1, index=dup)
    return out


@pl.jit
def by_table(x: pl.Tensor[[4, 64], pl.FP16], idx: pl.Tensor[[4, 8], pl.INT32], out: pl.Out[pl.Tensor[[4, 8], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.tile.gather(x[:, :], idx[:, :])
    return out


@pl.jit
def along_rows(x: pl.Tensor[[4, 64], pl.FP32], idx: pl.Tensor[[4, 8], pl.INT32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:, :] = pl.gather(x[:, :], dim=0, index=idx[:, :])
    return out
'''


def test_gather_along_the_last_axis_interleaves_a_row(write_kernel):
    module, _ = write_kernel("gathers", GATHERS)
    cos, out = torch.randn(8, 16), torch.zeros(8, 32)
    module.interleave(cos, out)
    torch.testing.assert_close(out, torch.repeat_interleave(cos, 2, dim=1))


def test_the_tile_gather_picks_by_flat_indices_and_checks_each_index(write_kernel):
    module, path = write_kernel("gathers", GATHERS)
    x = torch.randn(4, 64, dtype=torch.float16)
    idx = torch.randint(0, 4 * 64, (4, 8), dtype=torch.int32)
    out = torch.zeros(4, 8, dtype=torch.float16)
    module.by_table(x, idx, out)
    torch.testing.assert_close(out, x.flatten()[idx.long()])
    idx[2, 5] = 256
    with pytest.raises(RuntimeError,
                       match=r"the index 256 at position 21 of the indices is outside the 256 elements of the source"):
        module.by_table(x, idx, out)


def test_gather_along_the_first_axis_is_torch_gather(write_kernel):
    module, path = write_kernel("gathers", GATHERS)
    x = torch.randn(4, 64)
    idx = torch.randint(0, 4, (4, 8), dtype=torch.int32)
    out = torch.zeros(4, 8)
    module.along_rows(x, idx, out)
    torch.testing.assert_close(out, torch.gather(x, 0, idx.long()), rtol=0, atol=0)


def test_a_block_len_computed_in_a_loop_merges_runs_of_that_length(kernels):
    torch.manual_seed(4)
    x = torch.randint(-20, 20, (1, 512)).float()
    out = torch.empty(1, 1024)
    kernels.sort_by_growing_runs(x, out)
    values, indices = split_pairs(out)
    expected = torch.sort(x.flatten(), descending=True, stable=True)
    assert torch.equal(values, expected.values)
    assert torch.equal(indices, expected.indices)


def test_a_block_len_computed_in_a_loop_lowers_to_pto(kernels):
    from pathlib import Path

    compiled = kernels.sort_by_growing_runs.compile(torch.randn(1, 512), torch.empty(1, 1024))
    pto = (Path(compiled.output_dir) / "kernels" / "aiv" / "sort_by_growing_runs_incore_0.pto").read_text()
    # The shifted count is cast to tmrgsort's i32; the merge writes a buffer of its own, which is
    # moved into the carried tile's.
    assert "= arith.shli %c1_index, " in pto
    assert " : index to i32" in pto
    assert "pto.tmrgsort ins(%s, " in pto
    assert "pto.tmov ins(" in pto


def test_a_block_len_computed_in_a_loop_is_checked_when_it_runs(kernels):
    with pytest.raises(RuntimeError, match=r"mrgsort block_len 32 must be a positive multiple of 64 whose 4 runs tile "
                       r"the row of 1024 lanes"):
        kernels.runs_too_short(torch.randn(1, 512), torch.empty(1, 1024))
