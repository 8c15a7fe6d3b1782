// FunctionParser: tensors in orchestration code: slices passed to functions as views, the slice
// loads nothing reads, and tensors updated in place through the calls that return them.
#include "function_parser.h"

#include <fmt/format.h>

#include <variant>

#include "affine_form.h"

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/tensor_aliases.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// A tensor slice in orchestration code (`qi = pl.slice(query, [16, 128], [row, 0])`) is a load, which
// OutlineIncoreScopes moves into the kernel scopes that read it; remembered here in case it is
// passed to a function taking a tensor instead (SliceAsView).
void FunctionParser::RecordOrchestrationSlice(const ir::Var& var, const ir::ExprPtr& value) {
  const auto* load = value->As<ir::Call>();
  if (kernel_depth_ == 0 && load && load->is_op_call() && load->op()->name == "tile.load" &&
      load->args()[0]->type()->As<ir::TensorType>())
    orchestration_slices_[&var] = value;
}

// The loads of orchestration slices that were only passed to functions (as views, SliceAsView):
// nothing reads them, so they are dropped rather than left for the passes to sink nowhere.
ir::StmtPtr FunctionParser::DropUnreadSliceLoads(const ir::StmtPtr& body) const {
  if (viewed_slices_.empty()) return body;
  struct Reads final : ir::IRVisitor {
    std::unordered_set<const ir::Var*> vars;
    void VisitVar(const std::shared_ptr<const ir::Var>& var) override { vars.insert(var.get()); }
  } reads;
  reads.VisitStmt(body);
  struct Dropper final : ir::IRMutator {
    std::unordered_set<const ir::Var*> unread;
    ir::StmtPtr MutateAssign(const std::shared_ptr<const ir::AssignStmt>& stmt) override {
      if (unread.contains(stmt->var().get()))
        return std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}, stmt->span());
      return ir::IRMutator::MutateAssign(stmt);
    }
    ir::StmtPtr MutateSeq(const std::shared_ptr<const ir::SeqStmts>& seq) override {
      std::vector<ir::StmtPtr> kept;
      bool changed = false;
      for (const auto& child : seq->stmts()) {
        auto mutated = MutateStmt(child);
        changed |= mutated != child;
        const auto* dropped = mutated->As<ir::SeqStmts>();
        if (mutated != child && dropped && dropped->stmts().empty()) continue;
        kept.push_back(std::move(mutated));
      }
      return changed ? std::make_shared<ir::SeqStmts>(std::move(kept), seq->span()) : seq;
    }
  } dropper;
  for (const ir::Var* slice : viewed_slices_)
    if (!reads.vars.contains(slice)) dropper.unread.insert(slice);
  return dropper.unread.empty() ? body : dropper.MutateStmt(body);
}

// The ops that view a whole tensor in orchestration code (the same buffer, another shape or axis order).
bool FunctionParser::IsViewOfWhole(const std::string& name) {
  return name == "pl.reshape" || name == "pl.tensor.reshape" || name == "pl.transpose" ||
         name == "pl.tensor.transpose";
}

// An orchestration slice whose window runs past the end of the tensor's outermost dimension
// (`pl.slice(block_table, [64], [row])` of a 32-entry table, of which the kernel reads only the
// entries it counts) cannot be a load, but it is a valid view, as the runtime's view() allows:
// the kernel is checked when it touches an element past the buffer. `load` is the load the slice
// was rewritten to; nothing when a view does not type-check either (the load's error stands).
std::optional<ir::ExprPtr> FunctionParser::OverhangingSliceView(py::handle load) {
  if (py::len(load.attr("keywords")) != 0 || py::len(load.attr("args")) != 3) return std::nullopt;
  py::list args = load.attr("args");
  auto tensor = ParseExpr(args[0]);
  auto offsets = ParseArgValue(args[1]);
  auto shape = ParseArgValue(args[2]);
  if (!tensor || !offsets || !shape) return std::nullopt;
  const auto* offsets_expr = std::get_if<ir::ExprPtr>(&*offsets);
  const auto* shape_expr = std::get_if<ir::ExprPtr>(&*shape);
  if (!offsets_expr || !shape_expr) return std::nullopt;
  auto view = ir::OpRegistry::Get().CreateCall("tensor.slice", {*tensor, *shape_expr, *offsets_expr}, {},
                                               map_.SpanOf(load));
  if (!view) return std::nullopt;
  return *view;
}

// An orchestration slice passed to a function's tensor parameter is a view of that window of the
// tensor (tensor.slice, the runtime's view()), defined just before the call: the kernel reads and
// writes the tensor's elements in place.
// A slice written in the call itself (`f(src[0:32], c)`) is a view named after its tensor.
ir::Result<ir::ExprPtr> FunctionParser::SliceAsView(const ir::ExprPtr& arg) {
  const auto* var = arg->As<ir::Var>();
  auto it = var ? orchestration_slices_.find(var) : orchestration_slices_.end();
  const ir::Call* load = it != orchestration_slices_.end() ? it->second->As<ir::Call>() : nullptr;
  if (!load && !var && kernel_depth_ == 0) {
    load = arg->As<ir::Call>();
    if (!load || !load->is_op_call() || load->op()->name != "tile.load" ||
        !load->args()[0]->type()->As<ir::TensorType>())
      load = nullptr;
  }
  if (!load) return arg;
  auto view = ir::OpRegistry::Get().CreateCall("tensor.slice", {load->args()[0], load->args()[2], load->args()[1]},
                                               {}, load->span());
  if (!view) return pypto::unexpected(view.error());
  const auto* source = load->args()[0]->As<ir::Var>();
  const std::string name = var ? var->name_hint() : (source ? source->name_hint() : "tensor") + "_view";
  auto view_var = std::make_shared<ir::Var>(name, (*view)->type(), var ? var->span() : load->span());
  prelude_.push_back(std::make_shared<ir::AssignStmt>(view_var, *view, load->span()));
  if (var) viewed_slices_.insert(var);
  return ir::ExprPtr(view_var);
}

// `out = self.k(x, out)`: a function of the program returns its output parameter, so the result is
// the very tensor passed for it (when the function has one output of the result's type). An
// orchestration loop doing this updates `out` in place, as one whose kernel scope stores into it.
void FunctionParser::RecordReturnedArg(const ir::Var& result, const ir::Expr& value) {
  const auto* call = value.As<ir::Call>();
  if (!call || call->is_op_call() || !program_.methods || !result.type()->As<ir::TensorType>()) return;
  auto callee = program_.methods->find(call->callee());
  if (callee == program_.methods->end()) return;
  const ir::Var* returned = nullptr;
  for (size_t i = 0; i < callee->second.directions.size() && i < call->args().size(); ++i) {
    if (callee->second.directions[i] == ir::ParamDirection::In) continue;
    const auto* arg = call->args()[i]->As<ir::Var>();
    if (returned || !arg || !arg->type()->equals(*result.type())) return;  // not exactly one such output
    returned = arg;
  }
  if (returned) returned_args_[&result] = returned;
}

// Whether `value` is `tensor` updated in place: through stores (`aliases`) and through calls that
// return the tensor passed to them.
bool FunctionParser::IsInPlaceUpdateOf(const ir::Var* value, const ir::Var* tensor,
                                       const ir::TensorAliases& aliases) const {
  return InPlaceRoot(value, aliases) == InPlaceRoot(tensor, aliases);
}

// The tensor `value` names once in-place updates are seen through: stores and assembles
// (`aliases`), and calls of the program's functions that return the tensor passed for their output.
const ir::Var* FunctionParser::InPlaceRoot(const ir::Var* value, const ir::TensorAliases& aliases) const {
  for (const ir::Var* var = aliases.Root(value);; var = aliases.Root(var)) {
    auto it = returned_args_.find(var);
    if (it == returned_args_.end()) return var;
    var = it->second;
  }
}

// `t[region] = src` in orchestration code is upstream's `t = tensor.assemble(t, src, offsets)`: a copy
// of src into that window of t. It becomes a kernel of its own (KernelScopeAround), where the
// assignment is a store of src (a tensor is loaded whole) into the window. When src is a slice of t
// at that very window (`w = pl.slice(t, ...)`, which a call wrote through, assigned back), the data
// is already there and nothing is copied, as upstream's orchestration codegen skips an assemble
// whose source is the target's own view. A target that is not a tensor or an orchestration slice
// keeps the subscript's own error.
ir::Result<ir::StmtPtr> FunctionParser::ParseOrchestrationSliceAssign(py::handle stmt, py::handle target) {
  py::handle base = target.attr("value");
  auto it = IsNode(base, "Name") ? env_.find(base.attr("id").cast<std::string>()) : env_.end();
  if (it == env_.end() ||
      !(it->second->type()->As<ir::TensorType>() || orchestration_slices_.contains(it->second.get())))
    return ParseSliceAssign(stmt, target);
  if (WritesSliceBackInPlace(stmt, target)) return Seq({}, map_.SpanOf(stmt));
  return ParseWith(KernelScopeAround(stmt));
}

// Whether `t[region] = w` assigns w, a slice orchestration code took of t at that region, back into it.
bool FunctionParser::WritesSliceBackInPlace(py::handle stmt, py::handle target) {
  const ir::Var* slice = OrchestrationSliceNamed(stmt.attr("value"));
  if (!slice) return false;
  auto region = ParseRegion(target, /*for_load=*/true);
  return region && region->dropped.empty() && IsSliceAt(*slice, region->source, region->offsets, &region->shape);
}

// `t = pl.assemble(t, w, offsets)` in orchestration code where w is the slice of t at those offsets
// (written through by the calls it was passed to): nothing to copy, and the name keeps meaning t.
bool FunctionParser::AssemblesSliceBackInPlace(py::handle stmt) {
  if (kernel_depth_ > 0 || !IsNode(stmt, "Assign") || py::len(stmt.attr("targets")) != 1 ||
      !IsNode(stmt.attr("value"), "Call"))
    return false;
  py::handle call = stmt.attr("value");
  const std::string name = DottedName(call.attr("func"));
  py::list args = call.attr("args");
  py::handle target = py::list(stmt.attr("targets"))[0];
  if ((name != "pl.assemble" && name != "pl.tensor.assemble") || py::len(args) != 3 ||
      py::len(call.attr("keywords")) != 0 || !IsNode(target, "Name") ||
      !(IsNode(args[2], "List") || IsNode(args[2], "Tuple")))
    return false;
  const ir::Var* slice = OrchestrationSliceNamed(args[1]);
  auto tensor = slice ? ParseExpr(args[0]) : ir::Result<ir::ExprPtr>(nullptr);
  if (!slice || !tensor || !(*tensor)->As<ir::Var>()) return false;
  std::vector<ir::ExprPtr> offsets;
  for (auto element : args[2].attr("elts")) {
    auto offset = ParseExpr(element);
    if (!offset) return false;
    offsets.push_back(*offset);
  }
  if (!IsSliceAt(*slice, *tensor, offsets, nullptr)) return false;
  const std::string bound = target.attr("id").cast<std::string>();
  env_[bound] = std::static_pointer_cast<const ir::Var>(*tensor);
  unavailable_.erase(bound);
  return true;
}

// The orchestration slice the name `node` holds; null for anything else.
const ir::Var* FunctionParser::OrchestrationSliceNamed(py::handle node) const {
  auto it = IsNode(node, "Name") ? env_.find(node.attr("id").cast<std::string>()) : env_.end();
  return it != env_.end() && orchestration_slices_.contains(it->second.get()) ? it->second.get() : nullptr;
}

// Whether `slice` was taken of `tensor` at `offsets` (and, when given, with `shape`).
bool FunctionParser::IsSliceAt(const ir::Var& slice, const ir::ExprPtr& tensor, const std::vector<ir::ExprPtr>& offsets,
                               const ir::Shape* shape) const {
  const auto* load = orchestration_slices_.at(&slice)->As<ir::Call>();
  const auto* taken_at = load->args()[1]->As<ir::TupleLiteral>();
  const auto* extents = load->args()[2]->As<ir::TupleLiteral>();
  if (load->args()[0] != tensor || !taken_at || !extents || taken_at->elements().size() != offsets.size() ||
      (shape && extents->elements().size() != shape->size()))
    return false;
  auto scalar_value = [this](const ir::Var& var) { return ScalarValue(var); };
  for (size_t d = 0; d < offsets.size(); ++d) {
    if (ConstantDifference(offsets[d], taken_at->elements()[d], scalar_value) != 0) return false;
    if (shape && ir::AsConstInt(extents->elements()[d]) != (*shape)[d]) return false;
  }
  return true;
}

ir::Result<ir::ExprPtr> FunctionParser::StaleSliceRead(const ir::Var& slice, const ir::Span& span) const {
  const auto* load = orchestration_slices_.at(&slice)->As<ir::Call>();
  const auto* tensor = load->args()[0]->As<ir::Var>();
  const std::string source = tensor ? tensor->name_hint() : "its tensor";
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' is read after this kernel wrote into it; the slice is loaded once when the "
                               "kernel starts, so this read would not see the write, which went to '{}'",
                               slice.name_hint(), source),
                   span, fmt::format("keep the tile you assigned in a variable and read that, or slice '{}' again",
                                     source));
}

}  // namespace pypto::frontend
