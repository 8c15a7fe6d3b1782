"""The JIT's on-disk cache: what ``fn.compile`` built in one process, another process reuses.

An entry is ``<cache>/<digest>/`` holding a copy of the build directory (``artifacts/``) and
``entry.json``, where the digest is SHA-256 over the files a build directory holds (``_LAYOUT``),
the toolchain build (``build_identity``) and the JIT's in-memory key (the sources of the entry and
of every function it calls, with each hand-written kernel's include closure read again at every
call, the platform, the argument shapes and dtypes, the scalar values and the options that change
what is built). So an edited kernel, an edited header it includes or a rebuilt toolchain misses;
nothing else does.

``entry.json`` holds the key itself and the SHA-256 of every file the entry was stored with. A
lookup serves an entry only when its key is the one asked for and every file still has its digest:
an entry edited by hand (``lowered_program.py`` rewritten, the manifest deleted) or holding another
specialisation's key is discarded and built again, never served.

``<cache>`` is ``$PYPTO_CACHE_DIR``, else ``~/.cache/pypto/jit``; ``PYPTO_CACHE=0`` (or
``PYPTO_CACHE_DIR=off``) turns the cache off. An entry is written under a private name and renamed
into place, so a reader never sees half of one, and of two processes storing the same entry at once
one rename wins and the other process drops its copy: both succeed, one valid entry remains. The
private copies a killed process left behind are swept once they are a minute old. A cache that
cannot be written warns once per process, and compiling carries on without it.
"""

import hashlib
import json
import os
import shutil
import time
import uuid
import warnings
from pathlib import Path
from typing import Optional

_ARTIFACTS = "artifacts"
_METADATA = "entry.json"
_MANIFEST = "pypto_manifest.json"

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
    return hashlib.sha256(_key_text(key).encode()).hexdigest()


def _key_text(key) -> str:
    return json.dumps([_LAYOUT, build_identity(), key], sort_keys=True, default=repr)


def lookup(key) -> Optional[Path]:
    """The build directory of a stored entry for ``key``, or None. An entry that is not intact (its
    metadata or a file missing or changed, or another key's) is discarded: the miss rebuilds it."""
    root = cache_root()
    if root is None:
        return None
    entry = root / digest(key)
    found = entry.is_dir() and _intact(entry, key)
    if entry.is_dir() and not found:
        _discard_entry(root, entry)
    _STATS["hits" if found else "misses"] += 1
    return entry / _ARTIFACTS if found else None


def _intact(entry: Path, key) -> bool:
    """Whether ``entry`` holds ``key``'s build exactly as it was stored."""
    try:
        metadata = json.loads((entry / _METADATA).read_text())
        if metadata.get("key") != _key_text(key) or not (entry / _ARTIFACTS / _MANIFEST).is_file():
            return False
        return metadata.get("files") == _file_digests(entry / _ARTIFACTS, metadata["files"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _file_digests(artifacts: Path, names=None) -> dict:
    """SHA-256 of each file under ``artifacts`` (of ``names`` only, when given: files a run adds
    later, such as dfx outputs, are not part of the entry)."""
    if names is None:
        files = (p for p in artifacts.rglob("*") if p.is_file() and not p.is_symlink())
        names = sorted(str(p.relative_to(artifacts)) for p in files)
    digests = {}
    for name in names:
        path = artifacts / name
        if not path.is_file():
            return {}
        with open(path, "rb") as stream:
            digests[name] = hashlib.file_digest(stream, "sha256").hexdigest()
    return digests


def discard(key) -> None:
    """Removes the entry for ``key`` (one that failed to load), so that the next store replaces it."""
    root = cache_root()
    if root is not None:
        _discard_entry(root, root / digest(key))


def _discard_entry(root: Path, entry: Path) -> None:
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
    directory (this process's copy, or the one another process stored first), or None when the
    cache cannot be written (a warning says so, once)."""
    root = cache_root()
    if root is None:
        return None
    final = root / digest(key)
    if final.is_dir() and _intact(final, key):
        return final / _ARTIFACTS
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _warn_unwritable(root, error)
        return None
    _sweep_orphans(root)
    private = root / f".{final.name}.{os.getpid()}.{uuid.uuid4().hex}"
    try:
        shutil.copytree(build_dir, private / _ARTIFACTS, symlinks=True)
        metadata = {"key": _key_text(key), "files": _file_digests(private / _ARTIFACTS)}
        (private / _METADATA).write_text(json.dumps(metadata, indent=1) + "\n")
        os.rename(private, final)  # atomic; fails if another process's entry is already there
        _STATS["stores"] += 1
    except OSError as error:
        shutil.rmtree(private, ignore_errors=True)
        if not (final.is_dir() and _intact(final, key)):
            _warn_unwritable(root, error)
            return None
    return final / _ARTIFACTS


# A private copy older than this was left by a process killed while storing (a store takes well
# under a second: it copies one build directory).
_ORPHAN_AGE_S = 60


def _sweep_orphans(root: Path) -> None:
    """Removes private copies (``.<digest>.<pid>.<uuid>``) that killed processes left behind."""
    now = time.time()
    for path in root.iterdir():
        try:
            if path.name.startswith(".") and path.is_dir() and now - path.stat().st_mtime > _ORPHAN_AGE_S:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


class CacheWarning(UserWarning):
    """The JIT's disk cache cannot be written; compiling goes on without it."""


_WARNED = set()


def _warn_unwritable(root: Path, error: OSError) -> None:
    if str(root) in _WARNED:
        return
    _WARNED.add(str(root))
    warnings.warn(
        f"the JIT's disk cache {str(root)!r} cannot be written ({error.strerror or error}): builds are not "
        "kept for other processes; set PYPTO_CACHE_DIR to a writable directory, or PYPTO_CACHE=0 to turn "
        "the cache off",
        CacheWarning,
        stacklevel=4,
    )
