"""A window of an orchestration slice read inside a kernel (`pl.slice(x_src, ...)` or
`x_src[a:b, ...]`, with `x_src = pl.slice(x, ...)` taken outside the pl.at scope) is a view of x, as
upstream has it: the kernel loads that window of x at the slice's offsets plus the window's, not the
whole slice (which may not fit in UB) and a copy out of it. Checked against torch and in the lowered
kernel."""

import torch

import pypto.language as pl


@pl.jit
def copy_lanes(x: pl.Tensor[[256, 4, 256], pl.FP32], out: pl.Out[pl.Tensor[[128, 4, 256], pl.FP32]]):
    for wave in pl.range(2):
        # 512 KiB: far more than UB holds, so the kernel can only read windows of it.
        x_src = pl.slice(x, [128, 4, 256], [wave * 128, 0, 0])
        with pl.spmd(16, name_hint="copy_lanes"):
            block = pl.tile.get_block_idx()
            t0 = (block // 4) * 32
            lane = block % 4
            if wave == 0:
                out[t0 : t0 + 32, lane : lane + 1, :] = pl.slice(x_src, [32, 1, 256], [t0, lane, 0])
            else:
                out[t0 : t0 + 32, lane : lane + 1, :] = pl.add(out[t0 : t0 + 32, lane : lane + 1, :],
                                                               x_src[t0 : t0 + 32, lane : lane + 1, :])
    return out


def test_a_window_of_an_orchestration_slice_is_loaded_from_its_tensor():
    x, out = torch.randn(256, 4, 256), torch.zeros(128, 4, 256)
    lowered = str(copy_lanes.lower(x, out))
    assert "pl.tile.load(x, [(wave * 128) + t0, lane, 0], [32, 1, 256])" in lowered, lowered
    assert "[128, 4, 256], pl.FP32, pl.MemRef" not in lowered, lowered  # no tile of the whole slice
    copy_lanes(x, out)
    torch.testing.assert_close(out, x[0:128] + x[128:256])
