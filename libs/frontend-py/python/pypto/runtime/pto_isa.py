"""Where hand-written kernels find pto-isa's headers (``#include <pto/pto-inst.hpp>``)."""

import json
import os
from pathlib import Path


def _simulator_headers():
    """The simulator plugin's own pto-isa headers: ``extern_include/`` beside an installed plugin, or,
    for a plugin in a meson build tree, the source tree's ``plugins/<name>/extern_include`` (the one
    the plugin compiles kernels against, src/extern_kernel.cpp)."""
    from pypto.runtime import platforms

    env = os.environ.get("PYPTO_SIM_EXTERN_INCLUDE")
    candidates = [Path(env)] if env else []
    for name in platforms.names():
        entry = platforms.describe(name)
        if not entry or entry["kind"] != "simulator" or not entry.get("path"):
            continue
        plugin_dir = Path(entry["path"]).resolve().parent
        candidates.append(plugin_dir / "extern_include")
        for build_dir in plugin_dir.parents:
            info = build_dir / "meson-info" / "meson-info.json"
            if info.is_file():
                source = Path(json.loads(info.read_text())["directories"]["source"])
                candidates.append(source / plugin_dir.relative_to(build_dir) / "extern_include")
                break
    return next((str(c) for c in candidates if (c / "pto" / "pto-inst.hpp").is_file()), None)


def pto_isa_include_dir() -> str:
    """The pto-isa headers' include directory, for hand-written kernels that include them:
    ``$PTO_ISA_ROOT/include`` when that is set (a pto-isa checkout), else the simulator's own
    implementation of pto-isa's tile interface (docs/cce-kernels.md)."""
    root = os.environ.get("PTO_ISA_ROOT")
    if root:
        include = os.path.join(root, "include")
        if not os.path.isdir(include):
            raise FileNotFoundError(f"PTO_ISA_ROOT={root!r} has no include/ directory")
        return include
    headers = _simulator_headers()
    if headers is None:
        raise NotImplementedError(
            "pto_isa_include_dir: no simulator plugin with pto-isa headers was found and PTO_ISA_ROOT is not set; "
            "set PTO_ISA_ROOT to a pto-isa checkout"
        )
    return headers
