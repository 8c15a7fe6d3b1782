#include "split_vector_kernel.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "index_exprs.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

enum class Split { None, UpDown, LeftRight };

const char* SplitName(Split split) { return split == Split::UpDown ? "up-down" : "left-right"; }

// A pipe op's `split=` code: 1 and 3 (an odd extent) cut rows, 2 and 4 columns.
Split FromCode(int64_t code) {
  if (code == 1 || code == 3) return Split::UpDown;
  if (code == 2 || code == 4) return Split::LeftRight;
  return Split::None;
}

// The kernel's `split` attribute: a pl.SplitMode name, or a split code.
Split FromAttr(const Function& kernel) {
  if (const auto* name = FunctionAttr<std::string>(kernel, "split"))
    return *name == "UP_DOWN" ? Split::UpDown : *name == "LEFT_RIGHT" ? Split::LeftRight : Split::None;
  if (const auto* code = FunctionAttr<int64_t>(kernel, "split")) return FromCode(*code);
  return Split::None;
}

// The split of a kernel: its attribute and the split codes of its pipe ops, which must agree.
Result<Split> KernelSplit(const Function& kernel) {
  struct PipeSplits final : IRVisitor {
    const Call* first = nullptr;
    Split split = Split::None;
    std::optional<Diagnostic> conflict;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      IRVisitor::VisitCall(call);
      if (!call->is_op_call() || !IsCrossCorePipeOp(call->target_name()) || conflict) return;
      const Split mine = FromCode(FindAttr<int64_t>(call->kwargs(), "split").value_or(0));
      if (mine == Split::None) return;
      if (!first) {
        first = call.get();
        split = mine;
      } else if (mine != split) {
        conflict = Diagnostic{DiagnosticKind::Type,
                              fmt::format("{} splits its tile {} between the AIV lanes, but {} at {} splits {}: the "
                                          "pipes of one kernel share one split",
                                          call->target_name(), SplitName(mine), first->target_name(),
                                          first->span().str(), SplitName(split)),
                              call->span()};
      }
    }
  } pipes;
  if (kernel.body()) pipes.VisitStmt(kernel.body());
  if (pipes.conflict) return pypto::unexpected(*pipes.conflict);
  const Split declared = FromAttr(kernel);
  if (declared != Split::None && pipes.first && pipes.split != declared)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} splits its tile {} between the AIV lanes, but kernel '{}' is split {}",
                                 pipes.first->target_name(), SplitName(pipes.split), kernel.name(),
                                 SplitName(declared)),
                     pipes.first->span());
  return declared != Split::None ? declared : pipes.split;
}

int64_t Half(int64_t extent) { return (extent + 1) / 2; }

class Renamer final : public IRMutator {
 public:
  explicit Renamer(const std::unordered_map<const Var*, VarPtr>& renamed) : renamed_(renamed) {}

 protected:
  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    auto it = renamed_.find(var.get());
    return it == renamed_.end() ? var : it->second;
  }

 private:
  const std::unordered_map<const Var*, VarPtr>& renamed_;
};

// Rewrites an AIV kernel's body for one lane's halves (see SplitVectorKernel).
class LaneHalver {
 public:
  LaneHalver(const Function& kernel, Split split, VarPtr lane)
      : kernel_(kernel), split_(split), lane_(std::move(lane)) {}

  Result<StmtPtr> Halve(const StmtPtr& body) {
    auto halved = Body(body);
    if (error_) return pypto::unexpected(*error_);
    return halved;
  }

 private:
  // ---- tiles and their halves ----

  // The dimension the lanes split a tile of this type along; -1 when it stays whole (a vector, or
  // an extent of 1 every lane shares, such as a broadcast row).
  int SplitDim(const TileType& tile) const {
    const int rank = static_cast<int>(tile.shape().size());
    if (rank < 2) return -1;
    const int dim = split_ == Split::UpDown ? rank - 2 : rank - 1;
    return tile.shape()[dim] > 1 ? dim : -1;
  }

  // The lane's part of `valid` of an axis `full` long, cut into halves of `half`:
  // clamp(valid - lane * half, 0, half). The lane's offset is subtracted from max(valid, offset),
  // not clamped after, so that an unsigned extent cannot wrap.
  ExprPtr LanePart(const ExprPtr& valid, int64_t full, int64_t half, const Span& span) {
    if (AsConstInt(valid) == std::optional<int64_t>(full) && full == 2 * half) return IndexConst(half, span);
    auto offset = Arith(BinaryOp::Mul, lane_, IndexConst(half, span), span);
    auto reached = Arith(BinaryOp::Max, valid, offset, span);
    return Arith(BinaryOp::Min, Arith(BinaryOp::Sub, reached, offset, span), IndexConst(half, span), span);
  }

  // `offset + lane * half`.
  ExprPtr LaneOffset(const ExprPtr& offset, int64_t half, const Span& span) {
    auto step = Arith(BinaryOp::Mul, lane_, IndexConst(half, span), span);
    return AsConstInt(offset) == std::optional<int64_t>(0) ? step : Arith(BinaryOp::Add, offset, step, span);
  }

  ExprPtr Arith(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs, const Span& span) {
    auto made = MakeBinary(op, lhs, rhs, span);
    if (made) return *made;
    Fail(made.error());
    return lhs;
  }

  // A tile type as one lane holds it: half the split extent (rounded up), and the lane's part of
  // the valid region along it (stated even for a tile valid as a whole when the extent is odd,
  // since lane 1's box then holds one row or column more than its part).
  TypePtr LaneType(const TileType& tile, const Span& span) {
    const int dim = SplitDim(tile);
    if (dim < 0)
      return std::make_shared<TileType>(tile.shape(), tile.dtype(), tile.memory_space(), tile.memref(),
                                        tile.valid_shape());
    const int64_t full = tile.shape()[dim], half = Half(full);
    Shape shape = tile.shape();
    shape[dim] = half;
    ValidShape valid = tile.valid_shape();
    if (valid.empty() && full != 2 * half)
      for (int64_t extent : shape) valid.push_back(IndexConst(extent, span));
    if (!valid.empty()) valid[dim] = LanePart(tile.has_partial_valid_shape() ? tile.valid_shape()[dim]
                                                                             : IndexConst(full, span),
                                              full, half, span);
    return std::make_shared<TileType>(std::move(shape), tile.dtype(), tile.memory_space(), std::nullopt,
                                      std::move(valid));
  }

  // ---- statements ----

  StmtPtr Body(const StmtPtr& body) {
    std::vector<StmtPtr> out;
    for (const auto& stmt : FlattenStmts(body)) out.push_back(Statement(stmt));
    return std::make_shared<SeqStmts>(std::move(out), body->span());
  }

  StmtPtr Statement(const StmtPtr& stmt) {
    if (const auto* assign = stmt->As<AssignStmt>()) return Assign(stmt, *assign);
    if (const auto* eval = stmt->As<EvalStmt>()) {
      const auto* call = eval->expr()->As<Call>();
      if (!call || !call->is_op_call()) return Renamed(stmt);
      auto rebuilt = Rebuilt(eval->expr(), *call);
      return rebuilt == eval->expr() ? stmt : std::make_shared<EvalStmt>(rebuilt, stmt->span());
    }
    if (const auto* loop = stmt->As<ForStmt>()) return For(*loop, stmt->span());
    if (const auto* loop = stmt->As<WhileStmt>()) return While(*loop, stmt->span());
    if (const auto* branch = stmt->As<IfStmt>()) return If(*branch, stmt->span());
    return Renamed(stmt);  // yield, return
  }

  StmtPtr Assign(const StmtPtr& stmt, const AssignStmt& assign) {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call()) return Renamed(stmt);
    const auto& var = assign.var();
    auto rebuilt = Rebuilt(assign.value(), *call);
    if (rebuilt == assign.value()) return stmt;
    TypePtr type = var->type();
    if (const auto* tile = var->type()->As<TileType>()) {
      // A tile the lane makes (a pop, a load, a fresh tile) and one whose variable states a valid
      // region its value did not (the annotation of a pop): the lane's part of the variable's type;
      // any other tile is what the op computes from the lane's operands.
      const auto* before = call->type()->As<TileType>();
      const bool declared = tile->has_partial_valid_shape() && (!before || !SameValid(*tile, *before));
      const bool made_here = halved_.contains(rebuilt.get()) && !ReadsHalf(*call);
      type = made_here || (declared && halved_.contains(rebuilt.get())) ? LaneType(*tile, assign.span())
                                                                         : rebuilt->type();
    }
    auto renamed = std::make_shared<Var>(var->name_hint(), type, var->span());
    renamed_[var.get()] = renamed;
    if (halved_.contains(rebuilt.get())) halved_vars_.insert(renamed.get());
    return std::make_shared<AssignStmt>(renamed, rebuilt, stmt->span());
  }

  static bool SameValid(const TileType& a, const TileType& b) {
    if (a.valid_shape().size() != b.valid_shape().size()) return false;
    for (size_t d = 0; d < a.valid_shape().size(); ++d) {
      const auto& x = a.valid_shape()[d];
      const auto& y = b.valid_shape()[d];
      if (x != y && (!AsConstInt(x) || AsConstInt(x) != AsConstInt(y))) return false;
    }
    return true;
  }

  StmtPtr For(const ForStmt& loop, const Span& span) {
    auto iter_args = Carried(loop.iter_args());
    auto body = Body(loop.body());
    auto return_vars = Results(loop.return_vars(), loop.iter_args());
    return std::make_shared<ForStmt>(loop.loop_var(), Renamed(loop.start()), Renamed(loop.stop()),
                                     Renamed(loop.step()), std::move(iter_args), body, std::move(return_vars),
                                     loop.kind(), span);
  }

  StmtPtr While(const WhileStmt& loop, const Span& span) {
    auto iter_args = Carried(loop.iter_args());
    auto condition = Renamed(loop.condition());
    auto body = Body(loop.body());
    auto return_vars = Results(loop.return_vars(), loop.iter_args());
    return std::make_shared<WhileStmt>(condition, std::move(iter_args), body, std::move(return_vars), span);
  }

  // A loop's carried values: each takes its (possibly halved) initial value's type.
  std::vector<IterArg> Carried(const std::vector<IterArg>& iter_args) {
    std::vector<IterArg> out;
    for (const auto& iter_arg : iter_args) {
      const VarPtr& var = iter_arg.var;
      const ExprPtr& init = iter_arg.init;
      auto renamed_init = Renamed(init);
      VarPtr carried = var;
      if (renamed_init != init && var->type()->As<TileType>()) {
        carried = std::make_shared<Var>(var->name_hint(), renamed_init->type(), var->span());
        renamed_[var.get()] = carried;
        if (IsHalved(renamed_init)) halved_vars_.insert(carried.get());
      }
      out.push_back({carried, renamed_init, iter_arg.carry});
    }
    return out;
  }

  // A loop's results: of the type its carried values now have.
  std::vector<VarPtr> Results(const std::vector<VarPtr>& return_vars, const std::vector<IterArg>& iter_args) {
    std::vector<VarPtr> out;
    for (size_t i = 0; i < return_vars.size(); ++i) {
      const VarPtr& result = return_vars[i];
      auto it = i < iter_args.size() ? renamed_.find(iter_args[i].var.get()) : renamed_.end();
      if (it == renamed_.end()) {
        out.push_back(result);
        continue;
      }
      auto renamed = std::make_shared<Var>(result->name_hint(), it->second->type(), result->span());
      renamed_[result.get()] = renamed;
      if (halved_vars_.contains(it->second.get())) halved_vars_.insert(renamed.get());
      out.push_back(renamed);
    }
    return out;
  }

  StmtPtr If(const IfStmt& branch, const Span& span) {
    auto then_body = Body(branch.then_body());
    auto else_body = branch.else_body() ? Body(branch.else_body()) : nullptr;
    // Each result takes the type of what the then branch yields for it.
    std::vector<VarPtr> return_vars;
    const YieldStmt* yield = TrailingYield(then_body);
    for (size_t i = 0; i < branch.return_vars().size(); ++i) {
      const VarPtr& result = branch.return_vars()[i];
      const ExprPtr* value = yield && i < yield->values().size() ? &yield->values()[i] : nullptr;
      if (!value || (*value)->type() == result->type() || !result->type()->As<TileType>()) {
        return_vars.push_back(result);
        continue;
      }
      auto renamed = std::make_shared<Var>(result->name_hint(), (*value)->type(), result->span());
      renamed_[result.get()] = renamed;
      if (IsHalved(*value)) halved_vars_.insert(renamed.get());
      return_vars.push_back(renamed);
    }
    return std::make_shared<IfStmt>(Renamed(branch.condition()), then_body, else_body, std::move(return_vars), span);
  }

  // ---- ops ----

  bool ReadsHalf(const Call& call) {
    for (const auto& arg : call.args())
      if (IsHalved(Renamed(arg))) return true;
    return false;
  }

  // The call `expr` as the lane makes it; `expr` itself when nothing changes. A rebuilt call whose
  // result is a lane's half is recorded in halved_.
  ExprPtr Rebuilt(const ExprPtr& expr, const Call& call) {
    std::vector<ExprPtr> args;
    bool renamed = false, reads_half = false;
    for (const auto& arg : call.args()) {
      args.push_back(Renamed(arg));
      renamed |= args.back() != arg;
      reads_half |= IsHalved(args.back());
    }
    const std::string& op = call.target_name();
    const Span& span = call.span();
    const auto* result = call.type()->As<TileType>();
    const int dim = result ? SplitDim(*result) : -1;
    if (op == "tile.tpop_from_aic" && dim >= 0) {
      args[0] = HalvedInts(args[0], dim, span);
      return Create(expr, call, std::move(args), true);
    }
    if (op == "tile.load" && dim >= 0 && result->memory_space() == MemorySpace::Vec) {
      const int64_t full = result->shape()[dim], half = Half(full);
      args[1] = MapElement(args[1], dim, [&](const ExprPtr& at) { return LaneOffset(at, half, span); });
      args[2] = HalvedInts(args[2], dim, span);
      if (args.size() > 3)
        args[3] = MapElement(args[3], dim, [&](const ExprPtr& v) { return LanePart(v, full, half, span); });
      return Create(expr, call, std::move(args), true);
    }
    if ((op == "tile.full" || op == "tile.create") && dim >= 0 && result->memory_space() == MemorySpace::Vec) {
      args[0] = HalvedInts(args[0], dim, span);
      return Create(expr, call, std::move(args), true);
    }
    if (op == "tile.store" && reads_half) {
      const auto& tile = *call.args()[0]->type()->As<TileType>();
      const int64_t half = Half(tile.shape()[SplitDim(tile)]);
      args[1] = MapElement(args[1], SplitDim(tile), [&](const ExprPtr& at) { return LaneOffset(at, half, span); });
      return Create(expr, call, std::move(args), false);
    }
    if (reads_half) return HalfOperandOp(expr, call, std::move(args));
    return renamed ? Create(expr, call, std::move(args), false) : expr;
  }

  // An op reading a lane's half: it computes on halves, unless it would collapse the split axis (a
  // reduction along it sees half of its operand).
  ExprPtr HalfOperandOp(const ExprPtr& expr, const Call& call, std::vector<ExprPtr> args) {
    const std::string& op = call.target_name();
    const Span& span = call.span();
    const auto* operand = call.args()[0]->type()->As<TileType>();
    const auto* result = call.type()->As<TileType>();
    if (op == "tile.set_validshape" && operand && SplitDim(*operand) >= 0) {
      // The whole extent (or more than a half) spans both lanes: the lane's part of it. A smaller
      // one is a region both lanes share and stays as it is.
      const int dim = SplitDim(*operand);
      const int64_t full = operand->shape()[dim], half = Half(full);
      const size_t at = 1 + static_cast<size_t>(dim - (static_cast<int>(operand->shape().size()) - 2));
      const auto value = AsConstInt(args[at]);
      if (value && (*value == full || *value > half)) args[at] = LanePart(args[at], full, half, span);
    }
    if (result && operand) {
      const int dim = SplitDim(*operand);
      if (dim >= 0 && result->shape().size() == operand->shape().size() && result->shape()[dim] == 1) {
        Fail(Diagnostic{DiagnosticKind::InvalidOperation,
                        fmt::format("{} reduces along the axis kernel '{}' splits {} between its two AIV lanes, so "
                                    "each lane would reduce half of it",
                                    op, kernel_.name(), SplitName(split_)),
                        span, "reduce along the other axis, or split the kernel the other way"});
        return expr;
      }
    }
    return Create(expr, call, std::move(args), result != nullptr);
  }

  // Re-creates the op on `args`, deducing its type anew; `half` records the result as a lane's half.
  ExprPtr Create(const ExprPtr& expr, const Call& call, std::vector<ExprPtr> args, bool half) {
    auto made = OpRegistry::Get().CreateCall(call.target_name(), std::move(args), call.kwargs(), call.span());
    if (!made) {
      Fail(Diagnostic{DiagnosticKind::InvalidOperation,
                      fmt::format("kernel '{}' is split {} between its two AIV lanes, and {} cannot work on a lane's "
                                  "half of its tiles: {}",
                                  kernel_.name(), SplitName(split_), call.target_name(), made.error().message),
                      call.span()});
      return expr;
    }
    if (half) halved_.insert(made->get());
    return *made;
  }

  // The tuple `ints` with its element `dim` halved (rounded up).
  ExprPtr HalvedInts(const ExprPtr& ints, int dim, const Span& span) {
    return MapElement(ints, dim, [&](const ExprPtr& extent) {
      const auto value = AsConstInt(extent);
      return value ? IndexConst(Half(*value), span) : extent;
    });
  }

  template <typename F>
  ExprPtr MapElement(const ExprPtr& tuple, int dim, F f) {
    const auto* literal = tuple->As<TupleLiteral>();
    if (!literal || dim < 0 || static_cast<size_t>(dim) >= literal->elements().size()) return tuple;
    std::vector<ExprPtr> elements = literal->elements();
    elements[static_cast<size_t>(dim)] = f(elements[static_cast<size_t>(dim)]);
    return std::make_shared<TupleLiteral>(std::move(elements), tuple->span());
  }

  bool IsHalved(const ExprPtr& expr) const {
    const auto* var = expr->As<Var>();
    return var ? halved_vars_.contains(var) : halved_.contains(expr.get());
  }

  ExprPtr Renamed(const ExprPtr& expr) {
    if (!expr || renamed_.empty()) return expr;
    return Renamer(renamed_).MutateExpr(expr);
  }
  StmtPtr Renamed(const StmtPtr& stmt) { return renamed_.empty() ? stmt : Renamer(renamed_).MutateStmt(stmt); }

  void Fail(Diagnostic diagnostic) {
    if (!error_) error_ = std::move(diagnostic);
  }

  const Function& kernel_;
  Split split_;
  VarPtr lane_;
  std::unordered_map<const Var*, VarPtr> renamed_;
  std::unordered_set<const Expr*> halved_;      // rebuilt calls whose result is a lane's half
  std::unordered_set<const Var*> halved_vars_;  // variables holding a lane's half
  std::optional<Diagnostic> error_;
};

// Gives each tfree the split code of the pop whose slot it frees, so that it frees the slot of the
// pipe the pop used (a tfree written without split= frees a pipe's slot whole).
class FreeSplitStamper final : public IRMutator {
 protected:
  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    if (const auto* call = stmt->value()->As<Call>(); call && call->is_op_call() &&
                                                       (call->target_name() == "tile.tpop_from_aic" ||
                                                        call->target_name() == "tile.tpop_from_aiv"))
      pop_split_[stmt->var().get()] = FindAttr<int64_t>(call->kwargs(), "split").value_or(0);
    return IRMutator::MutateAssign(stmt);
  }

  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    const std::string& op = call->target_name();
    if (!call->is_op_call() || (op != "system.tfree_to_aic" && op != "system.tfree_to_aiv") ||
        FindAttr<int64_t>(call->kwargs(), "split").value_or(0) != 0)
      return IRMutator::MutateCall(call);
    const auto* freed = call->args()[0]->As<Var>();
    auto it = freed ? pop_split_.find(freed) : pop_split_.end();
    if (it == pop_split_.end() || it->second == 0) return call;
    Call::Kwargs kwargs;
    for (const auto& [key, value] : call->kwargs())
      if (key != "split") kwargs.emplace_back(key, value);
    kwargs.emplace_back("split", it->second);
    auto stamped = OpRegistry::Get().CreateCall(op, call->args(), std::move(kwargs), call->span());
    return stamped ? ExprPtr(*stamped) : ExprPtr(call);
  }

 private:
  std::unordered_map<const Var*, int64_t> pop_split_;
};

}  // namespace

int64_t DeclaredSplitCode(const Function& kernel) {
  const Split split = FromAttr(kernel);
  return split == Split::UpDown ? 1 : split == Split::LeftRight ? 2 : 0;
}

Result<FunctionPtr> SplitVectorKernel(const FunctionPtr& kernel) {
  if (kernel->type() != FunctionType::AIV && kernel->type() != FunctionType::AIC) return kernel;
  // pl.split_aiv regions are written for one lane's halves already (and may split each its own way).
  if (const bool* explicit_lanes = FunctionAttr<bool>(*kernel, kSplitAivAttr); explicit_lanes && *explicit_lanes)
    return kernel;
  auto split = KernelSplit(*kernel);
  if (!split) return pypto::unexpected(split.error());
  if (*split == Split::None || !kernel->body()) return kernel;
  const StmtPtr freed = FreeSplitStamper().MutateStmt(kernel->body());
  if (kernel->type() == FunctionType::AIC) return freed == kernel->body() ? kernel : kernel->WithBody(freed);
  const Span& span = kernel->span();
  auto lane_call = OpRegistry::Get().CreateCall("tile.get_subblock_idx", {}, {}, span);
  if (!lane_call) return pypto::unexpected(lane_call.error());
  auto lane = std::make_shared<Var>("subblock_idx", (*lane_call)->type(), span);
  auto body = LaneHalver(*kernel, *split, lane).Halve(freed);
  if (!body) return pypto::unexpected(body.error());
  std::vector<StmtPtr> stmts{std::make_shared<AssignStmt>(lane, *lane_call, span)};
  for (const auto& stmt : FlattenStmts(*body)) stmts.push_back(stmt);
  auto attrs = kernel->attrs();
  attrs[kDualAivDispatchAttr] = true;
  return std::make_shared<Function>(kernel->name(), kernel->params(), kernel->param_directions(),
                                    kernel->return_types(), std::make_shared<SeqStmts>(std::move(stmts), span),
                                    kernel->type(), std::move(attrs), span);
}

}  // namespace pypto::passes
