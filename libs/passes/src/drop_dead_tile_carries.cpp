#include "drop_dead_tile_carries.h"

#include <optional>
#include <unordered_map>
#include <vector>

#include "pypto/ir/functor.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

using ReadCounts = std::unordered_map<const Var*, int>;

// How often each variable is read, anywhere in the body (definitions are not reads).
class ReadCounter final : public IRVisitor {
 public:
  ReadCounts reads;

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override { ++reads[var.get()]; }
};

class JumpFinder final : public IRVisitor {
 public:
  bool found = false;

 protected:
  void VisitJump(const std::shared_ptr<const JumpStmt>&) override { found = true; }
};

bool HoldsJumps(const StmtPtr& body) {
  JumpFinder finder;
  finder.VisitStmt(body);
  return finder.found;
}

bool IsTile(const Var& var) { return var.type()->As<TileType>() != nullptr; }

int ReadsOf(const ReadCounts& reads, const Var& var) {
  const auto found = reads.find(&var);
  return found == reads.end() ? 0 : found->second;
}

// `body` with its trailing yield keeping the values whose slot is kept; a yield left empty goes.
StmtPtr WithKeptYieldSlots(const StmtPtr& body, const std::vector<bool>& keep) {
  if (const auto* seq = body->As<SeqStmts>()) {
    if (seq->stmts().empty()) return body;
    std::vector<StmtPtr> stmts = seq->stmts();
    if (StmtPtr last = WithKeptYieldSlots(stmts.back(), keep))
      stmts.back() = last;
    else
      stmts.pop_back();
    return std::make_shared<SeqStmts>(std::move(stmts), seq->span());
  }
  const auto* yield = body->As<YieldStmt>();
  if (!yield) return body;
  std::vector<ExprPtr> values;
  for (size_t i = 0; i < yield->values().size(); ++i)
    if (keep[i]) values.push_back(yield->values()[i]);
  if (values.empty()) return nullptr;
  return std::make_shared<YieldStmt>(std::move(values), yield->span());
}

template <typename T>
std::vector<T> Kept(const std::vector<T>& items, const std::vector<bool>& keep) {
  std::vector<T> kept;
  for (size_t i = 0; i < items.size(); ++i)
    if (keep[i]) kept.push_back(items[i]);
  return kept;
}

// Drops, in one walk, the slots that are dead by the read counts taken before it.
class SlotDropper final : public IRMutator {
 public:
  explicit SlotDropper(const ReadCounts& reads) : reads_(reads) {}
  bool dropped = false;

 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    const auto loop = std::static_pointer_cast<const ForStmt>(IRMutator::MutateFor(stmt));
    const auto keep = LiveLoopSlots(*AsLoop(*loop));
    if (!keep) return loop;
    return std::make_shared<ForStmt>(loop->loop_var(), loop->start(), loop->stop(), loop->step(),
                                     Kept(loop->iter_args(), *keep), WithKeptYieldSlots(loop->body(), *keep),
                                     Kept(loop->return_vars(), *keep), loop->kind(), loop->span());
  }

  StmtPtr MutateWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    const auto loop = std::static_pointer_cast<const WhileStmt>(IRMutator::MutateWhile(stmt));
    const auto keep = LiveLoopSlots(*AsLoop(*loop));
    if (!keep) return loop;
    return std::make_shared<WhileStmt>(loop->condition(), Kept(loop->iter_args(), *keep),
                                       WithKeptYieldSlots(loop->body(), *keep), Kept(loop->return_vars(), *keep),
                                       loop->span());
  }

  StmtPtr MutateIf(const std::shared_ptr<const IfStmt>& stmt) override {
    const auto branch = std::static_pointer_cast<const IfStmt>(IRMutator::MutateIf(stmt));
    std::vector<bool> keep;
    for (const auto& result : branch->return_vars()) keep.push_back(!IsTile(*result) || ReadsOf(reads_, *result) > 0);
    if (!Drops(keep)) return branch;
    const StmtPtr else_body = branch->else_body() ? WithKeptYieldSlots(branch->else_body(), keep) : nullptr;
    return std::make_shared<IfStmt>(branch->condition(), WithKeptYieldSlots(branch->then_body(), keep), else_body,
                                    Kept(branch->return_vars(), keep), branch->span());
  }

 private:
  // Which slots of `loop` stay; nullopt when all do.
  std::optional<std::vector<bool>> LiveLoopSlots(const LoopView& loop) {
    if (loop.iter_args.empty() || HoldsJumps(loop.body)) return std::nullopt;
    const YieldStmt* yield = TrailingYield(loop.body);
    std::vector<bool> keep;
    for (size_t i = 0; i < loop.iter_args.size(); ++i) {
      const Var& carried = *loop.iter_args[i].var;
      const bool yields_itself = yield && i < yield->values().size() && yield->values()[i]->As<Var>() == &carried;
      const bool dead = IsTile(carried) && ReadsOf(reads_, *loop.return_vars[i]) == 0 &&
                        ReadsOf(reads_, carried) == (yields_itself ? 1 : 0);
      keep.push_back(!dead);
    }
    if (!Drops(keep)) return std::nullopt;
    return keep;
  }

  bool Drops(const std::vector<bool>& keep) {
    for (const bool kept : keep)
      if (!kept) return dropped = true;
    return false;
  }

  const ReadCounts& reads_;
};

}  // namespace

StmtPtr DropDeadTileCarries(const StmtPtr& body) {
  StmtPtr current = body;
  for (;;) {
    ReadCounter counter;
    counter.VisitStmt(current);
    SlotDropper dropper(counter.reads);
    StmtPtr next = dropper.MutateStmt(current);
    if (!dropper.dropped) return current;
    current = next;
  }
}

}  // namespace pypto::passes
