"""The GM-to-L2 prefetch ops (pl.prefetch.*) in a kernel's .pto, as upstream pypto's PTO emitter
(hw-native-sys/pypto e2d0f78ae) writes them: a prefetch context on the SDMA workspace the runtime
owns (a !pto.ptr<i8> argument), an asynchronous prefetch of the whole source tensor, its session and
the wait. The module conforms to pto-check's table (these ops from its separate upstream-emitter
source); a prefetch changes no value, so the kernel still computes what it did."""

import re
import warnings
from pathlib import Path

import pytest
import torch

from pypto.runtime import RunConfig

from conftest import kernels_fixture
from pto_dialect import assert_conforms, pto_check

KERNELS = '''
import pypto.language as pl


@pl.jit
def warm(w: pl.Tensor[[4096], pl.FP32], x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pl.prefetch.make_context()
        ev = pl.prefetch.async_prefetch(w, ctx)
        s = pl.prefetch.session(ctx)
        done = pl.prefetch.wait(ev, s)
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(pl.add(t, t), [0, 0], y)
    return y
'''

kernels = kernels_fixture("pto_prefetch.py", KERNELS)


@pytest.fixture(scope="module")
def compiled(kernels):
    args = torch.zeros(4096), torch.zeros(16, 64), torch.zeros(16, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a kernel without a .pto would warn
        return kernels.warm.compile(*args, config=RunConfig(platform="a2a3sim"))


def module_lines(compiled, suffix=".pto"):
    (path,) = Path(compiled.output_dir).glob(f"kernels/*/*{suffix}")
    return [re.sub(r" loc\(.*\)$", "", line).strip() for line in path.read_text().splitlines()]


def test_the_prefetch_ops_are_upstreams(compiled):
    lines = module_lines(compiled)
    assert lines[1] == ("func.func @warm_incore_0(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, "
                        "%arg3: !pto.ptr<i8>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {")
    at = lines.index("%ctx = pto.make_prefetch_async_context(%arg3 : !pto.ptr<i8>) -> !pto.prefetch_async_context")
    assert lines[at + 1:at + 5] == [
        "%w_pview = pto.partition_view %w_view, offsets = [%c0_index], sizes = [%c4096_index] : "
        "!pto.tensor_view<?xf32> -> !pto.partition_tensor_view<4096xf32>",
        "%ev = pto.tprefetch_async(%w_pview, %ctx : !pto.partition_tensor_view<4096xf32>, "
        "!pto.prefetch_async_context) -> !pto.async_event",
        "%s = pto.get_prefetch_async_session %ctx : !pto.prefetch_async_context -> !pto.async_session",
        "%done = pto.comm.wait_async_event(%ev, %s : !pto.async_event, !pto.async_session) -> i1",
    ]


def test_the_module_conforms_and_the_kernel_still_computes(compiled):
    assert_conforms(compiled.output_dir)
    torch.manual_seed(4)
    w, x, y = torch.randn(4096), torch.randn(16, 64), torch.zeros(16, 64)
    compiled(w, x, y)
    torch.testing.assert_close(y, x + x, rtol=0, atol=0)


def test_the_checker_rejects_a_prefetch_of_the_wrong_operand_type(compiled, tmp_path):
    lines = module_lines(compiled, ".generic.mlir")
    number = next(i for i, line in enumerate(lines, 1) if '"pto.tprefetch_async"' in line)
    lines[number - 1] = lines[number - 1].replace("(!pto.partition_tensor_view<4096xf32>,", "(!pto.ptr<f32>,")
    path = tmp_path / "mutated.generic.mlir"
    path.write_text("\n".join(lines) + "\n")
    assert [str(p) for p in pto_check.check_paths([path]).problems] == [
        f"{path}:{number}: op 'pto.tprefetch_async': operand #0 ('src') must be PartitionTensorViewType, "
        f"got !pto.ptr<f32>"]
