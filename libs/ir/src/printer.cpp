// DSL-like text for programs, in the shape upstream's Python printer produces.
#include "pypto/ir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/submit_dumps.h"

namespace pypto::ir {
namespace {

class Printer {
 public:
  explicit Printer(int indent) : indent_(indent) {}

  std::string Function(const ir::Function& function) {
    std::vector<std::string> params;
    for (size_t i = 0; i < function.params().size(); ++i) {
      const auto& param = function.params()[i];
      params.push_back(fmt::format("{}: {}", Name(param.get()),
                                   ParamAnnotation(param->type(), function.param_directions()[i])));
    }
    std::string returns;
    if (function.return_types().size() == 1) {
      returns = fmt::format(" -> {}", function.return_types()[0]->str());
    } else if (!function.return_types().empty()) {
      std::vector<std::string> types;
      for (const auto& type : function.return_types()) types.push_back(type->str());
      returns = fmt::format(" -> tuple[{}]", fmt::join(types, ", "));
    }
    // A hand-written kernel is declared by its source (a decorator keyword, as the DSL spells it); its
    // body is the signature-only `...`.
    auto attrs = function.attrs();
    std::string source;
    if (auto it = attrs.find(kExternalSourceAttr); it != attrs.end() && std::holds_alternative<std::string>(it->second)) {
      source = fmt::format(", external_source={}", OpAttrText(std::get<std::string>(it->second)));
      attrs.erase(it);
    }
    // auto_scope=False has a keyword of its own, as upstream spells it; true is the default and unwritten.
    std::string auto_scope;
    if (auto it = attrs.find(kAutoScopeAttr); it != attrs.end() && std::holds_alternative<bool>(it->second)) {
      if (!std::get<bool>(it->second)) auto_scope = ", auto_scope=False";
      attrs.erase(it);
    }
    Line(fmt::format("@pl.function(type=pl.FunctionType.{}{}{}{})", FunctionTypeName(function.type()),
                     auto_scope, Attrs(attrs), source));
    Line(fmt::format("def {}(self{}{}){}:", function.name(), params.empty() ? "" : ", ", fmt::join(params, ", "),
                     returns));
    ++indent_;
    if (source.empty()) Stmt(function.body());
    else Line("...");
    --indent_;
    return out_.str();
  }

  std::string Expr(const ExprPtr& expr) {
    if (const auto* var = expr->As<Var>()) return Name(var);
    if (const auto* constant = expr->As<ConstInt>()) return std::to_string(constant->value());
    if (const auto* constant = expr->As<ConstFloat>()) return FloatLiteral(constant->value());
    if (const auto* constant = expr->As<ConstBool>()) return constant->value() ? "True" : "False";
    if (const auto* tuple = expr->As<TupleLiteral>()) {
      std::vector<std::string> parts;
      for (const auto& element : tuple->elements()) parts.push_back(Expr(element));
      return fmt::format("[{}]", fmt::join(parts, ", "));
    }
    if (const auto* call = expr->As<Call>()) return CallText(*call);
    if (const auto* binary = expr->As<BinaryExpr>()) return BinaryText(*binary);
    return "<?>";
  }

 private:
  // A kernel call with an explicit task order outside a pl.spmd scope is a `pl.submit`.
  std::string CallText(const Call& call) {
    std::vector<std::string> args;
    if (call.is_op_call()) return fmt::format("pl.{}({})", DslOpName(call.op()->name), fmt::join(OpArgs(call), ", "));
    for (const auto& arg : call.args()) args.push_back(Expr(arg));
    if (!call.arg_directions().empty()) {
      std::vector<std::string> directions;
      for (auto direction : call.arg_directions()) directions.push_back(fmt::format("\"{}\"", ArgDirectionName(direction)));
      args.push_back(fmt::format("attrs={{\"arg_directions\": [{}]}}", fmt::join(directions, ", ")));
    }
    if (!SubmitCall(call)) return fmt::format("self.{}({})", call.callee(), fmt::join(args, ", "));
    args.insert(args.begin(), "self." + call.callee());
    if (!call.order().deps.empty()) args.push_back(DepsText(call.order()));
    if (call.order().allow_early_resolve) args.push_back("allow_early_resolve=True");
    if (auto dumped = DumpedArgs(call); !dumped.empty()) {
      std::vector<std::string> names;
      for (size_t position : dumped) names.push_back(Expr(call.args().at(position)));
      args.push_back(fmt::format("dumps=[{}]", fmt::join(names, ", ")));
    }
    return fmt::format("pl.submit({})", fmt::join(args, ", "));
  }

  std::string DepsText(const LaunchOrder& order) {
    std::vector<std::string> deps;
    for (const auto& dep : order.deps) deps.push_back(Expr(dep));
    return fmt::format("deps=[{}]", fmt::join(deps, ", "));
  }

  // `, deps=[a, b]`, `, allow_early_resolve=True` and ` as t`: what a scope header adds for a launch's
  // order.
  std::string OrderArgs(const LaunchOrder& order) {
    std::string text = order.deps.empty() ? "" : ", " + DepsText(order);
    if (order.allow_early_resolve) text += ", allow_early_resolve=True";
    return text;
  }
  std::string OrderTarget(const LaunchOrder& order) {
    return order.task_id ? " as " + Name(order.task_id.get()) : "";
  }

  static bool IsSpmdLaunch(const Call& call) {
    return !call.is_op_call() && call.core_num();
  }

  // The targets of a statement assigning a `pl.submit`: its result (if any), then its TaskId.
  std::string SubmitTargets(const Var* result, const Call& call) {
    std::vector<std::string> targets;
    if (result) targets.push_back(Name(result));
    targets.push_back(call.order().task_id ? Name(call.order().task_id.get()) : "_");
    return fmt::format("{}", fmt::join(targets, ", "));
  }

  static const Call* SubmitCall(const ir::Expr& value) {
    const auto* call = value.As<Call>();
    return call && !call->is_op_call() && (!call->order().empty() || !DumpedArgs(*call).empty()) &&
                   !IsSpmdLaunch(*call)
               ? call
               : nullptr;
  }

  // The DSL spells an op whose name is a Python keyword with a trailing underscore (pl.tile.not_).
  static std::string DslOpName(const std::string& name) {
    return name.ends_with(".not") || name.ends_with(".and") || name.ends_with(".or") ? name + "_" : name;
  }

  // An op's arguments in its parameter order: positional up to the first attribute, by keyword
  // from there on (pl.tile.full([8, 32], dtype=pl.FP32, value=0.0)), as the DSL spells them.
  std::vector<std::string> OpArgs(const Call& call) {
    std::vector<std::string> args;
    size_t next_arg = 0;
    bool by_keyword = false;
    for (const auto& param : call.op()->params) {
      if (param.is_attr) {
        by_keyword = true;
        for (const auto& [key, value] : call.kwargs())
          if (key == param.name) args.push_back(fmt::format("{}={}", key, AttrText(param, value)));
        continue;
      }
      if (next_arg >= call.args().size()) continue;
      const std::string text = Expr(call.args()[next_arg++]);
      args.push_back(by_keyword ? fmt::format("{}={}", param.name, text) : text);
    }
    return args;
  }

  // An enum attribute as the DSL spells it (pipe=pl.PipeType.MTE3), any other as its literal.
  static std::string AttrText(const OpParam& param, const OpAttr& value) {
    const auto* member = std::get_if<std::string>(&value);
    if (param.enum_type && member) return fmt::format("{}.{}", param.enum_type, *member);
    return OpAttrText(value);
  }

  std::string BinaryText(const BinaryExpr& binary) {
    std::string text;
    AppendBinary(text, binary);
    return text;
  }

  // Nested operations are parenthesised: exact, if not minimal. Operands are appended to one
  // buffer: returning each operand's text and copying it into its parent's made printing a chain
  // `x + x + ...` quadratic in its depth.
  void AppendBinary(std::string& out, const BinaryExpr& binary) {
    auto append = [&](const ExprPtr& e) {
      if (const auto* nested = e->As<BinaryExpr>()) AppendBinary(out, *nested);
      else out += Expr(e);
    };
    const bool call_form = binary.op() == BinaryOp::Min || binary.op() == BinaryOp::Max;
    auto operand = [&](const ExprPtr& e) {
      const bool parenthesised = !call_form && e->Is<BinaryExpr>();
      if (parenthesised) out += '(';
      append(e);
      if (parenthesised) out += ')';
    };
    if (call_form) out += fmt::format("{}(", BinaryOpSymbol(binary.op()));
    operand(binary.lhs());
    out += call_form ? ", " : fmt::format(" {} ", BinaryOpSymbol(binary.op()));
    operand(binary.rhs());
    if (call_form) out += ')';
  }

  std::string RangeArgs(const ForStmt& loop) {
    bool from_zero = AsConstInt(loop.start()) == 0, unit_step = AsConstInt(loop.step()) == 1;
    if (from_zero && unit_step) return Expr(loop.stop());
    if (unit_step) return fmt::format("{}, {}", Expr(loop.start()), Expr(loop.stop()));
    return fmt::format("{}, {}, {}", Expr(loop.start()), Expr(loop.stop()), Expr(loop.step()));
  }

  void Stmt(const StmtPtr& stmt) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      if (seq->stmts().empty()) Line("pass");
      for (const auto& child : seq->stmts()) Stmt(child);
    } else if (const auto* assign = stmt->As<AssignStmt>()) {
      if (const Call* submit = SubmitCall(*assign->value()))  // a tuple target takes no annotation
        Line(fmt::format("{} = {}", SubmitTargets(assign->var().get(), *submit), Expr(assign->value())));
      else
        SpmdLine(*assign->value(), fmt::format("{}: {} = {}", Name(assign->var().get()),
                                               TypeText(assign->var()->type()), Expr(assign->value())));
    } else if (const auto* eval = stmt->As<EvalStmt>()) {
      const Call* submit = SubmitCall(*eval->expr());
      if (submit && submit->order().task_id)
        Line(fmt::format("{} = {}", SubmitTargets(nullptr, *submit), Expr(eval->expr())));
      else
        SpmdLine(*eval->expr(), Expr(eval->expr()));
    } else if (const auto* ret = stmt->As<ReturnStmt>()) {
      std::vector<std::string> values;
      for (const auto& value : ret->values()) values.push_back(Expr(value));
      Line(values.empty() ? "return" : fmt::format("return {}", fmt::join(values, ", ")));
    } else if (const auto* loop = stmt->As<ForStmt>()) {
      ForHeader(*loop);
      Block(loop->body(), loop->return_vars());
    } else if (const auto* loop = stmt->As<WhileStmt>()) {
      WhileLoop(*loop);
    } else if (const auto* branch = stmt->As<IfStmt>()) {
      Line(fmt::format("if {}:", Expr(branch->condition())));
      Block(branch->then_body(), branch->return_vars());
      if (branch->else_body()) {
        Line("else:");
        Block(branch->else_body(), branch->return_vars());
      }
    } else if (const auto* yield = stmt->As<YieldStmt>()) {
      Line(YieldText(*yield));
    } else if (const auto* jump = AsJump(*stmt)) {
      Line(JumpText(*jump));
    } else if (const auto* scope = stmt->As<InCoreScopeStmt>()) {
      std::string hint = scope->name_hint().empty() ? "" : fmt::format(", name_hint=\"{}\"", scope->name_hint());
      const std::string order = OrderArgs(scope->order()), target = OrderTarget(scope->order());
      if (scope->block_num())
        Line(fmt::format("with pl.spmd({}{}{}{}){}:", BlockCount(scope->block_num()),
                         scope->sync_start() ? ", sync_start=True" : "", hint, order, target));
      else
        Line(fmt::format("with pl.at(level=pl.Level.CORE_GROUP{}{}){}:", hint, order, target));
      ++indent_;
      Stmt(scope->body());
      --indent_;
    } else if (const auto* scope = stmt->As<RuntimeScopeStmt>()) {
      // As upstream prints it; pl.manual_scope() reads back as the same scope.
      Line(scope->manual() ? "with pl.scope(mode=pl.ScopeMode.MANUAL):" : "with pl.scope():");
      ++indent_;
      Stmt(scope->body());
      --indent_;
    }
  }

  // A pl.spmd block count. One that came to 0 (or less) from the function's own values is written as a
  // cast, not a literal: the parser refuses `pl.spmd(0)` as written, as upstream's does, and reads
  // the cast back as the same count.
  std::string BlockCount(const ExprPtr& count) {
    const auto literal = AsConstInt(count);
    if (!literal || *literal > 0) return Expr(count);
    const auto* scalar = count->type()->As<ScalarType>();
    return fmt::format("pl.scalar.cast({}, target_type=pl.{})", *literal,
                       DataTypeName(scalar ? scalar->dtype() : DataType::INDEX));
  }

  // A kernel call launched on N blocks is written inside its `with pl.spmd(core_num=N):`, co-started
  // ones `with pl.spmd(core_num=N, sync_start=True):`.
  void SpmdLine(const ir::Expr& value, const std::string& text) {
    const auto* call = value.As<Call>();
    if (!call || !IsSpmdLaunch(*call)) return Line(text);
    const bool sync_start = FindAttr<bool>(call->kwargs(), kSyncStartKwarg).value_or(false);
    Line(fmt::format("with pl.spmd(core_num={}{}{}){}:", BlockCount(call->core_num()),
                     sync_start ? ", sync_start=True" : "", OrderArgs(call->order()), OrderTarget(call->order())));
    ++indent_;
    Line(text);
    --indent_;
  }

  // `for i in pl.range(n):`, or with carried values `for i, (a, b) in pl.range(n, init_values=(x, y)):`
  // (a single one is `(a,)`, as Python spells a one-element tuple).
  void ForHeader(const ForStmt& loop) {
    const std::string var = Name(loop.loop_var().get());
    const char* kind = ForKindName(loop.kind());
    if (loop.iter_args().empty()) {
      Line(fmt::format("for {} in pl.{}({}):", var, kind, RangeArgs(loop)));
      return;
    }
    std::vector<std::string> inits, carried;
    for (const auto& iter_arg : loop.iter_args()) inits.push_back(Expr(iter_arg.init));
    for (const auto& iter_arg : loop.iter_args()) carried.push_back(Name(iter_arg.var.get()));
    Line(fmt::format("for {}, {} in pl.{}({}, init_values={}{}):", var, TupleText(carried), kind, RangeArgs(loop),
                     TupleText(inits), CarryKwarg(loop.iter_args())));
  }

  // `, carry=("alias", "scalar")` once ClassifyIterArgCarry has stamped how each value is carried.
  static std::string CarryKwarg(const std::vector<IterArg>& iter_args) {
    if (std::ranges::all_of(iter_args, [](const IterArg& arg) { return arg.carry == CarryKind::Unclassified; }))
      return "";
    std::vector<std::string> kinds;
    for (const auto& iter_arg : iter_args) kinds.push_back(fmt::format("\"{}\"", CarryKindName(iter_arg.carry)));
    return ", carry=" + TupleText(kinds);
  }

  // `while cond:`, or with carried values the explicit form the frontend reads back:
  // `for (a, b) in pl.while_(init_values=(x, y)):` whose body opens with `pl.cond(cond)`.
  void WhileLoop(const WhileStmt& loop) {
    if (loop.iter_args().empty()) {
      Line(fmt::format("while {}:", Expr(loop.condition())));
      return Block(loop.body(), loop.return_vars());
    }
    std::vector<std::string> inits, carried;
    for (const auto& iter_arg : loop.iter_args()) inits.push_back(Expr(iter_arg.init));
    for (const auto& iter_arg : loop.iter_args()) carried.push_back(Name(iter_arg.var.get()));
    Line(fmt::format("for {} in pl.while_(init_values={}):", TupleText(carried), TupleText(inits)));
    ++indent_;
    Line(fmt::format("pl.cond({})", Expr(loop.condition())));
    --indent_;
    Block(loop.body(), loop.return_vars());
  }

  static std::string TupleText(const std::vector<std::string>& items) {
    return items.size() == 1 ? fmt::format("({},)", items[0]) : fmt::format("({})", fmt::join(items, ", "));
  }

  // A loop or if body, whose trailing yield assigns `results` (the statement's return vars).
  void Block(const StmtPtr& body, const std::vector<VarPtr>& results) {
    yield_targets_.push_back(&results);
    ++indent_;
    Stmt(body);
    --indent_;
    yield_targets_.pop_back();
  }

  // `r: T = pl.yield_(v)` for one result (annotated, as any single assignment), `a, b = pl.yield_(x, y)`
  // for several (Python cannot annotate a tuple target), a bare `pl.yield_(...)` for none.
  // `break` / `continue`; in a loop with carried values `pl.break_(v, ...)` / `pl.continue_(v, ...)`,
  // naming the values the jump hands on (Python's keywords take none).
  std::string JumpText(const JumpStmt& jump) {
    const bool is_break = jump.Is<BreakStmt>();
    if (jump.values().empty()) return is_break ? "break" : "continue";
    std::vector<std::string> values;
    for (const auto& value : jump.values()) values.push_back(Expr(value));
    return fmt::format("pl.{}_({})", is_break ? "break" : "continue", fmt::join(values, ", "));
  }

  std::string YieldText(const YieldStmt& yield) {
    std::vector<std::string> values;
    for (const auto& value : yield.values()) values.push_back(Expr(value));
    const std::string call = fmt::format("pl.yield_({})", fmt::join(values, ", "));
    const std::vector<VarPtr>* results = yield_targets_.empty() ? nullptr : yield_targets_.back();
    if (!results || results->empty()) return call;
    if (results->size() == 1)
      return fmt::format("{}: {} = {}", Name((*results)[0].get()), TypeText((*results)[0]->type()), call);
    std::vector<std::string> names;
    for (const auto& var : *results) names.push_back(Name(var.get()));
    return fmt::format("{} = {}", fmt::join(names, ", "), call);
  }

  // A tile's valid shape names variables of this function, so it is spelled with this printer's names.
  std::string TypeText(const TypePtr& type) {
    if (const auto* tile = type->As<TileType>(); tile && tile->has_partial_valid_shape())
      return tile->str([this](const ir::Expr& extent) {
        return Expr(std::shared_ptr<const ir::Expr>(std::shared_ptr<const ir::Expr>{}, &extent));
      });
    return type->str();
  }

  static std::string ParamAnnotation(const TypePtr& type, ParamDirection direction) {
    switch (direction) {
      case ParamDirection::In: return type->str();
      case ParamDirection::Out: return fmt::format("pl.Out[{}]", type->str());
      case ParamDirection::InOut: return fmt::format("pl.InOut[{}]", type->str());
    }
    return type->str();
  }

  static std::string Attrs(const std::map<std::string, AttrValue>& attrs) {
    if (attrs.empty()) return "";
    std::vector<std::string> items;
    for (const auto& [key, value] : attrs) {
      std::string text = std::visit(
          [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
            else if constexpr (std::is_same_v<T, std::string>) return PythonStringLiteral(v);
            else return std::to_string(v);
          },
          value);
      items.push_back(fmt::format("\"{}\": {}", key, text));
    }
    return fmt::format(", attrs={{{}}}", fmt::join(items, ", "));
  }

  // A stable, unique printed name per variable: its hint, suffixed when the hint is taken.
  std::string Name(const Var* var) {
    auto it = names_.find(var);
    if (it != names_.end()) return it->second;
    std::string name = var->name_hint().empty() ? "v" : var->name_hint();
    for (int suffix = 1; used_.contains(name); ++suffix) name = fmt::format("{}_{}", var->name_hint(), suffix);
    used_.insert(name);
    return names_[var] = name;
  }

  void Line(const std::string& text) { out_ << std::string(4 * indent_, ' ') << text << '\n'; }

  int indent_;
  std::ostringstream out_;
  std::map<const Var*, std::string> names_;
  std::vector<const std::vector<VarPtr>*> yield_targets_;  // innermost loop/if last
  std::set<std::string> used_;
};

}  // namespace

std::string PrintFunction(const Function& function) { return Printer(0).Function(function); }

std::string PrintProgram(const Program& program) {
  std::string text = fmt::format("@pl.program\nclass {}:\n", program.name());
  for (size_t i = 0; i < program.functions().size(); ++i) {
    if (i > 0) text += '\n';
    text += Printer(1).Function(*program.functions()[i]);
  }
  return text;
}

std::string PrintExpr(const ExprPtr& expr) { return Printer(0).Expr(expr); }

std::string PythonStringLiteral(std::string_view text) {
  std::string literal = "\"";
  for (char c : text) {
    switch (c) {
      case '"': literal += "\\\""; break;
      case '\\': literal += "\\\\"; break;
      case '\n': literal += "\\n"; break;
      case '\t': literal += "\\t"; break;
      case '\r': literal += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          literal += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
          literal += c;
    }
  }
  return literal + "\"";
}

}  // namespace pypto::ir
