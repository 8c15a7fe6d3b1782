"""The runtime's log threshold: ``configure_log("info")``, or ``PYPTO_RUNTIME_LOG`` in the environment."""

import logging
import os

from pypto import _core

# Upstream's level names; v0..v9 are verbosity steps between debug and info.
_NAMED = {"debug": 10, "info": 20, "warn": 30, "warning": 30, "error": 40, "null": 60, "off": 60}
LOG_LEVEL_CHOICES = ("debug", *(f"v{i}" for i in range(10)), "info", "warn", "error", "null")

_ENV = "PYPTO_RUNTIME_LOG"
_current = None


def _threshold(level) -> int:
    if isinstance(level, bool):
        raise ValueError(f"log level must be a name or an int, got {level!r}")
    if isinstance(level, int):
        return level
    name = str(level).strip().lower()
    if name in _NAMED:
        return _NAMED[name]
    if len(name) == 2 and name[0] == "v" and name[1].isdigit():
        return 19 - int(name[1])  # v0 is just below info, v9 just above debug
    raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LOG_LEVEL_CHOICES)}")


def configure_log(level, *, sync_pypto: bool = False) -> None:
    """Sets the runtime's (and the simulator's) log threshold; with ``sync_pypto``, the ``pypto``
    Python logger's too."""
    global _current
    _current = _threshold(level)
    _core.set_log_level(_current)
    if sync_pypto:
        logging.getLogger("pypto").setLevel(_current)


def current_level() -> int:
    if _current is None:
        configure_log(os.environ.get(_ENV, "warn"))
    return _current
