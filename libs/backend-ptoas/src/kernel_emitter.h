// Prints one planned kernel as a func.func of the PTO dialect.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kernel_plan.h"
#include "mlir_types.h"
#include "pto_op.h"
#include "pypto/backend_ptoas/module.h"
#include "ssa_names.h"

namespace pypto::backend_ptoas {

// mx_ops.cpp: the `layout` attribute of a tload from an MX scale tensor (none for ND), and the
// #pto.layout of an MX tensor layout, on its make_tensor_view too.
std::vector<PtoAttr> MxLoadAttrs(const ir::TensorType& tensor);
std::string_view MxLayoutAttr(ir::TensorLayout layout);

struct IndexScatterLayout;  // index_scatter_layout.h

class KernelEmitter {
 public:
  KernelEmitter(const ir::Function& kernel, const KernelPlan& plan, const ModuleOptions& options);

  // `  func.func @name(...) attributes {...} {` ... `  }`, each line ending in '\n'. Inside, the
  // order ptoas expects: constants, tensor views, index casts of scalar parameters, tile
  // allocations (all of them, loops included: addresses are static), the body, return.
  std::string Emit();

 private:
  // kernel_emitter.cpp: names, signature, prologue and assembly.
  void BindNames();
  std::string Signature() const;
  void EmitTensorViews();
  PtoOp TensorView(const ir::Var& param, const TypedValue& pointer, const std::string& name);
  // A stride of a tensor parameter: `constant`, or the run-time value `run_time` where a dynamic
  // axis enters it.
  struct DenseStride {
    int64_t constant = 1;
    std::string run_time;
  };
  void EmitDenseStrides(const ir::Var& param);
  std::string Multiply(const DenseStride& stride, const std::variant<int64_t, std::string>& factor,
                       const ir::Var& param);
  std::vector<TypedValue> DenseStrides(const ir::Var& param);
  void EmitIndexCasts();
  void EmitTileAllocs();
  // An operation, indented for the current loop depth, with the span's location when enabled.
  void Add(std::vector<std::string>& section, const std::string& text, const ir::Span& span) const;
  // A pto operation, in the form the options ask for.
  void Add(std::vector<std::string>& section, const PtoOp& op, const ir::Span& span) const;
  // A region opener or closer (`scf.for ... {`, `}`): not an operation, so never a location.
  void AddStructural(const std::string& text);

  // cross_core_pipes.cpp: the pipe setup of a mixed kernel's member, and its pushes, pops and frees.
  void EmitPipeSetup();
  void EmitPipeSetup(int64_t id, const Pipe& pipe);
  TypedValue GmRing(int64_t id, const Pipe& pipe);
  void TransposeInSlot(const ir::Var& var, const TypedValue& popped, const ir::Span& span);
  void LowerPipe(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span);
  void EmitLocalSlotPipe(const Pipe& pipe, const TypedValue& c2v, const TypedValue& v2c);
  TypedValue PopIntoSlot(const ir::Var& var, int64_t split, const ir::Span& span);
  PtoOp PipeHandleOp(const std::string& name, const TypedValue* tile, int64_t split) const;

  // index_exprs.cpp: loops and the index arithmetic of their bounds and of offsets.
  void LowerFor(const ir::ForStmt& loop);
  // The positions of the integer scalars among a loop's or an if's results (its scf results).
  static std::vector<size_t> ScalarPositions(const std::vector<ir::VarPtr>& results);
  // `%r` or `%r:N` for the scf results at `scalars`, binding each result var to `%r` / `%r#k`.
  std::string ResultNames(const std::vector<ir::VarPtr>& results, const std::vector<size_t>& scalars);
  static std::string IndexTypes(size_t count);  // "index, index, ..."
  // `scf.yield` of the yield's values at `scalars`.
  void YieldScalars(const ir::YieldStmt& yield, const std::vector<size_t>& scalars, const ir::Span& span);
  // `while c:` as scf.while carrying its integer scalars; its tiles stay in their buffers.
  void LowerWhile(const ir::WhileStmt& loop);
  // The SSA name of an index expression the plan accepted, emitting its arith ops into the body.
  std::string IndexValue(const ir::ExprPtr& expr, const ir::Span& span);
  std::string Arith(std::string_view op, const std::string& lhs, const std::string& rhs, const ir::Span& span);
  // `i = <integer expression>` or `b = pl.tile.get_block_idx()`: an index value for later offsets.
  void LowerScalarAssign(const ir::AssignStmt& assign);
  // pl.read of an integer element of a tensor parameter or a tile, as an index value named after
  // `name`, and pl.write of an index value into one.
  std::string ReadElement(const ir::Call& read, const std::string& name, const ir::Span& span);
  void WriteElement(const ir::Call& write, const ir::Span& span);
  std::string CastIndex(const ir::Call& cast, const std::string& name, const ir::Span& span);
  std::string CastToFloat(const ir::Call& cast, const ir::Span& span);
  std::string FlatOffset(const std::vector<DenseStride>& strides, const ir::ExprPtr& indices, const ir::Span& span);
  static std::vector<DenseStride> TileStrides(const ir::Shape& shape);
  // `if a < b:` ... `else:` ... as scf.if on an arith.cmpi.
  void LowerIf(const ir::IfStmt& branch);
  std::string ConditionValue(const ir::ExprPtr& condition, const ir::Span& span);
  // scalar_compares.cpp: comparisons of floating-point scalars, and booleans and floating-point
  // scalars as integer index values.
  std::string FloatComparison(const ir::BinaryExpr& compare, ir::DataType dtype, const ir::Span& span);
  std::string BoolToIndex(const std::string& flag, const std::string& name, const ir::Span& span);
  std::string FloatToIndex(const ir::Call& cast, const std::string& name, const ir::Span& span);

  // tile_ops.cpp: one statement at a time.
  void LowerStmt(const ir::Stmt& stmt);
  // The GM-to-L2 prefetch ops (prefetch_ops.cpp).
  void LowerPrefetch(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span);
  TypedValue WholeTensor(const ir::Var& tensor, const ir::Span& span);
  // On-core arrays (array_ops.cpp).
  std::string LocalArrayType(const ir::Var& array) const;
  void EmitLocalArrays();
  void LowerArray(const ir::Call& call, const ir::AssignStmt& assign, const ir::Span& span);
  // pl.system.set_ffts, sync_set and sync_wait (sync_ops.cpp).
  void LowerSync(const ir::Call& call, const ir::Span& span);
  std::string FftsWorkspaceType(const ir::TensorType& tensor) const;
  // The communication ops of a distributed kernel (comm_ops.cpp).
  void LowerComm(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span);
  void LowerNotify(const ir::Call& call, const ir::Span& span);
  void LowerWait(const ir::Call& call, const ir::Span& span);
  std::string CommRank(const ir::Call& call, const std::string& name, const ir::Span& span);
  std::string LoadContextSlot(const ir::Var& window, const std::string& slot, const ir::Span& span);
  std::string PeerOffset(const ir::Var& window, const std::string& peer, const ir::Span& span);
  TypedValue PeerWindow(const ir::Var& window, const ir::ExprPtr& peer, const ir::ExprPtr& offsets,
                        const ir::Shape& sizes, const ir::Span& span);
  TypedValue PeerWindowAt(const ir::Var& window, const std::string& peer, const std::vector<std::string>& offsets,
                          const ir::Shape& sizes, const ir::Span& span);
  void EmitNotify(const TypedValue& cell, const TypedValue& value, const std::string& mode, const ir::Span& span);
  void EmitWait(const TypedValue& cell, const TypedValue& expected, const std::string& cmp, const ir::Span& span);
  void LowerBarrier(const ir::Call& call, const ir::Span& span);
  TypedValue SignalValue(const ir::ExprPtr& value, const ir::Span& span);
  void LowerLoad(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span);
  void LowerStore(const ir::Call& call, const ir::Span& span);
  void LowerCompute(const OpLowering& lowering, const ir::AssignStmt& assign, const ir::Call& call,
                    const ir::Span& span);
  void LowerSubsetWindow(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // acc_views.cpp: a window of an Acc tile in the tile's own block, as a view of it.
  void LowerAccView(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  std::string AccBandType(const ir::Var& window, std::string type) const;
  // `%<name> = pto.subset %source[row, col] sizes [R, C] : <source type>`: the [R, C] window of a Vec
  // tile at (row, col), typed with the source's layout as PTOAS infers it.
  TypedValue SubsetView(const ir::Var& source, const TypedValue& row, const TypedValue& col, TileExtent window,
                        const std::string& name, const ir::Span& span);
  // A second alloc_tile of `tile` (its address and type) whose valid extents are its top-left `corner`:
  // what a store of part of the tile (shapes=) hands tstore.
  TypedValue CornerView(const ir::Var& tile, const ir::Shape& corner, const ir::Span& span);
  // `%<name> = pto.alloc_tile` of a [rows, cols] tile of `element` in the Vec scratch (KernelPlan::
  // vec_scratch_offset), emitted into the body where the op that needs it stands.
  TypedValue ScratchTile(const std::string& name, std::string_view element, TileExtent extent, const ir::Span& span);
  // a5: a tile pushed to the cube, moved into the NZ layout of its slot (cross_core_pipes.cpp).
  TypedValue NzStaged(const TypedValue& tile, const ir::Var& source, const ir::Span& span);
  // index_gather.cpp: tile.gather as pto.tgather's index form, tile.gather_dim as that form row by row.
  void LowerGather(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerGatherDim(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerBatchGather(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerMergeLists(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerTriangle(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerInitCond(const OpLowering& lowering, const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // mx_ops.cpp: tile.matmul_mx / _acc / _bias, each scale tile bound to its data tile first.
  void LowerMatmulMx(const OpLowering& lowering, const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // index_scatter.cpp: tile.scatter_mask as pto.tscatter's mask form, into its zeroed result.
  void LowerScatterMask(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // index_scatter_blend.cpp: tile.scatter, tile.scatter_dim and tile.scatter_update as tscatter's
  // index form into zeros, blended with the destination; their tiles in the Vec scratch.
  void LowerIndexScatter(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  TypedValue FlatScatterIndices(const ir::Call& call, const IndexScatterLayout& layout, const std::string& stem,
                                const ir::Span& span);
  // ScratchTile's, at byte `offset` of the Vec scratch.
  TypedValue ScratchAt(const std::string& name, std::string_view element, TileExtent extent, int64_t offset,
                       const ir::Span& span);
  TypedValue TileAs(const ir::Var& tile, ir::DataType element, const ir::Span& span);
  // paged_gather.cpp: tile.paged_gather as a loop of table reads and row loads.
  void LowerPagedGather(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  std::string LoadTableEntry(const ir::Var& table, const std::string& offset, const std::string& name,
                             const ir::Span& span);
  TypedValue MatRowView(const ir::Var& result, const TypedValue& row, int64_t cols, const ir::Span& span);
  TypedValue RowOf(const TypedValue& tile, std::string_view element, TileExtent extent, const TypedValue& row,
                   const std::string& name, const ir::Span& span);
  // memory_gather_scatter.cpp: tile.mgather and tile.mscatter, through whole-tensor partitions.
  void LowerMemGather(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  void LowerMemScatter(const ir::Call& call, const ir::Span& span);
  // random_tile.cpp: tile.random as pto.trandom.
  void LowerRandom(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // sin_cos_expansion.cpp: tile.sin / tile.cos as upstream's tile arithmetic.
  void LowerSinCos(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  // batch_transpose.cpp: tile.transpose of the last two axes of a [B, R, C] tile, matrix by matrix.
  void LowerBatchTranspose(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  TypedValue SelectScalarOperand(const ir::Call& call, const ir::Span& span);
  // A tile; for a row-major op, a column vector's [1, N] row view instead.
  TypedValue TileOperand(const ir::Var& tile, bool row_major) const;
  std::string RowViewType(const ir::Var& tile) const;
  // The ZN [cols, rows] view of a Mat tile that a b_trans operand is moved from, and its name.
  std::string TransposedViewType(const ir::Var& tile) const;
  TypedValue TransposedView(const ir::Var& tile) const;
  // A literal or scalar parameter at the element type `dtype`, converting a parameter of another type.
  TypedValue ScalarOperand(const ir::ExprPtr& scalar, ir::DataType dtype, const ir::Span& span);
  // `name ins(ins...) outs(out)`: a destination-passing op that writes `out`.
  static PtoOp DpsOp(std::string name, std::vector<TypedValue> ins, TypedValue out);
  // tile.cast's rounding mode as pto's round_mode enum spells it ("ROUND").
  static std::string RoundMode(const ir::Call& call);
  // `%x_pview = pto.partition_view ...` for a window of a tensor parameter; returns its name.
  // The partition of tensor view `view` at `offsets` of extent `sizes`.
  std::string PartitionViewOf(const TypedValue& view, const std::string& hint,
                              const ir::ExprPtr& offsets, const ir::Shape& sizes, const std::string& partition_type,
                              const ir::Span& span);
  std::string PartitionViewAt(const TypedValue& view, const std::string& hint, const std::vector<std::string>& offsets,
                              const ir::Shape& sizes, const std::string& partition_type, const ir::Span& span);
  std::string PartitionView(const ir::Var& tensor, const ir::ExprPtr& offsets, const ir::Shape& sizes,
                            const std::string& partition_type, const ir::Span& span);
  // `%t = pto.alloc_tile addr = .. valid_row = .. valid_col = .. : T`.
  static PtoOp AllocTile(const TypedValue& tile, const TypedValue& addr, const TypedValue& valid_rows,
                         const TypedValue& valid_cols);
  // A tile's valid_row / valid_col operands: its valid shape where the type narrows it (index
  // expressions emitted into `section`), else its full extent.
  std::pair<TypedValue, TypedValue> ValidOperands(const ir::TileType& tile, const ir::Span& span);
  // The alloc_tile of a tile whose valid extents are computed in the body, emitted where it is defined.
  void EmitDeferredAlloc(const ir::AssignStmt& assign);
  // The de-duplicated `index` constant `value`.
  TypedValue IndexConstant(int64_t value);
  std::string TileOperandType(const ir::Var& tile) const;
  int64_t AllocOffset(const ir::Var& tile) const;
  std::string ElementOf(ir::DataType dtype) const;

  const ir::Function& kernel_;
  const KernelPlan& plan_;
  ModuleOptions options_;
  SsaNames names_;
  std::map<const ir::Var*, std::string> values_;  // parameters and tiles -> their SSA names
  std::map<const ir::Var*, std::string> row_views_;  // column-vector tiles -> their [1, N] row view
  std::map<const ir::Var*, std::string> transposed_views_;  // Mat tiles -> their [K, N] ZN view (b_trans)
  std::map<const ir::Var*, std::string> views_;   // tensor parameters -> their tensor_view
  std::map<const ir::Var*, std::string> indices_; // loop variables, scalar parameters and index values
  std::string block_idx_arg_, block_num_arg_, subblock_idx_arg_;  // launch identity arguments, if read
  // The index argument holding each dynamic axis's extent (tensor parameter, axis); they follow the
  // scalars in the order of the tensors and their axes.
  std::map<std::pair<const ir::Var*, size_t>, std::string> extent_args_;
  std::map<const ir::Var*, std::vector<DenseStride>> dense_strides_;  // tensor parameters -> row-major strides
  std::map<const ir::Var*, std::string> comm_contexts_;  // comm windows -> their CommContext argument
  std::string sdma_workspace_arg_;  // the prefetch ops' SDMA workspace, after the dynamic extents
  std::string gm_slot_buffer_arg_;  // a2a3: the GM slot buffer of the cross-core pipes, the last argument
  TypedValue pipe_;                 // a pto.initialize_l2g2l_pipe's handle (PipeUse::local_slots), if any
  // Tiles whose alloc_tile is emitted in the body, before the op defining them: their valid extents
  // are values the body computes (a ragged tail's `min(...)`).
  std::set<const ir::Var*> deferred_allocs_;
  std::vector<std::string> prologue_;
  std::vector<std::string> body_;
  int depth_ = 0;  // loops around the statement being lowered
};

}  // namespace pypto::backend_ptoas
