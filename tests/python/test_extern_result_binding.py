"""The single-return trap of hand-written kernels: a call's result is the kernel's first
pl.Out/pl.InOut parameter, so with ``query: pl.InOut`` declared before ``out: pl.Out``,
``attn_out = self.pa(query, out)`` names ``query``. The declaration and each such call warn, located,
naming both parameters and the fix (declare the intended output first)."""

import warnings

import pytest

_KERNEL = 'extern "C" void kernel_entry(long* args) { (void)args; }\n'

# The seed's paged-attention shape: a Group of two hand-written members and an orchestration that
# binds the Group's result to a name of its own.
_PROGRAM = """
import pypto.language as pl


@pl.program
class PagedAttention:
    @pl.function(type=pl.FunctionType.AIC, external_source="pa.cpp")
    def pa_aic(self, {params}) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.AIV, external_source="pa.cpp")
    def pa_aiv(self, {params}) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Group)
    def pa(self, {params}) -> pl.Tensor[[8, 8], pl.FP32]:
        r = self.pa_aic({args})
        self.pa_aiv({args})
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}) -> pl.Tensor[[8, 8], pl.FP32]:
        attn_out = self.pa({args})
        return attn_out
"""

_QUERY = "query: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]"
_OUT = "out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]"


def _declare(write_kernel, tmp_path, params, args):
    (tmp_path / "pa.cpp").write_text(_KERNEL)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _, path = write_kernel("paged_attention", _PROGRAM.format(params=params, args=args))
    return [str(w.message) for w in record if issubclass(w.category, UserWarning)], path


def test_an_inout_before_an_out_warns_at_the_declaration_and_at_the_call(write_kernel, tmp_path):
    messages, path = _declare(write_kernel, tmp_path, f"{_QUERY}, {_OUT}", "query, out")
    assert messages == [
        f"{path}:21:9: `attn_out = pa(...)` binds 'attn_out' to 'query' (pl.InOut parameter 'query'), not to 'out' "
        "(pl.Out parameter 'out'): a hand-written kernel returns its first pl.Out/pl.InOut parameter; declare 'out' "
        "before 'query' in 'pa' so that the result is 'out'",
        f"{path}:14:5: hand-written kernel 'pa' returns its first pl.Out/pl.InOut parameter: the pl.InOut parameter "
        "'query', not the pl.Out parameter 'out' after it, so `x = pa(...)` binds 'query'; declare 'out' before "
        "'query' so that the result is 'out'",
    ]


def test_declaring_the_output_first_is_quiet(write_kernel, tmp_path):
    messages, _ = _declare(write_kernel, tmp_path, f"{_OUT}, {_QUERY}", "out, query")
    assert messages == []


def test_a_single_core_kernel_called_directly_warns_at_its_own_declaration(write_kernel, tmp_path):
    source = """
import pypto.language as pl


@pl.program
class Single:
    @pl.function(type=pl.FunctionType.AIV, external_source="pa.cpp")
    def pa(self, q: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
           o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, query: pl.InOut[pl.Tensor[[8, 8], pl.FP32]],
             out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        out = self.pa(query, out)
        return out
"""
    (tmp_path / "pa.cpp").write_text(_KERNEL)
    with pytest.warns(UserWarning) as record:
        _, path = write_kernel("single", source)
    assert [str(w.message) for w in record] == [
        f"{path}:14:9: `out = pa(...)` binds 'out' to 'query' (pl.InOut parameter 'q'), not to 'out' (pl.Out "
        "parameter 'o'): a hand-written kernel returns its first pl.Out/pl.InOut parameter; declare 'o' before 'q' "
        "in 'pa' so that the result is 'o'",
        f"{path}:8:5: hand-written kernel 'pa' returns its first pl.Out/pl.InOut parameter: the pl.InOut parameter "
        "'q', not the pl.Out parameter 'o' after it, so `x = pa(...)` binds 'q'; declare 'o' before 'q' so that the "
        "result is 'o'",
    ]
