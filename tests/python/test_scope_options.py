"""Options mean what they say or are refused: pl.at(optimizations=[...]) is checked entry by entry,
@pl.jit(auto_scope=...) is honoured (False leaves the runtime scopes to the author) or refused where
it cannot mean anything, and RunConfig's ring sizes are checked as upstream checks them and enforced
(running out of the dependency pool is upstream's fatal error 4)."""

import warnings

import pytest
import torch

import pypto.language as pl
from pypto.language.parser import ParserSyntaxError
from pypto.runtime import RunConfig

SCOPE = """
@pl.jit
def kernel(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=OPTIMIZATIONS):
        y[0:16, 0:16] = pl.mul(x[0:16, 0:16], 2.0)
    return y
"""
SCOPE_LINE = 6  # write_dsl puts an import line and a blank line first; SCOPE starts with a newline


def _column(optimizations: str, token: str) -> int:
    """The 1-based column of `token` inside the optimizations list on the scope's line."""
    line = SCOPE.replace("OPTIMIZATIONS", optimizations).splitlines()[SCOPE_LINE - 3]
    return line.index("optimizations=") + len("optimizations=") + optimizations.index(token) + 1


@pytest.mark.parametrize("optimizations, token, message", [
    ("[pl.split(pl.SplitMode.DIAGONAL)]", "pl.SplitMode.DIAGONAL",
     "unknown split mode 'pl.SplitMode.DIAGONAL'"),
    ("[pl.cross_core_slot(slot_num=0)]", "0", "pl.cross_core_slot(slot_num=...) must be positive, got 0"),
    ("[pl.cross_core_slot(slot_num=-2)]", "-2", "pl.cross_core_slot(slot_num=...) must be positive, got -2"),
    ("[pl.cross_core_slot(slot_num=2.5)]", "2.5", "pl.cross_core_slot(slot_num=...) must be an integer literal"),
    ("[pl.cross_core_slot(slot_num=True)]", "True",
     "pl.cross_core_slot(slot_num=...) must be an integer literal"),
    ("[pl.split(pl.SplitMode.NONE, slot_num=0)]", "0", "pl.split(slot_num=...) must be positive, got 0"),
    ("[pl.cross_core_slot()]", "pl.cross_core_slot", "pl.cross_core_slot() needs slot_num=N"),
    ("[pl.auto_chunk]", "pl.auto_chunk", "unsupported entry in pl.at(optimizations=[...])"),
    ("[pl.split(pl.SplitMode.UP_DOWN), pl.split(pl.SplitMode.NONE)]", "pl.split(pl.SplitMode.NONE)",
     "pl.split(...) is given twice in optimizations=[...]"),
    ("(pl.split(pl.SplitMode.UP_DOWN),)", "(", "pl.at(optimizations=...) must be a list literal"),
], ids=["unknown_mode", "zero_slots", "negative_slots", "float_slots", "bool_slots", "deprecated_zero_slots",
        "missing_slots", "unknown_entry", "split_twice", "not_a_list"])
def test_a_bad_optimization_is_an_error_at_the_argument(write_dsl, optimizations, token, message):
    module, path = write_dsl(f"bad_optimizations_{abs(hash(optimizations))}",
                             SCOPE.replace("OPTIMIZATIONS", optimizations))
    with pytest.raises(ParserSyntaxError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == message
    assert info.value.location == f"{path}:{SCOPE_LINE}:{_column(optimizations, token)}"


def test_the_unknown_mode_error_lists_the_modes(write_dsl):
    module, _ = write_dsl("unknown_mode_hint", SCOPE.replace("OPTIMIZATIONS", "[pl.split(pl.SplitMode.ROWS)]"))
    with pytest.raises(ParserSyntaxError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.hint == "split modes: pl.SplitMode.NONE, UP_DOWN, LEFT_RIGHT"


def test_both_slot_spellings_at_once_are_refused(write_dsl):
    optimizations = "[pl.split(pl.SplitMode.NONE, slot_num=2), pl.cross_core_slot(slot_num=4)]"
    module, path = write_dsl("slot_twice", SCOPE.replace("OPTIMIZATIONS", optimizations))
    with pytest.warns(DeprecationWarning), pytest.raises(ParserSyntaxError) as info:
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    assert info.value.message == ("optimizations=[...] sets the cross-core slot count twice: with the deprecated "
                                  "pl.split(slot_num=...) and with pl.cross_core_slot(...)")
    assert info.value.location == f"{path}:{SCOPE_LINE}:{_column(optimizations, 'pl.cross_core_slot')}"


def test_valid_optimizations_compute_the_same(write_dsl):
    optimizations = "[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=4)]"
    module, _ = write_dsl("good_optimizations", SCOPE.replace("OPTIMIZATIONS", optimizations))
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    module.kernel(x, y)
    torch.testing.assert_close(y, x * 2.0)


def test_the_deprecated_slot_spelling_runs_and_warns_at_its_keyword(write_dsl):
    optimizations = "[pl.split(pl.SplitMode.NONE, slot_num=2)]"
    module, path = write_dsl("deprecated_slots", SCOPE.replace("OPTIMIZATIONS", optimizations))
    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    with pytest.warns(DeprecationWarning) as record:
        module.kernel(x, y)
    messages = [str(w.message) for w in record if issubclass(w.category, DeprecationWarning)]
    assert messages == [f"{path}:{SCOPE_LINE}:{_column(optimizations, 'slot_num')}: pl.split(..., slot_num=2) is "
                        "deprecated: the cross-core slot count is not a split mode; write "
                        "pl.cross_core_slot(slot_num=2) as its own entry of optimizations=[...]"]
    torch.testing.assert_close(y, x * 2.0)


# ---- @pl.jit(auto_scope=...) -------------------------------------------------------------------------

@pl.jit(auto_scope=False)
def rows_by_hand(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    for r in pl.range(0, 128, 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
    return y


@pl.jit(auto_scope=False)
def rows_in_hand_placed_scopes(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    for r in pl.range(0, 128, 16):
        with pl.scope():
            with pl.at(level=pl.Level.CORE_GROUP):
                y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
    return y


def test_auto_scope_false_leaves_the_scopes_to_the_author():
    # Eight iterations, one task each. No scope of the compiler's gives an iteration's slot back, so
    # through 3 usable slots the run's outer scope deadlocks (as on upstream's runtime) ...
    x = torch.randn(128, 32)
    y = torch.zeros(128, 32)
    with pytest.raises(RuntimeError) as info:
        rows_by_hand(x, y, config=RunConfig(ring_task_window=4))
    assert "fatal error 1 (ScopeDeadlock): task 3 (func_id 0) needs a slot of task ring 0" in str(info.value)
    # ... a window that holds every task runs it ...
    rows_by_hand(x, y, config=RunConfig(ring_task_window=16))
    torch.testing.assert_close(y, x + 1.0)
    # ... and so does a scope the author places around each iteration.
    y = torch.zeros(128, 32)
    rows_in_hand_placed_scopes(x, y, config=RunConfig(ring_task_window=4))
    torch.testing.assert_close(y, x + 1.0)


def test_auto_scope_false_is_kept_in_the_lowered_program_and_its_orchestration():
    x, y = torch.randn(128, 32), torch.zeros(128, 32)
    lowered = str(rows_by_hand.lower(x, y))
    assert "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)" in lowered
    assert "with pl.scope()" not in lowered
    compiled = rows_by_hand.compile(x, y, config=RunConfig(ring_task_window=16))
    assert "PTO2_SCOPE" not in (compiled.output_dir / "orchestration" / "rows_by_hand.cpp").read_text()
    scoped = rows_in_hand_placed_scopes.compile(x, y)
    assert (scoped.output_dir / "orchestration" / "rows_in_hand_placed_scopes.cpp").read_text().count(
        "PTO2_SCOPE() {") == 1


def test_auto_scope_true_is_what_the_compiler_does():
    @pl.jit(auto_scope=True)
    def scoped(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[0:16, 0:16] = pl.mul(x[0:16, 0:16], 2.0)
        return y

    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    scoped(x, y)
    torch.testing.assert_close(y, x * 2.0)


def test_auto_scope_is_refused_where_it_cannot_mean_anything():
    with pytest.raises(TypeError) as info:
        pl.jit.incore(auto_scope=True)
    assert str(info.value) == (
        "@pl.jit.incore does not accept auto_scope=: runtime scopes belong to orchestration code (the @pl.jit "
        "entry, @pl.jit.host and @pl.jit.inline functions spliced into them)")
    with pytest.raises(TypeError) as info:
        pl.jit(auto_scope=0)
    assert str(info.value) == "@pl.jit(auto_scope=...) must be True or False, got 0"
    with pytest.raises(NotImplementedError, match=r"^@pl.jit.host\(auto_scope=False\) is not supported"):
        pl.jit.host(auto_scope=False)


# ---- RunConfig(ring_heap=, ring_dep_pool=) ---------------------------------------------------------------

@pl.jit(auto_scope=False)
def rows_then_two_readers(x: pl.Tensor[[128, 32], pl.FP32], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]],
                          z: pl.Out[pl.Tensor[[128, 32], pl.FP32]], w: pl.Out[pl.Tensor[[128, 32], pl.FP32]]):
    for r in pl.range(0, 128, 16):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r : r + 16, :] = pl.add(x[r : r + 16, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP):
        z[0:128, :] = pl.mul(y[0:128, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP):
        w[0:128, :] = pl.add(y[0:128, :], 3.0)
    return w


def test_the_dependency_pool_is_enforced():
    # All in the run's outer scope (ring 0), which keeps every entry until the run ends: each reader of
    # y waits for its 8 writers, one pool entry each. 16 entries hold both readers; 8 hold the first.
    x = torch.randn(128, 32)
    y, z, w = torch.zeros(128, 32), torch.zeros(128, 32), torch.zeros(128, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows_then_two_readers(x, y, z, w, config=RunConfig(ring_dep_pool=16))
    torch.testing.assert_close(z, (x + 1.0) * 2.0)
    torch.testing.assert_close(w, x + 4.0)
    with pytest.raises(RuntimeError) as info:
        rows_then_two_readers(x, y, z, w, config=RunConfig(ring_dep_pool=[8, 0, 0, 0]))
    assert (
        "fatal error 4 (DepPoolOverflow): task 9 (func_id 2) waits for 8 producer tasks, one entry each of the "
        "dependency pool of ring 0 (scope depth 0), but 8 of its 8 entries hold the dependencies of earlier tasks of "
        "that ring, which come back only when the scope at depth 0 ends; raise the pool (RunConfig(ring_dep_pool=...), "
        "PTO2_RING_DEP_POOL) or give the tasks of that scope fewer producers (e.g. split the work into smaller scopes: "
        "a loop's body is a scope)") in str(info.value)


def test_the_dependency_pool_in_the_environment_is_enforced(monkeypatch):
    x = torch.randn(128, 32)
    y, z, w = torch.zeros(128, 32), torch.zeros(128, 32), torch.zeros(128, 32)
    monkeypatch.setenv("PTO2_RING_DEP_POOL", "8")
    with pytest.raises(RuntimeError, match=r"fatal error 4 \(DepPoolOverflow\): task 9 "):
        rows_then_two_readers(x, y, z, w)


@pl.jit(auto_scope=False)
def nested_scopes(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.scope():  # depth 1: upstream's executor opens the run's outer scope (depth 0) around the entry
        with pl.scope():
            with pl.scope():
                with pl.scope():  # depth 4 (task ring 3, shared by depths 3 and deeper)
                    with pl.at(level=pl.Level.CORE_GROUP):
                        y[0:16, :] = pl.add(x[0:16, :], 1.0)
                    with pl.at(level=pl.Level.CORE_GROUP):
                        y[16:32, :] = pl.add(x[16:32, :], 1.0)
                    with pl.scope():  # and these at depth 5
                        with pl.at(level=pl.Level.CORE_GROUP):
                            y[32:48, :] = pl.add(x[32:48, :], 1.0)
                        with pl.at(level=pl.Level.CORE_GROUP):
                            y[48:64, :] = pl.add(x[48:64, :], 1.0)
    return y


def test_nested_scopes_filling_the_shared_ring_are_upstreams_flow_control_deadlock():
    # A window of 4 has 3 usable slots: the scopes at depths 4 and 5 hold them between them, neither
    # alone, which upstream reports as FLOW_CONTROL_DEADLOCK (3), not SCOPE_DEADLOCK (1).
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    with pytest.raises(RuntimeError) as info:
        nested_scopes(x, y, config=RunConfig(ring_task_window=4))
    assert (
        "fatal error 3 (FlowControlDeadlock): task 3 (func_id 3) needs a slot of task ring 3, but all 3 usable slots "
        "(task window 4) are held by tasks of the scopes at depths 3 to 5, which share that ring and give them back "
        "only when they end: none of them submits more tasks than the window holds, but together they do; raise the "
        "window (RunConfig(ring_task_window=...), PTO2_RING_TASK_WINDOW) or submit fewer tasks in scopes nested at "
        "depth 3 and deeper") in str(info.value)
    nested_scopes(x, y, config=RunConfig(ring_task_window=8))
    torch.testing.assert_close(y, x + 1.0)


def test_the_simulator_runs_a_scope_at_the_depth_of_its_orchestration_cpp():
    # The C++ nests the innermost tasks in 5 PTO2_SCOPE()s, which upstream's executor runs inside the
    # run's outer scope (depth 0): depth 5. A window of 2 (1 usable slot) filled by the first task of
    # the depth-4 scope stops its second task, naming that depth.
    x, y = torch.randn(64, 32), torch.zeros(64, 32)
    compiled = nested_scopes.compile(x, y)
    cpp = (compiled.output_dir / "orchestration" / "nested_scopes.cpp").read_text()
    assert cpp.count("PTO2_SCOPE() {") == 5
    with pytest.raises(RuntimeError) as info:
        nested_scopes(x, y, config=RunConfig(ring_task_window=2))
    assert (
        "fatal error 1 (ScopeDeadlock): task 1 (func_id 1) needs a slot of task ring 3, but all 1 usable slots (task "
        "window 2) are held by tasks of scopes still open, which give them back only when those scopes end: the scope "
        "at depth 4 submits more tasks than its window holds") in str(info.value)


@pytest.mark.parametrize("value, sizes", [(1024, [1024] * 4), ([0, 2048, 0, 0], [0, 2048, 0, 0]), (None, [])])
def test_a_heap_ring_size_is_enforced_without_a_warning(value, sizes):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = RunConfig(ring_heap=value)
    assert config.ring_heap_sizes == sizes


@pytest.mark.parametrize("name, value, message", [
    ("ring_heap", 1000, "RunConfig.ring_heap must be a power of two of at least 1024 (bytes per ring), got 1000"),
    ("ring_heap", True, "RunConfig.ring_heap must be a power of two of at least 1024 (bytes per ring), got True"),
    ("ring_dep_pool", 3, "RunConfig.ring_dep_pool must be an integer from 4 to 2**31 - 1 (entries per ring), got 3"),
    ("ring_dep_pool", [4, 4], "RunConfig.ring_dep_pool must have 4 entries (one per scope-depth ring), got 2"),
])
def test_a_malformed_ring_size_is_a_value_error(name, value, message):
    with pytest.raises(ValueError) as info:
        RunConfig(**{name: value})
    assert str(info.value) == message


def test_ring_sizes_in_the_environment_are_checked_when_compiling(monkeypatch, write_dsl):
    # pypto-lib's CI sets them for every program: valid ones are accepted quietly, malformed ones refused.
    module, _ = write_dsl("env_ring_heap", SCOPE.replace("OPTIMIZATIONS", "[]"))
    monkeypatch.setenv("PTO2_RING_HEAP", "1073741824")
    monkeypatch.setenv("PTO2_RING_DEP_POOL", "16384")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
    monkeypatch.setenv("PTO2_RING_DEP_POOL", "3")
    with pytest.raises(ValueError, match=r"^\$PTO2_RING_DEP_POOL must be an integer from 4 to 2\*\*31 - 1"):
        module.kernel(torch.zeros(16, 16), torch.zeros(16, 16))
