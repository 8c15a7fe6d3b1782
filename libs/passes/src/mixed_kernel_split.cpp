#include "mixed_kernel_split.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "index_exprs.h"
#include "split_vector_kernel.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

enum class Core { Cube, Vector };

const char* CoreName(Core core) { return core == Core::Cube ? "cube" : "vector"; }

Core CoreOf(const TileType& tile) {
  const MemorySpace space = tile.memory_space();
  return space == MemorySpace::Vec || space == MemorySpace::DDR ? Core::Vector : Core::Cube;
}

// The core whose tiles `expr` reads, if it reads any (the first tile argument decides).
std::optional<Core> CoreOfOperands(const ExprPtr& expr) {
  struct Finder final : IRVisitor {
    std::optional<Core> core;
    void VisitVar(const std::shared_ptr<const Var>& var) override {
      if (const auto* tile = var->type()->As<TileType>(); tile && !core) core = CoreOf(*tile);
    }
  } finder;
  finder.VisitExpr(expr);
  return finder.core;
}

// `y = tile.move(x, target_memory=...)` from one core's buffer to the other's, or `y =
// tile.aiv_shard(x, split=...)`: the cube tile x split between the vector lanes.
const Call* CrossCoreMove(const AssignStmt& assign) {
  const auto* call = assign.value()->As<Call>();
  if (call && call->is_op_call() && call->target_name() == "tile.aiv_shard") return call;
  if (!call || !call->is_op_call() || call->target_name() != "tile.move") return nullptr;
  const auto* from = call->args()[0]->type()->As<TileType>();
  const auto* to = assign.var()->type()->As<TileType>();
  return from && to && CoreOf(*from) != CoreOf(*to) ? call : nullptr;
}

// The member an op names for itself (`pl.system.sync_set(..., core_type="aiv")`), if it does: such an
// op has no tile operand to place it by, and kept in both members it would run on both.
std::optional<Core> NamedCore(const ExprPtr& expr) {
  const auto* call = expr->As<Call>();
  if (!call || !call->is_op_call() || !call->op()->affinity_from_attrs) return std::nullopt;
  const auto affinity = call->op()->affinity_from_attrs(call->kwargs());
  if (!affinity) return std::nullopt;
  return *affinity == CoreAffinity::Cube ? Core::Cube : Core::Vector;
}

ExprPtr Op(std::string_view name, std::vector<ExprPtr> args, Call::Kwargs kwargs, const Span& span) {
  auto call = OpRegistry::Get().CreateCall(name, std::move(args), std::move(kwargs), span);
  return call ? *call : nullptr;
}

// Builds one member's body from the kernel's.
class CoreSlicer {
 public:
  // `split`: the code the pipes of a kernel declared split between the vector lanes take.
  CoreSlicer(Core core, int64_t split) : core_(core), split_(split) {}

  Result<StmtPtr> Slice(const StmtPtr& body) {
    auto sliced = SliceBody(body);
    if (error_) return pypto::unexpected(*error_);
    return SubstituteVars(sliced, aliases_);
  }

 private:
  StmtPtr SliceBody(const StmtPtr& body) {
    std::vector<StmtPtr> out;
    for (const auto& stmt : FlattenStmts(body)) SliceStmt(stmt, out);
    return std::make_shared<SeqStmts>(std::move(out), body->span());
  }

  void SliceStmt(const StmtPtr& stmt, std::vector<StmtPtr>& out) {
    if (const auto* assign = stmt->As<AssignStmt>()) return SliceAssign(stmt, *assign, out);
    if (const auto* eval = stmt->As<EvalStmt>()) {
      auto core = NamedCore(eval->expr());
      if (!core) core = CoreOfOperands(eval->expr());
      if (!core || *core == core_) out.push_back(stmt);
      return;
    }
    if (const auto* loop = stmt->As<ForStmt>()) return out.push_back(SliceFor(*loop));
    if (const auto* loop = stmt->As<WhileStmt>()) return out.push_back(SliceWhile(*loop));
    if (const auto* branch = stmt->As<IfStmt>()) return out.push_back(SliceIf(*branch));
    if (const auto* yield = stmt->As<YieldStmt>()) return out.push_back(KeepValues(*yield, kept_yields_.back()));
    out.push_back(stmt);  // return
  }

  void SliceAssign(const StmtPtr& stmt, const AssignStmt& assign, std::vector<StmtPtr>& out) {
    const auto& var = assign.var();
    if (const Call* move = CrossCoreMove(assign)) return Cross(assign, *move, out);
    if (const auto* tile = var->type()->As<TileType>()) {
      if (CoreOf(*tile) == core_) out.push_back(stmt);
      return;
    }
    const auto core = CoreOfOperands(assign.value());
    if (!core || *core == core_) return out.push_back(stmt);
    // The other core's store: here its result is the tensor it wrote into.
    const auto* call = assign.value()->As<Call>();
    if (var->type()->As<TensorType>() && call && call->is_op_call() && call->op()->writes_arg) {
      if (auto written = std::dynamic_pointer_cast<const Var>(call->args()[*call->op()->writes_arg]))
        aliases_[var.get()] = written;
    }
  }

  // The producer pushes the tile; the consumer pops it into its own buffer and frees the slot. A
  // sharded tile, and every tile of a kernel declared split, crosses split between the vector lanes.
  void Cross(const AssignStmt& assign, const Call& move, std::vector<StmtPtr>& out) {
    const auto& source = move.args()[0];
    const Core from = CoreOf(*source->type()->As<TileType>());
    const Span& span = assign.span();
    const int64_t split = FindAttr<int64_t>(move.kwargs(), "split").value_or(split_);
    if (from == core_) {
      auto push = Op(from == Core::Cube ? "tile.tpush_to_aiv" : "tile.tpush_to_aic", {source}, {{"split", split}},
                     span);
      return Emit(push ? StmtPtr(std::make_shared<EvalStmt>(push, span)) : nullptr, assign, out);
    }
    const auto& tile = *assign.var()->type()->As<TileType>();
    auto pop = Op(from == Core::Cube ? "tile.tpop_from_aic" : "tile.tpop_from_aiv", {IndexTuple(tile.shape(), span)},
                  {{"dtype", tile.dtype()}, {"split", split}}, span);
    if (!pop) return Emit(nullptr, assign, out);
    auto popped = std::make_shared<Var>(assign.var()->name_hint(), pop->type(), span);
    out.push_back(std::make_shared<AssignStmt>(popped, pop, span));
    auto free = Op(from == Core::Cube ? "system.tfree_to_aic" : "system.tfree_to_aiv", {popped},
                   {{"split", split}}, span);
    Emit(free ? StmtPtr(std::make_shared<EvalStmt>(free, span)) : nullptr, assign, out);
    // A tile with a valid region narrower than its shape keeps it across the pipe.
    if (!tile.valid_shape().empty()) {
      const auto& valid = tile.valid_shape();
      auto narrowed = Op("tile.set_validshape", {popped, valid[valid.size() - 2], valid.back()}, {}, span);
      if (!narrowed) return Emit(nullptr, assign, out);
      out.push_back(std::make_shared<AssignStmt>(assign.var(), narrowed, span));
    } else {
      aliases_[assign.var().get()] = popped;
    }
  }

  void Emit(const StmtPtr& stmt, const AssignStmt& assign, std::vector<StmtPtr>& out) {
    if (stmt) return out.push_back(stmt);
    if (!error_)
      error_ = Diagnostic{DiagnosticKind::Internal,
                          fmt::format("cannot pass '{}' between the cube and vector members of a mixed kernel",
                                      assign.var()->name_hint()),
                          assign.span()};
  }

  // Which of a loop's or an if's carried values live on this core: tiles of its buffers, and every
  // scalar and tensor (both members compute the scalars and write through the tensors).
  std::vector<bool> KeptOnThisCore(const std::vector<VarPtr>& vars) const {
    std::vector<bool> kept;
    for (const auto& var : vars) {
      const auto* tile = var->type()->As<TileType>();
      kept.push_back(!tile || CoreOf(*tile) == core_);
    }
    return kept;
  }

  template <typename T>
  static std::vector<T> Filter(const std::vector<T>& items, const std::vector<bool>& kept) {
    std::vector<T> result;
    for (size_t i = 0; i < items.size(); ++i)
      if (kept[i]) result.push_back(items[i]);
    return result;
  }

  StmtPtr KeepValues(const YieldStmt& yield, const std::vector<bool>& kept) const {
    return std::make_shared<YieldStmt>(Filter(yield.values(), kept), yield.span());
  }

  StmtPtr SliceFor(const ForStmt& loop) {
    const auto kept = KeptOnThisCore(loop.return_vars());
    kept_yields_.push_back(kept);
    auto body = SliceBody(loop.body());
    kept_yields_.pop_back();
    return std::make_shared<ForStmt>(loop.loop_var(), loop.start(), loop.stop(), loop.step(),
                                     Filter(loop.iter_args(), kept), body, Filter(loop.return_vars(), kept),
                                     loop.kind(), loop.span());
  }

  // Both members run the loop: its condition reads scalars, which each computes.
  StmtPtr SliceWhile(const WhileStmt& loop) {
    const auto kept = KeptOnThisCore(loop.return_vars());
    kept_yields_.push_back(kept);
    auto body = SliceBody(loop.body());
    kept_yields_.pop_back();
    return std::make_shared<WhileStmt>(loop.condition(), Filter(loop.iter_args(), kept), body,
                                       Filter(loop.return_vars(), kept), loop.span());
  }

  StmtPtr SliceIf(const IfStmt& branch) {
    kept_yields_.push_back(KeptOnThisCore(branch.return_vars()));
    auto then_body = SliceBody(branch.then_body());
    auto else_body = branch.else_body() ? SliceBody(branch.else_body()) : nullptr;
    auto kept = kept_yields_.back();
    kept_yields_.pop_back();
    return std::make_shared<IfStmt>(branch.condition(), then_body, else_body, Filter(branch.return_vars(), kept),
                                    branch.span());
  }

  Core core_;
  int64_t split_;
  std::unordered_map<const Var*, VarPtr> aliases_;  // values this member has under another name
  std::vector<std::vector<bool>> kept_yields_;     // per enclosing loop/if: which yielded values stay
  std::optional<Diagnostic> error_;
};

// The first variable `body` reads that it neither defines nor receives from `params`.
class UndefinedUse final : public IRVisitor {
 public:
  explicit UndefinedUse(const std::vector<VarPtr>& params) {
    for (const auto& param : params) defined_.insert(param.get());
  }
  const Var* found = nullptr;
  const Stmt* where = nullptr;

  void VisitStmt(const StmtPtr& stmt) override {
    if (found) return;
    if (const auto* assign = stmt->As<AssignStmt>()) {
      current_ = stmt.get();
      VisitExpr(assign->value());
      defined_.insert(assign->var().get());
      return;
    }
    if (const auto* loop = stmt->As<ForStmt>()) {
      current_ = stmt.get();
      for (const auto& iter_arg : loop->iter_args()) {
        VisitExpr(iter_arg.init);
        defined_.insert(iter_arg.var.get());
      }
      defined_.insert(loop->loop_var().get());
      VisitExpr(loop->start());
      VisitExpr(loop->stop());
      VisitExpr(loop->step());
      VisitStmt(loop->body());
      for (const auto& var : loop->return_vars()) defined_.insert(var.get());
      return;
    }
    if (const auto* loop = stmt->As<WhileStmt>()) {
      current_ = stmt.get();
      for (const auto& iter_arg : loop->iter_args()) {
        VisitExpr(iter_arg.init);
        defined_.insert(iter_arg.var.get());
      }
      VisitExpr(loop->condition());
      VisitStmt(loop->body());
      for (const auto& var : loop->return_vars()) defined_.insert(var.get());
      return;
    }
    if (const auto* branch = stmt->As<IfStmt>()) {
      current_ = stmt.get();
      VisitExpr(branch->condition());
      VisitStmt(branch->then_body());
      if (branch->else_body()) VisitStmt(branch->else_body());
      for (const auto& var : branch->return_vars()) defined_.insert(var.get());
      return;
    }
    if (!stmt->As<SeqStmts>()) current_ = stmt.get();
    IRVisitor::VisitStmt(stmt);
  }

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override {
    if (!found && !defined_.contains(var.get())) {
      found = var.get();
      where = current_;
    }
  }

 private:
  std::unordered_set<const Var*> defined_;
  const Stmt* current_ = nullptr;
};

// Whether the kernel's vector work is written per lane (a pl.split_aiv region): it shards cube tiles
// between its vector lanes, or tells the lanes apart by pl.tile.get_subblock_idx() (the lane of a
// region of mode NONE, whose lanes each do their own part).
bool WrittenPerLane(const Function& kernel) {
  struct Finder final : IRVisitor {
    bool found = false;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      found |= call->is_op_call() &&
               (call->target_name() == "tile.aiv_shard" || call->target_name() == "tile.get_subblock_idx");
      IRVisitor::VisitCall(call);
    }
  } finder;
  finder.VisitStmt(kernel.body());
  return finder.found;
}

Result<FunctionPtr> Member(const Function& kernel, Core core) {
  auto body = CoreSlicer(core, DeclaredSplitCode(kernel)).Slice(kernel.body());
  if (!body) return pypto::unexpected(body.error());
  UndefinedUse check(kernel.params());
  check.VisitStmt(*body);
  if (check.found) {
    const Core other = core == Core::Cube ? Core::Vector : Core::Cube;
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("kernel '{}' mixes cube and vector work, and its {} part reads '{}', which only the "
                                 "{} part computes; only tiles can cross between the two",
                                 kernel.name(), CoreName(core), check.found->name_hint(), CoreName(other)),
                     check.where ? check.where->span() : kernel.span(),
                     "compute the value from tensors both parts read, or split the work into two pl.at scopes");
  }
  const char* suffix = core == Core::Cube ? "_aic" : "_aiv";
  auto attrs = kernel.attrs();
  // The vector work of pl.split_aiv regions is written for one lane's halves: both lanes run it as
  // it is, nothing to halve (SplitVectorKernel).
  if (WrittenPerLane(kernel)) {
    attrs[kSplitAivAttr] = true;
    if (core == Core::Vector) attrs[kDualAivDispatchAttr] = true;
  }
  return std::make_shared<Function>(kernel.name() + suffix, kernel.params(), kernel.param_directions(),
                                    kernel.return_types(), *body,
                                    core == Core::Cube ? FunctionType::AIC : FunctionType::AIV, std::move(attrs),
                                    kernel.span());
}

}  // namespace

Result<MixedKernelMembers> SplitMixedKernel(const Function& kernel) {
  auto aic = Member(kernel, Core::Cube);
  if (!aic) return pypto::unexpected(aic.error());
  auto aiv = Member(kernel, Core::Vector);
  if (!aiv) return pypto::unexpected(aiv.error());
  return MixedKernelMembers{*aic, *aiv};
}

}  // namespace pypto::passes
