"""``pl.system.*``: synchronisation of the blocks of an SPMD launch (``pl.system.syncall``)."""


def __getattr__(name: str):
    # The ops of this namespace are only read from kernel source.
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language.ops import _compiled_only

    return _compiled_only(f"{__name__.rsplit('.', 1)[-1]}.{name}")
