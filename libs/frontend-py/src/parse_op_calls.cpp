// FunctionParser: calls of pl.* operations: arguments bound to the op's parameters, the op resolved,
// and the scratch tiles and attributes a call in a kernel adds.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>
#include <variant>

#include "comm_spelling.h"
#include "op_resolver.h"
#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// `pl.no_dep(t)` at a call argument turns off upstream's dependency tracking of t for that one
// task, an opt-out the author takes when deps= already orders it. As for pl.at(no_dep_args=...),
// tracking t anyway only orders the task after t's earlier writers and readers, which computes
// the same results, so the marker is the tensor itself (as upstream's is outside a call).
ir::Result<ir::ExprPtr> FunctionParser::ParseNoDep(py::handle node) {
  return ParseSoleTensorArgument(node, "pl.no_dep takes one tensor: pl.no_dep(t)", "pl.no_dep takes a tensor");
}

// The one tensor argument of a marker call that stands for its tensor (pl.no_dep(t),
// pld.get_comm_ctx(window)): `usage` when the call is malformed, `expected` for a non-tensor.
ir::Result<ir::ExprPtr> FunctionParser::ParseSoleTensorArgument(py::handle node, const std::string& usage,
                                                                const std::string& expected) {
  py::list args = node.attr("args");
  if (py::len(args) != 1 || py::len(node.attr("keywords")) != 0)
    return MakeError(DiagnosticKind::Syntax, usage, map_.SpanOf(node));
  auto tensor = ParseExpr(args[0]);
  if (!tensor) return pypto::unexpected(tensor.error());
  if (!(*tensor)->type()->As<ir::TensorType>())
    return MakeError(DiagnosticKind::Type, fmt::format("{}, got {}", expected, (*tensor)->type()->str()),
                     map_.SpanOf(args[0]));
  return *tensor;
}

ir::Result<ir::ExprPtr> FunctionParser::ParseCall(py::handle node) {
  std::string name = DottedName(node.attr("func"));
  ir::Span span = map_.SpanOf(node.attr("func"));
  if (IsInlineCall(node)) return ParseInlineCall(name, node);
  if (program_.request && program_.request->functions.contains(name)) return ParseKernelCall(name, node);
  if (name == "pl.tensor.dim" || name == "pl.dim") return ParseTensorDim(node);
  if (name == "pl.assemble" || name == "pl.tile.assemble" || name == "pl.tensor.assemble") return ParseAssemble(node);
  if (auto form = IndexOpForm(name, node)) {
    if (!*form) return pypto::unexpected(form->error());
    return ParseExpr(**form);
  }
  if (name == "pl.slice" || name == "pl.tensor.slice") {  // in orchestration code too (see ParseRegion)
    if (auto load = SliceOfSliceAsLoad(node)) return *load;
    auto load = SliceOfTensorAsLoad(node);
    if (!load) return pypto::unexpected(load.error());
    if (*load) {
      auto parsed = ParseCall(**load);
      if (parsed || kernel_depth_ > 0) return parsed;
      if (auto view = OverhangingSliceView(**load)) return *view;
      return parsed;
    }
  }
  if ((name == "pl.create_tensor" || name == "pl.tensor.create") && kernel_depth_ > 0)
    return ParseCall(CreatedTensorAsTile(node));
  if ((name == "pl.slice" || name == "pl.tensor.slice") && kernel_depth_ == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' of a tensor in orchestration code (a view at an offset, passed to kernels) "
                                 "is not supported yet",
                                 name),
                     span, "slice the tensor inside the pl.at scope that uses it, where pl.slice is a load");
  if (IsElementAccess(name) && HasBareIndex(node)) return ParseCall(WithIndexList(node));
  if (IsDumpTag(node))
    return MakeError(DiagnosticKind::Syntax, "pl.dump_tag is a statement and has no value", span,
                     "write pl.dump_tag(t) on a line of its own");
  if (program_.methods && name.starts_with("self.")) return ParseMethodCall(name.substr(5), node);
  if (!program_.methods && program_.request && JitFunctionName(name) != name)  // `self.kernel(...)`
    return ParseKernelCall(JitFunctionName(name), node);
  if (name == "pl.system.task_dummy") return ParseTaskDummy(node);
  if (name == "pl.create_l1" || name == "pl.tensor.create_l1") return ParseCreateL1(node);
  if (name == "pl.gather_row" || name == "pl.tensor.gather_row") return ParseGatherRow(node);
  if (name == "pl.expand_clone" || name == "pl.tensor.expand_clone") return ParseExpandClone(node);
  if (name == "pl.const") return ParseTypedConstant(node);
  if (name == "pl.no_dep") return ParseNoDep(node);
  // Upstream's tensor-level xor and xors take no scratch tile; in a kernel their tile op gets a fresh one.
  const bool scratch_for_tensor_xor = kernel_depth_ > 0 && (name == "pl.tensor.xor" || name == "pl.tensor.xors");
  if (kernel_depth_ > 0) name = KernelSpelling(name);
  if (IsGetCommCtx(name)) return ParseCommCtx(node);
  if (auto put = IsPutOrGet(name)) return ParsePutGet(node, *put);
  const std::string spelled = name;  // what errors call the op: the user's spelling
  if (auto comm = CommOpSpelling(name)) name = *comm;
  if (auto builtin = ParseBuiltinCall(name, node)) return *builtin;
  if (!name.starts_with("pl."))
    return MakeError(DiagnosticKind::UnknownOperation,
                     program_.methods
                         ? fmt::format("cannot call '{}' in a @pl.program; only pl.* operations and the program's "
                                       "functions (self.<name>) are available",
                                       name.empty() ? "<expression>" : name)
                         : fmt::format("cannot call '{}' in a kernel; only pl.* operations and @pl.jit.incore "
                                       "functions are available",
                                       name.empty() ? "<expression>" : name),
                     span);
  std::vector<std::pair<ArgValue, py::handle>> positional;
  for (auto arg : node.attr("args")) {
    auto value = ParseArgValue(arg);
    if (!value) return pypto::unexpected(value.error());
    positional.emplace_back(std::move(*value), arg);
  }
  std::vector<std::tuple<std::string, ArgValue, py::handle>> keywords;
  for (auto keyword : node.attr("keywords")) {
    if (keyword.attr("arg").is_none())
      return MakeError(DiagnosticKind::Syntax, "**kwargs are not supported in op calls", map_.SpanOf(keyword));
    // `name=None` leaves an optional argument out, as Python's default does (gm_workspace=None), and
    // so does a name bound to None where the program is built (valid_shape=valid_shape).
    if (IsNode(keyword.attr("value"), "Constant") && keyword.attr("value").attr("value").is_none()) continue;
    if (NamesNone(keyword.attr("value"))) continue;
    // `atomic=pl.AtomicType.Add` (pl.store): the op's "add" attribute; AtomicType.None_ leaves it out.
    if (keyword.attr("arg").cast<std::string>() == "atomic" &&
        (DottedName(keyword.attr("value")).starts_with("pl.AtomicType.") ||
         DottedName(keyword.attr("value")).starts_with("pld.AtomicType."))) {
      auto atomic = AtomicKeyword(name, keyword.attr("value"));
      if (!atomic) return pypto::unexpected(atomic.error());
      if (!*atomic) continue;
      keywords.emplace_back("atomic", ArgValue(ir::OpAttr(std::string("add"))), keyword.attr("value"));
      continue;
    }
    auto value = ParseArgValue(keyword.attr("value"));
    if (!value) return pypto::unexpected(value.error());
    keywords.emplace_back(keyword.attr("arg").cast<std::string>(), std::move(*value), keyword.attr("value"));
  }
  bool loaded_tensor = false;  // a whole tensor operand became a tile
  // The operands a kernel loads when given whole tensors: all of a unified op's, the value of
  // pl.store (`pl.store(src, offset, dst)` copies the tensor src into a window of dst), and the
  // operand of pl.reshape (`pl.reshape(inv_rms, [64, 1])` of a tile an earlier scope computed,
  // handed over as a tensor: the reshape is the tile's, as upstream's tensor-to-tile lowering has it).
  const size_t loadable = kernel_depth_ == 0                             ? 0
                          : IsUnifiedCompute(name)                       ? positional.size()
                          : name == "pl.store" || name == "pl.reshape"   ? std::min<size_t>(1, positional.size())
                                                                         : 0;
  if (loadable > 0) {
    for (auto& [value, arg] : std::span(positional).first(loadable)) {
      auto* expr = std::get_if<ir::ExprPtr>(&value);
      if (!expr || !(*expr)->type()->As<ir::TensorType>()) continue;
      auto loaded = LoadWhole(*expr, map_.SpanOf(arg));
      if (!loaded) return pypto::unexpected(loaded.error());
      *expr = *loaded;
      loaded_tensor = true;
    }
  }
  // A reshape or transpose of an orchestration slice views the slice's view.
  if (kernel_depth_ == 0 && IsViewOfWhole(name) && !positional.empty())
    if (auto* expr = std::get_if<ir::ExprPtr>(&positional[0].first)) {
      auto view = SliceAsView(*expr);
      if (!view) return pypto::unexpected(view.error());
      *expr = *view;
    }
  std::vector<ir::ExprPtr> operands;
  for (const auto& [value, arg] : positional)
    if (const auto* expr = std::get_if<ir::ExprPtr>(&value)) operands.push_back(*expr);
  if (auto scalar = ScalarCall(name, operands, positional.size(), keywords.size(), map_.SpanOf(node))) return *scalar;

  auto high_precision = TakeHighPrecision(name, keywords);
  if (!high_precision) return pypto::unexpected(high_precision.error());
  std::vector<std::string> keyword_names;
  for (const auto& keyword : keywords) keyword_names.push_back(std::get<0>(keyword));
  auto form = SelectForm(name, keyword_names, span);
  if (!form) return pypto::unexpected(form.error());
  if (kernel_depth_ > 0 && IsUnifiedCompute(name)) {
    auto broadcast = RowBroadcastForm(*form, operands, positional, span);
    if (!broadcast) return pypto::unexpected(broadcast.error());
    if (*broadcast) {
      form = **broadcast;
      operands.clear();
      for (const auto& [value, arg] : positional)
        if (const auto* expr = std::get_if<ir::ExprPtr>(&value)) operands.push_back(*expr);
    }
  }
  auto op = ResolveOp(*form, operands, kernel_depth_ > 0 ? CallContext::Kernel : CallContext::Orchestration, span);
  if (!op) return pypto::unexpected(op.error());
  if ((*op)->name == "tile.mrgsort_format2")
    if (auto ok = PlaceMergeScratch(positional, keywords, span); !ok) return pypto::unexpected(ok.error());
  if ((*op)->name == "tile.mgather") PlaceMgatherOperands(positional, keywords);
  CallBuilder call(spelled, **op, span);
  const auto& params = (*op)->params;
  for (size_t i = 0; i < positional.size(); ++i) {
    if (i >= params.size())
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' takes at most {} argument{}, got {}", name, params.size(),
                                   params.size() == 1 ? "" : "s", positional.size()),
                       span);
    if (auto ok = call.Bind(params[i], std::move(positional[i].first), map_.SpanOf(positional[i].second)); !ok)
      return pypto::unexpected(ok.error());
  }
  for (auto& [key, value, arg] : keywords) {
    auto param = std::find_if(params.begin(), params.end(), [&](const ir::OpParam& p) { return p.name == key; });
    if (param == params.end()) {
      std::vector<std::string> names;
      for (const auto& p : params) names.push_back(p.name);
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' has no argument '{}' (arguments: {})", spelled, key, fmt::join(names, ", ")),
                       map_.SpanOf(arg));
    }
    if (auto ok = call.Bind(*param, std::move(value), map_.SpanOf(arg)); !ok) return pypto::unexpected(ok.error());
  }
  if (kernel_depth_ > 0 && !operands.empty())
    if (auto ok = BindDefaultScratch(name, **op, operands[0], call, map_.SpanOf(node)); !ok)
      return pypto::unexpected(ok.error());
  if ((*high_precision || scratch_for_tensor_xor) && kernel_depth_ > 0 && !operands.empty())
    if (auto ok = BindPrecisionScratch(**op, operands[0], call, map_.SpanOf(node)); !ok)
      return pypto::unexpected(ok.error());
  if (declared_tile_) BindDeclaredPopType(**op, call, map_.SpanOf(node));
  if (auto ok = BindRegionSplit(**op, call, map_.SpanOf(node)); !ok) return pypto::unexpected(ok.error());
  if (auto ok = BindRegionPlacement(**op, call, map_.SpanOf(node)); !ok) return pypto::unexpected(ok.error());
  auto built = call.Build(map_.SpanOf(node));
  if (built && name == "pl.cmp" &&
      (loaded_tensor || (kernel_depth_ > 0 && !positional.empty() && IsUpstreamTensor(positional[0].second))))
    return MaskAsValues(*built, operands[0], map_.SpanOf(node));
  return built;
}

// `pl.cmp` of tensors (whole, windows `x[a:b, c:d]` or values computed from them: IsUpstreamTensor)
// is upstream's tensor.cmp: 1 where the comparison holds and 0 elsewhere,
// in the left operand's dtype (tile.sel of the packed mask between two filled tiles), not the mask.
ir::Result<ir::ExprPtr> FunctionParser::MaskAsValues(const ir::ExprPtr& mask, const ir::ExprPtr& lhs,
                                                     const ir::Span& span) {
  const auto& tile = *lhs->type()->As<ir::TileType>();
  const auto& registry = ir::OpRegistry::Get();
  std::vector<ir::ExprPtr> dims;
  for (int64_t dim : tile.shape()) dims.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
  auto filled = [&](double value) -> ir::Result<ir::CallPtr> {
    const ir::ExprPtr constant =
        ir::IsFloat(tile.dtype()) ? ir::ExprPtr(std::make_shared<ir::ConstFloat>(value, tile.dtype(), span))
                                  : ir::ExprPtr(std::make_shared<ir::ConstInt>(static_cast<int64_t>(value),
                                                                               tile.dtype(), span));
    return registry.CreateCall("tile.full", {Tuple(dims, span), constant}, {{"dtype", ir::OpAttr(tile.dtype())}},
                               span);
  };
  auto ones = filled(1);
  if (!ones) return pypto::unexpected(ones.error());
  auto zeros = filled(0);
  if (!zeros) return pypto::unexpected(zeros.error());
  auto tmp = CreateTileLike(ir::TileType({1, 32}, ir::DataType::UINT8, ir::MemorySpace::Vec), span);
  if (!tmp) return pypto::unexpected(tmp.error());
  auto sel = registry.CreateCall("tile.sel", {mask, *ones, *zeros, *tmp}, {}, span);
  if (!sel) return pypto::unexpected(sel.error());
  return ir::ExprPtr(*sel);
}

// tile.mrgsort_format2 takes its scratch tile after the sorted lists, however many there are: a
// `tmp=` keyword moves there, and without one (the unified `pl.mrgsort(a, b)` leaves it to the
// compiler) a fresh tile as long as the lists together goes there. Five positional arguments are
// four lists and the scratch tile, as upstream spells a 4-way merge.
ir::Result<bool> FunctionParser::PlaceMergeScratch(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                                   std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords,
                                                   const ir::Span& span) {
  auto tmp = std::find_if(keywords.begin(), keywords.end(),
                          [](const auto& keyword) { return std::get<0>(keyword) == "tmp"; });
  const size_t lists = positional.size();
  if (lists < 2 || (tmp != keywords.end() && lists > 4))
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("pl.mrgsort merges 2 to 4 sorted tiles, got {}", lists), span,
                     "merge the sorted runs of a single tile with block_len=...");
  if (tmp != keywords.end()) {
    positional.emplace_back(std::move(std::get<1>(*tmp)), std::get<2>(*tmp));
    keywords.erase(tmp);
    return true;
  }
  if (lists > 4) return true;
  std::vector<ir::ExprPtr> sources;
  for (const auto& [value, arg] : positional) {
    const auto* expr = std::get_if<ir::ExprPtr>(&value);
    sources.push_back(expr ? *expr : nullptr);
  }
  auto scratch = MergeScratchTile(sources, span);
  if (!scratch) return pypto::unexpected(scratch.error());
  positional.emplace_back(ArgValue(*scratch), positional.back().second);
  return true;
}

// tile.mgather's optional operands close up, as upstream lays them out: `scratch=` (Mat element
// mode) and then `valid_shape=` (Mat) follow idx, so that in Mat row mode the valid shape is the
// third argument. A third positional argument that is not a value is upstream's positional
// `coalesce` ("row" or "elem").
void FunctionParser::PlaceMgatherOperands(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                          std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords) {
  if (positional.size() == 3 && std::holds_alternative<ir::OpAttr>(positional[2].first)) {
    keywords.emplace_back("coalesce", std::move(positional[2].first), positional[2].second);
    positional.pop_back();
  }
  if (positional.size() != 2) return;
  for (const char* name : {"scratch", "valid_shape"}) {
    auto keyword = std::find_if(keywords.begin(), keywords.end(),
                                [&](const auto& keyword) { return std::get<0>(keyword) == name; });
    if (keyword == keywords.end()) continue;
    positional.emplace_back(std::move(std::get<1>(*keyword)), std::get<2>(*keyword));
    keywords.erase(keyword);
  }
}

// A tpop without shape= and dtype= receives the tile its assignment's annotation declares.
void FunctionParser::BindDeclaredPopType(const ir::OpDef& op, CallBuilder& call, const ir::Span& span) {
  if (op.name != "tile.tpop_from_aic" && op.name != "tile.tpop_from_aiv") return;
  const auto& tile = *declared_tile_->As<ir::TileType>();
  for (const ir::OpParam& param : op.params) {
    if (call.Has(param)) continue;
    if (param.name == "shape") {
      std::vector<ir::ExprPtr> dims;
      for (int64_t dim : tile.shape()) dims.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
      (void)call.Bind(param, ArgValue(Tuple(dims, span)), span);
    } else if (param.name == "dtype") {
      (void)call.Bind(param, ArgValue(ir::OpAttr(tile.dtype())), span);
    }
  }
}

// pl.add / pl.mul / pl.max ... on two scalars is scalar arithmetic, as the infix operators are.
std::optional<ir::Result<ir::ExprPtr>> FunctionParser::ScalarCall(const std::string& name,
                                                                  const std::vector<ir::ExprPtr>& operands,
                                                                  size_t positional, size_t keywords,
                                                                  const ir::Span& span) {
  auto op = ScalarArithmetic(name);
  if (!op || keywords > 0 || positional != 2 || operands.size() != 2) return std::nullopt;
  if (!operands[0]->type()->As<ir::ScalarType>() || !operands[1]->type()->As<ir::ScalarType>()) return std::nullopt;
  return ir::MakeBinary(*op, operands[0], operands[1], span);
}

// A bare name that is not a variable of the kernel and stands for None.
bool FunctionParser::NamesNone(py::handle node) const {
  if (!IsNode(node, "Name")) return false;
  const std::string name = node.attr("id").cast<std::string>();
  if (env_.contains(name)) return false;
  auto constant = source_.constants->find(name);
  return constant != source_.constants->end() && std::holds_alternative<NoneValue>(constant->second);
}

// A dtype (pl.FP32), a memory space (pl.Mem.Vec / pl.MemorySpace.Vec), a mask pattern
// (pl.tile.MaskPattern.P0101, an integer attribute) or a string literal is an attribute; anything
// else an expression.
ir::Result<ArgValue> FunctionParser::ParseArgValue(py::handle node) {
  const std::string dotted = DottedName(node);
  if (auto member = CommEnumMember(dotted); member && !env_.contains(dotted)) return ArgValue(ir::OpAttr(*member));
  if (IsNode(node, "Name") && !env_.contains(dotted)) {
    if (auto dtype = DtypeOf(node, source_.constants)) return ArgValue(ir::OpAttr(*dtype));
    // A string constant (`acc_phase=phase`) is the attribute its literal would be.
    if (auto constant = source_.constants->find(dotted); constant != source_.constants->end())
      if (const auto* text = std::get_if<std::string>(&constant->second)) return ArgValue(ir::OpAttr(*text));
  }
  if (dotted.starts_with("pl.") && !env_.contains(dotted)) {
    if (auto dtype = ir::DataTypeFromName(std::string_view(dotted).substr(3))) return ArgValue(ir::OpAttr(*dtype));
    if (dotted.starts_with("pl.tile.MaskPattern.")) {
      auto pattern = ir::MaskPatternFromName(std::string_view(dotted).substr(20));
      if (pattern) return ArgValue(ir::OpAttr(*pattern));
      return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a mask pattern", dotted), map_.SpanOf(node),
                       "mask patterns: P0101, P1010, P0001, P0010, P0100, P1000, P1111");
    }
    for (std::string_view prefix : {"pl.Mem.", "pl.MemorySpace."}) {
      if (!dotted.starts_with(prefix)) continue;
      if (auto space = ir::MemorySpaceFromName(std::string_view(dotted).substr(prefix.size())))
        return ArgValue(ir::OpAttr(*space));
      return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a memory space", dotted), map_.SpanOf(node),
                       "memory spaces: Vec, Mat, Left, Right, Acc, Bias");
    }
  }
  if (dotted.starts_with("pl.PadValue.") && !env_.contains(dotted)) return PadValueAttr(dotted, node);
  if (dotted.starts_with("pl.PipeType.") && !env_.contains(dotted)) return PipeTypeAttr(dotted, node);
  if (IsNode(node, "Constant") && py::isinstance<py::str>(node.attr("value")))
    return ArgValue(ir::OpAttr(node.attr("value").cast<std::string>()));
  auto expr = ParseExpr(node);
  if (!expr) return pypto::unexpected(expr.error());
  return ArgValue(*expr);
}

// pl.PadValue.zero / min / max: fillpad's padding mode, a string attribute ("min").
ir::Result<ArgValue> FunctionParser::PadValueAttr(const std::string& dotted, py::handle node) {
  const std::string mode = dotted.substr(std::string_view("pl.PadValue.").size());
  if (mode == "zero" || mode == "min" || mode == "max") return ArgValue(ir::OpAttr(mode));
  return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a padding mode", dotted), map_.SpanOf(node),
                   "pad values: pl.PadValue.zero, pl.PadValue.min, pl.PadValue.max");
}

// pl.PipeType.MTE3: a pipe of the core (the sync ops' pipe=), a string attribute ("MTE3").
ir::Result<ArgValue> FunctionParser::PipeTypeAttr(const std::string& dotted, py::handle node) {
  static const std::set<std::string, std::less<>> kPipes = {"MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"};
  const std::string pipe = dotted.substr(std::string_view("pl.PipeType.").size());
  if (kPipes.contains(pipe)) return ArgValue(ir::OpAttr(pipe));
  return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a pipe", dotted), map_.SpanOf(node),
                   "pipes: pl.PipeType.MTE1, MTE2, MTE3, M, V, S, FIX, ALL");
}

// `pl.row_sum(x)` without a scratch tile gets a fresh one (hoisted before the call by FlattenCallExpr).
ir::Result<bool> FunctionParser::BindDefaultScratch(const std::string& name, const ir::OpDef& op,
                                                    const ir::ExprPtr& operand, CallBuilder& call,
                                                    const ir::Span& span) {
  auto param = std::find_if(op.params.begin(), op.params.end(),
                            [](const ir::OpParam& p) { return p.name == "tmp_tile"; });
  if (param == op.params.end() || call.Has(*param)) return true;
  auto scratch = DefaultScratchTile(name, op, operand, span);
  if (!scratch) return pypto::unexpected(scratch.error());
  if (!*scratch) return true;
  return call.Bind(*param, *scratch, span);
}

// `pl.rsqrt(x, high_precision=True)`: the unified op's precision switch, removed from the keywords.
// The precise form is the tile op given a scratch tile (what upstream lowers it to).
ir::Result<bool> FunctionParser::TakeHighPrecision(
    const std::string& name, std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords) {
  auto it = std::find_if(keywords.begin(), keywords.end(),
                         [](const auto& keyword) { return std::get<0>(keyword) == "high_precision"; });
  if (it == keywords.end() || name != "pl.rsqrt") return false;
  const auto* expr = std::get_if<ir::ExprPtr>(&std::get<1>(*it));
  const auto* flag = expr ? (*expr)->As<ir::ConstBool>() : nullptr;
  if (!flag)
    return MakeError(DiagnosticKind::Type, "pl.rsqrt high_precision= must be True or False",
                     map_.SpanOf(std::get<2>(*it)));
  const bool value = flag->value();
  keywords.erase(it);
  return value;
}

// (Also the scratch tile of pl.tensor.xor / xors in a kernel.)
ir::Result<bool> FunctionParser::BindPrecisionScratch(const ir::OpDef& op, const ir::ExprPtr& operand,
                                                      CallBuilder& call, const ir::Span& span) {
  auto param = std::find_if(op.params.begin(), op.params.end(), [](const ir::OpParam& p) { return p.name == "tmp"; });
  const auto* tile = operand->type()->As<ir::TileType>();
  if (param == op.params.end() || call.Has(*param) || !tile) return true;
  auto scratch = CreateTileLike(*tile, span);
  if (!scratch) return pypto::unexpected(scratch.error());
  return call.Bind(*param, *scratch, span);
}

}  // namespace pypto::frontend
