"""pypto-lib's Qwen3-14B RoPE + QK-norm prologue, ``rope_qkv_generated.hpp`` (a ptoas-generated body in
pto-isa's tile interface that the paged-attention CCE kernel embeds as its phase 0), compiled unmodified
against the simulator's pto headers, driven on its own on 32 blocks and compared with torch."""

import importlib.util
import os
import textwrap
from pathlib import Path

import pytest
import torch

_PYPTO_LIB = Path(os.environ.get("PYPTO_LIB_DIR", "/work/ext/pypto-lib"))
_KERNEL_DIR = _PYPTO_LIB / "models/qwen3_14b/kernels/paged_attention_cce"

BATCH, MAX_SEQ, CACHE_ROWS, BASE = 2, 8, 64, 16
HEADS, KV_HEADS, HEAD_DIM, Q_PER_KV = 40, 8, 128, 5
HIDDEN, KV_HIDDEN = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
EPS = 1e-6

# The generated function's parameter order is the one its banner lists; the batch comes from the
# seq_lens descriptor, the lane from the block, as fai_body.hpp passes them.
_ENTRY = """
#include <cstdint>
#include "kernel/rope_qkv_generated.hpp"

template <typename T>
__gm__ T* Data(__gm__ int64_t* args, int slot) {
  __gm__ ChipTensor* tensor = reinterpret_cast<__gm__ ChipTensor*>(args[slot]);
  return reinterpret_cast<__gm__ T*>(tensor->buffer.addr) + tensor->start_offset;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  const int64_t batch = reinterpret_cast<__gm__ ChipTensor*>(args[3])->shapes[0];
  qwen_rope_gen::rope_qkv(Data<bfloat16_t>(args, 0), Data<bfloat16_t>(args, 1), Data<bfloat16_t>(args, 2),
                          Data<int32_t>(args, 3), Data<float>(args, 4), Data<int32_t>(args, 5), Data<float>(args, 6),
                          Data<float>(args, 7), Data<float>(args, 8), Data<float>(args, 9), Data<float>(args, 10),
                          Data<float>(args, 11), Data<float>(args, 12), /*dead*/ 0, args[13], batch,
                          get_block_idx(args), get_block_num(args));
}
"""


def _tensor(shape, dtype):
    return f"pl.Tensor[[{', '.join(map(str, shape))}], pl.{dtype}]"


_PARAMS = [
    ("k_cache", [CACHE_ROWS, HEAD_DIM], "BF16", True),
    ("q_tnd", [BATCH * HEADS, HEAD_DIM], "BF16", True),
    ("v_cache", [CACHE_ROWS, HEAD_DIM], "BF16", True),
    ("seq_lens", [BATCH], "INT32", False),
    ("inv_rms", [BATCH, 1], "FP32", False),
    ("slots", [BATCH], "INT32", False),
    ("cos", [MAX_SEQ, HEAD_DIM], "FP32", False),
    ("sin", [MAX_SEQ, HEAD_DIM], "FP32", False),
    ("k_proj", [BATCH, KV_HIDDEN], "FP32", False),
    ("k_norm_w", [1, HEAD_DIM], "FP32", False),
    ("v_proj", [BATCH, KV_HIDDEN], "FP32", False),
    ("q_proj", [BATCH, HIDDEN], "FP32", False),
    ("q_norm_w", [1, HEAD_DIM], "FP32", False),
]


def _stub():
    params = ", ".join(
        f"{name}: {'pl.InOut[' + _tensor(shape, dt) + ']' if out else _tensor(shape, dt)}"
        for name, shape, dt, out in _PARAMS)
    names = ", ".join(name for name, *_ in _PARAMS)
    return textwrap.dedent(f"""
        import pypto.language as pl

        @pl.jit.extern(core_type="aiv", source="entry.cpp", include_dirs=[{str(_KERNEL_DIR)!r}])
        def rope_qkv({params}, layer_cache_base: pl.Scalar[pl.INDEX]) -> {_tensor([CACHE_ROWS, HEAD_DIM], "BF16")}: ...

        @pl.jit
        def entry({params}):
            with pl.spmd(32):
                k_cache = rope_qkv({names}, {BASE})
            return k_cache
    """)


def _golden(values):
    """The regeneration source's arithmetic (models/qwen3_14b/rope_qkv_regen.py), in torch."""
    k_cache, q_tnd, v_cache = values["k_cache"].clone(), values["q_tnd"].clone(), values["v_cache"].clone()
    cos, sin = values["cos"], values["sin"]

    def norm_rope(raw, weight, pos):
        inv = 1.0 / torch.sqrt((raw * raw).sum(dim=-1, keepdim=True) / HEAD_DIM + EPS)
        x = raw * weight * inv
        lo, hi = x[..., :64], x[..., 64:]
        return torch.cat([lo * cos[pos, :64] - hi * sin[pos, :64], hi * cos[pos, 64:] + lo * sin[pos, 64:]], dim=-1)

    for b in range(BATCH):
        pos = int(values["seq_lens"][b]) - 1
        scale = values["inv_rms"][b, 0]
        for ki in range(KV_HEADS):
            row = BASE + int(values["slots"][b]) * KV_HEADS + ki
            k_raw = values["k_proj"][b, ki * HEAD_DIM:(ki + 1) * HEAD_DIM] * scale
            k_cache[row] = norm_rope(k_raw, values["k_norm_w"][0], pos).bfloat16()
            v_cache[row] = (values["v_proj"][b, ki * HEAD_DIM:(ki + 1) * HEAD_DIM] * scale).bfloat16()
            q0 = ki * Q_PER_KV
            q_raw = values["q_proj"][b, q0 * HEAD_DIM:(q0 + Q_PER_KV) * HEAD_DIM].view(Q_PER_KV, HEAD_DIM) * scale
            q_tnd[b * HEADS + q0:b * HEADS + q0 + Q_PER_KV] = norm_rope(q_raw, values["q_norm_w"][0], pos).bfloat16()
    return k_cache, q_tnd, v_cache


@pytest.mark.skipif(not (_KERNEL_DIR / "kernel/rope_qkv_generated.hpp").is_file(),
                    reason=f"pypto-lib's paged_attention_cce kernel is not at {_KERNEL_DIR} (set PYPTO_LIB_DIR)")
def test_the_generated_rope_qkv_body_runs_on_the_simulator_and_matches_torch(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    (tmp_path / "entry.cpp").write_text(textwrap.dedent(_ENTRY))
    (tmp_path / "stub.py").write_text(_stub())
    spec = importlib.util.spec_from_file_location(f"rope_stub_{abs(hash(str(tmp_path)))}", tmp_path / "stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    torch.manual_seed(3)
    values = {
        "k_cache": torch.full([CACHE_ROWS, HEAD_DIM], -7.0).bfloat16(),
        "q_tnd": torch.full([BATCH * HEADS, HEAD_DIM], -7.0).bfloat16(),
        "v_cache": torch.full([CACHE_ROWS, HEAD_DIM], -7.0).bfloat16(),
        "seq_lens": torch.tensor([5, 8], dtype=torch.int32),
        "inv_rms": torch.rand(BATCH, 1) + 0.5,
        "slots": torch.tensor([3, 1], dtype=torch.int32),
        "cos": torch.randn(MAX_SEQ, HEAD_DIM),
        "sin": torch.randn(MAX_SEQ, HEAD_DIM),
        "k_proj": torch.randn(BATCH, KV_HIDDEN),
        "k_norm_w": torch.rand(1, HEAD_DIM) + 0.5,
        "v_proj": torch.randn(BATCH, KV_HIDDEN),
        "q_proj": torch.randn(BATCH, HIDDEN),
        "q_norm_w": torch.rand(1, HEAD_DIM) + 0.5,
    }
    k_cache, q_tnd, v_cache = _golden(values)
    module.entry(*values.values())

    # The kernel rounds to bfloat16 with CAST_ROUND (ties away from zero), torch to nearest even: they
    # may differ by one bfloat16 step where the float sums differ in their last bits.
    for name, golden in (("k_cache", k_cache), ("q_tnd", q_tnd), ("v_cache", v_cache)):
        got = values[name]
        torch.testing.assert_close(got.float(), golden.float(), rtol=8e-3, atol=1e-2, msg=name)
        assert (got == golden).float().mean() > 0.99, name
    untouched = torch.ones(CACHE_ROWS, dtype=torch.bool)
    for b, slot in enumerate(values["slots"].tolist()):
        untouched[BASE + slot * KV_HEADS:BASE + (slot + 1) * KV_HEADS] = False
    assert torch.all(values["k_cache"][untouched].float() == -7.0)
