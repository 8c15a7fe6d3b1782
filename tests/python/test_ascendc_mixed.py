"""AscendC mixed kernels on the simulator: the cube and the two vector lanes of a block hand work to
each other through CrossCoreSetFlag/CrossCoreWaitFlag (ascendc/cross_core.h, the runtime's
cross-core events), branching on ASCEND_IS_AIC / ASCEND_IS_AIV."""

import math

import pypto.language as pl
import torch

S, D, L = 16, 32, 32


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/mixed_attention.cpp",
               aiv_source="kernels/ascendc/mixed_attention.cpp", dual_aiv_dispatch=True)
def attention(q: pl.Tensor[[S, D], pl.FP16], k: pl.Tensor[[L, D], pl.FP16], v: pl.Tensor[[L, D], pl.FP16],
              o: pl.InOut[pl.Tensor[[S, D], pl.FP32]], s_ws: pl.InOut[pl.Tensor[[S, L], pl.FP32]],
              p_ws: pl.InOut[pl.Tensor[[S, L], pl.FP16]]) -> pl.Tensor[[S, D], pl.FP32]: ...


@pl.jit
def run_attention(q: pl.Tensor[[S, D], pl.FP16], k: pl.Tensor[[L, D], pl.FP16], v: pl.Tensor[[L, D], pl.FP16],
                  o: pl.InOut[pl.Tensor[[S, D], pl.FP32]], s_ws: pl.InOut[pl.Tensor[[S, L], pl.FP32]],
                  p_ws: pl.InOut[pl.Tensor[[S, L], pl.FP16]]):
    with pl.spmd(1):
        o = attention(q, k, v, o, s_ws, p_ws)
    return o


def test_qk_on_the_cube_softmax_on_the_vector_lanes_and_pv_on_the_cube_match_torch():
    torch.manual_seed(5)
    q, k, v = (torch.randn(n, D).half() for n in (S, L, L))
    o = torch.zeros(S, D)
    s_ws, p_ws = torch.zeros(S, L), torch.zeros(S, L).half()
    run_attention(q, k, v, o, s_ws, p_ws)
    scores = q.float() @ k.float().T
    torch.testing.assert_close(s_ws, scores, rtol=1e-5, atol=1e-4)
    p = torch.softmax(scores / math.sqrt(D), dim=-1).half()
    torch.testing.assert_close(p_ws, p, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(o, p_ws.float() @ v.float(), rtol=1e-5, atol=1e-4)
