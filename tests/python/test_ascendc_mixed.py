"""AscendC mixed kernels on the simulator: the cube and the two vector lanes of a block hand work to
each other through CrossCoreSetFlag/CrossCoreWaitFlag (ascendc/cross_core.h, the runtime's
cross-core events), branching on ASCEND_IS_AIC / ASCEND_IS_AIV; a wait no member answers fails the run instead of hanging.
SyncAll<false> is the barrier of every cube and vector core of the launch (the runtime's syncall among all members)."""

import math
import pathlib

import pypto.language as pl
import pytest
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


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/cross_core_unanswered.cpp",
               aiv_source="kernels/ascendc/cross_core_unanswered.cpp", dual_aiv_dispatch=True)
def unanswered(out: pl.InOut[pl.Tensor[[2], pl.FP32]]) -> pl.Tensor[[2], pl.FP32]: ...


@pl.jit
def run_unanswered(out: pl.InOut[pl.Tensor[[2], pl.FP32]]):
    with pl.spmd(1):
        out = unanswered(out)
    return out


def test_a_cross_core_wait_no_member_answers_fails_the_run_naming_each_member():
    with pytest.raises(Exception) as info:
        run_unanswered(torch.zeros(2))
    waits = ("waits in sync_wait for event 3 (no raise of it by the AIC (or, with ffts_mode=1, by both AIV lanes) "
             "is pending)")
    assert (
        "fatal error 100 (SchedulerTimeout): task 0 (block 0 of a mixed task): its cross-core pipes and events can "
        "never move: kernel 'unanswered_aic' (task 0) on AIC core 0 has finished; kernel 'unanswered_aiv' (task 1) "
        f"on AIV core 0 (lane 0) {waits}; kernel 'unanswered_aiv' (task 2) on AIV core 1 (lane 1) {waits}; every tpop "
        "needs a tpush of the peer, a tpush into a full pipe a tfree of the peer, and a sync_wait a sync_set of the peer"
    ) in str(info.value), str(info.value)


BLOCKS = 3


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/sync_all_mixed.cpp",
               aiv_source="kernels/ascendc/sync_all_mixed.cpp", dual_aiv_dispatch=True)
def sync_all_mixed(out: pl.InOut[pl.Tensor[[BLOCKS * 2], pl.FP32]],
                   stage: pl.InOut[pl.Tensor[[BLOCKS], pl.FP32]]) -> pl.Tensor[[BLOCKS * 2], pl.FP32]: ...


@pl.jit
def run_sync_all_mixed(out: pl.InOut[pl.Tensor[[BLOCKS * 2], pl.FP32]],
                       stage: pl.InOut[pl.Tensor[[BLOCKS], pl.FP32]]):
    with pl.spmd(BLOCKS, sync_start=True):
        out = sync_all_mixed(out, stage)
    return out


def test_sync_all_false_is_the_barrier_of_every_cube_and_vector_core_of_a_mixed_kernel():
    out = torch.zeros(BLOCKS * 2)
    run_sync_all_mixed(out, torch.zeros(BLOCKS))
    # Lane l of block b reads what the cube of block b + 1 wrote before the barrier.
    expected = torch.tensor([10.0 * ((b + 1) % BLOCKS + 1) + lane for b in range(BLOCKS) for lane in range(2)])
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


CLUSTERS = 24  # a2a3sim: 24 AIC cores, 48 AIV


@pl.jit
def run_sync_all_mixed_in_waves(out: pl.InOut[pl.Tensor[[BLOCKS * 2], pl.FP32]],
                                stage: pl.InOut[pl.Tensor[[BLOCKS], pl.FP32]]):
    with pl.spmd(BLOCKS):
        out = sync_all_mixed(out, stage)
    return out


def test_sync_all_false_without_sync_start_passes_when_every_block_is_resident():
    out = torch.zeros(BLOCKS * 2)
    run_sync_all_mixed_in_waves(out, torch.zeros(BLOCKS))
    expected = torch.tensor([10.0 * ((b + 1) % BLOCKS + 1) + lane for b in range(BLOCKS) for lane in range(2)])
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pl.jit.extern(core_type="mixed", aic_source="kernels/ascendc/sync_all_mixed.cpp",
               aiv_source="kernels/ascendc/sync_all_mixed.cpp", dual_aiv_dispatch=True)
def sync_all_mixed_wide(out: pl.InOut[pl.Tensor[[(CLUSTERS + 1) * 2], pl.FP32]],
                        stage: pl.InOut[pl.Tensor[[CLUSTERS + 1], pl.FP32]]) -> pl.Tensor[[(CLUSTERS + 1) * 2], pl.FP32]: ...


@pl.jit
def run_sync_all_mixed_wide(out: pl.InOut[pl.Tensor[[(CLUSTERS + 1) * 2], pl.FP32]],
                            stage: pl.InOut[pl.Tensor[[CLUSTERS + 1], pl.FP32]]):
    with pl.spmd(CLUSTERS + 1):
        out = sync_all_mixed_wide(out, stage)
    return out


def test_sync_all_false_among_more_blocks_than_clusters_without_sync_start_is_diagnosed_at_its_line():
    # Seed 002's deadlock: 24 blocks hold every cluster at the barrier, and the 25th can never start.
    source = pathlib.Path(__file__).parent / "kernels" / "ascendc" / "sync_all_mixed.cpp"
    line = next(n for n, text in enumerate(source.read_text().splitlines(), 1) if "SyncAll<false>();" in text)
    with pytest.raises(Exception) as info:
        run_sync_all_mixed_wide(torch.zeros((CLUSTERS + 1) * 2), torch.zeros(CLUSTERS + 1))
    assert (
        "fatal error 100 (SchedulerTimeout): task 0 (kernels 'sync_all_mixed_wide_aic' and 'sync_all_mixed_wide_aiv', "
        f"func_id 1): {source}:{line}: SyncAll<false>(): the syncall of every cube and vector core of its 25 blocks "
        "(SyncAll<false>, 75 members) can never complete: 72 of 75 members arrived (every member of blocks 0 to 23); "
        "block 24 cannot start: the cores a block takes (1 AIC, 2 AIV) are held by kernels waiting at a barrier; "
        "launch it with pl.spmd(..., sync_start=True) and at most 24 blocks, so that every member of every block "
        "holds a core at the same time"
    ) in str(info.value), str(info.value)
