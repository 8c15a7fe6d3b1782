"""``pl.system.*``: synchronisation of the blocks of an SPMD launch (``pl.system.syncall``), of the AIC
and AIV kernels of a core group (``pl.system.sync_set`` / ``sync_wait``, cross-core events) and of the
pipes of one core (``sync_src`` / ``sync_dst``, ``bar_v``, ``bar_m``, ``bar_all``, ``fence``,
``cacheinvalid``)."""


def __getattr__(name: str):
    # The ops of this namespace are only read from kernel source.
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language.ops import _compiled_only

    return _compiled_only(f"{__name__.rsplit('.', 1)[-1]}.{name}")
