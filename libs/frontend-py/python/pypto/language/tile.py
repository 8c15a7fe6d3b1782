"""``pl.tile.*``: operations on on-chip tiles."""

from pypto.language.enums import MaskPattern
from pypto.language.ops import _compiled_only

load = _compiled_only("tile.load")
store = _compiled_only("tile.store")
add = _compiled_only("tile.add")
sub = _compiled_only("tile.sub")
mul = _compiled_only("tile.mul")
div = _compiled_only("tile.div")
sort32 = _compiled_only("tile.sort32")
mrgsort = _compiled_only("tile.mrgsort")
gather = _compiled_only("tile.gather")
arange = _compiled_only("tile.arange")
slice = _compiled_only("tile.slice")  # noqa: A001 - the DSL spelling


def __getattr__(name: str):
    # The other ops of this namespace are only read from kernel source.
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language.ops import _compiled_only

    return _compiled_only(f"{__name__.rsplit('.', 1)[-1]}.{name}")
