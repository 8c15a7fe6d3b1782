"""Annotation markers (``pl.Tensor[[128, 128], pl.FP32]``, ``pl.Out[pl.Tensor]``).

The compiler reads annotations from the kernel's source; these objects only have to make the
annotations valid Python when the ``def`` statement runs."""


class _Annotation:
    def __init__(self, name: str, args=()):
        self._name = name
        self._args = args

    def __getitem__(self, args):
        return _Annotation(self._name, args if isinstance(args, tuple) else (args,))

    def __repr__(self) -> str:
        inner = ", ".join(repr(a) for a in self._args)
        return f"pl.{self._name}[{inner}]" if self._args else f"pl.{self._name}"


Tensor = _Annotation("Tensor")
Tile = _Annotation("Tile")
Scalar = _Annotation("Scalar")
Out = _Annotation("Out")
InOut = _Annotation("InOut")
Tuple = _Annotation("Tuple")
Array = _Annotation("Array")
# The handles of pl.prefetch.* (a context, the event of one prefetch, the session it is waited in).
PrefetchAsyncContext = _Annotation("PrefetchAsyncContext")
AsyncEvent = _Annotation("AsyncEvent")
AsyncSession = _Annotation("AsyncSession")


class DynVar:
    """``pl.dynamic("T")``: a dimension whose size is known only when the program is called."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise TypeError(f"pl.dynamic expects a name, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"

    # `pl.Tensor[[M * 2, N], ...]`: an annotation may scale or shift a dynamic dimension; the compiler
    # reads the expression from the source, so here it only has to evaluate.
    def _composite(self, op: str, other) -> "_DimExpr":
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        return _DimExpr(f"{self.name} {op} {other}")

    def __mul__(self, other):
        return self._composite("*", other)

    def __rmul__(self, other):
        return self._composite("*", other)

    def __add__(self, other):
        return self._composite("+", other)

    def __radd__(self, other):
        return self._composite("+", other)

    def __sub__(self, other):
        return self._composite("-", other)


class _DimExpr:
    """A dynamic dimension scaled or shifted by a constant, as an annotation writes it."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def dynamic(name: str) -> DynVar:
    return DynVar(name)


class TensorView:
    """``pl.TensorView(valid_shape=[...], layout=pl.TensorLayout.ND)`` in a tensor annotation: the
    region of a global tensor that holds data, as documentation of the kernel's loads."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"pl.TensorView({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"


class TileView(TensorView):
    """``pl.TileView(valid_shape=[...])`` in a tile annotation: the tile's valid region."""

    def __repr__(self) -> str:
        return f"pl.TileView({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"


class MemRef:
    """``pl.MemRef(byte_offset, size)`` in a tile annotation: where the allocator placed the tile."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"pl.MemRef({', '.join(repr(a) for a in self.args)})"
