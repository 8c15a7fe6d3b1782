"""The JIT's on-disk cache: what ``fn.compile`` built in one process, another process reuses.

An entry is ``<cache>/<digest>/`` holding a copy of the build directory (``artifacts/``), where the
digest is SHA-256 over the files a build directory holds (``_LAYOUT``), the toolchain build
(``build_identity``) and the JIT's in-memory key (the sources of the entry and of every function it
calls, with each hand-written kernel's include closure read again at every call, the platform, the
argument shapes and dtypes, the scalar values and the options that change what is built). So an
edited kernel, an edited header it includes or a rebuilt toolchain misses; nothing else does.

``<cache>`` is ``$PYPTO_CACHE_DIR``, else ``~/.cache/pypto/jit``; ``PYPTO_CACHE=0`` (or
``PYPTO_CACHE_DIR=off``) turns the cache off. An entry is written under a private name and renamed
into place, so a reader never sees half of one, and of two processes storing the same entry at once
one rename wins and the other process drops its copy: both succeed, one valid entry remains. An
entry that does not load is removed and built again, never trusted.
"""

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Optional

_ARTIFACTS = "artifacts"

# What a stored build directory holds; raised when compiling starts writing a new file into it
# (2: debug/run.py), so that entries stored before do not serve builds that lack it.
_LAYOUT = 2


# What this process's lookups and stores did (cache_info()).
_STATS = {"hits": 0, "misses": 0, "stores": 0, "discarded": 0}


def cache_root() -> Optional[Path]:
    setting = os.environ.get("PYPTO_CACHE_DIR")
    if setting == "off" or os.environ.get("PYPTO_CACHE") == "0":
        return None
    if setting:
        return Path(setting)
    return Path.home() / ".cache" / "pypto" / "jit"


_BUILD_IDENTITY = None


def build_identity() -> str:
    """Which toolchain build this process runs: the size and modification time of every pypto
    library it has loaded (the extension, libpypto_*, the backend plugins). The version number alone
    would let a rebuilt compiler reuse what an older build produced."""
    global _BUILD_IDENTITY
    if _BUILD_IDENTITY is None:
        from pypto import _core

        files = {os.path.realpath(_core.__file__)}
        try:
            with open("/proc/self/maps") as maps:
                for line in maps:  # address perms offset device inode [path]
                    fields = line.split(maxsplit=5)
                    path = fields[5].strip() if len(fields) == 6 else ""
                    if "libpypto_" in os.path.basename(path):
                        files.add(os.path.realpath(path))
        except OSError:
            pass
        stamps = []
        for path in sorted(files):
            try:
                info = os.stat(path)
                stamps.append((path, info.st_size, info.st_mtime_ns))
            except OSError:
                continue
        _BUILD_IDENTITY = hashlib.sha256(repr((_core.version(), stamps)).encode()).hexdigest()
    return _BUILD_IDENTITY


def digest(key) -> str:
    text = json.dumps([_LAYOUT, build_identity(), key], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def lookup(key) -> Optional[Path]:
    """The build directory of a stored entry for ``key``, or None."""
    root = cache_root()
    if root is None:
        return None
    artifacts = root / digest(key) / _ARTIFACTS
    found = (artifacts / "pypto_manifest.json").is_file()
    _STATS["hits" if found else "misses"] += 1
    return artifacts if found else None


def discard(key) -> None:
    """Removes the entry for ``key`` (one that failed to load), so that the next store replaces it."""
    root = cache_root()
    if root is None:
        return
    entry = root / digest(key)
    doomed = root / f".{entry.name}.discarded.{os.getpid()}.{uuid.uuid4().hex}"
    try:
        os.rename(entry, doomed)  # out of the way at once; other processes see no entry
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)
    _STATS["discarded"] += 1


def cache_info() -> dict:
    """The cache's directory, its entries and bytes on disk, and this process's hits, misses, stores
    and discarded entries."""
    root = cache_root()
    entries = [p for p in root.iterdir() if not p.name.startswith(".")] if root and root.is_dir() else []
    size = sum(f.stat().st_size for entry in entries for f in entry.rglob("*") if f.is_file())
    return {"directory": str(root) if root else None, "entries": len(entries), "bytes": size, **_STATS}


def store(key, build_dir) -> Optional[Path]:
    """Copies ``build_dir`` into the cache as the entry for ``key``; returns the entry's build
    directory (this process's copy, or the one another process stored first)."""
    root = cache_root()
    if root is None:
        return None
    final = root / digest(key)
    if (final / _ARTIFACTS / "pypto_manifest.json").is_file():
        return final / _ARTIFACTS
    root.mkdir(parents=True, exist_ok=True)
    private = root / f".{final.name}.{os.getpid()}.{uuid.uuid4().hex}"
    try:
        shutil.copytree(build_dir, private / _ARTIFACTS, symlinks=True)
        (private / "key.json").write_text(json.dumps(key, sort_keys=True, default=repr, indent=1) + "\n")
        os.rename(private, final)  # atomic; fails if another process's entry is already there
        _STATS["stores"] += 1
    except OSError:
        shutil.rmtree(private, ignore_errors=True)
        if not (final / _ARTIFACTS / "pypto_manifest.json").is_file():
            return None  # the cache is not writable: compiling still worked
    return final / _ARTIFACTS
