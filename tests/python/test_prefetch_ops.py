"""pl.prefetch.*: a kernel asks for a tensor to be pulled into L2 and waits for it; a cache hint,
which must leave every value as it was."""

import pytest
import torch

import pypto
import pypto.language as pl

COLS = 256


@pl.program
class PrefetchThenCopy:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[2, COLS], pl.FP32],
               out: pl.Out[pl.Tensor[[2, COLS], pl.FP32]]) -> pl.Tensor[[2, COLS], pl.FP32]:
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(a, ctx)
        session = pl.prefetch.session(ctx)
        pl.prefetch.wait(evt, session)
        t: pl.Tile[[2, COLS], pl.FP32] = pl.load(a, [0, 0], [2, COLS])
        out = pl.store(pl.add(t, 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[2, COLS], pl.FP32]]) -> pl.Tensor[[2, COLS], pl.FP32]:
        out = self.kernel(a, out)
        return out


def test_a_prefetch_changes_no_value():
    a = torch.randn(2, COLS)
    out = torch.zeros(2, COLS)
    pypto.runtime.run(PrefetchThenCopy, a, out)
    torch.testing.assert_close(out, a + 1)


def test_the_handles_print_with_their_types_and_parse_back(write_dsl):
    text = str(PrefetchThenCopy)
    for line in ["ctx: pl.PrefetchAsyncContext = pl.prefetch.make_context()",
                 "evt: pl.AsyncEvent = pl.prefetch.async_prefetch(a, ctx)",
                 "session: pl.AsyncSession = pl.prefetch.session(ctx)",
                 "pl.prefetch.wait(evt, session)"]:
        assert f"        {line}\n" in text, text
    reparsed = write_dsl("printed_prefetch", text)[0].PrefetchThenCopy
    assert str(reparsed) == text


def test_a_wait_given_its_handles_swapped_is_an_error(write_dsl, tmp_path):
    with pytest.raises(Exception) as info:
        write_dsl("swapped", f"""
@pl.program
class Swapped:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[2, {COLS}], pl.FP32]):
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(a, ctx)
        session = pl.prefetch.session(ctx)
        pl.prefetch.wait(session, evt)
""")
    message = str(info.value)
    assert "the event of pl.prefetch.wait must be the result of pl.prefetch.async_prefetch, got pl.AsyncSession" \
        in message, message
    assert f"{tmp_path / 'swapped.py'}:11:9" in message, message
