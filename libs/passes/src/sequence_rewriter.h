// An IRMutator for passes whose pattern spans several statements of one body (a create and the copy
// that follows it, a matmul and the moves feeding it): each statement sequence is rewritten as a
// whole, after its own statements, by RewriteSequence; the first error stops the rewriting.
#pragma once

#include <optional>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/functor.h"

namespace pypto::passes {

class SequenceRewriter : public ir::IRMutator {
 public:
  std::optional<ir::Diagnostic> error;

 protected:
  // Rewrites the statements of one sequence in place; a null entry is dropped. Returns whether
  // anything changed (nothing is kept once `error` is set).
  virtual bool RewriteSequence(std::vector<ir::StmtPtr>& stmts) = 0;

  ir::StmtPtr MutateSeq(const std::shared_ptr<const ir::SeqStmts>& seq) final {
    ir::StmtPtr mutated = ir::IRMutator::MutateSeq(seq);
    const auto* current = mutated->As<ir::SeqStmts>();
    if (!current || error) return mutated;
    std::vector<ir::StmtPtr> stmts = current->stmts();
    if (!RewriteSequence(stmts) || error) return mutated;
    std::erase(stmts, nullptr);
    return std::make_shared<ir::SeqStmts>(std::move(stmts), seq->span());
  }
};

}  // namespace pypto::passes
