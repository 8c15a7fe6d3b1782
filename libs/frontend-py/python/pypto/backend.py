"""Target SoCs. A platform names one (``a2a3``/``a2a3sim``: Ascend910B; ``a5``/``a5sim``: Ascend950), as
its backend plugin describes it (pypto/runtime/platforms.py): no platform is listed here."""

import enum

from pypto.runtime import platforms


class BackendType(enum.Enum):
    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"


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


def _backend_of_soc(soc):
    return next((backend for backend in BackendType if backend.value == soc), None)


def backend_for_platform(platform: str) -> BackendType:
    """The backend whose SoC ``platform`` models."""
    backend = _backend_of_soc(platforms.soc_name(platform))
    if backend is None:
        known = [name for name in platforms.names() if _backend_of_soc(platforms.soc_name(name))]
        raise ValueError(f"unknown platform {platform!r}; expected one of {', '.join(known)}")
    return backend


def _simulator_of(backend: BackendType) -> str:
    simulator = platforms.simulator_of(backend.value)
    if simulator is None:
        raise ValueError(f"no installed backend plugin simulates {backend.name}; pass a platform")
    return simulator


def platform_for(backend_type=None, platform=None) -> str:
    """The platform a compile targets: ``platform`` if given (checked against ``backend_type``), else
    the simulator of ``backend_type`` (or of the configured backend)."""
    if platform is not None:
        if backend_type is None and platforms.describe(platform) is not None:
            return platform  # any plugin's platform, whatever its SoC
        backend = backend_for_platform(platform)
        if backend_type is not None and backend_type != backend:
            raise ValueError(f"platform {platform!r} is {backend.name}, not {BackendType(backend_type).name}")
        return platform
    return _simulator_of(BackendType(backend_type) if backend_type is not None else get_backend_type())
