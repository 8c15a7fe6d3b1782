// OutlineIncoreScopes: each `with pl.at(level=CORE_GROUP)` region becomes a kernel function, and an
// Opaque function that submits kernels (outlined ones, or kernels the program defines directly)
// becomes the Orchestration function. A region may sit in orchestration loops (`for r in
// pl.parallel(...)`) or in the branches of an orchestration if: it is still outlined once, and its
// call stays where the region was.
//
// The kernel's parameters are the region's live-ins in first-use order: tensors, and the
// orchestration scalars it reads (loop variables, values computed in the orchestration), which are
// passed by value. A tensor the region only
// writes through a store is an Out parameter, one it also reads is InOut; the kernel returns its
// Out/InOut parameters, so the data flow stays explicit at the call site.
//
// An orchestration `s = pl.read(t, [i])` or tensor slice used by regions is read by each region
// instead (sink_tensor_reads.h).
//
// A tile computed in a region and read after it (by a later region) is handed over through global
// memory (tile_handoff.h): the orchestration creates a tensor for it, the producing kernel stores
// the whole tile into it as an extra Out parameter, and each consuming kernel loads it back first.
#include <fmt/format.h>

#include <range/v3/view/enumerate.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/tensor_aliases.h"
#include "pypto/passes/passes.h"
#include "sink_tensor_reads.h"
#include "tile_handoff.h"
#include "vars_read.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// The variables a run of statements reads, in first-use order.
std::vector<VarPtr> UsesOf(const std::vector<StmtPtr>& stmts) { return VarsRead(std::make_shared<SeqStmts>(stmts)); }

// How a region treats each tensor it captures, and which of its own values alias those tensors
// (store results, and the kernel loops and branches that carry a tensor they only update in place).
struct RegionAccess {
  explicit RegionAccess(const std::vector<StmtPtr>& body) : aliases(std::make_shared<SeqStmts>(body)) {}

  std::unordered_map<const Var*, bool> read, written;
  TensorAliases aliases;

  const Var* Root(const Var* var) const { return aliases.Root(var); }
};

class AccessAnalyzer final : public IRVisitor {
 public:
  explicit AccessAnalyzer(const std::vector<StmtPtr>& body) : access(body) {}

  RegionAccess access;

 protected:
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    for (size_t i = 0; i < call->args().size(); ++i) {
      const auto* var = call->args()[i]->As<Var>();
      if (!var) {
        VisitExpr(call->args()[i]);
        continue;
      }
      bool is_write = call->is_op_call() && call->op()->writes_arg == static_cast<int>(i);
      (is_write ? access.written : access.read)[access.Root(var)] = true;
      if (is_write && AccumulatesIntoWrittenArg(*call)) access.read[access.Root(var)] = true;  // += reads it
    }
  }
};

ParamDirection DirectionOf(const RegionAccess& access, const Var* var) {
  bool read = access.read.contains(var), written = access.written.contains(var);
  if (written && read) return ParamDirection::InOut;
  return written ? ParamDirection::Out : ParamDirection::In;
}

struct Outlined {
  FunctionPtr kernel;
  std::vector<StmtPtr> call_site;                       // what replaces the scope
  std::unordered_map<const Var*, VarPtr> later_renames;  // for statements after the scope
};

// A pl.spmd scope's kernel is launched on its blocks (scope.block_num(), the call's core_num).
Call::Kwargs LaunchKwargs(const InCoreScopeStmt& scope) {
  if (scope.block_num() && scope.sync_start()) return {{kSyncStartKwarg, true}};
  return {};
}

// `handed_off` maps each tile an earlier region handed over to the orchestration tensor holding it;
// this region adds the tiles it hands over.
Result<Outlined> OutlineScope(const InCoreScopeStmt& scope, const std::string& name,
                              const std::vector<StmtPtr>& rest, VarMap& handed_off) {
  auto body = FlattenStmts(scope.body());
  for (const auto& stmt : body)
    if (stmt->Is<InCoreScopeStmt>())
      return MakeError(DiagnosticKind::Syntax, "pl.at(level=CORE_GROUP) scopes cannot be nested", stmt->span());
  auto defs = VarsDefined(body);
  AccessAnalyzer analyzer(body);
  for (const auto& stmt : body) analyzer.VisitStmt(stmt);
  const RegionAccess& access = analyzer.access;

  // Live-ins become parameters (fresh variables, so the kernel owns its own bindings).
  std::vector<VarPtr> params, args;
  std::vector<ParamDirection> directions;
  std::unordered_map<const Var*, VarPtr> to_param;
  auto add_param = [&](const VarPtr& var, ParamDirection direction) -> VarPtr {
    if (auto found = to_param.find(var.get()); found != to_param.end()) return found->second;
    auto param = std::make_shared<Var>(var->name_hint(), var->type(), var->span());
    to_param[var.get()] = param;
    params.push_back(param);
    args.push_back(var);
    directions.push_back(direction);
    return param;
  };
  std::vector<StmtPtr> reloads;  // tiles handed over by earlier regions, loaded back first
  VarMap reloaded;
  for (const auto& var : UsesOf(body)) {
    if (defs.contains(var.get())) continue;
    if (auto tensor = handed_off.find(var.get()); tensor != handed_off.end()) {
      auto reload = ReloadWholeTile(var->name_hint(), add_param(tensor->second, ParamDirection::In), scope.span());
      if (!reload) return pypto::unexpected(reload.error());
      reloads.push_back(*reload);
      reloaded[var.get()] = std::static_pointer_cast<const Var>((*reload)->As<AssignStmt>()->var());
      continue;
    }
    if (var->type()->As<TileType>())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("tile '{}' is defined outside the pl.at scope; tiles live on one core, "
                                   "so load it inside the scope",
                                   var->name_hint()),
                       scope.span());
    add_param(var, DirectionOf(access, var.get()));
  }

  // Values computed inside leave the region as the tensors their stores wrote, or, for a tile, as
  // a tensor created to hand it over.
  std::vector<VarPtr> escaping;
  std::vector<StmtPtr> creates, handoff_stores;
  std::vector<std::pair<const Var*, VarPtr>> handed_over;  // tile -> its orchestration tensor
  for (const auto& var : UsesOf(rest)) {
    if (!defs.contains(var.get())) continue;
    const Var* root = access.Root(var.get());
    if (root == var.get() && var->type()->As<TileType>()) {
      auto tensor = HandoffTensorFor(*var);
      auto create = CreateHandoffTensor(tensor, scope.span());
      if (!create) return pypto::unexpected(create.error());
      auto store = StoreWholeTile(var, add_param(tensor, ParamDirection::Out), scope.span());
      if (!store) return pypto::unexpected(store.error());
      creates.push_back(*create);
      handoff_stores.push_back(*store);
      handed_over.emplace_back(var.get(), tensor);
      continue;
    }
    if (root == var.get())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' is computed inside the pl.at scope and used after it; only tensors "
                                   "written with pl.store leave a kernel",
                                   var->name_hint()),
                       var->span());
    escaping.push_back(var);
  }

  std::vector<ExprPtr> returns;
  std::vector<TypePtr> return_types;
  std::vector<size_t> output_indices;
  for (auto [i, param] : ranges::views::enumerate(params)) {
    if (directions[i] == ParamDirection::In) continue;
    returns.push_back(param);
    return_types.push_back(param->type());
    output_indices.push_back(i);
  }
  VarMap kernel_map = to_param;
  kernel_map.insert(reloaded.begin(), reloaded.end());
  body.insert(body.end(), handoff_stores.begin(), handoff_stores.end());
  auto substituted = SubstituteAndRetype(body, kernel_map);
  if (!substituted) return pypto::unexpected(substituted.error());
  std::vector<StmtPtr> kernel_stmts = reloads;
  kernel_stmts.insert(kernel_stmts.end(), substituted->begin(), substituted->end());
  kernel_stmts.push_back(std::make_shared<ReturnStmt>(returns, scope.span()));
  auto kernel = std::make_shared<Function>(name, params, directions, return_types,
                                           std::make_shared<SeqStmts>(kernel_stmts, scope.span()),
                                           FunctionType::InCore, std::map<std::string, AttrValue>{}, scope.span());

  Outlined result{.kernel = kernel, .call_site = creates, .later_renames = {}};
  std::vector<ExprPtr> call_args(args.begin(), args.end());
  if (output_indices.size() == 1) {
    // One output: bind it to a new version of the tensor and use that version from here on.
    const auto& tensor = args[output_indices[0]];
    auto call = std::make_shared<Call>(name, call_args, return_types[0], scope.span(), std::vector<ArgDirection>{},
                                       LaunchKwargs(scope), scope.order(), scope.block_num());
    auto version = std::make_shared<Var>(tensor->name_hint(), tensor->type(), scope.span());
    result.call_site.push_back(std::make_shared<AssignStmt>(version, call, scope.span()));
    result.later_renames[tensor.get()] = version;
    for (const auto& var : escaping) result.later_renames[var.get()] = version;
    for (auto& [tile, holder] : handed_over)
      if (holder == tensor) holder = version;
  } else {
    TypePtr type = return_types.empty() ? TypePtr(std::make_shared<UnknownType>())
                                        : TypePtr(std::make_shared<TupleType>(return_types));
    result.call_site.push_back(
        std::make_shared<EvalStmt>(std::make_shared<Call>(name, call_args, type, scope.span(),
                                                          std::vector<ArgDirection>{}, LaunchKwargs(scope),
                                                          scope.order(), scope.block_num()),
                                   scope.span()));
    // The kernel wrote the tensors in place: later uses of a store result read the tensor itself.
    for (const auto& var : escaping) {
      for (const auto& arg : args)
        if (arg.get() == access.Root(var.get())) result.later_renames[var.get()] = arg;
    }
  }
  for (const auto& [tile, tensor] : handed_over) handed_off[tile] = tensor;
  return result;
}

bool ContainsScope(const StmtPtr& stmt) {
  struct Finder final : IRVisitor {
    bool found = false;
    void VisitStmt(const StmtPtr& s) override {
      found |= s->Is<InCoreScopeStmt>();
      if (!found) IRVisitor::VisitStmt(s);
    }
  } finder;
  finder.VisitStmt(stmt);
  return finder.found;
}

// Whether a statement calls a kernel function of the program (one written as its own function, such as
// a `@pl.jit.incore` kernel, rather than outlined from a scope).
bool CallsKernel(const StmtPtr& stmt, const Program& program) {
  struct Finder final : IRVisitor {
    const Program& program;
    bool found = false;
    explicit Finder(const Program& p) : program(p) {}
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      if (!call->is_op_call())
        if (auto callee = program.Find(call->callee());
            callee && (IsKernel(callee->type()) || callee->type() == FunctionType::Group))
          found = true;  // a Group is submitted as one mixed task
      if (!found) IRVisitor::VisitCall(call);
    }
  } finder(program);
  finder.VisitStmt(stmt);
  return finder.found;
}

// Outlines the scopes of one function, walking into the orchestration loops and ifs that hold them. A scope
// inside loops is outlined once; its call stays in the loop, so it runs once per iteration, and the
// loop variables (and any other orchestration scalar) it reads become scalar parameters.
class FunctionOutliner {
 public:
  FunctionOutliner(const Function& function, std::set<std::string>& taken) : function_(function), taken_(taken) {}

  std::vector<FunctionPtr> kernels;

  Result<StmtPtr> OutlineBranches(const IfStmt& branch, const std::vector<StmtPtr>& after, const ForStmt* loop) {
    auto then_body = OutlineBody(FlattenStmts(branch.then_body()), after, loop);
    if (!then_body) return pypto::unexpected(then_body.error());
    StmtPtr else_body = branch.else_body();
    if (else_body) {
      auto outlined = OutlineBody(FlattenStmts(else_body), after, loop);
      if (!outlined) return pypto::unexpected(outlined.error());
      else_body = std::make_shared<SeqStmts>(*outlined, else_body->span());
    }
    return StmtPtr(std::make_shared<IfStmt>(branch.condition(),
                                            std::make_shared<SeqStmts>(*then_body, branch.then_body()->span()),
                                            else_body, branch.return_vars(), branch.span()));
  }

  // `stmts` is one body; `after` are the statements that run after it in the enclosing bodies (empty
  // for the function body itself), `loop` the innermost loop around it. `after_sees_body`: the body is
  // a runtime scope's, whose values the statements after it still see.
  Result<std::vector<StmtPtr>> OutlineBody(const std::vector<StmtPtr>& stmts, const std::vector<StmtPtr>& after,
                                           const ForStmt* loop, bool after_sees_body = false) {
    std::vector<StmtPtr> new_body;
    std::unordered_map<const Var*, VarPtr> renames;
    for (size_t i = 0; i < stmts.size(); ++i) {
      auto stmt = renames.empty() ? stmts[i] : SubstituteInSequence(stmts[i], renames);
      if (const auto* inner = stmt->As<ForStmt>(); inner && ContainsScope(stmt)) {
        std::vector<StmtPtr> after_loop(stmts.begin() + i + 1, stmts.end());
        after_loop.insert(after_loop.end(), after.begin(), after.end());
        auto body = OutlineBody(FlattenStmts(inner->body()), after_loop, inner);
        if (!body) return pypto::unexpected(body.error());
        new_body.push_back(std::make_shared<ForStmt>(inner->loop_var(), inner->start(), inner->stop(), inner->step(),
                                                     inner->iter_args(),
                                                     std::make_shared<SeqStmts>(*body, inner->body()->span()),
                                                     inner->return_vars(), inner->kind(), inner->span()));
        continue;
      }
      // A runtime scope (pl.manual_scope) keeps its place; the pl.at scopes inside it are outlined there.
      if (const auto* runtime = stmt->As<RuntimeScopeStmt>(); runtime && ContainsScope(stmt)) {
        std::vector<StmtPtr> after_scope(stmts.begin() + i + 1, stmts.end());
        after_scope.insert(after_scope.end(), after.begin(), after.end());
        auto body = OutlineBody(FlattenStmts(runtime->body()), after_scope, loop, true);
        if (!body) return pypto::unexpected(body.error());
        new_body.push_back(std::make_shared<RuntimeScopeStmt>(
            runtime->manual(), std::make_shared<SeqStmts>(*body, runtime->body()->span()), runtime->span()));
        continue;
      }
      // An orchestration if keeps its place; the pl.at scopes of its branches are outlined there, and
      // run at most once each time the if does.
      if (const auto* branch = stmt->As<IfStmt>(); branch && ContainsScope(stmt)) {
        std::vector<StmtPtr> after_if(stmts.begin() + i + 1, stmts.end());
        after_if.insert(after_if.end(), after.begin(), after.end());
        auto outlined = OutlineBranches(*branch, after_if, loop);
        if (!outlined) return pypto::unexpected(outlined.error());
        new_body.push_back(*outlined);
        continue;
      }
      const auto* scope = stmt->As<InCoreScopeStmt>();
      if (!scope) {
        if (ContainsScope(stmt))
          return MakeError(DiagnosticKind::Syntax,
                           "a pl.at scope is supported at the top of the orchestration or in its loops, not here",
                           stmt->span());
        new_body.push_back(stmt);
        continue;
      }
      // A name_hint equal to the enclosing function's name (upstream's examples use that) would give
      // two functions one name; the kernel takes the suffix then.
      std::string name = UniqueName(scope->name_hint().empty() ? fmt::format("{}_incore_{}", function_.name(), index_++)
                                    : scope->name_hint() == function_.name() ? fmt::format("{}_incore", scope->name_hint())
                                                                             : scope->name_hint());
      // A value the scope computes cannot outlive the loop around it: the loop runs the kernel many times.
      if (loop) {
        auto defs = VarsDefined(FlattenStmts(scope->body()));
        for (const auto& var : UsesOf(after))
          if (defs.contains(var.get()))
            return MakeError(DiagnosticKind::Type,
                             fmt::format("'{}' is computed inside the pl.at scope in the loop over '{}' and used after "
                                         "the loop; only tensors written with pl.store leave a kernel, and they keep "
                                         "their own names",
                                         var->name_hint(), loop->loop_var()->name_hint()),
                             var->span());
      }
      // Uses after the scope in this body, seen through the renames so far.
      std::vector<StmtPtr> rest(stmts.begin() + i + 1, stmts.end());
      if (after_sees_body) rest.insert(rest.end(), after.begin(), after.end());
      auto outlined = OutlineScope(*scope, name, rest, handed_off_);
      if (!outlined) return pypto::unexpected(outlined.error());
      kernels.push_back(outlined->kernel);
      new_body.insert(new_body.end(), outlined->call_site.begin(), outlined->call_site.end());
      // A new version of a tensor names it for the rest of this body only; after a loop, the tensor's
      // own name still refers to the same buffer.
      for (auto& [from, to] : outlined->later_renames) renames[from] = to;
    }
    return new_body;
  }

 private:
  const Function& function_;
  // Two scopes with one name_hint (an inlined helper used twice, or two helpers that both say
  // "kv_score_proj") become two kernels, the later one numbered: `kv_score_proj_1`.
  std::string UniqueName(const std::string& wanted) {
    std::string name = wanted;
    for (int n = 1; taken_.contains(name); ++n) name = fmt::format("{}_{}", wanted, n);
    taken_.insert(name);
    return name;
  }

  std::set<std::string>& taken_;  // function names of the program, and of the kernels outlined so far
  int index_ = 0;
  VarMap handed_off_;  // tiles handed over by the regions outlined so far
};

Result<std::vector<FunctionPtr>> OutlineFunction(const FunctionPtr& function, const Program& program,
                                                 std::set<std::string>& taken) {
  if (IsKernel(function->type())) return std::vector<FunctionPtr>{function};
  auto body = SinkTensorReads(function->body());
  if (!body) return pypto::unexpected(body.error());
  FunctionOutliner outliner(*function, taken);
  auto new_body = outliner.OutlineBody(FlattenStmts(*body), {}, nullptr);
  if (!new_body) return pypto::unexpected(new_body.error());
  std::vector<FunctionPtr> result = std::move(outliner.kernels);
  // An Opaque function that submits kernels, outlined here or written as functions of their own, is
  // the orchestration.
  auto type = function->type() == FunctionType::Opaque && (!result.empty() || CallsKernel(function->body(), program))
                  ? FunctionType::Orchestration
                  : function->type();
  // Return types follow the renamed return values.
  result.push_back(
      function->WithBody(std::make_shared<SeqStmts>(*new_body, function->body()->span()))->WithType(type));
  return result;
}

}  // namespace

Pass OutlineIncoreScopes() {
  // SSAForm: a scope's inputs are the variables it reads that are defined outside it, and its
  // outputs those it defines that are read after it; a variable defined twice would be both.
  return Pass("OutlineIncoreScopes", {IRProperty::SSAForm, IRProperty::StructuredCtrlFlow},
              {IRProperty::NoInCoreScopes}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                std::vector<FunctionPtr> functions;
                std::set<std::string> taken;
                for (const auto& function : program->functions()) taken.insert(function->name());
                for (const auto& function : program->functions()) {
                  auto outlined = OutlineFunction(function, *program, taken);
                  if (!outlined) return pypto::unexpected(outlined.error());
                  functions.insert(functions.end(), outlined->begin(), outlined->end());
                }
                return std::make_shared<Program>(program->name(), functions, program->entry_name());
              });
}

}  // namespace pypto::passes
