"""``pl.tensor.*``: operations on global tensors (none are compiled yet)."""
