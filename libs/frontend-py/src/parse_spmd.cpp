// FunctionParser: SPMD launches: `with pl.spmd(N)`, `for b in pl.spmd(N)` and pl.split_aiv regions.
#include "function_parser.h"

#include <fmt/format.h>

#include <algorithm>

#include "pypto/ir/op_registry.h"
#include "scope_optimizations.h"
#include "spmd_launch.h"
#include "spmd_submit.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// ---- SPMD launches -----------------------------------------------------------------------------
// `with pl.spmd(N):` around one kernel call launches that call on N blocks; around kernel code it
// is a kernel scope of its own (outlined like pl.at) launched on N blocks, each reading its index
// with pl.tile.get_block_idx(). `for b in pl.spmd(N):` is the latter with b as that index.

// A launch option that must be written True or False (`sync_start=`, `allow_early_resolve=`).
ir::Result<bool> FunctionParser::BoolOption(py::handle value, std::string_view what) {
  if (!IsNode(value, "Constant") || !py::isinstance<py::bool_>(value.attr("value")))
    return MakeError(DiagnosticKind::Type, fmt::format("{} must be True or False", what), map_.SpanOf(value));
  return value.attr("value").cast<bool>();
}

ir::Result<FunctionParser::SpmdLaunch> FunctionParser::ReadSpmdLaunch(py::handle call) {
  const ir::Span span = map_.SpanOf(call);
  if (kernel_depth_ > 0)
    return MakeError(DiagnosticKind::Syntax, "a pl.spmd launch cannot appear inside a kernel", span);
  py::handle count;
  py::list positional = call.attr("args");
  if (py::len(positional) > 1) return MakeError(DiagnosticKind::Syntax, "pl.spmd takes one core_num", span);
  if (py::len(positional) == 1) count = positional[0];
  SpmdLaunch launch;
  for (auto keyword : call.attr("keywords")) {
    std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    py::handle value = keyword.attr("value");
    if (key == "core_num" && !count) {
      count = value;
    } else if (key == "name_hint" && IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) {
      launch.name_hint = value.attr("value").cast<std::string>();
    } else if (key == "allow_early_resolve" || key == "sync_start") {
      auto flag = BoolOption(value, "pl.spmd " + key);
      if (!flag) return pypto::unexpected(flag.error());
      (key == "sync_start" ? launch.sync_start : launch.allow_early_resolve) = *flag;
    } else if (key == "optimizations") {
      // Checked, not recorded: the hints only tune a device's overlap (scope_optimizations.cpp).
      if (auto read = ReadScopeOptimizations(value, "pl.spmd", map_); !read)
        return pypto::unexpected(read.error());
    } else if (key == "deps") {
      auto deps = ParseDeps(value);
      if (!deps) return pypto::unexpected(deps.error());
      launch.deps = std::move(*deps);
    } else {
      return MakeError(DiagnosticKind::Syntax, fmt::format("pl.spmd argument '{}' is not supported yet", key),
                       map_.SpanOf(keyword));
    }
  }
  if (!count) return MakeError(DiagnosticKind::Syntax, "pl.spmd needs core_num", span);
  auto expr = ParseExpr(count);
  if (!expr) return pypto::unexpected(expr.error());
  // The printer writes a count that came to 0 (or less) as `pl.scalar.cast(0, target_type=...)`, since
  // the literal is refused below: read back, it is that constant again.
  if (const auto* cast = (*expr)->As<ir::Call>();
      cast && cast->is_op_call() && cast->target_name() == "scalar.cast" && cast->args().size() == 1) {
    const auto* scalar = (*expr)->type()->As<ir::ScalarType>();
    if (auto value = ir::AsConstInt(cast->args()[0]); value && *value <= 0 && scalar && ir::IsInteger(scalar->dtype()))
      *expr = std::make_shared<ir::ConstInt>(*value, scalar->dtype(), (*expr)->span());
  }
  // As upstream: a count written as a constant (a literal, or arithmetic on the program's Python
  // constants) must be positive. One computed from the function's own values may still come to 0
  // (`tiles - shift` with both known): that is a launch of no blocks, as the printer writes it back.
  if (auto literal = ir::AsConstInt(*expr); literal && *literal <= 0 && WrittenAsConstant(count))
    return MakeError(DiagnosticKind::Type, fmt::format("pl.spmd core_num must be a positive integer, got {}", *literal),
                     map_.SpanOf(count), "a launch runs core_num blocks, at least 1: write `pl.spmd(N)` with N >= 1");
  auto core_num = CheckBlockCount(*expr, map_.SpanOf(count));
  if (!core_num) return pypto::unexpected(core_num.error());
  launch.core_num = *core_num;
  return launch;
}

// Whether `node` is what upstream's parser reads as a constant: literals, names that are not the
// function's variables (the program's Python constants) and arithmetic on them, without calls.
bool FunctionParser::WrittenAsConstant(py::handle node) const {
  for (auto child : py::module_::import("ast").attr("walk")(node)) {
    if (IsNode(child, "Call")) return false;
    if (IsNode(child, "Name") && env_.contains(child.attr("id").cast<std::string>())) return false;
  }
  return true;
}

// Whether a statement of a pl.spmd body calls a kernel the program defines.
bool FunctionParser::CallsKernel(py::handle stmt) const {
  if (!(IsNode(stmt, "Assign") || IsNode(stmt, "AnnAssign") || IsNode(stmt, "Expr"))) return false;
  py::handle value = stmt.attr("value");
  if (value.is_none() || !IsNode(value, "Call")) return false;
  const std::string callee = DottedName(value.attr("func"));
  if (program_.methods) return callee.starts_with("self.");
  if (!program_.request) return false;
  auto it = program_.request->functions.find(JitFunctionName(callee));
  return it != program_.request->functions.end() && (it->second.form == "incore" || it->second.form == "extern");
}

ir::Result<ir::StmtPtr> FunctionParser::ParseSpmd(py::handle stmt, py::handle context) {
  if (cluster_depth_ > 0)
    for (const char* key : {"predicate", "allow_early_resolve"})
      if (HasKeyword(context, key))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("pl.spmd({}=...) is not accepted on a pl.spmd inside 'with pl.cluster()'", key),
                         map_.SpanOf(context), "launch it outside the cluster");
  if (HasPredicate(context)) {  // `predicate=(t[i] > 0)`: the launch under an if (spmd_submit.cpp)
    auto statements = RewritePredicatedSpmd(stmt, fmt::format("_dispatch_predicate_{}", next_predicate_++), map_);
    if (!statements) return pypto::unexpected(statements.error());
    return ParseBlock(*statements);
  }
  const ir::Span span = map_.SpanOf(context);
  auto launch = ReadSpmdLaunch(context);
  if (!launch) return pypto::unexpected(launch.error());
  py::list body_stmts = stmt.attr("body");
  const auto kernel_calls = std::count_if(body_stmts.begin(), body_stmts.end(),
                                          [&](py::handle s) { return CallsKernel(s); });
  const bool dispatch = kernel_calls > 0;  // the dispatch form: exactly one call of a kernel
  auto body = dispatch ? ParseBlock(stmt.attr("body")) : ParseKernelScopeBody(stmt.attr("body"));
  if (!body) return pypto::unexpected(body.error());
  ir::LaunchOrder order{
      .deps = std::move(launch->deps), .task_id = nullptr, .allow_early_resolve = launch->allow_early_resolve};
  auto task_id = BindScopeTaskId(py::list(stmt.attr("items"))[0].attr("optional_vars"), "pl.spmd");
  if (!task_id) return pypto::unexpected(task_id.error());
  order.task_id = *task_id;
  const SpmdLaunchSpec spec{.core_num = launch->core_num, .sync_start = launch->sync_start};
  if (dispatch) return LaunchOnBlocks(*body, spec, std::move(order), span);
  return ir::StmtPtr(
      std::make_shared<ir::InCoreScopeStmt>(launch->name_hint, *body, span, launch->core_num, launch->sync_start,
                                            std::move(order)));
}

// `for b in pl.spmd(N):`: a kernel scope whose body starts with `b = pl.tile.get_block_idx()`.
ir::Result<ir::StmtPtr> FunctionParser::ParseSpmdLoop(py::handle stmt, py::handle target, py::handle call) {
  const ir::Span span = map_.SpanOf(stmt);
  if (!IsNode(target, "Name"))
    return MakeError(DiagnosticKind::Syntax, "the block index of `for ... in pl.spmd(N)` is a plain name",
                     map_.SpanOf(target));
  if (py::len(stmt.attr("orelse")) > 0)
    return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported", span);
  auto launch = ReadSpmdLaunch(call);
  if (!launch) return pypto::unexpected(launch.error());
  auto block_idx = ir::OpRegistry::Get().CreateCall("tile.get_block_idx", {}, {}, map_.SpanOf(call));
  if (!block_idx) return pypto::unexpected(block_idx.error());
  auto outer = env_;
  auto index = std::make_shared<ir::Var>(target.attr("id").cast<std::string>(), (*block_idx)->type(),
                                         map_.SpanOf(target));
  env_[index->name_hint()] = index;
  ++kernel_depth_;
  auto body = ParseBlock(stmt.attr("body"));
  if (--kernel_depth_ == 0) written_through_.clear();
  env_ = std::move(outer);
  if (!body) return pypto::unexpected(body.error());
  std::vector<ir::StmtPtr> stmts = {std::make_shared<ir::AssignStmt>(index, *block_idx, map_.SpanOf(target))};
  Append(stmts, *body);
  return ir::StmtPtr(std::make_shared<ir::InCoreScopeStmt>(launch->name_hint, Seq(std::move(stmts), span), span,
                                                           launch->core_num, launch->sync_start,
                                                           ir::LaunchOrder{.deps = std::move(launch->deps),
                                                                           .allow_early_resolve = launch->allow_early_resolve}));
}

// `for lane in pl.split_aiv(2, mode=pl.SplitMode.X):` in a kernel: the region of vector work the two
// AIV lanes share, `lane` being pl.tile.get_subblock_idx(). Its statements run in place (it is no
// loop); a cube tile crosses into it by pl.aiv_shard(t), each lane receiving its half under the
// region's mode (both the whole tile under NONE).
ir::Result<ir::StmtPtr> FunctionParser::ParseSplitAivRegion(py::handle stmt, py::handle target, py::handle call) {
  const ir::Span span = map_.SpanOf(stmt);
  if (!IsNode(target, "Name"))
    return MakeError(DiagnosticKind::Syntax, "the lane of `for ... in pl.split_aiv(...)` is a plain name",
                     map_.SpanOf(target));
  if (py::len(stmt.attr("orelse")) > 0)
    return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported", span);
  py::list args = call.attr("args");
  std::optional<int64_t> lanes;
  if (py::len(args) == 1)
    if (auto count = ParseExpr(args[0])) lanes = ir::AsConstInt(*count);
  if (lanes != std::optional<int64_t>(2))
    return MakeError(DiagnosticKind::Syntax, "pl.split_aiv takes the lane count 2 (the AIV lanes of a core group)",
                     map_.SpanOf(call));
  std::optional<int64_t> split;
  for (auto keyword : call.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    static const std::map<std::string, int64_t> kModes = {
        {"pl.SplitMode.NONE", 0}, {"pl.SplitMode.UP_DOWN", 1}, {"pl.SplitMode.LEFT_RIGHT", 2}};
    auto mode = kModes.find(DottedName(keyword.attr("value")));
    if (key != "mode" || mode == kModes.end())
      return MakeError(DiagnosticKind::Syntax,
                       "pl.split_aiv takes mode=pl.SplitMode.UP_DOWN, LEFT_RIGHT or NONE only", map_.SpanOf(keyword));
    split = mode->second;
  }
  if (!split)
    return MakeError(DiagnosticKind::Syntax, "pl.split_aiv needs mode=pl.SplitMode.UP_DOWN, LEFT_RIGHT or NONE",
                     map_.SpanOf(call));
  auto lane_call = ir::OpRegistry::Get().CreateCall("tile.get_subblock_idx", {}, {}, map_.SpanOf(call));
  if (!lane_call) return pypto::unexpected(lane_call.error());
  auto lane = std::make_shared<ir::Var>(target.attr("id").cast<std::string>(), (*lane_call)->type(),
                                        map_.SpanOf(target));
  env_[lane->name_hint()] = lane;
  unavailable_.erase(lane->name_hint());
  split_aiv_modes_.push_back(*split);
  auto body = ParseBlock(stmt.attr("body"));
  split_aiv_modes_.pop_back();
  if (!body) return pypto::unexpected(body.error());
  std::vector<ir::StmtPtr> stmts = {std::make_shared<ir::AssignStmt>(lane, *lane_call, map_.SpanOf(target))};
  Append(stmts, *body);
  return Seq(std::move(stmts), span);
}

// pl.aiv_shard(t) splits t between the lanes as the pl.split_aiv region around it does.
ir::Result<bool> FunctionParser::BindRegionSplit(const ir::OpDef& op, CallBuilder& call, const ir::Span& span) {
  if (op.name != "tile.aiv_shard") return true;
  if (split_aiv_modes_.empty())
    return MakeError(DiagnosticKind::Syntax,
                     "pl.aiv_shard hands a cube tile to the vector lanes of a `for lane in pl.split_aiv(2, "
                     "mode=...)` region, and is used outside one",
                     span);
  if (split_aiv_modes_.back() == 0)
    return MakeError(DiagnosticKind::Syntax,
                     "pl.aiv_shard in a pl.split_aiv region of mode NONE (each lane receiving the whole cube tile) "
                     "is not supported yet",
                     span, "split the region UP_DOWN or LEFT_RIGHT, or hand the tile over in its own region");
  const ir::OpParam* split = op.FindAttrParam("split");
  if (!call.Has(*split)) return call.Bind(*split, ArgValue(ir::OpAttr(split_aiv_modes_.back())), span);
  return true;
}

// A pld.system.notify written in a pl.split_aiv region runs on the vector lanes only (core_type="aiv"),
// as upstream's region placement pins it: the region's body is the AIV lanes' code, and a notify reads
// no tile, so ExpandMixedKernel would otherwise copy it into the cube member too, whose copy signals
// the peer before the lanes have stored the data the signal announces (pypto-lib's lm_head
// remote_store + notify). A wait stays where it is: blocking the cube until the peer's data is there
// is what a wait in a mixed kernel is for.
ir::Result<bool> FunctionParser::BindRegionPlacement(const ir::OpDef& op, CallBuilder& call, const ir::Span& span) {
  if (op.name != "comm.notify" || split_aiv_modes_.empty()) return true;
  const ir::OpParam* core_type = op.FindAttrParam("core_type");
  if (!call.Has(*core_type)) return call.Bind(*core_type, ArgValue(ir::OpAttr(std::string("aiv"))), span);
  return true;
}

}  // namespace pypto::frontend
