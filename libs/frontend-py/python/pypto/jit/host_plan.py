"""The body of a ``@pl.jit.host`` function, evaluated into a plan of per-rank dispatches.

A host function runs on the host CPU and only decides what each rank runs: it allocates window
buffers and, in a loop over ``pld.world_size()``, calls ``@pl.jit`` chip entries with ``device=r``.
Everything it computes is known when the program is compiled (the world size is the number of
devices of the ``DistributedConfig``), so the body is evaluated then, over its Python AST, into a
``HostPlan``: the window buffers, and for each dispatch the rank, the chip entry and where each
argument comes from (a host tensor or a slice of it, a window view, a number). Running the plan is
``DistributedCompiledProgram``'s business.

Only what a host program needs is accepted (assignments, ``for`` over ``pl.range``/``range``,
``if`` on numbers, integer arithmetic, ``pl.const`` and ``pl.cast`` of numbers, indexing host tensors, the
``pld`` host calls and dispatches);
anything else is an error at its line and column."""

import ast
import dataclasses
import enum
import struct
from typing import Any, Optional

from pypto.language.dtypes import DataType
from pypto.language.typing import DynVar
from pypto.language.parser.diagnostics import InvalidOperationError, ParserSyntaxError, ParserTypeError

# Upstream pads each window buffer to at least 4 KiB; buffers are laid out at multiples of it, so
# every rank's window holds each buffer at the same offset (the symmetric layout comm ops rely on).
WINDOW_ALIGN = 4096

_BYTES = {
    "BOOL": 1, "INT8": 1, "UINT8": 1, "FP8E4M3FN": 1, "FP8E5M2": 1, "FP8E8M0": 1, "HF8": 1,
    "INT16": 2, "UINT16": 2, "FP16": 2, "BF16": 2,
    "INT32": 4, "UINT32": 4, "FP32": 4,
    "INT64": 8, "UINT64": 8, "FP64": 8, "INDEX": 8,
}

# The integer dtypes a number can be cast to, by width (INDEX is a 64-bit signed integer).
_INTEGER_BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64, "INDEX": 64,
                 "UINT8": 8, "UINT16": 16, "UINT32": 32, "UINT64": 64}


@dataclasses.dataclass(frozen=True)
class Place:
    """A line and column of the user's file, for errors found when the plan runs."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


@dataclasses.dataclass(frozen=True)
class HostTensor:
    """A tensor parameter of the host function, or a part of it (``x[r]``, ``y[:, r]``): ``index``
    holds each subscript's items (integers and slices), applied to the caller's tensor in turn."""

    param: str
    shape: tuple
    dtype: str
    index: tuple = ()

    def describe(self) -> str:
        return self.param + "".join(f"[{', '.join(_index_text(i) for i in items)}]" for items in self.index)

    def of(self, tensor):
        """This part of ``tensor``, the caller's argument for the parameter."""
        for items in self.index:
            tensor = tensor[items]
        return tensor


@dataclasses.dataclass
class WindowBuffer:
    """``pld.alloc_window_buffer``: ``nbytes`` of every rank's window, at ``offset`` in each."""

    name: str
    nbytes: int
    offset: int
    place: Place


@dataclasses.dataclass(frozen=True)
class WindowView:
    """``pld.window(buf, shape, dtype=)``: the buffer's first bytes seen as a tensor."""

    buffer: str
    shape: tuple
    dtype: str


@dataclasses.dataclass
class Dispatch:
    """One call of a chip entry, on one rank."""

    rank: int
    entry: Any  # a JITFunction of form "entry"
    args: list  # HostTensor | WindowView | number, in the entry's parameter order
    place: Place


@dataclasses.dataclass
class HostPlan:
    world_size: int
    windows: list  # WindowBuffer, in allocation order
    dispatches: list  # Dispatch, in the order the host function makes them

    @property
    def window_bytes(self) -> int:
        return sum(_round_up(w.nbytes) for w in self.windows)

    def describe(self) -> dict:
        """The plan as JSON data (written into the build directory for people to read)."""

        def arg(value):
            if isinstance(value, HostTensor):
                return {"host_tensor": value.describe(), "shape": list(value.shape), "dtype": value.dtype}
            if isinstance(value, WindowView):
                return {"window": value.buffer, "shape": list(value.shape), "dtype": value.dtype}
            return {"scalar": value}

        return {
            "world_size": self.world_size,
            "windows": [{"name": w.name, "bytes": w.nbytes, "offset": w.offset} for w in self.windows],
            "dispatches": [
                {"rank": d.rank, "entry": d.entry.__name__, "args": [arg(a) for a in d.args], "at": str(d.place)}
                for d in self.dispatches
            ],
        }


def _round_up(nbytes: int) -> int:
    return max(WINDOW_ALIGN, -(-nbytes // WINDOW_ALIGN) * WINDOW_ALIGN)


def _index_text(index) -> str:
    if isinstance(index, slice):
        return f"{'' if index.start is None else index.start}:{'' if index.stop is None else index.stop}"
    return str(index)


class _Evaluator:
    """Walks the host function's body with concrete values."""

    def __init__(self, source, names: dict, world_size: int, params: dict):
        self.source = source
        self.names = names  # globals and closure variables of the host function
        self.world_size = world_size
        self.env = dict(params)
        self.windows = []
        self.dispatches = []
        self.dynamic_extents = {}  # pl.dynamic name -> (extent, where it was bound), from bind_dynamic

    # -- diagnostics ------------------------------------------------------------------------
    def place(self, node) -> Place:
        return Place(
            self.source.filename,
            self.source.line_offset + node.lineno,
            self.source.column_offset + node.col_offset + 1,
        )

    def error(self, node, message: str, hint: str = "", kind=InvalidOperationError):
        where = self.place(node)
        return kind(message, where.filename, where.line, where.column, hint)

    # -- statements -------------------------------------------------------------------------
    def run_body(self, body) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt) -> None:
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return  # a docstring or a bare literal
            self.expr(stmt.value)
        elif isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                raise self.error(stmt, "a @pl.jit.host function assigns one name at a time", kind=ParserSyntaxError)
            value = self.expr(stmt.value)
            if isinstance(value, WindowBuffer) and value.name.startswith("window_"):
                value.name = stmt.targets[0].id  # an unnamed buffer is known by its variable
            self.env[stmt.targets[0].id] = value
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            self.env[stmt.target.id] = self.binary(stmt, stmt.op, self.lookup(stmt.target), self.expr(stmt.value))
        elif isinstance(stmt, ast.For):
            self.loop(stmt)
        elif isinstance(stmt, ast.If):
            self.run_body(stmt.body if self.expr(stmt.test) else stmt.orelse)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Return) and (stmt.value is None or _is_none(stmt.value)):
            raise _Return()
        elif isinstance(stmt, ast.Return):
            self.returned(stmt)
        else:
            raise self.error(
                stmt,
                f"a @pl.jit.host function cannot contain this statement ({type(stmt).__name__})",
                "a host function allocates window buffers and dispatches @pl.jit chip entries, in loops over "
                "pl.range(pld.world_size()); computation belongs in the chip entries",
                kind=ParserSyntaxError,
            )

    def loop(self, stmt: ast.For) -> None:
        call = stmt.iter
        if not (isinstance(call, ast.Call) and _dotted(call.func) in ("pl.range", "range")):
            raise self.error(stmt.iter, "a @pl.jit.host loop iterates over pl.range(...)", kind=ParserSyntaxError)
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "a @pl.jit.host loop variable is one name", kind=ParserSyntaxError)
        if stmt.orelse:
            raise self.error(stmt, "a @pl.jit.host loop has no else branch", kind=ParserSyntaxError)
        bounds = [self.integer(arg, "a loop bound") for arg in call.args]
        if not 1 <= len(bounds) <= 3 or call.keywords:
            raise self.error(call, "pl.range takes a stop, or a start, stop and optional step", kind=ParserSyntaxError)
        for value in range(*bounds):
            self.env[stmt.target.id] = value
            self.run_body(stmt.body)

    # -- expressions ------------------------------------------------------------------------
    def lookup(self, node: ast.Name):
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.names:
            return self.names[node.id]
        builtin = {"len": len, "min": min, "max": max, "True": True, "False": False}.get(node.id)
        if builtin is not None:
            return builtin
        raise self.error(node, f"'{node.id}' is not defined", kind=ParserTypeError)

    def integer(self, node, what: str) -> int:
        value = self.expr(node)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{what} must be an integer known when the program is compiled, got {value!r}",
                             kind=ParserTypeError)
        return value

    def expr(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.expr(e) for e in node.elts]
        if isinstance(node, ast.BinOp):
            return self.binary(node, node.op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            value = self.expr(node.operand)
            return -value if isinstance(node.op, ast.USub) else not value
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self.compare(node, node.ops[0], self.expr(node.left), self.expr(node.comparators[0]))
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.error(node, f"a @pl.jit.host function cannot evaluate this expression ({type(node).__name__})",
                         kind=ParserSyntaxError)

    def attribute(self, node: ast.Attribute):
        dotted = _dotted(node)
        if dotted is not None and dotted.split(".")[0] in ("pl", "pld"):
            # Of the DSL's names, a host function reads only values: dtypes and enum members.
            value = self.names.get(dotted.split(".")[0])
            for part in dotted.split(".")[1:]:
                value = getattr(value, part, None)
            if isinstance(value, (DataType, enum.Enum)):
                return value
            raise self.error(node, f"'{dotted}' is not a value a @pl.jit.host function can use here",
                             kind=ParserTypeError)
        value = self.expr(node.value)
        if isinstance(value, HostTensor) and node.attr == "shape":
            return list(value.shape)
        try:
            return getattr(value, node.attr)
        except AttributeError:
            raise self.error(node, f"{value!r} has no attribute '{node.attr}'", kind=ParserTypeError) from None

    def binary(self, node, op, left, right):
        ops = {
            ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Div: lambda a, b: a / b,
        }
        fn = ops.get(type(op))
        if fn is None or not all(isinstance(v, (int, float)) for v in (left, right)):
            raise self.error(node, "a @pl.jit.host function computes only with numbers", kind=ParserTypeError)
        try:
            return fn(left, right)
        except ZeroDivisionError:
            raise self.error(node, "division by zero") from None

    def compare(self, node, op, left, right):
        ops = {
            ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
        }
        fn = ops.get(type(op))
        if fn is None or not all(isinstance(v, (int, float)) for v in (left, right)):
            raise self.error(node, "a @pl.jit.host function compares only numbers", kind=ParserTypeError)
        return fn(left, right)

    def subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        if not isinstance(base, HostTensor):
            if isinstance(base, list):
                return base[self.integer(node.slice, "an index")]
            raise self.error(node, "only tensor parameters of the host function can be indexed", kind=ParserTypeError)
        index_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(index_nodes) > len(base.shape):
            raise self.error(node, f"'{base.describe()}' has {len(base.shape)} axes, indexed with {len(index_nodes)}",
                             kind=ParserTypeError)
        items = []
        shape = []
        for axis, index_node in enumerate(index_nodes):
            extent = base.shape[axis]
            if isinstance(index_node, ast.Slice):
                if index_node.step is not None:
                    raise self.error(index_node, "a host tensor slice has no step", kind=ParserSyntaxError)
                start = None if index_node.lower is None else self.integer(index_node.lower, "a slice bound")
                stop = None if index_node.upper is None else self.integer(index_node.upper, "a slice bound")
                low, high = start or 0, extent if stop is None else stop
                if not 0 <= low < high <= extent:
                    raise self.error(index_node, f"slice {low}:{high} of '{base.describe()}' is outside its "
                                     f"extent {extent} along axis {axis}")
                items.append(slice(start, stop))
                shape.append(high - low)
            else:
                value = self.integer(index_node, "an index")
                if not 0 <= value < extent:
                    raise self.error(index_node, f"index {value} of '{base.describe()}' is outside its extent "
                                     f"{extent} along axis {axis}")
                items.append(value)  # an integer index drops its axis
        shape.extend(base.shape[len(index_nodes):])
        return HostTensor(base.param, tuple(shape), base.dtype, base.index + (tuple(items),))

    def call(self, node: ast.Call):
        name = _dotted(node.func)
        if name == "pld.world_size":
            if node.args or node.keywords:
                raise self.error(node, "pld.world_size() takes no arguments", kind=ParserSyntaxError)
            return self.world_size
        if name in ("pld.alloc_window_buffer", "pld.tensor.alloc_window_buffer"):
            return self.alloc_window_buffer(node)
        if name in ("pld.window", "pld.tensor.window"):
            return self.window(node)
        if name in ("pl.range", "range"):
            raise self.error(node, "pl.range is the iterable of a for loop", kind=ParserSyntaxError)
        if name == "pl.const":
            return self.const(node)
        if name == "pl.cast":
            return self.cast(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "bind_dynamic":
            return self.bind_dynamic(node)
        if name is not None and name.split(".")[0] in ("pl", "pld"):
            raise self.error(node, f"'{name}' cannot be used in a @pl.jit.host function",
                             "a host function allocates window buffers (pld.alloc_window_buffer, pld.window) and "
                             "dispatches @pl.jit chip entries; tensor and tile operations belong in those entries")
        callee = self.expr(node.func)
        from pypto.jit.decorator import JITFunction

        if isinstance(callee, JITFunction) and callee.form == "entry":
            return self.dispatch(node, callee)
        if isinstance(callee, JITFunction):
            raise self.error(node, f"{callee.__name__} is a @pl.jit.{callee.form} function: a @pl.jit.host function "
                             "dispatches @pl.jit chip entries, which call it")
        if callee in (len, min, max):
            return callee(*[self.expr(a) for a in node.args])
        raise self.error(node, f"a @pl.jit.host function cannot call {ast.unparse(node.func)}",
                         "it dispatches @pl.jit chip entries with device=r")

    def returned(self, stmt: ast.Return):
        """`return y` (or `return y, z`) of the host function's own tensor parameters, as pypto-lib's
        layers end: the outputs are those tensors, written in place, so the return only ends the run."""
        values = self.expr(stmt.value)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, HostTensor) or value.index:
                raise self.error(stmt, "a @pl.jit.host function returns only its own tensor parameters (written in "
                                 f"place), got {ast.unparse(stmt.value)}", kind=ParserTypeError)
        raise _Return()

    def bind_dynamic(self, node: ast.Call):
        """`x.bind_dynamic(axis, T)` on a host tensor: the host function sees concrete shapes, so this
        checks that `axis` exists and that every tensor bound to `T` has the same extent there."""
        tensor = self.expr(node.func.value)
        if not isinstance(tensor, HostTensor):
            raise self.error(node, f"bind_dynamic is a method of the host function's tensors, not of {tensor!r}",
                             kind=ParserTypeError)
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "bind_dynamic takes an axis and a pl.dynamic dimension: x.bind_dynamic(0, T)",
                             kind=ParserSyntaxError)
        axis, dynamic = self.integer(node.args[0], "the axis of bind_dynamic"), self.expr(node.args[1])
        if not isinstance(dynamic, DynVar):
            raise self.error(node.args[1], f"bind_dynamic binds a pl.dynamic dimension, got {dynamic!r}",
                             kind=ParserTypeError)
        rank = len(tensor.shape)
        if not -rank <= axis < rank:
            raise self.error(node.args[0], f"{tensor.describe()} has {rank} dimensions; it has no axis {axis}",
                             kind=ParserTypeError)
        extent = tensor.shape[axis]
        bound = self.dynamic_extents.setdefault(dynamic.name, (extent, tensor.describe(), self.place(node)))
        if bound[0] != extent:
            raise self.error(node, f"{tensor.describe()} has extent {extent} on axis {axis}, but {bound[1]} bound "
                             f"pl.dynamic {dynamic.name!r} to {bound[0]} at {bound[2]}", kind=ParserTypeError)
        return None

    def const(self, node: ast.Call):
        """`pl.const(1, pl.INT32)`: a number of that dtype, passed to a chip entry's scalar parameter."""
        values = self.keywords(node, {"value", "dtype"})
        args = list(node.args) + [values[k] for k in ("value", "dtype") if k in values]
        if len(args) != 2:
            raise self.error(node, "pl.const takes a value and a dtype: pl.const(1, pl.INT32)", kind=ParserSyntaxError)
        value, dtype = self.expr(args[0]), self.dtype_of(args[1], "the dtype of pl.const")
        if not isinstance(value, (bool, int, float)):
            raise self.error(args[0], f"pl.const takes a number, got {ast.unparse(args[0])}", kind=ParserTypeError)
        if dtype.startswith(("INT", "UINT")) or dtype == "INDEX":
            if float(value) != int(value):
                raise self.error(args[0], f"pl.const({value}, pl.{dtype}) is not an integer", kind=ParserTypeError)
            return int(value)
        return bool(value) if dtype == "BOOL" else float(value)

    def cast(self, node: ast.Call):
        """`pl.cast(0, pl.INT32)`: a number as that dtype, as upstream's scalar cast computes it (between
        integer dtypes wrapping to the width, from a float to an integer toward zero, to FP32 rounded to
        it), passed to a chip entry's scalar parameter."""
        values = self.keywords(node, {"input", "target_type", "mode"})
        args = list(node.args) + [values[k] for k in ("input", "target_type", "mode") if k in values]
        if not 2 <= len(args) <= 3:
            raise self.error(node, "pl.cast takes a value and a dtype: pl.cast(0, pl.INT32)", kind=ParserSyntaxError)
        value, dtype = self.expr(args[0]), self.dtype_of(args[1], "the dtype of pl.cast")
        if len(args) == 3 and self.expr(args[2]) not in ("round", 2):
            raise self.error(args[2], f"pl.cast of a number takes the default mode only, got mode={ast.unparse(args[2])}",
                             kind=ParserTypeError)
        if isinstance(value, (HostTensor, WindowView)):
            raise self.error(node, f"pl.cast of the tensor {ast.unparse(args[0])} cannot be used in a @pl.jit.host "
                             "function", "a host function casts numbers only; cast tensors in the chip entry",
                             kind=ParserTypeError)
        if not isinstance(value, (bool, int, float)):
            raise self.error(args[0], f"pl.cast takes a number here, got {ast.unparse(args[0])}", kind=ParserTypeError)
        if dtype == "FP32":
            return struct.unpack("f", struct.pack("f", float(value)))[0]
        bits = _INTEGER_BITS.get(dtype)
        if bits is None:
            source = "BOOL" if isinstance(value, bool) else "FP32" if isinstance(value, float) else "INDEX"
            raise self.error(node, "a scalar cast converts between integer dtypes, from BOOL to an integer, or between "
                             f"an integer and FP32; got {source} to {dtype}", kind=ParserTypeError)
        wrapped = int(value) % (1 << bits)  # int() of a float rounds toward zero
        return wrapped - (1 << bits) if not dtype.startswith("UINT") and wrapped >= 1 << (bits - 1) else wrapped

    def keywords(self, node: ast.Call, allowed: set) -> dict:
        values = {}
        for keyword in node.keywords:
            if keyword.arg not in allowed:
                raise self.error(keyword, f"unexpected keyword argument '{keyword.arg}'", kind=ParserSyntaxError)
            values[keyword.arg] = keyword.value
        return values

    def dtype_of(self, node, what: str) -> str:
        value = self.expr(node)
        if not isinstance(value, DataType):
            raise self.error(node, f"{what} must be a dtype such as pl.FP32", kind=ParserTypeError)
        return value.name

    def shape_of(self, node, what: str) -> tuple:
        value = self.expr(node)
        if not isinstance(value, list) or not value or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in value
        ):
            raise self.error(node, f"{what} must be a list of positive integers, got {value!r}", kind=ParserTypeError)
        return tuple(value)

    def alloc_window_buffer(self, node: ast.Call):
        keywords = self.keywords(node, {"dtype", "name"})
        if len(node.args) != 1:
            raise self.error(node, "pld.alloc_window_buffer takes a size in bytes, or a shape with dtype=",
                             kind=ParserSyntaxError)
        first = self.expr(node.args[0])
        if isinstance(first, list):
            if "dtype" not in keywords:
                raise self.error(node, "pld.alloc_window_buffer with a shape needs dtype=", kind=ParserSyntaxError)
            shape = self.shape_of(node.args[0], "the window buffer's shape")
            dtype = self.dtype_of(keywords["dtype"], "dtype=")
            nbytes = _BYTES[dtype]
            for dim in shape:
                nbytes *= dim
        else:
            if "dtype" in keywords:
                raise self.error(keywords["dtype"], "dtype= goes with a shape, not with a size in bytes",
                                 kind=ParserSyntaxError)
            nbytes = self.integer(node.args[0], "the window buffer's size in bytes")
            if nbytes <= 0:
                raise self.error(node.args[0], f"a window buffer's size must be positive, got {nbytes}")
        name = self.expr(keywords["name"]) if "name" in keywords else ""
        offset = sum(_round_up(w.nbytes) for w in self.windows)
        buffer = WindowBuffer(name or f"window_{len(self.windows)}", nbytes, offset, self.place(node))
        self.windows.append(buffer)
        return buffer

    def window(self, node: ast.Call) -> WindowView:
        keywords = self.keywords(node, {"dtype"})
        if len(node.args) != 2 or "dtype" not in keywords:
            raise self.error(node, "expected pld.window(buffer, shape, dtype=...)", kind=ParserSyntaxError)
        buffer = self.expr(node.args[0])
        if not isinstance(buffer, WindowBuffer):
            raise self.error(node.args[0], "pld.window's first argument is a pld.alloc_window_buffer result",
                             kind=ParserTypeError)
        shape = self.shape_of(node.args[1], "the window's shape")
        dtype = self.dtype_of(keywords["dtype"], "dtype=")
        nbytes = _BYTES[dtype]
        for dim in shape:
            nbytes *= dim
        if nbytes > buffer.nbytes:
            raise self.error(
                node,
                f"the window [{', '.join(map(str, shape))}] {dtype} takes {nbytes} bytes, but its buffer "
                f"'{buffer.name}' holds {buffer.nbytes}",
                f"allocate the buffer (at {buffer.place}) with at least {nbytes} bytes",
            )
        return WindowView(buffer.name, shape, dtype)

    def dispatch(self, node: ast.Call, entry) -> None:
        keywords = {k.arg: k for k in node.keywords}
        if "device" not in keywords:
            raise self.error(node, f"the dispatch of {entry.__name__} needs device=r, the rank it runs on",
                             kind=ParserSyntaxError)
        device = self.integer(keywords.pop("device").value, "device=")
        if not 0 <= device < self.world_size:
            raise self.error(
                node,
                f"device={device} is not a rank of this program: the world has {self.world_size} rank(s), "
                f"0 to {self.world_size - 1}",
                "the world size is the number of DistributedConfig.device_ids; loop over pl.range(pld.world_size())",
            )
        if any(k is None for k in keywords):
            raise self.error(node, "a dispatch cannot unpack keyword arguments", kind=ParserSyntaxError)
        args = [self.argument(a) for a in node.args]
        named = {name: self.argument(k.value) for name, k in keywords.items()}
        try:
            bound = entry._signature.bind(*args, **named)
        except TypeError as error:
            raise self.error(node, f"{entry.__name__}: {error}", kind=ParserTypeError) from None
        bound.apply_defaults()
        self.dispatches.append(Dispatch(device, entry, list(bound.arguments.values()), self.place(node)))

    def argument(self, node):
        value = self.expr(node)
        if isinstance(value, (HostTensor, WindowView)) or (isinstance(value, (int, float)) and value is not None):
            return value
        raise self.error(node, f"a chip entry takes tensors, windows and numbers, not {value!r}", kind=ParserTypeError)


class _Return(Exception):
    pass


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _dotted(node) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def evaluate(source, names: dict, world_size: int, params: dict) -> HostPlan:
    """The plan of the host function whose source is ``source`` (a ``decorator._Source``), called with
    ``params`` (name -> HostTensor or number) in a world of ``world_size`` ranks."""
    definition = ast.parse(source.text).body[0]
    evaluator = _Evaluator(source, names, world_size, params)
    try:
        evaluator.run_body(definition.body)
    except _Return:
        pass
    return HostPlan(world_size, evaluator.windows, evaluator.dispatches)
