"""Enumerations of the DSL; their values match the IR's."""

import enum


class FunctionType(enum.IntEnum):
    Opaque = 0
    Orchestration = 1
    InCore = 2
    AIC = 3
    AIV = 4
    Group = 5
    Spmd = 6
    Inline = 7
    Graph = 8


class Level(enum.IntEnum):
    AIV = 0
    AIC = 1
    CORE_GROUP = 2
    CHIP_DIE = 3
    CHIP = 4
    HOST = 5
    CLUSTER_0 = 6
    CLUSTER_1 = 7
    CLUSTER_2 = 8
    GLOBAL = 9
    L2CACHE = 3
    PROCESSOR = 4
    UMA = 4
    NODE = 5
    POD = 6
    CLOS1 = 7
    CLOS2 = 8


class MemorySpace(enum.IntEnum):
    """Where a tile lives (``pl.Mem`` is the short spelling: ``pl.Mem.Vec``)."""

    DDR = 0
    Vec = 1
    Mat = 2
    Left = 3
    Right = 4
    Acc = 5
    Bias = 6
    ScalarLocal = 7
    LeftScale = 8  # the MX scales of a Left operand (A5)
    RightScale = 9  # the MX scales of a Right operand (A5)


Mem = MemorySpace


class SplitMode(enum.IntEnum):
    """How a mixed kernel's work is halved between its two vector cores (``pl.split(...)``, or
    ``attrs={"split": pl.SplitMode.UP_DOWN}`` on an InCore function): not at all, by rows, or by
    columns. It changes how the device overlaps the cube and vector work, not what is computed."""

    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class MaskPattern(enum.IntEnum):
    """Lanes the mask form of ``pl.gather`` keeps (``pl.tile.MaskPattern.P0101``), read right to
    left: P0101 keeps the even lanes, P1010 the odd ones, P0001..P1000 one lane of every four, P1111
    all of them."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


class PadValue(enum.IntEnum):
    """What ``pl.tile.fillpad`` writes outside a tile's valid region: zero, or the lowest (``min``,
    -inf for floats) or highest (``max``, +inf) value of the element type. Kernels spell it
    ``pl.PadValue.min``; the compiler reads the name, not this value."""

    null = 0
    zero = 1
    max = 2
    min = 3


class PipeType(enum.IntEnum):
    """A pipe of a core, as the sync ops name it (``pl.system.sync_set(4, pipe=pl.PipeType.MTE3)``):
    the transfer engines MTE1 (L1 to L0), MTE2 (GM to UB/L1) and MTE3 (UB to GM), the matrix (M),
    vector (V) and scalar (S) units, the fixpipe (FIX, L0C write-back), or all of them (ALL). The
    compiler reads the name, not this value."""

    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7


class TensorLayout(enum.IntEnum):
    """A global tensor's element order in a ``pl.TensorView`` annotation: row-major (``ND``),
    column-major (``DN``) or the cube's fractal blocks (``NZ``); in a tensor annotation's third slot,
    the blocks of MX scale exponents (``pl.MX_A_ZZ`` for a Left operand's, ``pl.MX_B_NN`` for a Right
    operand's)."""

    ND = 0
    DN = 1
    NZ = 2
    MX_A_ZZ = 3
    MX_B_NN = 4
