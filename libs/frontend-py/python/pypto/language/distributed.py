"""``import pypto.language.distributed as pld``: the multi-chip (L3) DSL. Model files import it at
load time and use its names in annotations (``pld.DistributedTensor[[N, D], pl.BF16]``); this pypto
does not support distributed programs yet, so any other use says so."""


class _Unsupported:
    """A name of the distributed DSL: subscripting and attribute access work (for annotations and
    module-level declarations); calling it raises NotImplementedError naming it."""

    def __init__(self, name: str):
        self._name = name

    def __getitem__(self, _args):
        return self

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unsupported(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"pld.{self._name}: distributed (multi-chip) programs are not supported by this pypto yet"
        )

    def __repr__(self) -> str:
        return f"pld.{self._name}"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Unsupported(name)
