"""``import pypto.language.distributed as pld``: the multi-chip (L3) DSL. Model files import it at
load time; this pypto does not support distributed programs yet, so any use says so."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)

    def unsupported(*args, **kwargs):
        raise NotImplementedError(f"pld.{name}: distributed (multi-chip) programs are not supported by this pypto yet")

    unsupported.__name__ = name
    return unsupported
