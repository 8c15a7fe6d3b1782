"""The platforms this pypto knows, as the installed backend plugins describe them.

There is no list of platforms in Python: the plugin registry (``rt::BackendRegistry``) is the one place
that knows them, from each plugin's platform descriptions (docs/plugin-abi.md). A plugin found on
``$PYPTO_PLUGIN_PATH`` adds its platforms here, to ``RunConfig``'s check and to ``pypto.backend``.
Plugins are found once per process, on first use."""

import functools

from pypto import _core


@functools.lru_cache(maxsize=None)
def _known() -> tuple:
    # Each simulator is followed by the device platform it stands for ("a2a3sim", "a2a3", ...). A device
    # platform that no installed plugin serves is known all the same (its "plugin" is ""), so that a run
    # there says which backend is missing rather than that the name is unknown.
    return tuple(_core.platforms())


def names() -> tuple:
    """Every known platform's name, each simulator followed by its device."""
    return tuple(entry["platform"] for entry in _known())


def describe(platform: str):
    """The plugin's description of ``platform`` (a dict: platform, plugin, kind, simulates, soc, arch,
    pto_modules, toolchain, description, path), or None for an unknown platform."""
    return next((entry for entry in _known() if entry["platform"] == platform), None)


def is_simulator(platform: str) -> bool:
    """Whether ``platform`` runs here (a simulator-kind platform) rather than on a device."""
    entry = describe(platform)
    return entry is not None and entry["kind"] == "simulator"


def soc_name(platform: str):
    """The name of the SoC ``platform`` models ("Ascend910B"), or None for an unknown platform."""
    entry = describe(platform)
    return entry["soc"] if entry is not None else None


def simulator_of(soc: str):
    """The simulator that stands for a device of SoC ``soc`` (what compiling for a backend alone
    targets), or None when no installed plugin has one."""
    return next((entry["platform"] for entry in _known()
                 if entry["kind"] == "simulator" and entry["simulates"] and entry["soc"] == soc), None)
