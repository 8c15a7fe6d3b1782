"""Exceptions for mistakes in kernel code, rendered with the offending source line.

``str(error)`` reads like a compiler diagnostic::

    error: unknown operation 'pl.frobnicate'
      --> kernel.py:12:18
       |
    12 |         tile_c = pl.frobnicate(tile_a, tile_b)
       |                  ^^^^^^^^^^^^^
"""

import linecache


class ParserError(Exception):
    """A kernel the compiler rejects; ``span`` locates the cause in the user's file."""

    def __init__(self, message: str, filename: str = "", line: int = 0, column: int = 0, hint: str = ""):
        self.message = message
        self.span = {"filename": filename, "line": line, "column": column}
        self.hint = hint
        super().__init__(render(message, filename, line, column, hint))

    @property
    def location(self) -> str:
        """``file:line:col``, the form editors jump to."""
        return f"{self.span['filename']}:{self.span['line']}:{self.span['column']}"


class ParserSyntaxError(ParserError):
    pass


class ParserTypeError(ParserError):
    pass


class UndefinedVariableError(ParserError):
    pass


class UnsupportedFeatureError(ParserError):
    pass


class InvalidOperationError(ParserError):
    pass


class ResourceError(ParserError):
    """A kernel that does not fit the chip (on-chip buffer capacity)."""


class InternalCompilerError(ParserError):
    """A bug in the toolchain rather than in the kernel."""


_KIND_TO_CLASS = {
    "syntax error": ParserSyntaxError,
    "type error": ParserTypeError,
    "undefined name": UndefinedVariableError,
    "unknown operation": InvalidOperationError,
    "invalid operation": InvalidOperationError,
    "resource error": ResourceError,
    "internal error": InternalCompilerError,
}


def _token_length(text: str, start: int) -> int:
    """Length of the dotted identifier at ``start`` (``pl.tile.load``), at least 1."""
    end = start
    while end < len(text) and (text[end].isalnum() or text[end] in "_."):
        end += 1
    return max(1, end - start)


def render(message: str, filename: str, line: int, column: int, hint: str = "") -> str:
    lines = [f"error: {message}"]
    if line > 0:
        lines.append(f"  --> {filename}:{line}:{column}")
        source = linecache.getline(filename, line).rstrip("\n") if filename else ""
        if source:
            gutter = " " * len(str(line))
            caret_at = max(column - 1, 0)
            lines.append(f"{gutter} |")
            lines.append(f"{line} | {source}")
            lines.append(f"{gutter} | {' ' * caret_at}{'^' * _token_length(source, caret_at)}")
    elif filename:
        lines.append(f"  --> {filename}")
    if hint:
        lines.append(f"  = help: {hint}")
    return "\n".join(lines)


def make_error(kind: str, message: str, filename: str, line: int, column: int, hint: str = "") -> ParserError:
    """Called by the C++ core to build the exception for a diagnostic."""
    return _KIND_TO_CLASS.get(kind, ParserError)(message, filename, line, column, hint)
