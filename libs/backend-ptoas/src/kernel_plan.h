// What a kernel contains, checked against what backend-ptoas can lower, before anything is printed.
// Keeping every check here lets the printers assume a well-formed kernel.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cross_core_pipes.h"
#include "pypto/ir/function.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas {

// Where the list of lowered ops lives; the unsupported-op error points there.
inline constexpr std::string_view kOpTableDoc = "libs/backend-ptoas/README.md";
// The PTOAS revision whose dialect the modules are written in: tools/pto-check's table was
// transcribed from it (its source.commit).
inline constexpr std::string_view kPtoasRevision = "a56b18c32af3";

// The shape of the pto operation a tile op becomes. Every form writes its result tile through
// `outs(...)`; they differ in what goes into `ins(...)`.
enum class OpForm {
  Load,        // pto.partition_view of the tensor window, then pto.tload into the result
  Store,       // pto.partition_view of the destination window, then pto.tstore of the tile
  Alloc,       // tile.create: the tile's alloc_tile is the whole op; nothing in the body
  Reshape,     // the result's alloc_tile re-types the source's bytes; nothing in the body
  Fill,        // ins(the scalar argument 1): tile.full, tile.expands
  Tiles,       // ins(every argument, all tiles): element-wise, reductions, broadcasts, tmatmul
  TileScalar,  // ins(tile, scalar [, tile]): the scalar at the tile's element type; the last tile is trems's
               // scratch, or taddsc / tsubsc's third operand
  TileI32,     // ins(tile, scalar [, tmp]): the scalar as an i32 (the bitwise and shift instructions)
  TileF32,     // ins(tile, scalar): the scalar as an f32 whatever the tile's element type (tlrelu's slope)
  Cast,        // ins(tile {rmode = #pto<round_mode MODE>})
  Broadcast,   // ins(argument 1 only): argument 0 gives only the shape (row_expand, col_expand)
  ColSum,      // Tiles, plus {isBinary = true} when the scratch tile is given
  Move,        // tmov between two buffers
  MatmulAcc,   // ins(result, lhs, rhs): the accumulator is the result's own buffer
  MatmulMx,    // tget_scale_addr of each scale tile, then tmatmul.mx[.acc|.bias] (mx_ops.cpp)
  Arange,      // ins(the start scalar), {descending = true} after outs when asked
  MergeSort,   // ins(tile, block_len as i32): tmrgsort format 1
  MergeLists,  // ins(lists..., tmp {exhausted = B}) outs(result, executed counts): tmrgsort format 2
  GatherMask,  // ins(tile, {maskPattern = #pto.mask_pattern<P0101>})
  PagedGather,  // scf.for over the indices: load_scalar of both tables, tload of the row (paged_gather.cpp)
  IndexScatter,  // tscatter's index form into zeros, blended with the destination by tsel (index_scatter_blend.cpp)
  ScatterMask,  // ins(src, {maskPattern = #pto.mask_pattern<P0101>} : S, "row"): tscatter's mask form, into zeros
  Window,      // ins(tile, row, col : .., index, index): textract of a tile slice (offsets in a list)
  Extract,     // ins(tile, row, col : .., index, index): textract of tile.extract (row, col arguments)
  Insert,      // ins(source, row, col : .., index, index): tinsert into the result, the target's buffer
  FillPad,     // ins(tile) outs(result): tfillpad, the pad value in the result's tile_buf `pad`
  Compare,     // ins(tile, tile or scalar {cmpMode = #pto<cmp eq>}) outs(mask): tcmp, tcmps
  ValidShape,  // tile.set_validshape: the result's alloc_tile (same address, new valid_row/valid_col)
  SelectScalar,  // ins(mask, src, tmp, scalar): tsels, the scalar at src's element type (signed for unsigned src)
  Triangle,    // "pto.ttri"(diagonal : i32, result) {upperOrLower = 0|1 : i32}: generic form only
  Gather,      // ins(src, indices, tmp) outs(result): tgather's index form; the program's tmp or one in the Vec scratch
  GatherDim,   // ins(src, indices, tmp) outs(result): tgather's index form, row by row; tmp in the Vec scratch
  Transpose,   // ins(src, tmp) outs(result): ttrans; tmp is the program's or TransposeScratchTiles' tile
  MemGather,   // ins(mem partition, idx [, scratch]) outs(result) {coalesce = ..}: tile.mgather
  MemScatter,  // ins(src, idx) outs(the whole tensor's partition): tile.mscatter, whose result is that tensor
  Random,      // ins(key0, key1, counter0..3 : i32 x6) outs(result); rounds other than 10 in the generic form only
  SinCos,      // no instruction: upstream's expansion into tile arithmetic, in the Vec scratch (sin_cos_expansion.cpp)
  TransposeView,  // a Mat tile read transposed: the result's alloc_tile, at the source's address, types its NZ
                  // bytes as the ZN layout of the transpose; nothing in the body
};

struct OpLowering {
  std::string_view op;   // "tile.exp"
  std::string_view pto;  // "pto.texp"
  OpForm form;
  // The pto op reads and writes row-major tiles only. A [N, 1] Vec tile is column-major, so for
  // such ops it is passed as a [1, N] row-major tile over the same bytes (upstream's layout repair).
  bool row_major = false;
};

// The lowering of a tile op, or nullptr when backend-ptoas has none.
const OpLowering* FindLowering(std::string_view op_name);
// Every lowering, in table order (the README's table follows it).
const std::vector<OpLowering>& Lowerings();
// The type a TileScalar / TileI32 / TileF32 op takes its scalar operand at: the tile's element type,
// i32, or f32 (PTOAS types tlrelu's slope F32 for f16 tiles too).
ir::DataType ScalarOperandType(const OpLowering& lowering, const ir::Expr& tile);

// INT8..INT64 (not INDEX, not unsigned): the integers arith converts with sitofp / extsi / trunci.
bool IsSignedInteger(ir::DataType dtype);
// Whether a scalar parameter of type `from` can be passed to a tile op of element type `to`:
// floats to floats of another width, signed integers to floats and to signed integers.
bool ScalarConvertible(ir::DataType from, ir::DataType to);

// `a < b` and kin, whose value is a boolean; a scalar of a floating-point type.
bool IsComparisonExpr(const ir::Expr& expr);
bool IsFloatScalarExpr(const ir::Expr& expr);
// pl.read of one element of a tensor or a tile (tensor.read, tile.read).
bool IsElementRead(const ir::Expr& expr);
// The floating-point type a comparison compares at (arith.cmpf), or none for a comparison of
// integers (arith.cmpi): the type of its first operand that is not a literal, when that is a float,
// else FP32 when an operand is a float literal.
std::optional<ir::DataType> ComparedFloatType(const ir::BinaryExpr& compare);

// The launch identity a kernel reads (pl.tile.get_block_idx() and kin). Each becomes a trailing i32
// argument of the PTO function, after the scalars, that kernel_entry fills from the runtime's
// contexts (intrinsic.h): block_idx and block_num together, then the AIV lane.
struct LaunchIdentity {
  bool block = false;     // tile.get_block_idx / tile.get_block_num
  bool subblock = false;  // tile.get_subblock_idx
};
LaunchIdentity UsedLaunchIdentity(const ir::Function& kernel);

struct KernelPlan {
  // The module's argument order: tensors first, then scalars, each in declaration order. The
  // runtime packs a task's args[] the same way.
  std::vector<ir::VarPtr> tensor_params;
  std::vector<ir::VarPtr> scalar_params;
  // Tensor parameters that loads and stores touch, in declaration order; only these get a view.
  std::vector<ir::VarPtr> viewed_tensors;
  // The body with nested sequences flattened; loops stay as ForStmts whose bodies are in loop_bodies,
  // ifs as IfStmts whose branches are in branch_bodies (then, else).
  std::vector<ir::StmtPtr> stmts;
  std::map<const ir::ForStmt*, std::vector<ir::StmtPtr>> loop_bodies;
  // A while loop's body, its trailing yield included (scf.while yields the carried scalars).
  std::map<const ir::WhileStmt*, std::vector<ir::StmtPtr>> while_bodies;
  std::map<const ir::IfStmt*, std::pair<std::vector<ir::StmtPtr>, std::vector<ir::StmtPtr>>> branch_bodies;
  // Tiles that are another tile's buffer under a new name: a loop's carried tile and its result, an
  // if's result. Memory allocation puts them all in one buffer, so they share its alloc_tile and
  // scf.for / scf.if need no results of their own (the buffer is updated in place).
  std::map<const ir::Var*, const ir::Var*> tile_aliases;
  // Scalar parameters that loop bounds or offsets read, in declaration order. Index arithmetic is
  // done in `index`, so each one that is not already INDEX gets one arith.index_cast up front.
  std::vector<ir::VarPtr> index_scalars;
  // The assignments that define tiles, in program order (each gets one alloc_tile).
  std::vector<const ir::AssignStmt*> tile_defs;
  // [N, 1] Vec tiles that a row-major op reads or writes: each also gets a [1, N] row-major
  // alloc_tile at the same address.
  std::set<const ir::Var*> row_views;
  // fillpad results and the tile_buf `pad` code of their padding mode (ptoas: zero 1, max 2, min 3).
  std::map<const ir::Var*, int> pad_codes;
  // Tile slices of a Vec tile on a2a3, whose textract has no Vec -> Vec form: the window is a
  // pto.subset view of the source, copied into the result's buffer by pto.tmov.
  std::set<const ir::Var*> subset_windows;
  // Vec windows memory allocation made views (a band of whole rows at a constant origin, placed in
  // its source's block): each one's alloc_tile is at its source's address plus this many bytes.
  std::map<const ir::Var*, int64_t> band_views;
  // Windows of an Acc tile that memory allocation placed in the tile's own block, and the tile each
  // views: no alloc_tile, the view is written where the slice stands (KernelEmitter::LowerAccView).
  // A product accumulated into one is the view under a new name (tile_aliases).
  std::map<const ir::Var*, const ir::Var*> acc_views;
  // Floating-point scalars: elements read from a tensor or tile (pl.read), and casts to a float type
  // of a literal, an integer index value or another of these (pl.cast): values of their dtype, which
  // tile ops and pl.write take as scalar operands like scalar parameters.
  std::set<const ir::Var*> float_scalars;
  // b_trans=True matmul operands. The IR's Right tile holds B^T as [N, K]; on a device it is the
  // [K, N] Right tile tmatmul reads, typed so, and the Mat tile it is moved or extracted from is read
  // through a second alloc_tile at its address typed [K, N] in the ZN layout: the NZ bytes of an
  // [N, K] tile are the ZN bytes of its [K, N] transpose (upstream's tile.transpose_view).
  std::set<const ir::Var*> transposed_rights;
  std::set<const ir::Var*> transposed_mats;
  // tile.transpose_view results and the Mat tile each views (tile.transpose_view, kernel_plan_transpose_view.cpp):
  // the result's alloc_tile is at the source's address, typed as the source's transposed (ZN) view.
  std::map<const ir::Var*, const ir::Var*> zn_views;
  // Mat tiles loaded from an MX scale tensor, and its layout: their tile_buf is in its scale boxes
  // (MxScaleLayout), as the scale buffer a tmov fills from them (kernel_plan_mx.cpp).
  std::map<const ir::Var*, ir::TensorLayout> mx_scale_mats;
  // Stores of the top-left corner of a tile (`shapes=` smaller than the tile, not an N-d window of a
  // merged tile): tstore writes its source's valid region, so the corner is stored through a second
  // alloc_tile at the tile's address whose valid_row / valid_col are the corner's extents.
  std::set<const ir::Call*> corner_stores;
  LaunchIdentity launch;
  // Where the scratch tiles go that a PTO instruction needs and the IR has no variable for (the tmp
  // of tgather's index form, ttrans's when the program gives none): one Vec buffer past every tile memory allocation placed in Vec, so it
  // overlaps none of them, used by one op at a time. -1 when no op needs it.
  int64_t vec_scratch_offset = -1;
  // tile.gather calls whose tmp is a tile like the indices in the Vec scratch: the program gave none,
  // or (on a2a3) one without the indices' element type and valid shape, which ptoas requires.
  std::set<const ir::Call*> scratch_gather_tmps;
  // Every tensor-typed variable of the body (a store's result names its destination) mapped to the
  // parameter whose memory it is.
  std::map<const ir::Var*, const ir::Var*> tensor_param_of;
  // The cross-core pipes of a mixed kernel's member (cross_core_pipes.h).
  PipeUse pipes;
  // The window parameters comm ops reach peers through (kernel_plan_comm.cpp): each gets its
  // CommContext as a `!pto.ptr<i64>` argument after the scalars, in the order of the tensors.
  std::set<const ir::Var*> comm_windows;
  // On-core arrays (kernel_plan_array.cpp): each array.create, declared in the prologue, and every
  // array variable mapped to the one it names (its updates, a loop's or an if's carries).
  std::vector<const ir::AssignStmt*> local_arrays;
  std::map<const ir::Var*, const ir::Var*> array_roots;
  // The prefetch ops (kernel_plan_prefetch.cpp): the handles they give, and whether the kernel makes
  // a prefetch context, which takes the runtime's SDMA workspace as a `!pto.ptr<i8>` argument.
  std::set<const ir::Var*> prefetch_handles;
  bool sdma_workspace = false;
  // The FFTS workspaces pl.system.set_ffts hands over (sync_ops.cpp): each such tensor parameter is
  // the memref `pto.set_ffts` takes (PTOAS a56b18c's AnyMemRef), not a pointer with a view.
  std::set<const ir::Var*> ffts_workspaces;
};

// Fails on the first construct backend-ptoas cannot lower for `arch` ("a2a3" or "a5"), naming it
// and its Span::str().
pypto::expected<KernelPlan, std::string> PlanKernel(const ir::Function& kernel, std::string_view arch);

}  // namespace pypto::backend_ptoas
