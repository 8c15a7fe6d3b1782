// PlanKernel and the Planner's walk over a kernel (kernel_planner.h): the function and its parameters,
// each statement dispatched to its check, the ops refused outright (explicit pipe setup,
// synchronisation, prefetch, communication), scalar assignments; also the launch identity a kernel reads and the
// dtype helpers kernel_plan.h declares.
#include "kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <string_view>
#include <utility>

#include "kernel_planner.h"
#include "mlir_types.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::backend_ptoas {
namespace detail {
namespace {

// The kernel name is both an MLIR symbol and the C++ function ptoas generates.
bool IsIdentifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string_view StmtKindName(const ir::Stmt& stmt) {
  switch (stmt.kind()) {
    case ir::NodeKind::AssignStmt: return "AssignStmt";
    case ir::NodeKind::EvalStmt: return "EvalStmt";
    case ir::NodeKind::SeqStmts: return "SeqStmts";
    case ir::NodeKind::ReturnStmt: return "ReturnStmt";
    case ir::NodeKind::InCoreScopeStmt: return "InCoreScopeStmt";
    case ir::NodeKind::YieldStmt: return "YieldStmt";
    default: return "statement";
  }
}

}  // namespace

pypto::unexpected<std::string> Error(const ir::Span& span, std::string message) {
  return pypto::unexpected(fmt::format("{}: {}", span.str(), message));
}

void Flatten(const ir::StmtPtr& stmt, std::vector<ir::StmtPtr>& out) {
  if (const auto* seq = stmt->As<ir::SeqStmts>()) {
    for (const auto& child : seq->stmts()) Flatten(child, out);
  } else {
    out.push_back(stmt);
  }
}

pypto::expected<KernelPlan, std::string> Planner::Run() {
  if (auto ok = CheckFunction(); !ok) return pypto::unexpected(ok.error());
  if (auto ok = SplitParams(); !ok) return pypto::unexpected(ok.error());
  if (kernel_.body()) Flatten(kernel_.body(), plan_.stmts);
  plan_.launch = UsedLaunchIdentity(kernel_);
  for (const auto& stmt : plan_.stmts) {
    if (auto ok = CheckStmt(*stmt); !ok) return pypto::unexpected(ok.error());
  }
  for (const auto& param : plan_.tensor_params) {
    if (!used_.contains(param.get())) continue;
    if (plan_.ffts_workspaces.contains(param.get()))
      return pypto::unexpected(Error(param->span(), fmt::format("backend-ptoas cannot lower kernel '{}': it reads "
                                                                 "the FFTS workspace '{}' it hands pl.system.set_ffts; "
                                                                 "pass the tensor it reads separately",
                                                                 kernel_.name(), param->name_hint())).error());
    plan_.viewed_tensors.push_back(param);
  }
  for (const auto& param : plan_.scalar_params) {
    if (used_.contains(param.get())) plan_.index_scalars.push_back(param);
  }
  if (auto ok = CheckTransposeViewSources(); !ok) return pypto::unexpected(ok.error());
  if (auto ok = PlaceScratch(); !ok) return pypto::unexpected(ok.error());
  if (auto ok = PlacePipes(); !ok) return pypto::unexpected(ok.error());
  return std::move(plan_);
}

Status Planner::CheckFunction() const {
  const auto type = kernel_.type();
  if (type != ir::FunctionType::AIV && type != ir::FunctionType::AIC) {
    return Error(kernel_.span(), fmt::format("kernel '{}' has type {}; backend-ptoas emits only AIV and AIC kernels",
                                             kernel_.name(), ir::FunctionTypeName(type)));
  }
  if (!IsIdentifier(kernel_.name())) {
    return Error(kernel_.span(), fmt::format("kernel name '{}' is not a C identifier", kernel_.name()));
  }
  return {};
}

Status Planner::SplitParams() {
  for (const auto& param : kernel_.params()) {
    if (const auto* tensor = param->type()->As<ir::TensorType>()) {
      if (auto ok = CheckTensorParam(*param, *tensor); !ok) return ok;
      plan_.tensor_params.push_back(param);
      plan_.tensor_param_of[param.get()] = param.get();
    } else if (const auto* scalar = param->type()->As<ir::ScalarType>()) {
      if (auto element = MlirElementType(scalar->dtype()); !element) return Error(param->span(), element.error());
      plan_.scalar_params.push_back(param);
    } else {
      return Error(param->span(), fmt::format("parameter '{}' of kernel '{}' has type {}, which backend-ptoas "
                                              "cannot pass to a kernel",
                                              param->name_hint(), kernel_.name(), param->type()->str()));
    }
  }
  return {};
}

Status Planner::CheckTensorParam(const ir::Var& param, const ir::TensorType& tensor) {
  if (auto element = MlirElementType(tensor.dtype()); !element) return Error(param.span(), element.error());
  if (tensor.shape().empty()) return Error(param.span(), fmt::format("tensor '{}' has rank 0", param.name_hint()));
  // A dynamic axis is the view's shape operand, and the strides of the axes before it are computed
  // from it when the kernel runs (KernelEmitter::EmitDenseStrides): any axis may be dynamic.
  return {};
}

Status Planner::CheckStmt(const ir::Stmt& stmt) {
  if (const auto* assign = stmt.As<ir::AssignStmt>()) return CheckAssign(*assign);
  if (const auto* eval = stmt.As<ir::EvalStmt>()) {
    const auto* call = eval->expr()->As<ir::Call>();
    // The PTO dialect's pto.syncall has no lowering here yet; on a simulator this is a warning.
    if (call && call->target_name() == "system.syncall")
      return Error(stmt.span(), fmt::format("backend-ptoas does not lower pl.system.syncall (pto.syncall) yet in "
                                            "kernel '{}'",
                                            kernel_.name()));
    if (call && IsPipeOp(call->target_name())) return CheckPipeOp(*call, stmt, nullptr);
    if (call && call->target_name().starts_with("prefetch.")) return CheckPrefetch(*call, stmt, nullptr);
    if (call && call->target_name().starts_with("comm.")) return CheckComm(*call, stmt, nullptr);
    if (call && IsLoweredSyncOp(call->target_name())) return CheckSync(*call, stmt.span());
    if (call && SyncOpSpelling(call->target_name())) return SyncError(*call, stmt);
    if (call && call->target_name() == "tensor.write") return CheckTensorWrite(*call, stmt.span(), nullptr);
    if (call && call->target_name() == "tile.write") return CheckTileWrite(*call, stmt.span(), nullptr);
    // The ops that write a tensor: the statement's value, that tensor, needs no name.
    if (!call || (call->target_name() != "tile.store" && call->target_name() != "tile.mscatter")) {
      return Error(stmt.span(), fmt::format("backend-ptoas cannot lower an expression statement other than "
                                            "tile.store or tile.mscatter in kernel '{}'",
                                            kernel_.name()));
    }
    return CheckCall(*call, stmt, nullptr);
  }
  // Results leave a kernel through its output tensors, so the return itself emits nothing.
  if (stmt.Is<ir::ReturnStmt>()) {
    if (loops_.empty() && while_depth_ == 0) return {};
    return Error(stmt.span(), fmt::format("backend-ptoas cannot lower a return inside a loop in kernel '{}'",
                                          kernel_.name()));
  }
  if (const auto* loop = stmt.As<ir::ForStmt>()) return CheckFor(*loop);
  if (const auto* loop = stmt.As<ir::WhileStmt>()) return CheckWhile(*loop);
  if (const auto* branch = stmt.As<ir::IfStmt>()) return CheckIf(*branch);
  // A body's closing yield: the loop or if around it checks what it yields.
  if (stmt.Is<ir::YieldStmt>()) return {};
  return Error(stmt.span(), fmt::format("backend-ptoas cannot lower {} in kernel '{}'", StmtKindName(stmt),
                                        kernel_.name()));
}

// Cross-core pipes (kernel_plan_pipes.cpp) and the setup ops of hand-written ones.
bool Planner::IsPipeOp(const std::string& op) {
  return ir::IsCrossCorePipeOp(op) || IsPipeSetupOp(op);
}

// A pipe op where the plan lowers other ops: the pipe ops themselves are checked by CheckPipeOp.
Status Planner::PipeError(const ir::Call& call, const ir::Stmt& stmt) const {
  const std::string& op = call.target_name();
  return Error(call.span().known() ? call.span() : stmt.span(),
               fmt::format("backend-ptoas does not lower the explicit pipe setup op '{}' yet in kernel '{}' (it "
                           "writes the setup of the pipes itself: push, pop and free without it)",
                           op, kernel_.name()));
}

// The synchronisation ops (pl.system.sync_set, bar_v, fence, ...) and the PTO instruction each
// becomes upstream; of these, set_ffts, sync_set and sync_wait are lowered (CheckSync).
const char* Planner::SyncOpSpelling(std::string_view op) {
  static constexpr std::array<std::pair<std::string_view, const char*>, 9> kSpellings = {{
      {"system.sync_set", "pto.sync.set"},
      {"system.sync_wait", "pto.sync.wait"},
      {"system.set_ffts", "pto.set_ffts"},
      {"system.sync_src", "a pipe flag set"},
      {"system.sync_dst", "a pipe flag wait"},
      {"system.bar_v", "pto.barrier <PIPE_V>"},
      {"system.bar_m", "pto.barrier <PIPE_M>"},
      {"system.bar_all", "pto.barrier <PIPE_ALL>"},
      {"system.fence", "pto.fence.barrier_all"},
  }};
  if (op == "system.cacheinvalid") return "pto.cmo.cacheinvalid";
  for (const auto& [name, spelling] : kSpellings)
    if (name == op) return spelling;
  return nullptr;
}

bool Planner::IsLoweredSyncOp(std::string_view op) {
  return op == "system.set_ffts" || op == "system.sync_set" || op == "system.sync_wait";
}

// set_ffts's workspace is a tensor parameter the kernel reads nothing else of (it becomes a memref
// argument, which has no tensor view); an event id is a constant or an index value.
Status Planner::CheckSync(const ir::Call& call, const ir::Span& stmt_span) {
  const ir::Span& span = call.span().known() ? call.span() : stmt_span;
  if (call.target_name() != "system.set_ffts") {
    if (ir::AsConstInt(call.args()[0])) return {};
    return CheckIndexExpr(call.args()[0], fmt::format("the event id of 'pl.{}'", call.target_name()), span);
  }
  auto param = ParamOf(call.args()[0], call.target_name(), span);
  if (!param) return pypto::unexpected(param.error());
  plan_.ffts_workspaces.insert(*param);
  return {};
}

Status Planner::SyncError(const ir::Call& call, const ir::Stmt& stmt) const {
  const std::string& op = call.target_name();
  return Error(call.span().known() ? call.span() : stmt.span(),
               fmt::format("backend-ptoas does not lower the synchronisation op 'pl.{}' ({}) yet in kernel '{}'", op,
                           SyncOpSpelling(op), kernel_.name()));
}

Status Planner::CheckAssign(const ir::AssignStmt& assign) {
  const auto* call = assign.value()->As<ir::Call>();
  if (call && IsPipeOp(call->target_name())) return CheckPipeOp(*call, assign, &assign);
  if (call && call->target_name().starts_with("prefetch.")) return CheckPrefetch(*call, assign, &assign);
  if (call && call->target_name().starts_with("comm.")) return CheckComm(*call, assign, &assign);
  if (call && call->target_name().starts_with("array.")) return CheckArray(*call, assign);
  if (call && call->target_name() == "tensor.write") return CheckTensorWrite(*call, assign.span(), &assign);
  if (call && call->target_name() == "tile.write") return CheckTileWrite(*call, assign.span(), &assign);
  if (assign.var()->type()->As<ir::ScalarType>()) return CheckScalarAssign(assign, call);
  if (!call) {
    // `b = a` of a tile names a's buffer again (an accumulator that a loop after it may carry on).
    const auto* source = assign.value()->As<ir::Var>();
    if (source && assign.var()->type()->As<ir::TileType>() && tiles_.contains(source))
      return AliasTile(*assign.var(), *source, assign.span());
    return Error(assign.span(), fmt::format("backend-ptoas cannot lower the plain assignment to '{}' in kernel '{}'",
                                            assign.var()->name_hint(), kernel_.name()));
  }
  return CheckCall(*call, assign, &assign);
}

// What pl.cast turns into a floating-point scalar of type `to` here: a literal, an integer index
// value, or a floating-point scalar the kernel has (a parameter, an element read, another such cast)
// that one arith op converts.
bool Planner::IsFloatCastSource(const ir::Expr& value, ir::DataType to) const {
  if (value.Is<ir::ConstFloat>() || value.Is<ir::ConstInt>()) return true;
  const auto* scalar = value.type()->As<ir::ScalarType>();
  if (!scalar) return false;
  if (!ir::IsFloat(scalar->dtype())) return IsIndexScalarExpr(value);
  const auto* var = value.As<ir::Var>();
  if (scalar->dtype() != to && !ScalarConvertible(scalar->dtype(), to)) return false;
  return var && (plan_.float_scalars.contains(var) ||
                 std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                             [&](const ir::VarPtr& param) { return param.get() == var; }));
}

// An index value: the block identity, or integer arithmetic over the values in scope.
Status Planner::CheckScalarAssign(const ir::AssignStmt& assign, const ir::Call* call) {
  const ir::Var& var = *assign.var();
  const auto dtype = var.type()->As<ir::ScalarType>()->dtype();
  const bool element_read = call && (call->target_name() == "tensor.read" || call->target_name() == "tile.read");
  // A floating-point element read (a scale kept in a tensor) is a scalar at its element type, for
  // the scalar operands of tile ops; nothing computes with it.
  if (ir::IsFloat(dtype) && element_read && MlirElementType(dtype)) {
    if (auto ok = CheckElementRead(*call, assign.span()); !ok) return ok;
    plan_.float_scalars.insert(&var);
    return {};
  }
  if (ir::IsFloat(dtype) && call && call->target_name() == "scalar.cast" && MlirElementType(dtype) &&
      IsFloatCastSource(*call->args()[0], dtype)) {
    const ir::ExprPtr& source = call->args()[0];
    const bool literal = source->Is<ir::ConstFloat>() || source->Is<ir::ConstInt>();
    if (!literal && !ir::IsFloat(source->type()->As<ir::ScalarType>()->dtype()))
      if (auto ok = CheckIndexExpr(source, fmt::format("the value cast to '{}'", var.name_hint()), assign.span()); !ok)
        return ok;
    plan_.float_scalars.insert(&var);
    return {};
  }
  // An unsigned integer is an index value too where it is one cast (`pl.cast(start, pl.UINT32)`, the
  // start of a UINT32 pl.arange): wrapped to its width and zero-extended.
  const bool unsigned_cast = ir::IsUnsignedInteger(dtype) && call && call->target_name() == "scalar.cast" &&
                             IsIndexScalarExpr(*call->args()[0]);
  if (dtype != ir::DataType::INDEX && !IsSignedInteger(dtype) && !unsigned_cast)
    return Error(assign.span(), fmt::format("backend-ptoas cannot lower the {} scalar '{}' in kernel '{}'; it "
                                            "computes integer index values, and floating-point scalars only by "
                                            "reading elements (pl.read) and casting (pl.cast of a literal, an "
                                            "integer or such a scalar)",
                                            ir::DataTypeName(dtype), var.name_hint(), kernel_.name()));
  if (call) {
    const std::string& op = call->target_name();
    if (IsPipeOp(op)) return PipeError(*call, assign);
    if (op == "tensor.read" || op == "tile.read") {
      if (auto ok = CheckElementRead(*call, assign.span()); !ok) return ok;
    } else if (op == "scalar.cast" && IsIndexScalarExpr(*call->args()[0])) {
      // An integer as another integer dtype: the same index value, wrapped when it narrows.
      if (auto ok = CheckIndexExpr(call->args()[0], fmt::format("the value cast to '{}'", var.name_hint()),
                                   assign.span());
          !ok)
        return ok;
    } else if (op == "scalar.cast" && IsComparisonExpr(*call->args()[0])) {
      // A boolean as an integer: 1 where the comparison holds, else 0.
      if (auto ok = CheckComparison(*call->args()[0]->As<ir::BinaryExpr>(),
                                    fmt::format("the comparison cast to '{}'", var.name_hint()), assign.span());
          !ok)
        return ok;
    } else if (op == "scalar.cast" && IsFloatScalarExpr(*call->args()[0])) {
      // A floating-point scalar as an integer, rounded toward zero (arith.fptosi).
      const ir::DataType from = call->args()[0]->type()->As<ir::ScalarType>()->dtype();
      if (auto ok = CheckScalarOperand(call->args()[0], from, fmt::format("the value cast to '{}'", var.name_hint()),
                                       assign.span());
          !ok)
        return ok;
    } else if (op != "tile.get_block_idx" && op != "tile.get_block_num" && op != "tile.get_subblock_idx") {
      return Error(assign.span(), fmt::format("backend-ptoas cannot lower the scalar '{}' computed by '{}' in kernel "
                                              "'{}'",
                                              var.name_hint(), op, kernel_.name()));
    }
  } else if (auto ok = CheckIndexExpr(assign.value(), fmt::format("the value of '{}'", var.name_hint()),
                                      assign.span());
             !ok) {
    return ok;
  }
  scalars_.insert(&var);
  return {};
}

}  // namespace detail

LaunchIdentity UsedLaunchIdentity(const ir::Function& kernel) {
  struct Finder final : ir::IRVisitor {
    LaunchIdentity used;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (call->is_op_call()) {
        const std::string& op = call->target_name();
        used.block |= op == "tile.get_block_idx" || op == "tile.get_block_num";
        used.subblock |= op == "tile.get_subblock_idx";
      }
      IRVisitor::VisitCall(call);
    }
  } finder;
  if (kernel.body()) finder.VisitStmt(kernel.body());
  return finder.used;
}

bool IsComparisonExpr(const ir::Expr& expr) {
  const auto* binary = expr.As<ir::BinaryExpr>();
  return binary && ir::IsComparison(binary->op());
}

bool IsElementRead(const ir::Expr& expr) {
  const auto* call = expr.As<ir::Call>();
  return call && call->is_op_call() && (call->target_name() == "tensor.read" || call->target_name() == "tile.read");
}

bool IsFloatScalarExpr(const ir::Expr& expr) {
  const auto* scalar = expr.type()->As<ir::ScalarType>();
  return scalar && ir::IsFloat(scalar->dtype());
}

std::optional<ir::DataType> ComparedFloatType(const ir::BinaryExpr& compare) {
  bool float_literal = false;
  for (const auto& operand : {compare.lhs(), compare.rhs()}) {
    const auto* scalar = operand->type()->As<ir::ScalarType>();
    if (operand->Is<ir::ConstFloat>()) {
      float_literal = true;
    } else if (!operand->Is<ir::ConstInt>() && scalar) {
      if (ir::IsFloat(scalar->dtype())) return scalar->dtype();
      return std::nullopt;
    }
  }
  if (float_literal) return ir::DataType::FP32;
  return std::nullopt;
}

bool ScalarConvertible(ir::DataType from, ir::DataType to) {
  const bool signed_from = IsSignedInteger(from);
  // extf / truncf change the width; FP16 <-> BF16 would need two casts.
  if (ir::IsFloat(to)) return (ir::IsFloat(from) && ir::DataTypeBits(from) != ir::DataTypeBits(to)) || signed_from;
  return signed_from && IsSignedInteger(to);
}

bool IsSignedInteger(ir::DataType dtype) {
  using ir::DataType;
  return dtype == DataType::INT8 || dtype == DataType::INT16 || dtype == DataType::INT32 || dtype == DataType::INT64;
}

pypto::expected<KernelPlan, std::string> PlanKernel(const ir::Function& kernel, std::string_view arch) {
  return detail::Planner(kernel, arch).Run();
}

}  // namespace pypto::backend_ptoas
