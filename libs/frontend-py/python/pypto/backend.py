"""Target SoCs. A platform names one (``a2a3``/``a2a3sim``: Ascend910B; ``a5``/``a5sim``: Ascend950)."""

import enum


class BackendType(enum.Enum):
    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"


# The simulator platform of each backend: what compiling for a backend alone targets here.
_SIM_PLATFORM = {BackendType.Ascend910B: "a2a3sim", BackendType.Ascend950: "a5sim"}
_BACKEND_OF = {"a2a3": BackendType.Ascend910B, "a2a3sim": BackendType.Ascend910B,
               "a5": BackendType.Ascend950, "a5sim": BackendType.Ascend950}

_configured = None


def set_backend_type(backend_type: BackendType) -> None:
    """Sets the backend that ``pypto.ir.compile`` targets when given neither a backend nor a platform."""
    global _configured
    if not isinstance(backend_type, BackendType):
        raise TypeError(f"set_backend_type expects a BackendType, got {backend_type!r}")
    _configured = backend_type


def get_backend_type() -> BackendType:
    return _configured or BackendType.Ascend910B


def is_backend_configured() -> bool:
    return _configured is not None


def reset_for_testing() -> None:
    global _configured
    _configured = None


def backend_for_platform(platform: str) -> BackendType:
    try:
        return _BACKEND_OF[platform]
    except KeyError:
        raise ValueError(f"unknown platform {platform!r}; expected one of {', '.join(_BACKEND_OF)}") from None


def platform_for(backend_type=None, platform=None) -> str:
    """The platform a compile targets: ``platform`` if given (checked against ``backend_type``), else
    the simulator of ``backend_type`` (or of the configured backend)."""
    if platform is not None:
        backend = backend_for_platform(platform)
        if backend_type is not None and backend_type != backend:
            raise ValueError(f"platform {platform!r} is {backend.name}, not {BackendType(backend_type).name}")
        return platform
    return _SIM_PLATFORM[BackendType(backend_type) if backend_type is not None else get_backend_type()]
