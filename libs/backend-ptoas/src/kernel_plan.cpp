#include "kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include "mlir_types.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::backend_ptoas {
namespace {

using Status = pypto::expected<void, std::string>;

pypto::unexpected<std::string> Error(const ir::Span& span, std::string message) {
  return pypto::unexpected(fmt::format("{}: {}", span.str(), message));
}

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

void Flatten(const ir::StmtPtr& stmt, std::vector<ir::StmtPtr>& out) {
  if (const auto* seq = stmt->As<ir::SeqStmts>()) {
    for (const auto& child : seq->stmts()) Flatten(child, out);
  } else {
    out.push_back(stmt);
  }
}

class Planner {
 public:
  Planner(const ir::Function& kernel, std::string_view arch) : kernel_(kernel), arch_(arch) {}

  pypto::expected<KernelPlan, std::string> Run() {
    if (auto ok = CheckFunction(); !ok) return pypto::unexpected(ok.error());
    if (auto ok = SplitParams(); !ok) return pypto::unexpected(ok.error());
    if (kernel_.body()) Flatten(kernel_.body(), plan_.stmts);
    plan_.launch = UsedLaunchIdentity(kernel_);
    for (const auto& stmt : plan_.stmts) {
      if (auto ok = CheckStmt(*stmt); !ok) return pypto::unexpected(ok.error());
    }
    for (const auto& param : plan_.tensor_params) {
      if (used_.contains(param.get())) plan_.viewed_tensors.push_back(param);
    }
    for (const auto& param : plan_.scalar_params) {
      if (used_.contains(param.get())) plan_.index_scalars.push_back(param);
    }
    return std::move(plan_);
  }

 private:
  Status CheckFunction() const {
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

  Status SplitParams() {
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

  static Status CheckTensorParam(const ir::Var& param, const ir::TensorType& tensor) {
    if (auto element = MlirElementType(tensor.dtype()); !element) return Error(param.span(), element.error());
    if (tensor.shape().empty()) return Error(param.span(), fmt::format("tensor '{}' has rank 0", param.name_hint()));
    return {};
  }

  Status CheckStmt(const ir::Stmt& stmt) {
    if (const auto* assign = stmt.As<ir::AssignStmt>()) return CheckAssign(*assign);
    if (const auto* eval = stmt.As<ir::EvalStmt>()) {
      const auto* call = eval->expr()->As<ir::Call>();
      // The PTO dialect's pto.syncall has no lowering here yet; on a simulator this is a warning.
      if (call && call->target_name() == "system.syncall")
        return Error(stmt.span(), fmt::format("backend-ptoas does not lower pl.system.syncall (pto.syncall) yet in "
                                              "kernel '{}'",
                                              kernel_.name()));
      if (call && IsPipeOp(call->target_name())) return PipeError(*call, stmt);
      if (call && call->target_name().starts_with("prefetch.")) return PrefetchError(*call, stmt);
      if (call && call->target_name().starts_with("comm.")) return CommError(*call, stmt);
      if (call && SyncOpSpelling(call->target_name())) return SyncError(*call, stmt);
      if (call && call->target_name() == "tensor.write") return CheckTensorWrite(*call, stmt.span(), nullptr);
      if (call && call->target_name() == "tile.write") return CheckTileWrite(*call, stmt.span(), nullptr);
      if (!call || call->target_name() != "tile.store") {
        return Error(stmt.span(), fmt::format("backend-ptoas cannot lower an expression statement other than "
                                              "tile.store in kernel '{}'",
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

  // Cross-core pipes (pto.tpush_to_aiv, pto.tpop_from_aic, ...) need the slot buffers and pipe setup
  // ptoas expects; until they are emitted, a kernel using them runs on the simulator only.
  static bool IsPipeOp(const std::string& op) {
    return ir::IsCrossCorePipeOp(op) || op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe" ||
           op == "system.reserve_buffer" || op == "system.import_peer_buffer";
  }
  Status PipeError(const ir::Call& call, const ir::Stmt& stmt) const {
    const std::string& op = call.target_name();
    return Error(call.span().known() ? call.span() : stmt.span(),
                 fmt::format("backend-ptoas does not lower the cross-core pipe op '{}' yet in kernel '{}'", op,
                             kernel_.name()));
  }

  // The synchronisation ops (pl.system.sync_set, bar_v, fence, ...) and the PTO instruction each
  // becomes upstream; none is emitted here yet (sync_set/sync_wait/set_ffts also need the FFTS
  // workspace passed as a !pto.ptr<i64> kernel parameter).
  static const char* SyncOpSpelling(std::string_view op) {
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
  Status SyncError(const ir::Call& call, const ir::Stmt& stmt) const {
    const std::string& op = call.target_name();
    return Error(call.span().known() ? call.span() : stmt.span(),
                 fmt::format("backend-ptoas does not lower the synchronisation op 'pl.{}' ({}) yet in kernel '{}'", op,
                             SyncOpSpelling(op), kernel_.name()));
  }

  // pl.prefetch.* become pto.make_prefetch_async_context, pto.tprefetch_async, ... upstream, on an
  // SDMA workspace the runtime hands the kernel as an extra !pto.ptr<i8> parameter; neither is here yet.
  Status PrefetchError(const ir::Call& call, const ir::Stmt& stmt) const {
    return Error(call.span().known() ? call.span() : stmt.span(),
                 fmt::format("backend-ptoas does not lower the prefetch op 'pl.{}' yet in kernel '{}' (it needs the "
                             "SDMA workspace the runtime passes to the kernel)",
                             call.target_name(), kernel_.name()));
  }

  // The communication ops of distributed kernels (pld.*) become pto.comm.* instructions upstream
  // (tnotify, twait, tget, tput), addressing peers through the HCCL window; none is emitted here yet,
  // so a distributed kernel runs on the simulators only.
  Status CommError(const ir::Call& call, const ir::Stmt& stmt) const {
    return Error(call.span().known() ? call.span() : stmt.span(),
                 fmt::format("backend-ptoas does not lower the communication op '{}' (pto.comm.*) yet in kernel '{}'",
                             call.target_name(), kernel_.name()));
  }

  Status CheckAssign(const ir::AssignStmt& assign) {
    const auto* call = assign.value()->As<ir::Call>();
    if (call && call->target_name().starts_with("prefetch.")) return PrefetchError(*call, assign);
    if (call && call->target_name().starts_with("comm.")) return CommError(*call, assign);
    if (call && call->target_name() == "tensor.write") return CheckTensorWrite(*call, assign.span(), &assign);
    if (call && call->target_name() == "tile.write") return CheckTileWrite(*call, assign.span(), &assign);
    if (assign.var()->type()->As<ir::ScalarType>()) return CheckScalarAssign(assign, call);
    if (!call) {
      return Error(assign.span(), fmt::format("backend-ptoas cannot lower the plain assignment to '{}' in kernel '{}'",
                                              assign.var()->name_hint(), kernel_.name()));
    }
    return CheckCall(*call, assign, &assign);
  }

  // An index value: the block identity, or integer arithmetic over the values in scope.
  Status CheckScalarAssign(const ir::AssignStmt& assign, const ir::Call* call) {
    const ir::Var& var = *assign.var();
    const auto dtype = var.type()->As<ir::ScalarType>()->dtype();
    if (dtype != ir::DataType::INDEX && !IsSignedInteger(dtype))
      return Error(assign.span(), fmt::format("backend-ptoas cannot lower the {} scalar '{}' in kernel '{}'; it "
                                              "computes only integer index values",
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

  Status CheckCall(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
    const ir::Span& span = call.span().known() ? call.span() : stmt.span();
    if (!call.is_op_call()) {
      return Error(span, fmt::format("backend-ptoas cannot lower the call to function '{}' in kernel '{}'",
                                     call.callee(), kernel_.name()));
    }
    const std::string& op = call.target_name();
    if (IsPipeOp(op)) return PipeError(call, stmt);
    if (op == "tile.sin" || op == "tile.cos") {
      return Error(span, fmt::format("backend-ptoas cannot lower op '{}' in kernel '{}': PTO has no {} "
                                     "instruction, and its expansion into tile arithmetic is not implemented",
                                     op, kernel_.name(), op == "tile.sin" ? "sine" : "cosine"));
    }
    const OpLowering* lowering = FindLowering(op);
    if (!lowering) {
      return Error(span, fmt::format("backend-ptoas cannot lower op '{}' in kernel '{}' (the ops it lowers are "
                                     "listed in {})",
                                     op, kernel_.name(), kOpTableDoc));
    }
    if (auto ok = CheckCoreType(call, span); !ok) return ok;
    if (lowering->form == OpForm::Store) return CheckStore(call, span, assign);
    if (!assign) return Error(span, fmt::format("the result of '{}' must be assigned to a tile", op));
    if (auto ok = CheckOperands(*lowering, call, span); !ok) return ok;
    if (auto ok = DefineTile(*assign, span); !ok) return ok;
    return CheckResult(*lowering, call, *assign, span);
  }

  // A PTO function runs on one core type, named by its pto.kernel_kind; an op of the other kind
  // cannot be expressed in it (ExpandMixedKernel should have split such a kernel).
  Status CheckCoreType(const ir::Call& call, const ir::Span& span) const {
    const bool cube_kernel = kernel_.type() == ir::FunctionType::AIC;
    const ir::CoreAffinity affinity = ir::CallAffinity(call);
    const bool wrong = cube_kernel ? affinity == ir::CoreAffinity::Vector : affinity == ir::CoreAffinity::Cube;
    if (!wrong) return {};
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}': the op runs on the {} core, "
                                   "but the kernel is an {} kernel",
                                   call.target_name(), kernel_.name(), cube_kernel ? "vector" : "cube",
                                   cube_kernel ? "AIC (cube)" : "AIV (vector)"));
  }

  Status CheckOperands(const OpLowering& lowering, const ir::Call& call, const ir::Span& span) {
    const std::string& op = call.target_name();
    const auto& args = call.args();
    // On a device a transposed operand is a layout of its L0 tile (a DN Right tile), not a flag of
    // tmatmul; backend-ptoas does not choose layouts yet.
    for (const char* flag : {"a_trans", "b_trans"}) {
      if (ir::FindAttr<bool>(call.kwargs(), flag).value_or(false))
        return Error(span, fmt::format("backend-ptoas cannot lower '{}' with {}=True in kernel '{}' yet", op, flag,
                                       kernel_.name()));
    }
    // init_cond picks tmatmul or tmatmul.acc at run time: a branch over the two the emitter does not
    // build yet.
    if (lowering.form == OpForm::MatmulAcc && args.size() > 3)
      return Error(span, fmt::format("backend-ptoas cannot lower '{}' with init_cond= in kernel '{}' yet; peel the "
                                     "first K step into a tile.matmul instead",
                                     op, kernel_.name()));
    switch (lowering.form) {
      case OpForm::Load:
        if (auto ok = CheckTensorOperand(args[0], op, span); !ok) return ok;
        if (auto ok = CheckTensorLayout(*args[0]->As<ir::Var>(), *call.type()->As<ir::TileType>(), "load", span); !ok)
          return ok;
        if (auto ok = CheckOffsets(args[1], op, span); !ok) return ok;
        if (auto ok = CheckStaticInts(args[2], "shapes", op, span); !ok) return ok;
        return args.size() > 3 ? CheckValidExtents(args[3]->As<ir::TupleLiteral>()->elements(), op, span) : Status{};
      case OpForm::FillPad: return CheckTileOperand(args[0], op, span);
      case OpForm::Compare:
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        if (args[1]->type()->As<ir::TileType>()) return CheckTileOperand(args[1], op, span);
        return CheckScalarOperand(args[1], args[0]->type(), op, span);
      case OpForm::ValidShape:
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        return CheckValidExtents({args[1], args[2]}, op, span);
      case OpForm::Alloc: return {};
      case OpForm::Fill: return CheckScalarOperand(args[1], call.type(), op, span);
      case OpForm::TileScalar:
      case OpForm::TileI32: {
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        if (args.size() > 2)
          if (auto ok = CheckTileOperand(args[2], op, span); !ok) return ok;
        const ir::DataType dtype = lowering.form == OpForm::TileI32 ? ir::DataType::INT32
                                                                    : args[0]->type()->As<ir::TileType>()->dtype();
        return CheckScalarOperand(args[1], dtype, op, span);
      }
      case OpForm::Broadcast: return CheckTileOperand(args[1], op, span);
      case OpForm::Reshape:
      case OpForm::Cast:
      case OpForm::Move: return CheckTileOperand(args[0], op, span);
      case OpForm::Tiles:
      case OpForm::ColSum:
      case OpForm::MatmulAcc:
      case OpForm::MergeLists:
        for (const auto& arg : args) {
          if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
        }
        return {};
      case OpForm::Arange: return CheckScalarOperand(args[0], call.type(), op, span);
      case OpForm::SelectScalar:
        for (size_t i = 0; i < 3; ++i) {
          if (auto ok = CheckTileOperand(args[i], op, span); !ok) return ok;
        }
        if (auto ok = CheckTargetDtype(call, span); !ok) return ok;
        if (const auto* constant = args[3]->As<ir::ConstFloat>();
            constant && constant->value() == std::trunc(constant->value()))
          return {};  // an integer written as a float (-3.0): the emitter passes it as that integer
        return CheckScalarOperand(args[3], args[1]->type(), op, span);
      case OpForm::Triangle:
        if (auto ok = CheckTargetDtype(call, span); !ok) return ok;
        return CheckDiagonal(args[0], op, span);
      case OpForm::MergeSort:
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        if (args[1]->Is<ir::ConstInt>()) return {};
        return CheckIndexExpr(args[1], fmt::format("the block_len of '{}'", op), span);
      case OpForm::GatherMask: return CheckTileOperand(args[0], op, span);
      case OpForm::Window:
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        return CheckWindow(call, span);
      case OpForm::Extract:
        if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
        return CheckOrigin({args[1], args[2]}, op, span);
      case OpForm::Insert:
        if (auto ok = CheckTileOperand(args[1], op, span); !ok) return ok;
        return CheckOrigin(args[2]->As<ir::TupleLiteral>()->elements(), op, span);
      case OpForm::Store: break;
    }
    return {};
  }

  // Element types a2a3's TSELS and TTRI lack (ptoas has them on a5 only).
  Status CheckTargetDtype(const ir::Call& call, const ir::Span& span) const {
    if (arch_ != "a2a3") return {};
    const bool sels = call.target_name() == "tile.sels";
    const ir::DataType dtype = (sels ? call.args()[1]->type() : call.type())->As<ir::TileType>()->dtype();
    const bool narrow = dtype == ir::DataType::INT8 || dtype == ir::DataType::UINT8;
    if (!narrow && (sels || dtype != ir::DataType::BF16)) return {};
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}' on a2a3: {} there takes 16- "
                                   "and 32-bit integers, FP16 and FP32, not {}; a5 takes {}",
                                   call.target_name(), kernel_.name(), sels ? "pto.tsels" : "pto.ttri",
                                   ir::DataTypeName(dtype), ir::DataTypeName(dtype)));
  }

  // pto.ttri's diagonal is an i32 operand: a literal or an integer scalar parameter.
  Status CheckDiagonal(const ir::ExprPtr& diagonal, std::string_view op, const ir::Span& span) const {
    if (diagonal->Is<ir::ConstInt>()) return {};
    const auto* var = diagonal->As<ir::Var>();
    const bool is_param = var && std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                             [&](const ir::VarPtr& param) { return param.get() == var; });
    if (is_param && IsSignedInteger(var->type()->As<ir::ScalarType>()->dtype())) return {};
    return Error(span, fmt::format("the diagonal of '{}' must be a literal or a signed integer scalar parameter of "
                                   "kernel '{}'",
                                   op, kernel_.name()));
  }

  // A valid extent becomes an alloc_tile's valid_row / valid_col operand: an index expression.
  Status CheckValidExtents(const std::vector<ir::ExprPtr>& extents, std::string_view op, const ir::Span& span) {
    for (const auto& extent : extents) {
      if (auto ok = CheckIndexExpr(extent, fmt::format("the valid shape of '{}'", op), span); !ok) return ok;
    }
    return {};
  }

  // A window's origin: index expressions (constants, loop variables, arithmetic on them).
  Status CheckOrigin(const std::vector<ir::ExprPtr>& origin, std::string_view op, const ir::Span& span) {
    for (const auto& offset : origin) {
      if (auto ok = CheckIndexExpr(offset, fmt::format("the window origin of '{}'", op), span); !ok) return ok;
    }
    return {};
  }

  // A tile slice copies its window with textract, which ptoas's a2a3 target has only into Left and
  // Right (its Vec -> Vec form is A5's).
  Status CheckWindow(const ir::Call& call, const ir::Span& span) {
    if (auto ok = CheckOrigin(call.args()[2]->As<ir::TupleLiteral>()->elements(), call.target_name(), span); !ok)
      return ok;
    const auto* source = call.args()[0]->type()->As<ir::TileType>();
    if (arch_ == "a5" || source->memory_space() != ir::MemorySpace::Vec) return {};
    return Error(span, fmt::format("backend-ptoas cannot lower the tile slice of '{}' in kernel '{}' on a2a3: "
                                   "pto.textract copies a Vec window into a Vec tile only on a5",
                                   call.args()[0]->As<ir::Var>()->name_hint(), kernel_.name()));
  }

  // Checks that need the result's placement, and the row-major views the op needs.
  Status CheckResult(const OpLowering& lowering, const ir::Call& call, const ir::AssignStmt& assign,
                     const ir::Span& span) {
    const ir::Var& result = *assign.var();
    const auto& args = call.args();
    switch (lowering.form) {
      case OpForm::Reshape:
      case OpForm::ValidShape: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "source", span);
      case OpForm::FillPad: {
        const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
        plan_.pad_codes[&result] = mode == "max" ? 2 : mode == "min" ? 3 : 1;
        if (call.target_name() == "tile.fillpad_inplace")
          return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "operand", span);
        return {};
      }
      case OpForm::MatmulAcc: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "accumulator", span);
      case OpForm::Insert: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "target", span);
      case OpForm::Move: return CheckMove(*args[0]->As<ir::Var>(), result, span);
      default: break;
    }
    if (lowering.row_major) {
      std::vector<const ir::Var*> tiles = {&result};
      if (lowering.form == OpForm::Tiles) {
        for (const auto& arg : args) tiles.push_back(arg->As<ir::Var>());
      } else if (lowering.form == OpForm::TileScalar || lowering.form == OpForm::TileI32 ||
                 lowering.form == OpForm::Cast || lowering.form == OpForm::Compare) {
        tiles.push_back(args[0]->As<ir::Var>());
        if (lowering.form == OpForm::TileScalar && args.size() > 2) tiles.push_back(args[2]->As<ir::Var>());
      } else if (lowering.form == OpForm::SelectScalar) {
        for (size_t i = 0; i < 3; ++i) tiles.push_back(args[i]->As<ir::Var>());
      }
      for (const ir::Var* tile : tiles) {
        if (IsColumnVector(*tile->type()->As<ir::TileType>())) plan_.row_views.insert(RootTile(*tile));
      }
    }
    return {};
  }

  // An op whose result IS its operand's storage (a reshape view, an accumulator updated in place):
  // each variable has its own alloc_tile, so the two must sit at the same address.
  Status CheckSameBuffer(const ir::Call& call, const ir::Var& operand, const ir::Var& result, std::string_view role,
                         const ir::Span& span) const {
    int64_t from = operand.type()->As<ir::TileType>()->memref()->byte_offset;
    int64_t to = result.type()->As<ir::TileType>()->memref()->byte_offset;
    if (from == to) return {};
    return Error(span, fmt::format("the result '{}' of '{}' is at byte offset {} but its {} '{}' is at {}; the "
                                   "result must share the {}'s buffer",
                                   result.name_hint(), call.target_name(), to, role, operand.name_hint(), from,
                                   role));
  }

  // The buffer pairs ptoas's tmov moves between (its verifier's list).
  Status CheckMove(const ir::Var& source, const ir::Var& result, const ir::Span& span) const {
    const auto* from = source.type()->As<ir::TileType>();
    const auto* to = result.type()->As<ir::TileType>();
    using ir::MemorySpace;
    const MemorySpace src = from->memory_space(), dst = to->memory_space();
    const bool supported = (src == MemorySpace::Mat && (dst == MemorySpace::Left || dst == MemorySpace::Right ||
                                                        dst == MemorySpace::Bias)) ||
                           (src == MemorySpace::Acc && (dst == MemorySpace::Mat || dst == MemorySpace::Vec)) ||
                           (src == MemorySpace::Vec && dst == MemorySpace::Vec) ||
                           (src == MemorySpace::Vec && dst == MemorySpace::Mat && arch_ == "a5");
    if (!supported) {
      return Error(span, fmt::format("backend-ptoas cannot lower the tile.move of '{}' from {} to {} in kernel '{}': "
                                     "pto.tmov on {} moves Mat -> Left/Right/Bias, Acc -> Mat/Vec and Vec -> Vec{}",
                                     source.name_hint(), ir::MemorySpaceName(src), ir::MemorySpaceName(dst),
                                     kernel_.name(), arch_, arch_ == "a5" ? "/Mat" : ""));
    }
    if (src == dst && from->memref()->byte_offset == to->memref()->byte_offset) {
      return Error(span, fmt::format("tile.move copies '{}' onto itself (both at byte offset {} in {}); pto.tmov "
                                     "needs distinct source and destination buffers",
                                     source.name_hint(), from->memref()->byte_offset, ir::MemorySpaceName(src)));
    }
    return {};
  }

  Status CheckStore(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
    if (ir::AccumulatesIntoWrittenArg(call))
      return Error(span, fmt::format("backend-ptoas cannot lower the atomic-add store in kernel '{}' yet",
                                     kernel_.name()));
    if (auto ok = CheckTileOperand(call.args()[0], "tile.store", span); !ok) return ok;
    if (const auto* part = call.args().size() > 3 ? call.args()[3]->As<ir::TupleLiteral>() : nullptr) {
      ir::Shape extents;
      for (const auto& extent : part->elements()) extents.push_back(ir::AsConstInt(extent).value_or(-1));
      const ir::Shape& tile = call.args()[0]->type()->As<ir::TileType>()->shape();
      if (extents != tile && !IsRowMergedWindow(extents, tile))
        return Error(span, fmt::format("backend-ptoas cannot lower a store of part of a tile (shapes=) in kernel "
                                       "'{}' yet",
                                       kernel_.name()));
    }
    if (auto ok = CheckOffsets(call.args()[1], "tile.store", span); !ok) return ok;
    if (auto ok = CheckTensorOperand(call.args()[2], "tile.store", span); !ok) return ok;
    if (auto ok = CheckTensorLayout(*call.args()[2]->As<ir::Var>(), *call.args()[0]->type()->As<ir::TileType>(),
                                    "store", span);
        !ok)
      return ok;
    // `out2 = tile.store(t, offsets, out)` names the same memory as `out`.
    if (assign) {
      const auto* dest = call.args()[2]->As<ir::Var>();
      plan_.tensor_param_of[assign->var().get()] = plan_.tensor_param_of.at(dest);
    }
    return {};
  }

  Status DefineTile(const ir::AssignStmt& assign, const ir::Span& span) {
    const auto& var = *assign.var();
    const auto* tile = var.type()->As<ir::TileType>();
    if (!tile) return Error(span, fmt::format("'{}' must be a tile, got {}", var.name_hint(), var.type()->str()));
    const ir::MemorySpace space = tile->memory_space();
    if (space == ir::MemorySpace::DDR || space == ir::MemorySpace::ScalarLocal) {
      return Error(span, fmt::format("tile '{}' lives in {}, which is not an on-chip tile buffer", var.name_hint(),
                                     ir::MemorySpaceName(space)));
    }
    if (kernel_.type() == ir::FunctionType::AIV && space != ir::MemorySpace::Vec) {
      return Error(span, fmt::format("tile '{}' lives in {}, a cube-core buffer, but kernel '{}' is an AIV (vector) "
                                     "kernel",
                                     var.name_hint(), ir::MemorySpaceName(space), kernel_.name()));
    }
    if (!tile->memref()) {
      return Error(span, fmt::format("tile '{}' has no memory address; run memory allocation before backend-ptoas",
                                     var.name_hint()));
    }
    // PTO tile buffers are [rows, cols]; the IR's [1, 1, M, N] matrices are not flattened here yet.
    if (tile->shape().empty() || tile->shape().size() > 2) {
      return Error(span, fmt::format("tile '{}' {} has rank {}, but backend-ptoas prints 1-D and 2-D PTO tiles only "
                                     "(pl.reshape it to its last two dimensions)",
                                     var.name_hint(), tile->str(), tile->shape().size()));
    }
    if (auto element = MlirElementType(tile->dtype()); !element) return Error(span, element.error());
    if (!tiles_.insert(&var).second) {
      return Error(span, fmt::format("tile '{}' is assigned twice; backend-ptoas expects SSA form", var.name_hint()));
    }
    plan_.tile_defs.push_back(&assign);
    return {};
  }

  Status CheckTileOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) const {
    const auto* var = arg->As<ir::Var>();
    if (!var || !tiles_.contains(var)) {
      return Error(span, fmt::format("an operand of '{}' is not a tile defined earlier in kernel '{}'", op,
                                     kernel_.name()));
    }
    return {};
  }

  // The scalar of a tile-scalar op or a fill: a literal, or a scalar parameter. Either is passed at
  // the tile's element type (a literal 2.0 scales an FP16 tile as FP16), so a parameter of another
  // type is converted where that is a plain arith cast.
  Status CheckScalarOperand(const ir::ExprPtr& arg, const ir::TypePtr& tile_type, std::string_view op,
                            const ir::Span& span) const {
    return CheckScalarOperand(arg, tile_type->As<ir::TileType>()->dtype(), op, span);
  }

  // A scalar operand passed as a `dtype` value: a literal, or a parameter converted to it.
  Status CheckScalarOperand(const ir::ExprPtr& arg, ir::DataType dtype, std::string_view op,
                            const ir::Span& span) const {
    if (auto element = MlirElementType(dtype); !element) return Error(span, element.error());
    if (const auto* constant = arg->As<ir::ConstFloat>()) {
      if (!ir::IsFloat(dtype)) {
        return Error(span, fmt::format("the scalar {} of '{}' is not an integer, but the tile is {}",
                                       constant->value(), op, ir::DataTypeName(dtype)));
      }
      if (auto literal = FloatLiteral(constant->value(), dtype); !literal) return Error(span, literal.error());
      return {};
    }
    if (arg->Is<ir::ConstInt>()) return {};
    const auto* var = arg->As<ir::Var>();
    bool is_param = var && std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                       [&](const ir::VarPtr& param) { return param.get() == var; });
    if (!is_param) {
      return Error(span, fmt::format("the scalar operand of '{}' must be a literal or a scalar parameter of kernel "
                                     "'{}'",
                                     op, kernel_.name()));
    }
    const ir::DataType from = var->type()->As<ir::ScalarType>()->dtype();
    if (from != dtype && !ScalarConvertible(from, dtype)) {
      return Error(span, fmt::format("the scalar operand of '{}' is the {} parameter '{}', but the tile is {}; "
                                     "backend-ptoas converts only floating-point and signed integer scalars",
                                     op, ir::DataTypeName(from), var->name_hint(), ir::DataTypeName(dtype)));
    }
    return {};
  }

  // pl.read / pl.write of one integer element (a block table's entry, an index kept in a tile).
  // Elements live at the flat row-major offset of their indices: a tensor parameter's are read with
  // pto.load_scalar from its pointer (no view is needed) and written with pto.store_scalar, a tile's
  // with pto.tgetval / pto.tsetval. The value is an index like any other integer scalar (the
  // caller checked a read's result is an integer).
  Status CheckElementRead(const ir::Call& call, const ir::Span& span) {
    const std::string& op = call.target_name();
    if (op == "tile.read") {
      if (auto ok = CheckTileOperand(call.args()[0], op, span); !ok) return ok;
    } else if (auto param = ParamOf(call.args()[0], op, span); !param) {
      return pypto::unexpected(param.error());
    }
    return CheckOffsets(call.args()[1], op, span);
  }

  // `t = pl.write(t, [i, j], v)`: the element replaced in place, so the result names t's buffer.
  Status CheckTileWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
    if (auto ok = CheckTileOperand(call.args()[0], "tile.write", span); !ok) return ok;
    const auto& tile = *call.args()[0]->As<ir::Var>();
    if (auto ok = CheckIntegerElements(tile.type()->As<ir::TileType>()->dtype(), "tile.write", "tile", span); !ok)
      return ok;
    if (auto ok = CheckOffsets(call.args()[1], "tile.write", span); !ok) return ok;
    if (auto ok = CheckIndexExpr(call.args()[2], "the value of 'tile.write'", span); !ok) return ok;
    return assign ? AliasTile(*assign->var(), tile, span) : Status{};
  }

  Status CheckIntegerElements(ir::DataType dtype, std::string_view op, std::string_view what,
                              const ir::Span& span) const {
    if (IsSignedInteger(dtype)) return {};
    return Error(span, fmt::format("backend-ptoas does not lower the single-element access '{}' of a {} {} yet in "
                                   "kernel '{}'; it writes integer elements only",
                                   op, ir::DataTypeName(dtype), what, kernel_.name()));
  }

  // `pl.write(counts, [i], n)`: the index value narrowed to the element type. The result names the
  // parameter, as a store's does.
  Status CheckTensorWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
    auto param = ParamOf(call.args()[0], "tensor.write", span);
    if (!param) return pypto::unexpected(param.error());
    if (auto ok = CheckIntegerElements(call.args()[0]->type()->As<ir::TensorType>()->dtype(), "tensor.write",
                                       "tensor", span);
        !ok)
      return ok;
    if (auto ok = CheckOffsets(call.args()[1], "tensor.write", span); !ok) return ok;
    if (auto ok = CheckIndexExpr(call.args()[2], "the value of 'tensor.write'", span); !ok) return ok;
    if (assign) plan_.tensor_param_of[assign->var().get()] = *param;
    return {};
  }

  // The parameter whose memory a tensor operand is.
  pypto::expected<const ir::Var*, std::string> ParamOf(const ir::ExprPtr& arg, std::string_view op,
                                                      const ir::Span& span) const {
    const auto* var = arg->As<ir::Var>();
    auto it = var ? plan_.tensor_param_of.find(var) : plan_.tensor_param_of.end();
    if (it == plan_.tensor_param_of.end())
      return Error(span, fmt::format("the tensor operand of '{}' is not a parameter of kernel '{}'", op,
                                     kernel_.name()));
    return it->second;
  }

  // A tensor operand read or written through a view (loads and stores): its parameter gets one.
  Status CheckTensorOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) {
    auto param = ParamOf(arg, op, span);
    if (!param) return pypto::unexpected(param.error());
    used_.insert(*param);
    return {};
  }

  // pto.tload / pto.tstore need the tile's layout to be the tensor view's: a column-vector tensor
  // (DN in ptoas) pairs with column-vector tiles only.
  // shapes= of a store that names the N-d window whose leading dimensions a 2-D tile's rows merge
  // (FlattenTileNdTo2D): tstore writes a [rows, cols] tile into an N-d partition row by row.
  static bool IsRowMergedWindow(const ir::Shape& window, const ir::Shape& tile) {
    if (tile.size() != 2 || window.size() <= 2) return false;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < window.size(); ++d) rows *= window[d];
    return rows == tile[0] && window.back() == tile[1];
  }

  Status CheckTensorLayout(const ir::Var& tensor, const ir::TileType& tile, std::string_view what,
                           const ir::Span& span) const {
    const ir::Var& param = *plan_.tensor_param_of.at(&tensor);
    const auto& type = *param.type()->As<ir::TensorType>();
    if (!IsColumnVectorTensor(type) || IsColumnVector(tile)) return {};
    return Error(span, fmt::format("backend-ptoas cannot {} the tile {} {} tensor '{}' {} in kernel '{}': ptoas lays "
                                   "a tensor whose last dimension is 1 out column-major (DN), which only a [N, 1] "
                                   "Vec tile (N > 1) matches",
                                   what, tile.str(), what == "load" ? "from" : "into", param.name_hint(), type.str(),
                                   kernel_.name()));
  }

  static Status CheckStaticInts(const ir::ExprPtr& arg, std::string_view what, std::string_view op,
                                const ir::Span& span) {
    const auto* tuple = arg->As<ir::TupleLiteral>();
    bool ok = tuple != nullptr;
    if (ok) {
      for (const auto& element : tuple->elements()) ok = ok && ir::AsConstInt(element).has_value();
    }
    if (!ok) return Error(span, fmt::format("the {} of '{}' must be integer literals", what, op));
    return {};
  }

  // `for i in pl.range(start, stop, step)` becomes scf.for, which takes index bounds and a positive
  // step. A pl.unroll loop is refused rather than run as a plain loop: the pipeline's UnrollLoops
  // copies its body, so one here comes from IR lowered without that pass.
  Status CheckFor(const ir::ForStmt& loop) {
    const auto& var = *loop.loop_var();
    for (const auto& iter_arg : loop.iter_args()) {
      // An integer scalar is an scf.for iter_arg; a tile stays in its buffer.
      if (IsIndexScalar(*iter_arg.var)) {
        const std::string what = fmt::format("the initial value of '{}'", iter_arg.var->name_hint());
        if (auto ok = CheckIndexExpr(iter_arg.init, what, loop.span()); !ok) return ok;
        scalars_.insert(iter_arg.var.get());
        continue;
      }
      if (!iter_arg.var->type()->As<ir::TileType>()) {
        return Error(loop.span(), fmt::format("backend-ptoas cannot lower the loop over '{}' in kernel '{}': it "
                                              "carries '{}' of type {} from one iteration to the next (carried "
                                              "tiles and integer scalars are emitted)",
                                              var.name_hint(), kernel_.name(), iter_arg.var->name_hint(),
                                              iter_arg.var->type()->str()));
      }
      if (auto ok = CheckTileOperand(iter_arg.init, "the loop's initial value", loop.span()); !ok) return ok;
      if (auto ok = AliasTile(*iter_arg.var, *iter_arg.init->As<ir::Var>(), loop.span()); !ok) return ok;
    }
    // A pl.pipeline loop is a sequential loop whose stages may overlap on the device; as an scf.for
    // it computes the same values without the overlap.
    if (loop.kind() == ir::ForKind::Unroll) {
      return Error(loop.span(), fmt::format("backend-ptoas cannot lower the pl.{} loop over '{}' in kernel '{}' "
                                            "(supported: pl.range, pl.parallel, pl.pipeline)",
                                            ir::ForKindName(loop.kind()), var.name_hint(), kernel_.name()));
    }
    const auto* scalar = var.type()->As<ir::ScalarType>();
    if (!scalar || scalar->dtype() != ir::DataType::INDEX) {
      return Error(loop.span(), fmt::format("the loop variable '{}' must have type INDEX, got {}", var.name_hint(),
                                            var.type()->str()));
    }
    const std::pair<const char*, const ir::ExprPtr*> bounds[] = {
        {"start", &loop.start()}, {"stop", &loop.stop()}, {"step", &loop.step()}};
    for (const auto& [name, bound] : bounds) {
      std::string what = fmt::format("the {} of the loop over '{}'", name, var.name_hint());
      if (auto ok = CheckIndexExpr(*bound, what, loop.span()); !ok) return ok;
    }
    if (auto step = ir::AsConstInt(loop.step()); step && *step <= 0) {
      return Error(loop.span(), fmt::format("the loop over '{}' has step {}; backend-ptoas lowers loops to scf.for, "
                                            "whose step must be positive",
                                            var.name_hint(), *step));
    }
    auto& body = plan_.loop_bodies[&loop];
    if (loop.body()) Flatten(loop.body(), body);
    loops_.push_back(&var);
    for (const auto& stmt : body) {
      if (auto ok = CheckStmt(*stmt); !ok) return ok;
    }
    loops_.pop_back();
    if (loop.iter_args().empty()) return {};
    // Each carried tile is yielded from, and leaves the loop in, the buffer it started in.
    const auto* yield = body.empty() ? nullptr : body.back()->As<ir::YieldStmt>();
    if (!yield || yield->values().size() != loop.iter_args().size())
      return Error(loop.span(), fmt::format("the loop over '{}' does not end by yielding its carried values",
                                            var.name_hint()));
    for (size_t i = 0; i < loop.iter_args().size(); ++i) {
      const ir::Var& carried = *loop.iter_args()[i].var;
      if (IsIndexScalar(carried)) {
        if (auto ok = CheckScalarResult(yield->values()[i], carried, i < loop.return_vars().size()
                                                                         ? loop.return_vars()[i].get()
                                                                         : nullptr,
                                        yield->span());
            !ok)
          return ok;
        continue;
      }
      if (auto ok = CheckYieldedInPlace(yield->values()[i], carried, yield->span()); !ok) return ok;
      if (i < loop.return_vars().size())
        if (auto ok = AliasTile(*loop.return_vars()[i], carried, loop.span()); !ok) return ok;
    }
    return {};
  }

  // `while cond:` becomes scf.while. Its carried integer scalars are the scf.while's operands, block
  // arguments and results, in `index`; its carried tiles stay in their buffer, as in a for loop.
  Status CheckWhile(const ir::WhileStmt& loop) {
    for (const auto& iter_arg : loop.iter_args()) {
      const ir::Var& var = *iter_arg.var;
      if (var.type()->As<ir::TileType>()) {
        if (auto ok = CheckTileOperand(iter_arg.init, "the loop's initial value", loop.span()); !ok) return ok;
        if (auto ok = AliasTile(var, *iter_arg.init->As<ir::Var>(), loop.span()); !ok) return ok;
        continue;
      }
      const auto* scalar = var.type()->As<ir::ScalarType>();
      if (!scalar || (scalar->dtype() != ir::DataType::INDEX && !IsSignedInteger(scalar->dtype())))
        return Error(loop.span(), fmt::format("backend-ptoas cannot lower the while loop in kernel '{}': it carries "
                                              "'{}' of type {} (carried tiles and integer scalars are emitted)",
                                              kernel_.name(), var.name_hint(), var.type()->str()));
      if (auto ok = CheckIndexExpr(iter_arg.init, fmt::format("the initial value of '{}'", var.name_hint()),
                                   loop.span());
          !ok)
        return ok;
      scalars_.insert(&var);
    }
    if (auto ok = CheckCondition(loop.condition(), loop.span(), "while"); !ok) return ok;
    auto& body = plan_.while_bodies[&loop];
    if (loop.body()) Flatten(loop.body(), body);
    ++while_depth_;
    for (const auto& stmt : body) {
      if (auto ok = CheckStmt(*stmt); !ok) return ok;
    }
    --while_depth_;
    if (loop.iter_args().empty()) return {};
    const auto* yield = body.empty() ? nullptr : body.back()->As<ir::YieldStmt>();
    if (!yield || yield->values().size() != loop.iter_args().size())
      return Error(loop.span(), "the while loop does not end by yielding its carried values");
    for (size_t i = 0; i < loop.iter_args().size(); ++i) {
      const ir::Var& carried = *loop.iter_args()[i].var;
      const ir::Var& result = *loop.return_vars().at(i);
      if (!carried.type()->As<ir::TileType>()) {
        if (auto ok = CheckIndexExpr(yield->values()[i], fmt::format("the next value of '{}'", carried.name_hint()),
                                     yield->span());
            !ok)
          return ok;
        scalars_.insert(&result);
        continue;
      }
      if (auto ok = CheckYieldedInPlace(yield->values()[i], carried, yield->span()); !ok) return ok;
      if (auto ok = AliasTile(result, carried, loop.span()); !ok) return ok;
    }
    return {};
  }

  // `if cond:` ... `else:` ... as scf.if; tiles the branches yield share the result's buffer.
  Status CheckIf(const ir::IfStmt& branch) {
    if (auto ok = CheckCondition(branch.condition(), branch.span()); !ok) return ok;
    auto& [then_body, else_body] = plan_.branch_bodies[&branch];
    Flatten(branch.then_body(), then_body);
    if (branch.else_body()) Flatten(branch.else_body(), else_body);
    for (const auto* body : {&then_body, &else_body}) {
      for (const auto& stmt : *body) {
        if (auto ok = CheckStmt(*stmt); !ok) return ok;
      }
    }
    const auto& results = branch.return_vars();
    if (results.empty()) return {};
    for (const auto& result : results) {
      if (!result->type()->As<ir::TileType>() && !IsIndexScalar(*result))
        return Error(branch.span(), fmt::format("backend-ptoas cannot lower this if in kernel '{}': it merges '{}' of "
                                                "type {} (merged tiles and integer scalars are emitted)",
                                                kernel_.name(), result->name_hint(), result->type()->str()));
    }
    const auto* then_yield = then_body.empty() ? nullptr : then_body.back()->As<ir::YieldStmt>();
    const auto* else_yield = else_body.empty() ? nullptr : else_body.back()->As<ir::YieldStmt>();
    if (!then_yield || !else_yield)
      return Error(branch.span(), "an if with results must end both branches with pl.yield_");
    for (size_t i = 0; i < results.size(); ++i) {
      if (IsIndexScalar(*results[i])) {  // an scf.if result
        if (auto ok = CheckScalarResult(then_yield->values()[i], *results[i], nullptr, then_yield->span()); !ok)
          return ok;
        if (auto ok = CheckScalarResult(else_yield->values()[i], *results[i], results[i].get(), else_yield->span());
            !ok)
          return ok;
        continue;
      }
      const auto* first = then_yield->values()[i]->As<ir::Var>();
      if (auto ok = CheckTileOperand(then_yield->values()[i], "the if's yield", then_yield->span()); !ok) return ok;
      if (auto ok = CheckYieldedInPlace(else_yield->values()[i], *first, else_yield->span()); !ok) return ok;
      if (auto ok = AliasTile(*results[i], *first, branch.span()); !ok) return ok;
    }
    return {};
  }

  // A condition is a comparison of index values (arith.cmpi) or a constant.
  Status CheckCondition(const ir::ExprPtr& condition, const ir::Span& span, std::string_view construct = "if") {
    if (condition->Is<ir::ConstBool>()) return {};
    const auto* binary = condition->As<ir::BinaryExpr>();
    if (!binary || !ir::IsComparison(binary->op()))
      return Error(span, fmt::format("backend-ptoas cannot lower the {} condition `{}` in kernel '{}': it lowers "
                                     "comparisons of integers",
                                     construct, ir::PrintExpr(condition), kernel_.name()));
    const std::string what = fmt::format("the {} condition `{}`", construct, ir::PrintExpr(condition));
    if (auto ok = CheckIndexExpr(binary->lhs(), what, span); !ok) return ok;
    return CheckIndexExpr(binary->rhs(), what, span);
  }

  // An integer scalar carried by a loop or merged by an if: an scf result of type index.
  static bool IsIndexScalarExpr(const ir::Expr& expr) {
    const auto* scalar = expr.type()->As<ir::ScalarType>();
    return scalar && (scalar->dtype() == ir::DataType::INDEX || IsSignedInteger(scalar->dtype()));
  }

  static bool IsIndexScalar(const ir::Var& var) {
    const auto* scalar = var.type()->As<ir::ScalarType>();
    return scalar && ir::IsInteger(scalar->dtype());
  }

  // The value yielded for the carried or merged scalar `carried`; `result`, when given, is an index
  // value from then on.
  Status CheckScalarResult(const ir::ExprPtr& value, const ir::Var& carried, const ir::Var* result,
                           const ir::Span& span) {
    if (auto ok = CheckIndexExpr(value, fmt::format("the value yielded for '{}'", carried.name_hint()), span); !ok)
      return ok;
    if (result) scalars_.insert(result);
    return {};
  }

  // `alias` names `tile`'s buffer from here on; both must be placed alike.
  Status AliasTile(const ir::Var& alias, const ir::Var& tile, const ir::Span& span) {
    if (auto ok = CheckSamePlace(alias, tile, span); !ok) return ok;
    plan_.tile_aliases[&alias] = RootTile(tile);
    tiles_.insert(&alias);
    return {};
  }

  Status CheckYieldedInPlace(const ir::ExprPtr& value, const ir::Var& carried, const ir::Span& span) const {
    if (auto ok = CheckTileOperand(value, "pl.yield_", span); !ok) return ok;
    return CheckSamePlace(*value->As<ir::Var>(), carried, span);
  }

  Status CheckSamePlace(const ir::Var& a, const ir::Var& b, const ir::Span& span) const {
    const auto* x = a.type()->As<ir::TileType>();
    const auto* y = b.type()->As<ir::TileType>();
    const bool same = x && y && x->memref() && y->memref() && x->memory_space() == y->memory_space() &&
                      x->memref()->byte_offset == y->memref()->byte_offset && x->shape() == y->shape() &&
                      x->dtype() == y->dtype();
    if (same) return {};
    return Error(span, fmt::format("'{}' and '{}' must be one buffer to be carried or merged in place ({} vs {})",
                                   a.name_hint(), b.name_hint(), a.type()->str(), b.type()->str()));
  }

  const ir::Var* RootTile(const ir::Var& tile) const {
    auto it = plan_.tile_aliases.find(&tile);
    return it == plan_.tile_aliases.end() ? &tile : it->second;
  }

  // Offsets may be computed at run time from loop variables and scalar parameters.
  Status CheckOffsets(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) {
    const auto* tuple = arg->As<ir::TupleLiteral>();
    if (!tuple) return Error(span, fmt::format("the offsets of '{}' must be a list of integers", op));
    std::string what = fmt::format("an offset of '{}'", op);
    for (const auto& element : tuple->elements()) {
      if (auto ok = CheckIndexExpr(element, what, span); !ok) return ok;
    }
    return {};
  }

  // An `index` value: integer constants, enclosing loop variables and signed integer scalar
  // parameters, combined by + - * // % min max << >>. Comparisons and float division give no index.
  Status CheckIndexExpr(const ir::ExprPtr& expr, const std::string& what, const ir::Span& span) {
    if (expr->Is<ir::ConstInt>()) return {};
    if (const auto* var = expr->As<ir::Var>()) return CheckIndexVar(*var, what, span);
    if (const auto* binary = expr->As<ir::BinaryExpr>()) {
      const char* symbol = ir::BinaryOpSymbol(binary->op());
      if (ir::IsComparison(binary->op())) {
        return Error(span, fmt::format("{} uses the comparison '{}', whose result is a boolean; backend-ptoas "
                                       "lowers only + - * // % min max << >> of integers there",
                                       what, symbol));
      }
      const auto* scalar = binary->type()->As<ir::ScalarType>();
      if (binary->op() == ir::BinaryOp::FloatDiv || !scalar || !ir::IsInteger(scalar->dtype())) {
        return Error(span, fmt::format("{} uses '{}' with a non-integer result; use '//' for integer division", what,
                                       symbol));
      }
      if (auto ok = CheckIndexExpr(binary->lhs(), what, span); !ok) return ok;
      return CheckIndexExpr(binary->rhs(), what, span);
    }
    return Error(span, fmt::format("{} must be an integer expression of constants, loop variables and scalar "
                                   "parameters",
                                   what));
  }

  Status CheckIndexVar(const ir::Var& var, const std::string& what, const ir::Span& span) {
    if (std::find(loops_.begin(), loops_.end(), &var) != loops_.end() || scalars_.contains(&var)) return {};
    bool is_param = std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                [&](const ir::VarPtr& param) { return param.get() == &var; });
    if (!is_param) {
      return Error(span, fmt::format("{} reads '{}', which is neither an enclosing loop variable nor a scalar "
                                     "parameter of kernel '{}'",
                                     what, var.name_hint(), kernel_.name()));
    }
    // arith.index_cast takes signless integers; unsigned parameters are typed ui8..ui64 in the module.
    auto dtype = var.type()->As<ir::ScalarType>()->dtype();
    if (dtype != ir::DataType::INDEX && !IsSignedInteger(dtype)) {
      return Error(span, fmt::format("{} reads the {} parameter '{}'; backend-ptoas computes offsets and loop "
                                     "bounds only from signed integer or INDEX scalars",
                                     what, ir::DataTypeName(dtype), var.name_hint()));
    }
    used_.insert(&var);
    return {};
  }

  const ir::Function& kernel_;
  std::string_view arch_;
  KernelPlan plan_;
  std::set<const ir::Var*> tiles_;
  std::set<const ir::Var*> used_;      // tensor and scalar parameters the body reads
  std::vector<const ir::Var*> loops_;  // loop variables in scope, outermost first
  std::set<const ir::Var*> scalars_;   // index values the body computed
  int while_depth_ = 0;                // while loops around the statement being checked
};

}  // namespace

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

const std::vector<OpLowering>& Lowerings() {
  static const std::vector<OpLowering> table = {
      {"tile.load", "pto.tload", OpForm::Load},
      {"tile.store", "pto.tstore", OpForm::Store},
      {"tile.create", "pto.alloc_tile", OpForm::Alloc},
      {"tile.full", "pto.texpands", OpForm::Fill, true},
      {"tile.expands", "pto.texpands", OpForm::Fill, true},
      {"tile.move", "pto.tmov", OpForm::Move},
      {"tile.reshape", "pto.alloc_tile", OpForm::Reshape},
      {"tile.reinterpret_view", "pto.alloc_tile", OpForm::Reshape},
      {"tile.add", "pto.tadd", OpForm::Tiles, true},
      {"tile.sub", "pto.tsub", OpForm::Tiles, true},
      {"tile.mul", "pto.tmul", OpForm::Tiles, true},
      {"tile.div", "pto.tdiv", OpForm::Tiles, true},
      {"tile.maximum", "pto.tmax", OpForm::Tiles, true},
      {"tile.minimum", "pto.tmin", OpForm::Tiles, true},
      {"tile.fmod", "pto.tfmod", OpForm::Tiles, true},
      {"tile.adds", "pto.tadds", OpForm::TileScalar, true},
      {"tile.subs", "pto.tsubs", OpForm::TileScalar, true},
      {"tile.muls", "pto.tmuls", OpForm::TileScalar, true},
      {"tile.divs", "pto.tdivs", OpForm::TileScalar, true},
      {"tile.maximums", "pto.tmaxs", OpForm::TileScalar, true},
      {"tile.minimums", "pto.tmins", OpForm::TileScalar, true},
      {"tile.fmods", "pto.tfmods", OpForm::TileScalar, true},
      {"tile.addc", "pto.taddc", OpForm::Tiles, true},
      {"tile.subc", "pto.tsubc", OpForm::Tiles, true},
      {"tile.addsc", "pto.taddsc", OpForm::TileScalar, true},
      {"tile.subsc", "pto.tsubsc", OpForm::TileScalar, true},
      {"tile.cmp", "pto.tcmp", OpForm::Compare, true},
      {"tile.cmps", "pto.tcmps", OpForm::Compare, true},
      {"tile.sel", "pto.tsel", OpForm::Tiles, true},
      {"tile.sels", "pto.tsels", OpForm::SelectScalar, true},
      {"tile.prelu", "pto.tprelu", OpForm::Tiles, true},
      {"tile.part_add", "pto.tpartadd", OpForm::Tiles, true},
      {"tile.part_mul", "pto.tpartmul", OpForm::Tiles, true},
      {"tile.part_max", "pto.tpartmax", OpForm::Tiles, true},
      {"tile.part_min", "pto.tpartmin", OpForm::Tiles, true},
      {"tile.exp", "pto.texp", OpForm::Tiles, true},
      {"tile.log", "pto.tlog", OpForm::Tiles, true},
      {"tile.sqrt", "pto.tsqrt", OpForm::Tiles, true},
      {"tile.rsqrt", "pto.trsqrt", OpForm::Tiles, true},
      {"tile.recip", "pto.trecip", OpForm::Tiles, true},
      {"tile.relu", "pto.trelu", OpForm::Tiles, true},
      {"tile.abs", "pto.tabs", OpForm::Tiles, true},
      {"tile.neg", "pto.tneg", OpForm::Tiles, true},
      {"tile.lrelu", "pto.tlrelu", OpForm::TileScalar, true},
      {"tile.not", "pto.tnot", OpForm::Tiles, true},
      {"tile.and", "pto.tand", OpForm::Tiles, true},
      {"tile.or", "pto.tor", OpForm::Tiles, true},
      {"tile.xor", "pto.txor", OpForm::Tiles, true},
      {"tile.shl", "pto.tshl", OpForm::Tiles, true},
      {"tile.shr", "pto.tshr", OpForm::Tiles, true},
      {"tile.rem", "pto.trem", OpForm::Tiles, true},
      {"tile.ands", "pto.tands", OpForm::TileI32},
      {"tile.ors", "pto.tors", OpForm::TileI32},
      {"tile.xors", "pto.txors", OpForm::TileI32},
      {"tile.shls", "pto.tshls", OpForm::TileI32},
      {"tile.shrs", "pto.tshrs", OpForm::TileI32},
      {"tile.rems", "pto.trems", OpForm::TileScalar},
      {"tile.cast", "pto.tcvt", OpForm::Cast, true},
      {"tile.row_sum", "pto.trowsum", OpForm::Tiles},
      {"tile.row_max", "pto.trowmax", OpForm::Tiles},
      {"tile.row_min", "pto.trowmin", OpForm::Tiles},
      {"tile.row_prod", "pto.trowprod", OpForm::Tiles},
      {"tile.col_sum", "pto.tcolsum", OpForm::ColSum},
      {"tile.col_max", "pto.tcolmax", OpForm::Tiles},
      {"tile.col_min", "pto.tcolmin", OpForm::Tiles},
      {"tile.col_prod", "pto.tcolprod", OpForm::Tiles},
      {"tile.row_argmax", "pto.trowargmax", OpForm::Tiles},
      {"tile.row_argmin", "pto.trowargmin", OpForm::Tiles},
      {"tile.col_argmax", "pto.tcolargmax", OpForm::Tiles},
      {"tile.col_argmin", "pto.tcolargmin", OpForm::Tiles},
      {"tile.row_expand", "pto.trowexpand", OpForm::Broadcast},
      {"tile.col_expand", "pto.tcolexpand", OpForm::Broadcast},
      {"tile.row_expand_add", "pto.trowexpandadd", OpForm::Tiles},
      {"tile.row_expand_sub", "pto.trowexpandsub", OpForm::Tiles},
      {"tile.row_expand_mul", "pto.trowexpandmul", OpForm::Tiles},
      {"tile.row_expand_div", "pto.trowexpanddiv", OpForm::Tiles},
      {"tile.row_expand_max", "pto.trowexpandmax", OpForm::Tiles},
      {"tile.row_expand_min", "pto.trowexpandmin", OpForm::Tiles},
      {"tile.row_expand_expdif", "pto.trowexpandexpdif", OpForm::Tiles},
      {"tile.col_expand_add", "pto.tcolexpandadd", OpForm::Tiles},
      {"tile.col_expand_sub", "pto.tcolexpandsub", OpForm::Tiles},
      {"tile.col_expand_mul", "pto.tcolexpandmul", OpForm::Tiles},
      {"tile.col_expand_div", "pto.tcolexpanddiv", OpForm::Tiles},
      {"tile.col_expand_max", "pto.tcolexpandmax", OpForm::Tiles},
      {"tile.col_expand_min", "pto.tcolexpandmin", OpForm::Tiles},
      {"tile.col_expand_expdif", "pto.tcolexpandexpdif", OpForm::Tiles},
      {"tile.matmul", "pto.tmatmul", OpForm::Tiles},
      {"tile.matmul_acc", "pto.tmatmul.acc", OpForm::MatmulAcc},
      {"tile.matmul_bias", "pto.tmatmul.bias", OpForm::Tiles},
      {"tile.gemv", "pto.tgemv", OpForm::Tiles},
      {"tile.gemv_acc", "pto.tgemv.acc", OpForm::MatmulAcc},
      {"tile.gemv_bias", "pto.tgemv.bias", OpForm::Tiles},
      {"tile.ci", "pto.tci", OpForm::Arange},
      {"tile.tri", "pto.ttri", OpForm::Triangle},
      {"tile.slice", "pto.textract", OpForm::Window},
      {"tile.extract", "pto.textract", OpForm::Extract},
      {"tile.assemble", "pto.tinsert", OpForm::Insert},
      {"tile.concat", "pto.tconcat", OpForm::Tiles},
      {"tile.transpose", "pto.ttrans", OpForm::Tiles},
      {"tile.sort32", "pto.tsort32", OpForm::Tiles},
      {"tile.mrgsort_format1", "pto.tmrgsort", OpForm::MergeSort},
      {"tile.mrgsort_format2", "pto.tmrgsort", OpForm::MergeLists},
      {"tile.gather_mask", "pto.tgather", OpForm::GatherMask},
      {"tile.gatherb", "pto.tgatherb", OpForm::Tiles},
      {"tile.fillpad", "pto.tfillpad", OpForm::FillPad},
      {"tile.fillpad_inplace", "pto.tfillpad", OpForm::FillPad},
      {"tile.fillpad_expand", "pto.tfillpad_expand", OpForm::FillPad},
      {"tile.set_validshape", "pto.alloc_tile", OpForm::ValidShape},
  };
  return table;
}

const OpLowering* FindLowering(std::string_view op_name) {
  for (const auto& lowering : Lowerings()) {
    if (lowering.op == op_name) return &lowering;
  }
  return nullptr;
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
  return Planner(kernel, arch).Run();
}

}  // namespace pypto::backend_ptoas
