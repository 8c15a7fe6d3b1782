"""Kernel-driven paged gathers into L1: `pl.create_l1` makes an on-chip Mat tile, `pl.gather_row` loads
one row of a global pool into it at a slot the kernel computes (a block-table lookup), and the tile
feeds pl.matmul directly (deepseek's decode_sparse_attn). Checked against torch on the simulator."""

import pytest
import torch

import pypto.language as pl


@pl.jit
def paged_product(probs: pl.Tensor[[16, 32], pl.BF16], pool: pl.Tensor[[64, 64], pl.BF16],
                  slots: pl.Tensor[[32], pl.INT32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        kv = pl.create_l1([32, 64], pl.BF16)
        for r in pl.range(32):
            slot = pl.read(slots, [r])
            if slot >= 0:
                kv = pl.gather_row(kv, pool, [r, 0], [pl.cast(slot, pl.INDEX), 0], [1, 64])
            else:  # an invalid slot reads row 0, as the model clamps it
                kv = pl.gather_row(kv, pool, [r, 0], [0, 0], [1, 64])
        out[:, :] = pl.matmul(probs[:, :], kv, out_dtype=pl.FP32)
    return out


def test_rows_gathered_into_l1_feed_the_matmul():
    torch.manual_seed(3)
    probs, pool = torch.randn(16, 32).bfloat16(), torch.randn(64, 64).bfloat16()
    slots = torch.randperm(64)[:32].int()
    slots[5] = -1
    out = torch.full((16, 64), float("nan"))
    paged_product(probs, pool, slots, out)
    rows = pool[slots.clamp(min=0).long()]
    torch.testing.assert_close(out, probs.float() @ rows.float(), rtol=1e-3, atol=1e-3)


def test_the_gathered_tile_is_a_mat_tile_written_in_place():
    probs, pool, slots = torch.zeros(16, 32).bfloat16(), torch.zeros(64, 64).bfloat16(), torch.zeros(32).int()
    text = str(paged_product.lower(probs, pool, slots, torch.zeros(16, 64)))
    assert "pl.tile.create([32, 64], dtype=pl.BF16, target_memory=pl.Mem.Mat)" in text, text
    assert "target_memory=pl.Mem.Mat)" in text and "pl.tile.assemble(" in text, text


@pytest.mark.parametrize("source, message, column", [
    ("kv = pl.create_l1([32, 64], pl.BF16)\n    with pl.at(level=pl.Level.CORE_GROUP):\n        pass",
     "pl.create_l1 makes an on-chip tile; call it inside a pl.at scope", 10),
    ("with pl.at(level=pl.Level.CORE_GROUP):\n        kv = pl.create_l1([32, 64], pl.BF16, transpose=True)",
     "pl.create_l1(..., transpose=True) is not supported yet", 56),
])
def test_create_l1_errors(write_kernel, source, message, column):
    module, path = write_kernel("create_l1_errors", f"""
import pypto.language as pl

@pl.jit
def k(x: pl.Tensor[[32, 64], pl.BF16], y: pl.Out[pl.Tensor[[32, 64], pl.BF16]]):
    {source}
    return y
""")
    with pytest.raises(Exception) as error:
        module.k(torch.zeros(32, 64).bfloat16(), torch.zeros(32, 64).bfloat16())
    assert message in str(error.value), str(error.value)
    line = 6 if column == 10 else 7
    assert f"{path}:{line}:{column}" in str(error.value), str(error.value)


@pl.jit
def split_gather(pool: pl.Tensor[[96, 64], pl.FP16], n: pl.Tensor[[1], pl.INT32],
                 eye: pl.Tensor[[32, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        r1 = pl.cast(pl.read(n, [0]), pl.INDEX)
        kv = pl.create_l1([32, 64], pl.FP16)
        # Pool rows [0, r1) into slots [0, r1), then rows [40, 40 + 32 - r1) into slots [r1, 32): the
        # second run declares a [32, 64] window at row r1, past the buffer, but transfers 32 - r1 rows.
        kv = pl.gather_row(kv, pool, [0, 0], [0, 0], [32, 64], valid_shape=[r1, 64])
        kv = pl.gather_row(kv, pool, [r1, 0], [40, 0], [32, 64], valid_shape=[32 - r1, 64])
        out[:, :] = pl.matmul(eye[:, :], kv, out_dtype=pl.FP32)
    return out


@pytest.mark.parametrize("split", [1, 13, 31])
def test_a_window_past_the_buffer_writes_only_its_valid_rows(split):
    pool = torch.randn(96, 64).half()
    out = torch.full((32, 64), float("nan"))
    split_gather(pool, torch.tensor([split], dtype=torch.int32), torch.eye(32).half(), out)
    expected = torch.cat([pool[:split], pool[40 : 40 + 32 - split]]).float()
    torch.testing.assert_close(out, expected)
