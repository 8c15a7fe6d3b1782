#include "kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "mlir_types.h"
#include "pypto/ir/op_registry.h"

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
  explicit Planner(const ir::Function& kernel) : kernel_(kernel) {}

  pypto::expected<KernelPlan, std::string> Run() {
    if (auto ok = CheckFunction(); !ok) return pypto::unexpected(ok.error());
    if (auto ok = SplitParams(); !ok) return pypto::unexpected(ok.error());
    if (kernel_.body()) Flatten(kernel_.body(), plan_.stmts);
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
    const auto& shape = tensor.shape();
    if (shape.empty()) return Error(param.span(), fmt::format("tensor '{}' has rank 0", param.name_hint()));
    // ptoas infers a column-major (DN) layout for a [.., M, 1] view, which needs column-major
    // tiles; that path is not implemented, so such tensors are refused rather than mis-laid-out.
    if (shape.size() >= 2 && shape.back() == 1) {
      return Error(param.span(), fmt::format("tensor '{}' {} ends in a dimension of 1, whose column-major layout "
                                             "backend-ptoas does not emit yet",
                                             param.name_hint(), tensor.str()));
    }
    return {};
  }

  Status CheckStmt(const ir::Stmt& stmt) {
    if (const auto* assign = stmt.As<ir::AssignStmt>()) return CheckAssign(*assign);
    if (const auto* eval = stmt.As<ir::EvalStmt>()) {
      const auto* call = eval->expr()->As<ir::Call>();
      if (!call || call->target_name() != "tile.store") {
        return Error(stmt.span(), fmt::format("backend-ptoas cannot lower an expression statement other than "
                                              "tile.store in kernel '{}'",
                                              kernel_.name()));
      }
      return CheckCall(*call, stmt, nullptr);
    }
    // Results leave a kernel through its output tensors, so the return itself emits nothing.
    if (stmt.Is<ir::ReturnStmt>()) {
      if (loops_.empty()) return {};
      return Error(stmt.span(), fmt::format("backend-ptoas cannot lower a return inside a loop in kernel '{}'",
                                            kernel_.name()));
    }
    if (const auto* loop = stmt.As<ir::ForStmt>()) return CheckFor(*loop);
    return Error(stmt.span(), fmt::format("backend-ptoas cannot lower {} in kernel '{}'", StmtKindName(stmt),
                                          kernel_.name()));
  }

  Status CheckAssign(const ir::AssignStmt& assign) {
    const auto* call = assign.value()->As<ir::Call>();
    if (!call) {
      return Error(assign.span(), fmt::format("backend-ptoas cannot lower the plain assignment to '{}' in kernel '{}'",
                                              assign.var()->name_hint(), kernel_.name()));
    }
    return CheckCall(*call, assign, &assign);
  }

  Status CheckCall(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
    const ir::Span& span = call.span().known() ? call.span() : stmt.span();
    if (!call.is_op_call()) {
      return Error(span, fmt::format("backend-ptoas cannot lower the call to function '{}' in kernel '{}'",
                                     call.callee(), kernel_.name()));
    }
    const std::string& op = call.target_name();
    if (op == "tile.store") return CheckStore(call, span, assign);
    if (op != "tile.load" && ElementwisePtoOp(op).empty()) {
      return Error(span, fmt::format("backend-ptoas cannot lower op '{}' in kernel '{}' (supported: {})", op,
                                     kernel_.name(), kSupportedOps));
    }
    if (!assign) return Error(span, fmt::format("the result of '{}' must be assigned to a tile", op));
    if (op == "tile.load") {
      if (auto ok = CheckTensorOperand(call.args()[0], op, span); !ok) return ok;
      if (auto ok = CheckOffsets(call.args()[1], op, span); !ok) return ok;
      if (auto ok = CheckStaticInts(call.args()[2], "shapes", op, span); !ok) return ok;
    } else {
      for (const auto& arg : call.args()) {
        if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
      }
    }
    return DefineTile(*assign, span);
  }

  Status CheckStore(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
    if (auto ok = CheckTileOperand(call.args()[0], "tile.store", span); !ok) return ok;
    if (auto ok = CheckOffsets(call.args()[1], "tile.store", span); !ok) return ok;
    if (auto ok = CheckTensorOperand(call.args()[2], "tile.store", span); !ok) return ok;
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
    if (tile->memory_space() != ir::MemorySpace::Vec) {
      return Error(span, fmt::format("tile '{}' lives in {}; backend-ptoas supports only Vec tiles so far",
                                     var.name_hint(), ir::MemorySpaceName(tile->memory_space())));
    }
    if (!tile->memref()) {
      return Error(span, fmt::format("tile '{}' has no memory address; run memory allocation before backend-ptoas",
                                     var.name_hint()));
    }
    if (tile->shape().empty() || tile->shape().size() > 2) {
      return Error(span, fmt::format("tile '{}' {} is not 1-D or 2-D", var.name_hint(), tile->str()));
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

  Status CheckTensorOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) {
    const auto* var = arg->As<ir::Var>();
    auto it = var ? plan_.tensor_param_of.find(var) : plan_.tensor_param_of.end();
    if (it == plan_.tensor_param_of.end()) {
      return Error(span, fmt::format("the tensor operand of '{}' is not a parameter of kernel '{}'", op,
                                     kernel_.name()));
    }
    used_.insert(it->second);
    return {};
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
  // step. pl.unroll and pl.pipeline are refused rather than run as plain loops: nothing before
  // backend-ptoas unrolls or pipelines them yet, and dropping the request silently would hide that.
  Status CheckFor(const ir::ForStmt& loop) {
    const auto& var = *loop.loop_var();
    if (loop.kind() == ir::ForKind::Unroll || loop.kind() == ir::ForKind::Pipeline) {
      return Error(loop.span(), fmt::format("backend-ptoas cannot lower the pl.{} loop over '{}' in kernel '{}' "
                                            "(supported: pl.range, pl.parallel)",
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
    return {};
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
  // parameters, combined by + - * // % min max. Comparisons and float division give no index.
  Status CheckIndexExpr(const ir::ExprPtr& expr, const std::string& what, const ir::Span& span) {
    if (expr->Is<ir::ConstInt>()) return {};
    if (const auto* var = expr->As<ir::Var>()) return CheckIndexVar(*var, what, span);
    if (const auto* binary = expr->As<ir::BinaryExpr>()) {
      const char* symbol = ir::BinaryOpSymbol(binary->op());
      if (ir::IsComparison(binary->op())) {
        return Error(span, fmt::format("{} uses the comparison '{}', whose result is a boolean; backend-ptoas "
                                       "lowers only + - * // % min max of integers there",
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
    if (std::find(loops_.begin(), loops_.end(), &var) != loops_.end()) return {};
    bool is_param = std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                [&](const ir::VarPtr& param) { return param.get() == &var; });
    if (!is_param) {
      return Error(span, fmt::format("{} reads '{}', which is neither an enclosing loop variable nor a scalar "
                                     "parameter of kernel '{}'",
                                     what, var.name_hint(), kernel_.name()));
    }
    // arith.index_cast takes signless integers; unsigned parameters are typed ui8..ui64 in the module.
    auto dtype = var.type()->As<ir::ScalarType>()->dtype();
    using ir::DataType;
    if (dtype != DataType::INDEX && dtype != DataType::INT8 && dtype != DataType::INT16 &&
        dtype != DataType::INT32 && dtype != DataType::INT64) {
      return Error(span, fmt::format("{} reads the {} parameter '{}'; backend-ptoas computes offsets and loop "
                                     "bounds only from signed integer or INDEX scalars",
                                     what, ir::DataTypeName(dtype), var.name_hint()));
    }
    used_.insert(&var);
    return {};
  }

  const ir::Function& kernel_;
  KernelPlan plan_;
  std::set<const ir::Var*> tiles_;
  std::set<const ir::Var*> used_;      // tensor and scalar parameters the body reads
  std::vector<const ir::Var*> loops_;  // loop variables in scope, outermost first
};

}  // namespace

std::string_view ElementwisePtoOp(std::string_view op_name) {
  if (op_name == "tile.add") return "pto.tadd";
  if (op_name == "tile.sub") return "pto.tsub";
  if (op_name == "tile.mul") return "pto.tmul";
  if (op_name == "tile.div") return "pto.tdiv";
  return "";
}

pypto::expected<KernelPlan, std::string> PlanKernel(const ir::Function& kernel) { return Planner(kernel).Run(); }

}  // namespace pypto::backend_ptoas
