#include "group_members.h"

#include <fmt/format.h>

#include "external_decl.h"
#include "pypto/ir/functor.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

std::vector<std::string> GroupMembers(const ir::Function& group) {
  struct Finder final : ir::IRVisitor {
    std::vector<std::string> names;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!call->is_op_call()) names.push_back(call->callee());
      IRVisitor::VisitCall(call);
    }
  } finder;
  if (group.body()) finder.VisitStmt(group.body());
  return finder.names;
}

namespace {

// The group's first hand-written member and its first DSL member, when it has both.
struct MixedMembers {
  ir::FunctionPtr external;
  ir::FunctionPtr dsl;
};

MixedMembers FindMixedMembers(const ir::Function& group, const ir::Program& program) {
  MixedMembers found;
  for (const auto& name : GroupMembers(group)) {
    auto member = program.Find(name);
    if (!member) continue;
    auto& slot = IsExternal(member->attrs()) ? found.external : found.dsl;
    if (!slot) slot = member;
  }
  return found;
}

}  // namespace

ir::Result<bool> CheckGroupMembers(const ir::Program& program) {
  for (const auto& function : program.functions()) {
    if (function->type() != ir::FunctionType::Group) continue;
    auto [external, dsl] = FindMixedMembers(*function, program);
    if (!external || !dsl) continue;
    return MakeError(
        DiagnosticKind::Type,
        fmt::format("group '{}' mixes a hand-written kernel ('{}', external_source=) with a DSL kernel ('{}'): the "
                    "members of a group are all hand-written or all DSL, since the compiler wires the cross-core "
                    "hand-over between DSL members and a hand-written source cannot take part in it",
                    function->name(), external->name(), dsl->name()),
        function->span(),
        fmt::format("give '{}' an external_source= too (both members may name one source), or write '{}' in the DSL",
                    dsl->name(), external->name()));
  }
  return true;
}

}  // namespace pypto::frontend
