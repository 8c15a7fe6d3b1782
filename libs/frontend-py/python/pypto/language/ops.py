"""The DSL's operations. Inside a kernel the compiler turns each call into IR; calling one from
ordinary Python is a mistake, reported as such."""


def _compiled_only(name: str):
    def op(*args, **kwargs):
        raise RuntimeError(
            f"pl.{name} can only be used inside a @pl.jit function: kernel bodies are compiled, not run as Python"
        )

    op.__name__ = name
    op.__qualname__ = name
    return op


load = _compiled_only("load")
store = _compiled_only("store")
add = _compiled_only("add")
sub = _compiled_only("sub")
mul = _compiled_only("mul")
div = _compiled_only("div")
sort32 = _compiled_only("sort32")
mrgsort = _compiled_only("mrgsort")
gather = _compiled_only("gather")
arange = _compiled_only("arange")


class at:  # noqa: N801 - the DSL spelling is pl.at
    """``with pl.at(level=pl.Level.CORE_GROUP):`` marks a region compiled into one kernel."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("pl.at can only be used inside a @pl.jit function")
