// FuseCreateAssembleToSlice: orchestration code often fills a fresh tensor with kernels and then
// assembles it whole into a window of a bigger one:
//
//     tmp = pl.create_tensor([16, 128], dtype=pl.FP32)
//     ... kernels write tmp ...
//     out = pl.assemble(out, tmp, [i * 16, 0])
//
// The frontend makes the assemble a copy kernel (`with pl.at(name_hint="assemble"):
// pl.tile.store(pl.tile.load(tmp, [0, 0], [16, 128]), [i * 16, 0], out)`), which costs a task and a
// round trip through UB, and does not even fit when tmp is bigger than UB. When nothing else touches
// that window in between and the statements in between only write tmp (a read, or an atomic add into
// it, would see the window's old contents), tmp can be the window itself: the create becomes the view
// `tmp = pl.tensor.slice(out, [16, 128], [i * 16, 0])`, the kernels write out in place, and the copy
// goes. A create with a starting value (init_value=v) fuses too, as upstream's does, but the window
// holds out's contents rather than v, so a fill kernel sets v in it right after the view
// (StartingValueFill): what the kernels leave unwritten still reads v after the assemble. Upstream
// runs a pass of this name after outlining; here it runs before, on the copy scope the frontend
// wrote, while the pattern is one statement.
#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"
#include "sequence_rewriter.h"
#include "starting_value_fill.h"
#include "stmt_patterns.h"
#include "vars_read.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

bool AllZero(const ExprPtr& tuple) {
  const auto* offsets = tuple->As<TupleLiteral>();
  if (!offsets) return false;
  for (const auto& offset : offsets->elements())
    if (AsConstInt(offset).value_or(-1) != 0) return false;
  return true;
}

// A copy scope: `with pl.at(...): pl.tile.store(pl.tile.load(src, [0, ..], src's shape), offsets,
// dst)` with nothing else in it.
struct WholeCopy {
  const Var* src = nullptr;
  VarPtr dst;
  ExprPtr offsets;
};

std::optional<WholeCopy> AsWholeCopy(const Stmt& stmt) {
  const auto* scope = stmt.As<InCoreScopeStmt>();
  if (!scope || scope->block_num() || !scope->order().empty()) return std::nullopt;
  const auto stmts = FlattenStmts(scope->body());
  const Call* store = stmts.size() == 1 && stmts[0]->Is<EvalStmt>() ? OpCallOf(stmts[0], "tile.store") : nullptr;
  if (!store || store->args().size() != 3 || !store->kwargs().empty()) return std::nullopt;
  const Call* load = AsOpCall(store->args()[0], "tile.load");
  if (!load || load->args().size() != 3 || !load->kwargs().empty() || !AllZero(load->args()[1])) return std::nullopt;
  const auto* src = load->args()[0]->As<Var>();
  const auto* src_type = src ? src->type()->As<TensorType>() : nullptr;
  const auto dst = std::dynamic_pointer_cast<const Var>(store->args()[2]);
  const auto* dst_type = dst ? dst->type()->As<TensorType>() : nullptr;
  const auto* shape = load->args()[2]->As<TupleLiteral>();
  if (!src_type || !dst_type || !shape || src_type->dtype() != dst_type->dtype() ||
      src_type->shape().size() != dst_type->shape().size() || shape->elements().size() != src_type->shape().size())
    return std::nullopt;
  for (size_t d = 0; d < shape->elements().size(); ++d)
    if (AsConstInt(shape->elements()[d]) != src_type->shape()[d]) return std::nullopt;
  return WholeCopy{.src = src, .dst = dst, .offsets = store->args()[1]};
}

// The variables `stmt` reads or defines.
std::unordered_set<const Var*> VarsMentioned(const StmtPtr& stmt) {
  std::unordered_set<const Var*> vars = VarsDefined({stmt});
  for (const auto& var : VarsRead(stmt)) vars.insert(var.get());
  return vars;
}

// `tmp = pl.tensor.create(shape, dtype=...[, init_value=v])`.
const Var* CreatedTensor(const Stmt& stmt) {
  const auto* assign = stmt.As<AssignStmt>();
  return assign && AsOpCall(assign->value(), "tensor.create") ? assign->var().get() : nullptr;
}

// The starting value of the tensor `create` makes, if it has one.
std::optional<double> StartingValue(const AssignStmt& create) {
  return FindAttr<double>(create.value()->As<Call>()->kwargs(), "init_value");
}

// The tensors that are views of `tensor` or updates of it in place (a reshape, a slice, a store's
// result, what a function of the program handed it returns), transitively, over a whole body: what
// a statement may touch `tensor` through.
std::unordered_set<const Var*> ViewsOf(const Var* tensor, const StmtPtr& body) {
  std::unordered_set<const Var*> views{tensor};
  for (bool grew = true; grew;) {
    grew = false;
    struct Visitor final : IRVisitor {
      std::unordered_set<const Var*>* views;
      bool* grew;
      void VisitAssign(const std::shared_ptr<const AssignStmt>& assign) override {
        const auto* call = assign->value()->As<Call>();
        if (call && !call->is_op_call()) {  // a function of the program may return what it was handed
          for (const auto& arg : call->args())
            if (const auto* var = arg->As<Var>(); var && views->contains(var) &&
                                                  views->insert(assign->var().get()).second)
              *grew = true;
        } else if (call) {
          for (auto index : {call->op()->result_aliases_arg, call->op()->writes_arg}) {
            const auto* arg = index && *index < static_cast<int>(call->args().size())
                                  ? call->args()[*index]->As<Var>()
                                  : nullptr;
            if (arg && views->contains(arg) && views->insert(assign->var().get()).second) *grew = true;
          }
        }
        IRVisitor::VisitAssign(assign);
      }
    } visitor;
    visitor.views = &views;
    visitor.grew = &grew;
    visitor.VisitStmt(body);
  }
  return views;
}

// Whether `stmts` only write `tmp`, by plain stores or as a function's output, directly or through
// views of it (`y_flat = pl.reshape(y, ...)` in an inlined function, then stores into y_flat): a read
// of it, or an accumulating (atomic-add) store into it, would see the window's old contents instead
// of a fresh tensor's once tmp is that window.
bool OnlyWrites(const Var* tmp, const std::vector<StmtPtr>& stmts, const Program& program) {
  struct Visitor final : IRVisitor {
    std::unordered_set<const Var*> views;  // tmp and the views made of it
    const Program* program = nullptr;
    bool reads = false;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      const auto& args = call->args();
      for (size_t i = 0; i < args.size(); ++i) {
        if (!views.contains(args[i]->As<Var>())) continue;
        if (call->is_op_call()) {
          const bool written = call->op()->writes_arg == static_cast<int>(i);
          const bool viewed = call->op()->result_aliases_arg == static_cast<int>(i) && !written;
          reads |= viewed ? false : !written || AccumulatesIntoWrittenArg(*call);
        } else {
          const FunctionPtr callee = program->Find(call->callee());
          reads |= !callee || i >= callee->param_directions().size() ||
                   callee->param_directions()[i] != ParamDirection::Out;
        }
      }
      IRVisitor::VisitCall(call);
    }
  } visitor;
  visitor.program = &program;
  visitor.views = ViewsOf(tmp, std::make_shared<SeqStmts>(stmts));
  for (const auto& stmt : stmts) visitor.VisitStmt(stmt);
  return !visitor.reads;
}

// Whether `stmts` only read `tmp`, directly or through its views (`views`): once tmp is the window, a
// later write into it would reach dst, which the copy made before it did not, and tmp handed on (a
// yield, a return, a plain alias) may be written wherever it goes.
bool OnlyReads(const std::unordered_set<const Var*>& views, const std::vector<StmtPtr>& stmts,
               const Program& program) {
  struct Visitor final : IRVisitor {
    const std::unordered_set<const Var*>* views = nullptr;
    const Program* program = nullptr;
    bool writes = false;
    bool Mentions(const ExprPtr& expr) const {
      for (const auto& var : VarsRead(expr))
        if (views->contains(var.get())) return true;
      return false;
    }
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      const auto& args = call->args();
      for (size_t i = 0; i < args.size(); ++i) {
        if (!views->contains(args[i]->As<Var>())) continue;
        if (call->is_op_call()) {
          writes |= call->op()->writes_arg == static_cast<int>(i);
        } else {
          const FunctionPtr callee = program->Find(call->callee());
          writes |= !callee || i >= callee->param_directions().size() ||
                    callee->param_directions()[i] != ParamDirection::In;
        }
      }
      IRVisitor::VisitCall(call);
    }
    void VisitAssign(const std::shared_ptr<const AssignStmt>& assign) override {
      writes |= views->contains(assign->value()->As<Var>());
      IRVisitor::VisitAssign(assign);
    }
    void VisitYield(const std::shared_ptr<const YieldStmt>& yield) override {
      for (const auto& value : yield->values()) writes |= Mentions(value);
      IRVisitor::VisitYield(yield);
    }
    void VisitReturn(const std::shared_ptr<const ReturnStmt>& ret) override {
      for (const auto& value : ret->values()) writes |= Mentions(value);
      IRVisitor::VisitReturn(ret);
    }
  } visitor;
  visitor.views = &views;
  visitor.program = &program;
  for (const auto& stmt : stmts) visitor.VisitStmt(stmt);
  return !visitor.writes;
}

class CreateAssembleFuser final : public SequenceRewriter {
 public:
  CreateAssembleFuser(const Program& program, StmtPtr body) : program_(program), body_(std::move(body)) {}

 protected:
  bool RewriteSequence(std::vector<StmtPtr>& stmts) override {
    bool changed = false;
    for (size_t c = 0; c < stmts.size(); ++c) {
      const Var* created = stmts[c] ? CreatedTensor(*stmts[c]) : nullptr;
      if (!created) continue;
      for (size_t a = c + 1; a < stmts.size(); ++a) {
        if (!stmts[a]) continue;
        auto copy = AsWholeCopy(*stmts[a]);
        if (!copy || copy->src != created) continue;
        if (Fuse(stmts, c, a, *copy)) changed = true;
        break;
      }
    }
    InsertFills(stmts);
    return changed;
  }

 private:
  // Makes stmts[c] the view and drops the copy stmts[a], when that keeps every value: the window of
  // dst is touched by nothing between them (so writing it early changes nothing anyone reads), the
  // offsets are known at the create, and what uses tmp after the copy only reads it, before anything
  // touches dst again (the window then holds what tmp did).
  bool Fuse(std::vector<StmtPtr>& stmts, size_t c, size_t a, const WholeCopy& copy) {
    std::vector<StmtPtr> between;  // without the copies fused away already
    std::copy_if(stmts.begin() + c + 1, stmts.begin() + a, std::back_inserter(between),
                 [](const StmtPtr& stmt) { return stmt != nullptr; });
    std::unordered_set<const Var*> mentioned;
    for (const auto& stmt : between) mentioned.merge(VarsMentioned(stmt));
    const std::unordered_set<const Var*> defined = VarsDefined(between);
    const std::unordered_set<const Var*> dst_views = ViewsOf(copy.dst.get(), body_);
    for (const Var* view : dst_views)
      if (mentioned.contains(view)) return false;
    if (!OnlyWrites(copy.src, between, program_)) return false;
    for (const auto& var : VarsRead(copy.offsets))
      if (defined.contains(var.get())) return false;
    if (!OnlyReadAfter(stmts, a, ViewsOf(copy.src, body_), dst_views)) return false;
    const auto& assign = *stmts[c]->As<AssignStmt>();
    const auto& shape = assign.value()->As<Call>()->args()[0];
    auto view = OpRegistry::Get().CreateCall("tensor.slice", {copy.dst, shape, copy.offsets}, {}, assign.span());
    if (!view) return false;  // a window outside dst at constant offsets: the copy reports it
    // The window holds dst's contents: a starting value is set in it before the kernels write it.
    StmtPtr fill;
    if (auto value = StartingValue(assign)) {
      fill = StartingValueFill(assign.var(), *value, assign.span());
      if (!fill) return false;
    }
    stmts[c] = std::make_shared<AssignStmt>(assign.var(), *view, assign.span());
    stmts[a] = nullptr;
    if (fill) fills_.emplace_back(c, std::move(fill));
    return true;
  }

  // Whether the statements after the copy stmts[a] that use tmp (`tmp_views`) only read it, and
  // nothing touches dst (`dst_views`) up to the last of them.
  bool OnlyReadAfter(const std::vector<StmtPtr>& stmts, size_t a, const std::unordered_set<const Var*>& tmp_views,
                     const std::unordered_set<const Var*>& dst_views) const {
    std::vector<StmtPtr> after;  // up to the last use of tmp
    size_t used = 0;
    for (size_t k = a + 1; k < stmts.size(); ++k) {
      if (!stmts[k]) continue;
      after.push_back(stmts[k]);
      const auto mentioned = VarsMentioned(stmts[k]);
      if (std::ranges::any_of(tmp_views, [&](const Var* view) { return mentioned.contains(view); }))
        used = after.size();
    }
    after.resize(used);
    for (const auto& stmt : after) {
      const auto mentioned = VarsMentioned(stmt);
      if (std::ranges::any_of(dst_views, [&](const Var* view) { return mentioned.contains(view); })) return false;
    }
    return OnlyReads(tmp_views, after, program_);
  }

  // Puts each fill right after the view it fills.
  void InsertFills(std::vector<StmtPtr>& stmts) {
    for (auto fill = fills_.rbegin(); fill != fills_.rend(); ++fill)
      stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(fill->first) + 1, std::move(fill->second));
    fills_.clear();
  }

  const Program& program_;
  StmtPtr body_;  // the function's, where views of a destination are looked for
  std::vector<std::pair<size_t, StmtPtr>> fills_;  // of this sequence: the index of the view, its fill
};

}  // namespace

Pass FuseCreateAssembleToSlice() {
  return Pass("FuseCreateAssembleToSlice", {}, {}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (function->type() != FunctionType::Opaque && function->type() != FunctionType::Orchestration)
                    return function;
                  CreateAssembleFuser fuser(*program, function->body());
                  auto body = fuser.MutateStmt(function->body());
                  return body == function->body() ? function : function->WithBody(body);
                });
              });
}

}  // namespace pypto::passes
