// The Planner behind PlanKernel (kernel_plan.h): it walks a kernel once, checking every construct
// against what backend-ptoas can lower, and fills the KernelPlan the printers read. Declared here so
// that its checks can be defined by concept in the kernel_plan*.cpp files: statements and parameters
// (kernel_plan.cpp), tile op calls (kernel_plan_ops.cpp), tensor operands and single elements
// (kernel_plan_tensors.cpp), loops and ifs (kernel_plan_control.cpp), index expressions
// (kernel_plan_index.cpp), gathers by index (kernel_plan_gather.cpp).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_plan.h"
#include "pypto/ir/function.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas::detail {

using Status = pypto::expected<void, std::string>;

// The batch ops (kernel_plan_batch_tiles.cpp): tile.transpose of the last two axes of a rank-3 tile,
// tile.gather_dim of one along its first or second axis.
bool IsBatchTranspose(const ir::Call& call);
bool IsBatchGather(const ir::Call& call);
bool IsBatchOp(const ir::Call& call);

// The error for a construct at `span`: "<span>: <message>".
pypto::unexpected<std::string> Error(const ir::Span& span, std::string message);

// Appends `stmt` to `out`, nested sequences flattened.
void Flatten(const ir::StmtPtr& stmt, std::vector<ir::StmtPtr>& out);

class Planner {
 public:
  Planner(const ir::Function& kernel, std::string_view arch) : kernel_(kernel), arch_(arch) {}

  pypto::expected<KernelPlan, std::string> Run();

 private:
  // The kernel, its parameters and its statements (kernel_plan.cpp).
  Status CheckFunction() const;
  Status SplitParams();
  static Status CheckTensorParam(const ir::Var& param, const ir::TensorType& tensor);
  Status CheckStmt(const ir::Stmt& stmt);
  static bool IsPipeOp(const std::string& op);
  Status CheckPipeSetup(const ir::Call& call, const ir::Span& span);
  Status PipeError(const ir::Call& call, const ir::Stmt& stmt) const;
  static bool IsLoweredSyncOp(std::string_view op);
  Status CheckSync(const ir::Call& call, const ir::Span& stmt_span);
  // Cross-core pipe ops (kernel_plan_pipes.cpp).
  Status CheckPipeOp(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign);
  Status OrderPipeFrees(std::vector<ir::StmtPtr>& block) const;
  Status PlacePipes();
  static const char* SyncOpSpelling(std::string_view op);
  Status SyncError(const ir::Call& call, const ir::Stmt& stmt) const;
  // The prefetch ops (kernel_plan_prefetch.cpp).
  Status CheckPrefetch(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign);
  // On-core arrays (kernel_plan_array.cpp).
  Status CheckArray(const ir::Call& call, const ir::AssignStmt& assign);
  Status CheckArrayOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) const;
  Status CarryArray(const ir::Var& alias, const ir::Var* from, const ir::Span& span);
  Status CheckArrayYield(const ir::ExprPtr& value, const ir::Var& carried, const ir::Span& span) const;
  // The communication ops (kernel_plan_comm.cpp).
  Status CheckComm(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign);
  Status CheckAssign(const ir::AssignStmt& assign);
  Status CheckScalarAssign(const ir::AssignStmt& assign, const ir::Call* call);
  bool IsFloatCastSource(const ir::Expr& value, ir::DataType to) const;

  // Tile op calls: their operands, results and placement (kernel_plan_ops.cpp).
  Status CheckCall(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign);
  Status CheckCoreType(const ir::Call& call, const ir::Span& span) const;
  Status CheckOperands(const OpLowering& lowering, const ir::Call& call, const ir::Span& span);
  Status CheckTargetDtype(const ir::Call& call, const ir::Span& span) const;
  Status CheckTransposedRhs(const ir::Call& call, const ir::Span& span);
  // tile.scatter_mask's destination must be zeros (kernel_plan_scatter.cpp).
  Status CheckZeroedDestination(const ir::Call& call, const ir::Span& span) const;
  // tile.scatter, tile.scatter_dim and tile.scatter_update: tscatter's index form (kernel_plan_index_scatter.cpp).
  Status CheckIndexScatter(const ir::Call& call, const ir::Span& span);
  // tile.paged_gather: a loop of row loads (kernel_plan_paged_gather.cpp).
  Status CheckPagedGather(const ir::Call& call, const ir::Span& span);
  // tile.mgather and tile.mscatter, whose memory operands are whole tensors (kernel_plan_memory_indexed.cpp).
  Status CheckMemGather(const ir::Call& call, const ir::Span& span);
  Status CheckMemScatter(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign);
  // The gathers by index (kernel_plan_gather.cpp).
  Status CheckIndexGather(const ir::Call& call, const ir::Span& span) const;
  Status CheckGatherDim(const ir::Call& call, const ir::Span& span);
  Status CheckGather(const ir::Call& call, const ir::Span& span);
  Status NeedScratch(int64_t bytes, const ir::Call& call, const ir::Span& span);
  Status PlaceScratch();
  Status CheckDiagonal(const ir::ExprPtr& diagonal, std::string_view op, const ir::Span& span) const;
  Status CheckValidExtents(const std::vector<ir::ExprPtr>& extents, std::string_view op, const ir::Span& span);
  Status CheckOrigin(const std::vector<ir::ExprPtr>& origin, std::string_view op, const ir::Span& span);
  Status CheckWindow(const ir::Call& call, const ir::AssignStmt& assign, const ir::Span& span);
  bool RecordBandView(const ir::Call& call, const ir::AssignStmt& assign);
  bool RecordAccView(const ir::Call& call, const ir::AssignStmt& assign);
  Status CheckAccumulatedWindow(const ir::Call& product, const ir::AssignStmt& assign, const ir::Span& span);
  Status CheckResult(const OpLowering& lowering, const ir::Call& call, const ir::AssignStmt& assign,
                     const ir::Span& span);
  Status CheckSameBuffer(const ir::Call& call, const ir::Var& operand, const ir::Var& result, std::string_view role,
                         const ir::Span& span) const;
  Status CheckMove(const ir::Var& source, const ir::Var& result, const ir::Span& span) const;
  // MX scale tiles and products (kernel_plan_mx.cpp).
  Status CheckMx(const OpLowering& lowering, const ir::Call& call, const ir::AssignStmt& assign,
                 const ir::Span& span);
  // tile.transpose_view (kernel_plan_transpose_view.cpp).
  Status CheckTransposeView(const ir::Call& call, const ir::Var& result, const ir::Span& span);
  Status CheckTransposeViewSources() const;
  Status CheckStore(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign);
  Status DefineTile(const ir::AssignStmt& assign, const ir::Span& span);
  Status CheckTileOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) const;
  // The rank-3 tiles of the batch ops (kernel_plan_batch_tiles.cpp): a transpose of the last two axes
  // of a [B, R, C] Vec tile, one ttrans per matrix (kernel_plan_batch_transpose.cpp), and a gather
  // across the batch, through flat indices (kernel_plan_gather.cpp).
  bool IsBatchTile(const ir::AssignStmt& assign) const;
  Status CheckBatchTranspose(const ir::Call& call, const ir::Span& span);
  Status CheckBatchGather(const ir::Call& call, const ir::Span& span);
  Status CheckScalarOperand(const ir::ExprPtr& arg, const ir::TypePtr& tile_type, std::string_view op,
                            const ir::Span& span) const;
  Status CheckScalarOperand(const ir::ExprPtr& arg, ir::DataType dtype, std::string_view op,
                            const ir::Span& span) const;

  // Tensor operands and single-element reads and writes (kernel_plan_tensors.cpp).
  Status CheckElementRead(const ir::Call& call, const ir::Span& span);
  Status CheckTileWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign);
  Status CheckWrittenValue(ir::DataType dtype, const ir::ExprPtr& value, std::string_view op, std::string_view what,
                           const ir::Span& span);
  Status CheckIntegerElements(ir::DataType dtype, std::string_view op, std::string_view what,
                              const ir::Span& span) const;
  Status CheckTensorWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign);
  pypto::expected<const ir::Var*, std::string> ParamOf(const ir::ExprPtr& arg, std::string_view op,
                                                      const ir::Span& span) const;
  Status CheckTensorOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span);
  static bool IsRowMergedWindow(const ir::Shape& window, const ir::Shape& tile);
  Status CheckTensorLayout(const ir::Var& tensor, const ir::TileType& tile, std::string_view what,
                           const ir::Span& span) const;
  static Status CheckStaticInts(const ir::ExprPtr& arg, std::string_view what, std::string_view op,
                                const ir::Span& span);

  // Loops and ifs, and the tiles and scalars they carry or merge (kernel_plan_control.cpp).
  Status CheckFor(const ir::ForStmt& loop);
  Status CheckWhile(const ir::WhileStmt& loop);
  Status CheckIf(const ir::IfStmt& branch);
  bool IsBoolParam(const ir::Expr& expr) const;
  Status CheckCondition(const ir::ExprPtr& condition, const ir::Span& span, std::string_view construct = "if");
  static bool IsIndexScalarExpr(const ir::Expr& expr);
  static bool IsIndexScalar(const ir::Var& var);
  Status CheckScalarResult(const ir::ExprPtr& value, const ir::Var& carried, const ir::Var* result,
                           const ir::Span& span);
  Status AliasTile(const ir::Var& alias, const ir::Var& tile, const ir::Span& span);
  Status CheckYieldedInPlace(const ir::ExprPtr& value, const ir::Var& carried, const ir::Span& span) const;
  Status CheckSamePlace(const ir::Var& a, const ir::Var& b, const ir::Span& span) const;
  const ir::Var* RootTile(const ir::Var& tile) const;

  // Offsets and other index expressions (kernel_plan_index.cpp).
  Status CheckOffsets(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span);
  Status CheckIndexExpr(const ir::ExprPtr& expr, const std::string& what, const ir::Span& span);
  Status CheckIndexVar(const ir::Var& var, const std::string& what, const ir::Span& span);
  Status CheckComparison(const ir::BinaryExpr& compare, const std::string& what, const ir::Span& span);
  bool IsScalarParam(const ir::Var& var) const;

  const ir::Function& kernel_;
  std::string_view arch_;
  KernelPlan plan_;
  std::set<const ir::Var*> tiles_;
  std::set<const ir::Var*> used_;      // tensor and scalar parameters the body reads
  std::vector<const ir::Var*> loops_;  // loop variables in scope, outermost first
  std::set<const ir::Var*> scalars_;   // index values the body computed
  int while_depth_ = 0;                // while loops around the statement being checked
  // The largest scratch tile an op needs (bytes), and the first op that needs one (for the error
  // when the Vec buffer has no room left for it).
  int64_t scratch_bytes_ = 0;
  const ir::Call* scratch_user_ = nullptr;
  ir::Span scratch_span_;
  // Where each tile.transpose_view is, for CheckTransposeViewSources' errors.
  std::map<const ir::Var*, ir::Span> zn_view_spans_;
};

}  // namespace pypto::backend_ptoas::detail
