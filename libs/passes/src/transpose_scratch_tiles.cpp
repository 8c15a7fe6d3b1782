// TransposeScratchTiles: PTO's transpose (pto.ttrans ins(src, tmp) outs(dst)) moves the tile through
// a scratch tile shaped and typed like its source, which the device needs whether or not the program
// names one (pl.transpose's tmp_tile). A tile.transpose without one gets it here, as a `tile.create`
// in the source's buffer just before the transpose, so that AllocateMemoryAddr places it among the
// kernel's tiles: its bytes are taken only while the transpose runs and are reused around it, and a
// kernel with no room for it at that point does not fit, the error naming the scratch tile, as it
// would not on the device. Left to backend-ptoas, the scratch could only go past every tile the
// kernel ever holds, which a kernel using most of UB at some other point does not have.
//
// A transpose of an N-d tile (one FlattenTileNdTo2D left as it is) is left alone: it has no PTO form.
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"
#include "index_exprs.h"
#include "mutate_body.h"
#include "splicing_mutator.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

class ScratchForTransposes final : public SplicingMutator {
 public:
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto* call = stmt->value()->As<Call>();
    if (error_ || !call || !call->is_op_call() || call->target_name() != "tile.transpose" || call->args().size() != 1)
      return stmt;
    const auto* source = call->args()[0]->type()->As<TileType>();
    if (!source || source->shape().size() != 2) return stmt;
    auto create = OpRegistry::Get().CreateCall(
        "tile.create", {IndexTuple(source->shape(), call->span())},
        {{"dtype", source->dtype()}, {"target_memory", source->memory_space()}}, call->span());
    if (!create) return Fail(create.error(), stmt);
    auto tmp = std::make_shared<Var>(stmt->var()->name_hint() + "_tmp", (*create)->type(), stmt->span());
    auto transpose =
        OpRegistry::Get().CreateCall("tile.transpose", {call->args()[0], tmp}, call->kwargs(), call->span());
    if (!transpose) return Fail(transpose.error(), stmt);
    return std::make_shared<SeqStmts>(
        std::vector<StmtPtr>{std::make_shared<AssignStmt>(tmp, *create, stmt->span()),
                             std::make_shared<AssignStmt>(stmt->var(), *transpose, stmt->span())},
        stmt->span());
  }

 private:
  StmtPtr Fail(const Diagnostic& error, const StmtPtr& stmt) {
    error_ = error;
    return stmt;
  }

  std::optional<Diagnostic> error_;
};

}  // namespace

Pass TransposeScratchTiles() {
  // After ExpandMixedKernel, so a vector kernel split between the two AIV lanes sizes the scratch
  // from its halved source; before AllocateMemoryAddr, which places it.
  return Pass("TransposeScratchTiles", {IRProperty::NoNestedCalls, IRProperty::CoreTypesResolved}, {}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (!IsKernel(function->type())) return function;
                  ScratchForTransposes scratch;
                  return MutateBody(function, scratch);
                });
              });
}

}  // namespace pypto::passes
