"""Parser-side errors of the DSL frontend (the frontend itself is C++)."""

from pypto.language.parser.diagnostics import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ResourceError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)

__all__ = [
    "ParserError", "ParserSyntaxError", "ParserTypeError", "UndefinedVariableError",
    "UnsupportedFeatureError", "InvalidOperationError", "ResourceError",
]
