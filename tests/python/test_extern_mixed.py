"""Mixed hand-written kernels: a ``pl.FunctionType.Group`` of an AIC and an AIV extern, submitted as one
MixedKernels task; with ``dual_aiv_dispatch`` the AIV entry runs on both lanes of every block, each
seeing its lane as ``get_sub_block_id(args)``."""

import pypto.language as pl
import pytest
import torch
from sample_kernels import MIXED_AIC as _AIC
from sample_kernels import MIXED_AIV as _AIV

_PROGRAM = """
import pypto.language as pl


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.AIC, external_source="aic.cpp")
    def pa_aic(self, a: pl.Tensor[[8, 8], pl.FP32], out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
               flags: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.AIV, external_source="aiv.cpp", attrs={{"dual_aiv_dispatch": {dual}}})
    def pa_aiv(self, a: pl.Tensor[[8, 8], pl.FP32], out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
               flags: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Group)
    def pa(self, a: pl.Tensor[[8, 8], pl.FP32], out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
           flags: pl.InOut[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        self.pa_aic(a, out, flags)
        out = self.pa_aiv(a, out, flags)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             flags: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        with pl.spmd(core_num=4):
            out = self.pa(a, out, flags)
        return out
"""


def _program(write_kernel, tmp_path, dual=True):
    (tmp_path / "aic.cpp").write_text(_AIC)
    (tmp_path / "aiv.cpp").write_text(_AIV)
    module, _ = write_kernel("mixed_program", _PROGRAM.format(dual=dual))
    return module.Mixed


def _expected(a, lanes):
    out = torch.full((8, 8), -1.0)
    for row in range(8):
        lane = row % 2
        if lane in lanes:
            out[row] = a[row] * 2 + lane
    return out


def test_dual_dispatch_splits_the_rows_between_the_lanes(write_kernel, tmp_path):
    from pypto.ir import compile

    compiled = compile(_program(write_kernel, tmp_path), output_dir=str(tmp_path / "build"))
    cpp = (tmp_path / "build" / "orchestration" / "main.cpp").read_text()
    assert "MixedKernels mixed_0 = {0, 1, 1};\n    rt_submit_task(mixed_0, params_t0);" in cpp, cpp
    a = torch.randn(8, 8)
    out = torch.full((8, 8), -1.0)
    flags = torch.zeros(4)
    compiled(a, out, flags)
    torch.testing.assert_close(out, _expected(a, {0, 1}), rtol=0, atol=0)
    torch.testing.assert_close(flags, torch.tensor([100.0, 101.0, 102.0, 103.0]), rtol=0, atol=0)


def test_without_dual_dispatch_only_lane_zero_runs(write_kernel, tmp_path):
    from pypto.ir import compile

    compiled = compile(_program(write_kernel, tmp_path, dual=False), output_dir=str(tmp_path / "build"))
    assert "MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};" in (tmp_path / "build" / "orchestration" / "main.cpp").read_text()
    a = torch.randn(8, 8)
    out = torch.full((8, 8), -1.0)
    compiled(a, out, torch.zeros(4))
    torch.testing.assert_close(out, _expected(a, {0}), rtol=0, atol=0)


def test_members_must_share_the_groups_argument_layout(tmp_path):
    from pypto.ir import compile
    from pypto.language.parser import ParserTypeError

    (tmp_path / "k.cpp").write_text('extern "C" void kernel_entry(long* args) { (void)args; }\n')
    source = tmp_path / "k.cpp"

    @pl.program
    class Swapped:
        @pl.function(type=pl.FunctionType.AIV, external_source=source)
        def k_aiv(self, b: pl.Tensor[[8, 8], pl.FP32],
                  a: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Group)
        def k(self, a: pl.InOut[pl.Tensor[[8, 8], pl.FP32]], b: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
            a = self.k_aiv(b, a)
            return a

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.InOut[pl.Tensor[[8, 8], pl.FP32]], b: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
            a = self.k(a, b)
            return a

    with pytest.raises(ParserTypeError) as info:
        compile(Swapped, output_dir=str(tmp_path / "build"))
    assert info.value.message == (
        "group 'k' member 'k_aiv' must take the group's parameters in order: the members of one mixed task share "
        "one args[]"
    )


# Both lanes write row 2b (the lane is ignored): a data race on a device.
_RACY_AIV = _AIV.replace("const int32_t row = get_block_idx(args) * 2 + lane;", "const int32_t row = get_block_idx(args) * 2;")


def test_lanes_writing_the_same_elements_are_reported_as_a_race(write_kernel, tmp_path):
    from pypto.ir import compile

    program = _program(write_kernel, tmp_path)
    (tmp_path / "aiv.cpp").write_text(_RACY_AIV)
    compiled = compile(program, output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as info:
        compiled(torch.randn(8, 8), torch.zeros(8, 8), torch.zeros(4))
    message = str(info.value)
    assert "fatal error 203 (KernelFailed): data race under dual AIV dispatch: lanes 0 and 1 of kernel 'pa_aiv'" in message
    # Block b's lanes both write row 2b, elements [16b, 16b + 8) of `out`.
    import re

    found = re.search(r"\(block (\d)\) both wrote tensor 'out' \(args\[1\]\), within elements \[(\d+), (\d+)\)", message)
    assert found, message
    block, first, last = map(int, found.groups())
    assert (first, last) == (16 * block, 16 * block + 8), message
    assert "each lane must write its own part, chosen by get_sub_block_id(args)" in message


_HALF_HAND_WRITTEN = """
import pypto.language as pl


@pl.program
class HalfHandWritten:
    @pl.function(type=pl.FunctionType.AIC, external_source="aic.cpp")
    def pa_aic(self, a: pl.Tensor[[8, 8], pl.FP32],
               out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.AIV)
    def pa_aiv(self, a: pl.Tensor[[8, 8], pl.FP32],
               out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        t = pl.load(a, [0, 0], [8, 8])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def pa(self, a: pl.Tensor[[8, 8], pl.FP32],
           out: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        self.pa_aic(a, out)
        out = self.pa_aiv(a, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        out = self.pa(a, out)
        return out
"""


def test_a_group_mixing_a_hand_written_and_a_dsl_kernel_is_refused_at_its_declaration(write_kernel, tmp_path):
    from pypto.language.parser import ParserTypeError

    (tmp_path / "aic.cpp").write_text(_AIC)
    with pytest.raises(ParserTypeError) as info:
        write_kernel("half_hand_written", _HALF_HAND_WRITTEN)
    assert info.value.message == (
        "group 'pa' mixes a hand-written kernel ('pa_aic', external_source=) with a DSL kernel ('pa_aiv'): the "
        "members of a group are all hand-written or all DSL, since the compiler wires the cross-core hand-over "
        "between DSL members and a hand-written source cannot take part in it"
    )
    assert info.value.location == f"{tmp_path / 'half_hand_written.py'}:19:5"
    assert info.value.hint == "give 'pa_aiv' an external_source= too (both members may name one source), or write 'pa_aic' in the DSL"
