"""``pl.prefetch.*``: asynchronous GM-to-L2 prefetch from a kernel (``make_context``,
``async_prefetch``, ``session``, ``wait``). A prefetch is a cache hint: it changes no value."""


def __getattr__(name: str):
    # The ops of this namespace are only read from kernel source.
    if name.startswith("__"):
        raise AttributeError(name)
    from pypto.language.ops import _compiled_only

    return _compiled_only(f"{__name__.rsplit('.', 1)[-1]}.{name}")
