"""``@pl.program``: a whole program written as a class, one ``@pl.function`` method per function.

This is the form the IR printer writes (``print(fn.lower(...))``), so printed IR can be edited and
parsed back, and a program can be written by hand::

    @pl.program
    class Scale:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out_1: pl.Tensor[[16, 16], pl.FP32] = self.scale(x, out)
            return out_1

        @pl.function(type=pl.FunctionType.InCore)
        def scale(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
            pl.tile.store(pl.tile.muls(t, 2.0), [0, 0], out)
            return out

The class is never used as a class: its source is parsed by the C++ frontend, and the decorator
returns the program (``print(program)`` shows it, ``program.functions`` maps each function's ``GlobalVar`` to it).
"""

import ast
import builtins
import inspect
import os
import linecache
import sys
import textwrap

from pypto import _core
from pypto.language.dtypes import DataType


def _is_int_list(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _scalars(names: dict) -> dict:
    """The values that act as literals: numbers, dtypes (``dt = pl.FP16``), lists of integers
    (``off = [0, 32]``), ``pl.dynamic`` dimensions (DynVar), strings (``phase = "partial"``, an op's
    string attribute) and None (``valid_shape=vs`` with ``vs = None`` leaves the argument out); dunder
    names such as ``__doc__`` are not the program's."""
    from pypto.language.typing import DynVar

    return {
        name: value
        for name, value in names.items()
        if isinstance(value, (bool, int, float, DataType, DynVar))
        or _is_int_list(value)
        or ((isinstance(value, str) or value is None) and not name.startswith("__"))
    }


def _constants(cls, frame) -> dict:
    """The int/float/bool values (and pl.dynamic dimensions) a program's annotations and bodies may name:
    its module's globals, the locals where the class is defined, and its methods' closure variables.
    They act as literals."""
    module = sys.modules.get(cls.__module__)
    constants = _scalars(vars(module)) if module else {}
    if frame is not None:
        constants.update(_scalars(frame.f_globals))
        constants.update(_scalars(frame.f_locals))
    for value in vars(cls).values():
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if not inspect.isfunction(fn):
            continue
        closure = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # not bound yet
                continue
        constants.update(_scalars(closure))
    return constants


def _source_at(cls, frame):
    """The class's lines, the file and its first line, found from where it is being defined: the class
    statement of its name that spans the frame's current line (None when there is no such statement)."""
    filename = frame.f_code.co_filename if frame is not None else None
    all_lines = linecache.getlines(filename) if filename else []
    if all_lines:
        try:
            tree = ast.parse("".join(all_lines))
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                if start <= frame.f_lineno <= node.end_lineno:
                    return all_lines[start - 1 : node.end_lineno], start, filename
    return None


def _parse_class(cls, frame):
    # Where the class statement runs is exact even when a file defines two classes of one name;
    # inspect is the fallback (a frame without source lines, such as a decorator applied by hand).
    found = _source_at(cls, frame)
    if found:
        lines, first_line, filename = found
    else:
        lines, first_line = inspect.getsourcelines(cls)
        filename = inspect.getsourcefile(cls) or "<unknown>"
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    # Columns in diagnostics must point into the real file, before dedenting.
    first = next((line for line in lines if line.strip()), "")
    dedented_first = next((line for line in text.splitlines(True) if line.strip()), "")
    column_offset = len(first) - len(dedented_first)
    functions = _module_functions(ast.parse(text), cls, frame)
    constants = {}
    for function in functions.values():  # the numbers they see where defined; the class's own names win
        constants.update(_scalars(function.__globals__))
        constants.update(getattr(function, _MODULE_FUNCTION))
        constants.update(_scalars(_closure(function)))
    constants.update(_constants(cls, frame))
    request = (text, filename, first_line - 1, column_offset, constants, _external_sources(cls))
    request = (request, [_module_function_source(name, function) for name, function in functions.items()])
    parsed = _core.parse_program(*request[0], module_functions=request[1])
    if isinstance(parsed, _core.Program):
        return parsed
    return DynamicProgram(cls.__name__, request, parsed)


def _closure(function) -> dict:
    """The variables a nested function reads from the function that made it, by name."""
    closure = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # not bound yet
            continue
    return closure


def _module_functions(tree, cls, frame) -> dict:
    """The module-level ``@pl.function`` functions the class names (``out = kernel(x, out)``), and those
    they name in turn, each once, by the name they are called by: looked up where the class is
    defined, then where each function is (its closure, then its module). A factory's result
    (``qk = make_qk(tile)``) is one too: a ``@pl.function`` defined inside a function."""
    module = sys.modules.get(cls.__module__)
    scopes = [frame.f_locals, frame.f_globals] if frame is not None else []
    scopes.append(vars(module) if module else {})
    found, pending = {}, [(tree, scopes)]
    while pending:
        node, where = pending.pop()
        for name in sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}):
            value = next((scope[name] for scope in where if name in scope), None)
            if name in found or getattr(value, _MODULE_FUNCTION, None) is None:
                continue
            found[name] = value
            lines, _ = inspect.getsourcelines(value)
            pending.append((ast.parse(textwrap.dedent("".join(lines))), [_closure(value), value.__globals__]))
    return found


def _module_function_source(name, function) -> tuple:
    """(name, source, file, line offset, column offset, external_source) of a module-level @pl.function
    that the program calls `name`."""
    lines, first_line = inspect.getsourcelines(function)
    filename = inspect.getsourcefile(function) or "<unknown>"
    text = textwrap.dedent("".join(lines))
    first = next((line for line in lines if line.strip()), "")
    dedented_first = next((line for line in text.splitlines(True) if line.strip()), "")
    external = getattr(function, _EXTERNAL_SOURCE, None)
    if external is not None:  # relative to the function's own file
        external = os.path.join(os.path.dirname(os.path.abspath(filename)), os.fspath(external))
    return name, text, filename, first_line - 1, len(first) - len(dedented_first), external or ""


class DynamicProgram:
    """A ``@pl.program`` whose entry's parameters name ``pl.dynamic`` dimensions. Its shapes are known
    only when it runs, so it is kept parsed-but-unspecialised and compiled once per set of shapes:
    ``pypto.testing.run`` and ``pypto.runtime.run`` specialise it on the tensors they pass, and
    ``program.specialise(*tensors)`` gives the program for those tensors (cached by shape and dtype).

    ``print(program)`` shows the class as written, under a comment naming the dimensions that wait
    for a run; ``print(program.specialise(...))`` shows the IR of one specialisation."""

    def __init__(self, name: str, request: tuple, entry: dict):
        self.name = name
        self.entry_name = entry["function"]
        self.parameters = list(entry["params"])
        self.dynamic_dims = list(entry["dims"])
        self._request = request
        self._cache = {}

    def specialise(self, *args, **kwargs):
        """The program for these arguments of the entry (in its parameter order, or by name): each a
        ``torch.Tensor``, a ``(shape, dtype)`` pair (dtype a DSL name such as ``"FP32"`` or a torch
        dtype), or for a scalar parameter anything (scalars do not specialise)."""
        specs = self._specs(args, kwargs)
        key = tuple(sorted((name, tuple(shape), dtype) for name, (shape, dtype) in specs.items()))
        program = self._cache.get(key)
        if program is None:
            positional, module_functions = self._request
            program = _core.parse_program(*positional, entry_specs=specs, module_functions=module_functions)
            self._cache[key] = program
        return program

    def _specs(self, args, kwargs) -> dict:
        if len(args) > len(self.parameters):
            raise TypeError(f"{self.name}.{self.entry_name} takes {len(self.parameters)} arguments, got {len(args)}")
        values = dict(zip(self.parameters, args))
        for name, value in kwargs.items():
            if name not in self.parameters:
                raise TypeError(f"{self.name}.{self.entry_name} has no parameter {name!r}")
            if name in values:
                raise TypeError(f"{self.name}.{self.entry_name} got two values for {name!r}")
            values[name] = value
        return {name: spec for name, value in values.items() if (spec := _tensor_spec(name, value)) is not None}

    def __str__(self) -> str:
        dims = ", ".join(self.dynamic_dims)
        header = (f"# @pl.program {self.name}, not specialised: its entry '{self.entry_name}' takes the "
                  f"pl.dynamic dimensions {dims} from the tensors it runs with\n")
        return header + self._request[0][0]

    def __repr__(self) -> str:
        return (f"<DynamicProgram {self.name}: entry '{self.entry_name}' with pl.dynamic dimensions "
                f"{', '.join(self.dynamic_dims)}>")

    def __getattr__(self, attribute):
        # What a specialised program has (functions, entry_name of the IR, ...): not known yet.
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        raise AttributeError(
            f"{self.name} has no {attribute!r} before it is specialised: its entry '{self.entry_name}' takes the "
            f"pl.dynamic dimensions {', '.join(self.dynamic_dims)} from its tensors; use "
            f"{self.name}.specialise(*tensors).{attribute}"
        )


def _tensor_spec(name, value):
    """(shape, DSL dtype name) for a tensor argument; None for a scalar."""
    from pypto.runtime.torch_interop import dsl_dtype_name, dsl_shape

    if isinstance(value, (bool, int, float)):
        return None
    if isinstance(value, tuple) and len(value) == 2:
        shape, dtype = value
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        shape, dtype = value.shape, value.dtype
    else:
        raise TypeError(f"argument {name!r} must be a torch.Tensor, a (shape, dtype) pair or a scalar, "
                        f"got {type(value).__name__}")
    if not isinstance(dtype, str):
        dsl_name = dsl_dtype_name(dtype)
        if dsl_name is None:
            raise TypeError(f"argument {name!r} has unsupported dtype {dtype}")
        dtype = dsl_name
        shape = dsl_shape(dtype, shape)  # a torch tensor's: FP4's counts bytes
    return [int(extent) for extent in shape], dtype


def _external_sources(cls) -> dict:
    """Method name -> the ``external_source`` its ``@pl.function`` evaluated to, as written (the parser
    resolves a relative path against the program's file and checks that it exists)."""
    sources = {}
    for name, value in vars(cls).items():
        source = getattr(value, _EXTERNAL_SOURCE, None)
        if source is not None:
            sources[name] = os.fspath(source)
    return sources


def program(cls=None, **options):
    """``@pl.program`` (or ``@pl.program()``) on a class: parses it into a program."""
    if options:
        raise TypeError(f"pl.program got unexpected option(s): {', '.join(sorted(options))}")
    if cls is None:
        return program
    if not inspect.isclass(cls):
        raise TypeError("@pl.program decorates a class whose methods are @pl.function functions")
    return _parse_class(cls, sys._getframe(1))


# Where @pl.function leaves an evaluated external_source for the program's parser.
_EXTERNAL_SOURCE = "__pypto_external_source__"
# Set on a function @pl.function decorates outside a class: a program that names it calls it.
_MODULE_FUNCTION = "__pypto_module_function__"


def function(fn=None, *, type=None, attrs=None, external_source=None):  # noqa: A002 - the DSL spelling is type=
    """``@pl.function(type=pl.FunctionType.X, attrs={...}[, external_source=PATH])`` marks a method of a
    ``@pl.program``.

    The program's parser reads the decorator from the source. ``external_source`` (a str or
    ``os.PathLike``; relative to the file that declares the program) names a hand-written C++ kernel;
    its value is kept on the method because the parser sees only the expression that computed it."""
    if external_source is not None and not isinstance(external_source, (str, os.PathLike)):
        raise TypeError(f"external_source must be a str or os.PathLike, got {builtins.type(external_source).__name__}")

    # Where the decorator is written: a factory's locals (`def make_k(rows): @pl.function def k(...)`)
    # are what k's annotations name, and they are gone once the factory returns.
    frame = sys._getframe(1)
    defined_in = _scalars(frame.f_locals) if frame.f_code.co_name != "<module>" else {}

    def mark(f):
        if external_source is not None:
            setattr(f, _EXTERNAL_SOURCE, external_source)
        # A method's qualified name is Class.method; a module-level function's is its own name.
        if "." not in f.__qualname__.replace(".<locals>.", ""):
            setattr(f, _MODULE_FUNCTION, defined_in)
        return f

    if fn is None:
        return mark
    return mark(fn)
