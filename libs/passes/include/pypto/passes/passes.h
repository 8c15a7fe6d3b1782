// Every pass of the pipeline, one factory each (implementations in src/<pass_name>.cpp).
#pragma once

#include "pypto/passes/pass.h"

namespace pypto::passes {

// `for i in pl.unroll(...)` (constant bounds) becomes one copy of its body per iteration, `i` replaced
// by the iteration's constant and the arithmetic on it folded; carried values pass from copy to copy.
// A pl.unroll loop whose bounds are not constants is an error at the loop.
Pass UnrollLoops();

// `break` and `continue` become structured control flow: the rest of an iteration after a jump moves
// into the branches that fall through, and a loop that breaks carries a flag, set where it breaks,
// and runs its body only while the flag is 0. A break in a while loop is an error at the loop.
Pass CtrlFlowTransform();

// `tmp = pl.create_tensor(shape)`, written by kernels, then assembled whole into a window of `dst`
// by the copy scope the frontend makes of an orchestration pl.assemble: when nothing touches dst
// (or a view of it) in between, tmp is only written there and not read after, tmp becomes the view
// `pl.tensor.slice(dst, shape, offsets)` and the copy is dropped.
Pass FuseCreateAssembleToSlice();

// Three-address form: calls nested in arguments are hoisted into temporaries `__tmp_vN`.
Pass FlattenCallExpr();

// A pl.at scope mixing cube and vector work (straight-line, cube results read by vector ops)
// becomes its cube part `<name>_aic` followed by its vector part `<name>_aiv`; OutlineIncoreScopes
// then hands the cube results over through global memory. Other scopes are kept as they are.
Pass SplitMixedScopes();

// `with pl.at(level=CORE_GROUP)` regions become InCore functions `<fn>_incore_<n>`; parameter
// directions are inferred from use (read: In, written by a store: Out, both: InOut). An Opaque
// function that calls kernels (outlined here or defined as functions of the program) becomes the
// Orchestration. A tile computed in one region and read by a later one is handed over through a
// tensor the orchestration creates (stored whole by the first kernel, loaded whole by the next).
Pass OutlineIncoreScopes();

// Every tile of rank 3 or more in a kernel becomes the 2-D matrix of its rows ([a, b, c] -> [a*b, c]);
// loads and stores keep their N-d tensor windows. A kernel with an op that has no 2-D form (a matmul
// or transpose over a batch, an element access by N-d indices) is left as it is.
Pass FlattenTileNdTo2D();

// A kernel's tile.cast that the SoC's vector core cannot do in one instruction becomes the shortest
// chain of casts it can do, each with the cast's rounding mode; one no chain reaches without losing
// values is an error at the cast. Casts of matmul results (FIXPIPE, out of Acc) are left alone.
Pass LegalizeTileCast();

// Places each InCore kernel's tiles where their uses need them: a tile loaded without an explicit
// target_memory and read by a matmul is loaded into Mat and moved into Left/Right before it (loaded
// once per side when vector ops read it too); an unused pl.create_tensor placeholder is dropped. A
// vector op reading a cube buffer (a matmul result in a kernel SplitMixedScopes could not split) is
// an error naming the op.
Pass InferTileMemorySpace();

// A matmul whose operands or result exceed the L0 buffers (L0A, L0B, L0C) of the SoC, and whose result
// is stored to global memory or cast into Mat for another matmul, is computed block by block: loops
// over [m, n] blocks of the result and over k-steps of the reduction, extracting L0 windows
// (tile.extract) of the operands kept in Mat; a chained product's blocks are assembled into Mat.
// A matmul_bias adds each block's window of its bias row on the block's first k-step; a K loop
// written in the kernel whose accumulator exceeds L0C runs once per block of the accumulator.
Pass AutoTileMatmulL0();
// Retypes each InCore kernel to AIV (vector ops only) or AIC (cube ops only); a kernel that mixes
// both becomes a Group of an AIC and an AIV member joined by cross-core pipes. An AIV kernel split
// between the two AIV lanes (pl.SplitMode / split= on its pipe ops) runs on both, each lane on its
// half of every tile (src/split_vector_kernel.h).
Pass ExpandMixedKernel();

// A tile.transpose without the program's tmp_tile gets one, a `tile.create` shaped and typed like its
// source just before it: PTO's transpose moves the tile through such a scratch tile, and as a tile of
// the IR AllocateMemoryAddr places it with the others (src/transpose_scratch_tiles.cpp).
Pass TransposeScratchTiles();

// A tile.scatter_mask into a tile other than a tile.full of zero becomes one into zeros, blended
// with its destination by a tile.sel: the device's scatter (the mask form of pto.tscatter) zeroes
// the lanes it does not write, where the IR keeps the destination's (src/scatter_mask_blend.cpp).
Pass ScatterMaskBlend();

// Gives every tile an address in its on-chip buffer. A tile's buffer is released after its last
// use, and an element-wise result may take over an operand released at that statement. A kernel
// that does not fit is an error naming the kernel and its source scope, the buffer (UB, L1, L0A, L0B,
// L0C), the tile, and the bytes needed, in use and available.
Pass AllocateMemoryAddr();

// Writes one ArgDirection per argument on every call to a kernel, from the callee's
// ParamDirections: In -> Input, Out -> OutputExisting, InOut -> InOut; scalar parameters -> Scalar.
// A call whose arguments do not match the callee's parameters (count, tensor or scalar) is an error.
Pass DeriveCallDirections();

// Each value a kernel, Group or SPMD wrapper returns becomes the pl.Out / pl.InOut parameter it stands
// for (the result of a store into it, or of a member call returning it), so codegen-orch reads which
// tensor a call's result names from the return. A return that is no output parameter, or returns
// them out of their order in the signature, is an error at the return.
Pass NormalizeReturnOrder();

// The orchestration body, and each orchestration loop body outside a manual scope, become automatic
// runtime scopes (`with pl.scope():`); codegen-orch opens a PTO2_SCOPE exactly there.
Pass MaterializeRuntimeScopes();

// Stamps on each value an orchestration loop carries how the C++ carries it (ir::CarryKind): a scalar,
// a TaskId, a TaskId array, a tensor the body updates in place (Alias) or one it rebinds to another
// buffer (Rebind); codegen-orch reads the stamp (IterArgCarryClassified).
Pass ClassifyIterArgCarry();

}  // namespace pypto::passes
