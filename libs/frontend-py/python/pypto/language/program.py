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
    """The values a program may name as literals: numbers, dtypes (``dt = pl.FP16``) and lists of
    integers (``off = [0, 32]``)."""
    return {
        name: value
        for name, value in names.items()
        if isinstance(value, (bool, int, float, DataType)) or _is_int_list(value)
    }


def _constants(cls, frame) -> dict:
    """The int/float/bool values a program's annotations and bodies may name: its module's globals, the
    locals where the class is defined, and its methods' closure variables. They act as literals."""
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
    return _core.parse_program(text, filename, first_line - 1, column_offset, _constants(cls, frame),
                               _external_sources(cls))


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


def function(fn=None, *, type=None, attrs=None, external_source=None):  # noqa: A002 - the DSL spelling is type=
    """``@pl.function(type=pl.FunctionType.X, attrs={...}[, external_source=PATH])`` marks a method of a
    ``@pl.program``.

    The program's parser reads the decorator from the source. ``external_source`` (a str or
    ``os.PathLike``; relative to the file that declares the program) names a hand-written C++ kernel;
    its value is kept on the method because the parser sees only the expression that computed it."""
    if external_source is not None and not isinstance(external_source, (str, os.PathLike)):
        raise TypeError(f"external_source must be a str or os.PathLike, got {builtins.type(external_source).__name__}")

    def mark(f):
        if external_source is not None:
            setattr(f, _EXTERNAL_SOURCE, external_source)
        return f

    if fn is None:
        return mark
    return mark(fn)
