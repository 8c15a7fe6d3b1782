// An IRMutator whose statement rewrites may return several statements at once, as a SeqStmts: they
// join the enclosing sequence rather than nesting in it.
#pragma once

#include "pypto/ir/functor.h"

namespace pypto::passes {

class SplicingMutator : public ir::IRMutator {
 protected:
  ir::StmtPtr MutateSeq(const std::shared_ptr<const ir::SeqStmts>& stmt) override {
    std::vector<ir::StmtPtr> stmts;
    bool changed = false;
    for (const auto& child : stmt->stmts()) {
      auto mutated = MutateStmt(child);
      changed |= mutated != child;
      const auto* seq = mutated != child ? mutated->As<ir::SeqStmts>() : nullptr;
      if (seq) stmts.insert(stmts.end(), seq->stmts().begin(), seq->stmts().end());
      else stmts.push_back(std::move(mutated));
    }
    return changed ? std::make_shared<ir::SeqStmts>(std::move(stmts), stmt->span()) : stmt;
  }
};

}  // namespace pypto::passes
