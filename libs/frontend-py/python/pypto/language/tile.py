"""``pl.tile.*``: operations on on-chip tiles."""

from pypto.language.ops import _compiled_only

load = _compiled_only("tile.load")
store = _compiled_only("tile.store")
add = _compiled_only("tile.add")
sub = _compiled_only("tile.sub")
mul = _compiled_only("tile.mul")
div = _compiled_only("tile.div")
