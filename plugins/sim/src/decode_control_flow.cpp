// Decoding statements: sequences, for and while loops (LoopBegin/LoopEnd, BranchIfZero/Jump), ifs,
// yields and the tiles, scalars and arrays loops and ifs carry. Separate from the ops a statement calls.
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <utility>

#include "pypto/ir/printer.h"

namespace pypto::sim::decode {

namespace {

// `for i in pl.range(...)` as the DSL spells it, omitting a start of 0 and a step of 1.
std::string ForText(const ir::ForStmt& loop) {
  const bool from_zero = ir::AsConstInt(loop.start()) == 0, unit_step = ir::AsConstInt(loop.step()) == 1;
  std::string args = ir::PrintExpr(loop.stop());
  if (!from_zero || !unit_step) args = fmt::format("{}, {}", ir::PrintExpr(loop.start()), args);
  if (!unit_step) args = fmt::format("{}, {}", args, ir::PrintExpr(loop.step()));
  return fmt::format("for {} in pl.{}({})", loop.loop_var()->name_hint(), ir::ForKindName(loop.kind()), args);
}

}  // namespace

pypto::expected<void, std::string> Decoder::DecodeStmt(const ir::StmtPtr& stmt) {
  if (done_) return {};  // anything after a return is unreachable
  if (const auto* seq = stmt->As<ir::SeqStmts>()) {
    for (const auto& child : seq->stmts())
      if (auto ok = DecodeStmt(child); !ok) return ok;
    return {};
  }
  if (const auto* assign = stmt->As<ir::AssignStmt>()) return DecodeValue(assign->var(), assign->value(), *stmt);
  if (const auto* eval = stmt->As<ir::EvalStmt>()) return DecodeValue(nullptr, eval->expr(), *stmt);
  if (const auto* loop = stmt->As<ir::ForStmt>()) return DecodeFor(*loop);
  if (const auto* loop = stmt->As<ir::WhileStmt>()) return DecodeWhile(*loop);
  if (const auto* branch = stmt->As<ir::IfStmt>()) return DecodeIf(*branch);
  if (const auto* yield = stmt->As<ir::YieldStmt>()) return DecodeYield(*yield);
  if (stmt->Is<ir::ReturnStmt>()) {
    if (loop_depth_ > 0) {
      return Error(fmt::format("{}: kernel '{}': a return inside a loop is not supported by the simulator",
                               stmt->span().str(), Name()));
    }
    done_ = true;
    return {};
  }
  return Error(fmt::format("{}: kernel '{}': this statement kind is not supported by the simulator (only "
                           "assignments, op calls, for and while loops, ifs and return)",
                           stmt->span().str(), Name()));
}

// A loop becomes LoopBegin, its body, LoopEnd. Its bounds are read once, before the first
// iteration, as Python's range does.
pypto::expected<void, std::string> Decoder::DecodeFor(const ir::ForStmt& loop) {
  const std::string text = ForText(loop);
  const ir::Span& span = loop.span();
  source_ = InstrSource{text, span.str()};
  span_ = &span;
  const auto& var = loop.loop_var();
  if (!var || !IsIntScalar(var->type()) || var->type()->As<ir::ScalarType>()->dtype() == ir::DataType::BOOL) {
    return Fail(fmt::format("the loop variable must be an integer scalar, got {}",
                            var ? var->type()->str() : std::string("none")));
  }
  LoopInfo info;
  info.kind = loop.kind();
  const std::pair<const char*, const ir::ExprPtr*> bounds[] = {
      {"start", &loop.start()}, {"stop", &loop.stop()}, {"step", &loop.step()}};
  Operand* slots[] = {&info.start, &info.stop, &info.step};
  for (size_t i = 0; i < 3; ++i) {
    const ir::ExprPtr& bound = *bounds[i].second;
    const auto* scalar = bound ? bound->type()->As<ir::ScalarType>() : nullptr;
    if (!scalar || !ir::IsInteger(scalar->dtype())) {
      return Fail(fmt::format("the loop {} must be an integer, got `{}` of type {}", bounds[i].first,
                              bound ? ir::PrintExpr(bound) : "", bound ? bound->type()->str() : "none"));
    }
    auto operand = Scalar(bound);
    if (!operand) return Error(operand.error());
    *slots[i] = *operand;
  }
  if (!info.step.is_reg() && info.step.imm == 0) return Fail("the loop step is 0");
  info.var = NewRegister(var->name_hint(), "loop variable");
  info.trips = NewRegister(var->name_hint(), "iterations left");
  if (info.step.is_reg()) info.step_copy = static_cast<int32_t>(NewRegister(var->name_hint(), "step"));
  // Values computed inside the body exist only while it runs (not at all for 0 iterations): the
  // loop variable, scalars assigned in the body and the expressions computed there go out of
  // scope with the loop.
  const size_t computed_scope = computed_.size(), scalar_scope = loop_scalars_.size();
  values_[var.get()] = ScalarValue{Operand::Reg(info.var)};
  loop_scalars_.push_back(var.get());

  if (auto ok = BindCarried(*ir::AsLoop(loop)); !ok) return ok;
  Instr begin;
  begin.op = Opcode::LoopBegin;
  begin.loop = info;
  const size_t begin_index = Emit(begin);
  if (auto body = DecodeLoopBody(loop, loop.body(), computed_scope, scalar_scope); !body) return body;

  source_ = InstrSource{text, span.str()};
  span_ = &span;
  Instr end;
  end.op = Opcode::LoopEnd;
  end.loop = info;
  if (info.step_copy >= 0) end.loop.step = Operand::Reg(static_cast<uint32_t>(info.step_copy));
  end.loop.partner = static_cast<uint32_t>(begin_index);
  const size_t end_index = Emit(end);
  kernel_.code[begin_index].loop.partner = static_cast<uint32_t>(end_index);
  return {};
}

// A loop's body, one level deeper. What it computes exists only while it runs: afterwards the
// expressions computed and scalars assigned since `computed_scope` / `scalar_scope` are forgotten.
pypto::expected<void, std::string> Decoder::DecodeLoopBody(const ir::Stmt& loop, const ir::StmtPtr& body,
                                                           size_t computed_scope, size_t scalar_scope) {
  ++loop_depth_;
  flow_.push_back(&loop);
  auto decoded = DecodeStmt(body);
  flow_.pop_back();
  --loop_depth_;
  if (!decoded) return decoded;
  computed_.resize(computed_scope);
  for (size_t v = scalar_scope; v < loop_scalars_.size(); ++v) values_.erase(loop_scalars_[v]);
  loop_scalars_.resize(scalar_scope);
  return {};
}

// `while c:` becomes: BranchIfZero(c) -> past the loop, the body, Jump back to the BranchIfZero.
// The scalar code computing c runs right before the BranchIfZero, so every jump back evaluates it
// again with the carried values the body yielded; their initial copies run once, before it.
pypto::expected<void, std::string> Decoder::DecodeWhile(const ir::WhileStmt& loop) {
  const std::string text = fmt::format("while {}", ir::PrintExpr(loop.condition()));
  const ir::Span& span = loop.span();
  source_ = InstrSource{text, span.str()};
  span_ = &span;
  if (!IsIntScalar(loop.condition()->type()))
    return Fail(fmt::format("the condition is a {}; the simulator branches on integer and bool scalars",
                            loop.condition()->type()->str()));
  if (auto ok = BindCarried(*ir::AsLoop(loop)); !ok) return ok;
  if (!pending_.empty()) {  // the initial copies, held by a Jump to the next instruction
    Instr hold;
    hold.op = Opcode::Jump;
    const size_t index = Emit(hold);
    kernel_.code[index].branch.target = static_cast<uint32_t>(index + 1);
    source_ = InstrSource{text, span.str()};
  }
  // What the condition and the body compute is recomputed in every iteration.
  const size_t computed_scope = computed_.size(), scalar_scope = loop_scalars_.size();
  auto cond = Scalar(loop.condition());
  if (!cond) return Error(cond.error());
  Instr test;
  test.op = Opcode::BranchIfZero;
  test.branch.cond = *cond;
  const size_t test_index = Emit(test);
  if (auto body = DecodeLoopBody(loop, loop.body(), computed_scope, scalar_scope); !body) return body;
  source_ = InstrSource{text, span.str()};
  span_ = &span;
  Instr back;  // the yield's copies run before it
  back.op = Opcode::Jump;
  back.branch.target = static_cast<uint32_t>(test_index);
  Emit(back);
  kernel_.code[test_index].branch.target = static_cast<uint32_t>(kernel_.code.size());
  return {};
}

// ---- loop-carried values and if/else ----
// A carried tile, its yielded values and the loop's result share one buffer (AllocateMemoryAddr
// places them so), so carrying it costs nothing at run time. A carried integer scalar lives in a
// register of its own: set from the init value before the loop, from the yield before LoopEnd.
pypto::expected<void, std::string> Decoder::BindCarried(const ir::LoopView& loop) {
  for (size_t i = 0; i < loop.iter_args.size(); ++i) {
    const auto& iter_arg = loop.iter_args[i];
    const auto& result = loop.return_vars.at(i);
    if (iter_arg.var->type()->As<ir::TileType>()) {
      auto tile = SharedTile(*iter_arg.var, iter_arg.init);
      if (!tile) return Error(tile.error());
      values_[iter_arg.var.get()] = *tile;
      values_[result.get()] = *tile;
      continue;
    }
    if (iter_arg.var->type()->As<ir::ArrayType>()) {
      auto registers = ArrayRegisters(*iter_arg.var, "loop-carried");
      if (auto ok = CopyArray(iter_arg.init, registers); !ok) return ok;
      values_[iter_arg.var.get()] = registers;
      values_[result.get()] = registers;
      continue;
    }
    if (!IsIntScalar(iter_arg.var->type()))
      return Fail(fmt::format("the loop carries '{}' of type {}; the simulator carries tiles, integer scalars "
                              "and arrays",
                              iter_arg.var->name_hint(), iter_arg.var->type()->str()));
    auto init = Scalar(iter_arg.init);
    if (!init) return Error(init.error());
    const uint32_t reg = NewRegister(iter_arg.var->name_hint(), "loop-carried");
    pending_.push_back(ScalarInstr{ScalarOp::Add, reg, *init, Operand::Imm(0)});
    pending_text_.push_back(ir::PrintExpr(iter_arg.init));
    values_[iter_arg.var.get()] = ScalarValue{Operand::Reg(reg)};
    values_[result.get()] = ScalarValue{Operand::Reg(reg)};
  }
  return {};
}

// The tile a control-flow result names: its own placement, which `other` (an init or a yielded
// value) must share.
pypto::expected<TileValue, std::string> Decoder::SharedTile(const ir::Var& var, const ir::ExprPtr& other) {
  auto tile = TileOf(var);
  if (!tile) return Error(tile.error());
  const auto* other_var = other->As<ir::Var>();
  auto it = other_var ? values_.find(other_var) : values_.end();
  const auto* other_tile = it == values_.end() ? nullptr : std::get_if<TileValue>(&it->second);
  if (!other_tile || other_tile->ref.space != tile->ref.space || other_tile->ref.byte_offset != tile->ref.byte_offset)
    return Fail(fmt::format("'{}' and `{}` must share one buffer (AllocateMemoryAddr places a carried tile and "
                            "its values together)",
                            var.name_hint(), ir::PrintExpr(other)));
  return *tile;
}

pypto::expected<TileValue, std::string> Decoder::TileOf(const ir::Var& var) {
  const auto* type = var.type()->As<ir::TileType>();
  if (!type || !type->memref())
    return Fail(fmt::format("tile '{}' has no address; run AllocateMemoryAddr first", var.name_hint()));
  return TileValue{TileRef{type->memory_space(), type->memref()->byte_offset, type->memref()->size},
                   type->dtype(), type->shape(), type->num_elements()};
}

// A yield ends a loop body (the next iteration's values) or a branch (the if's results).
pypto::expected<void, std::string> Decoder::DecodeYield(const ir::YieldStmt& yield) {
  source_ = InstrSource{"pl.yield_(...)", yield.span().str()};
  span_ = &yield.span();
  if (flow_.empty()) return Fail("pl.yield_ outside a loop or an if");
  std::vector<ir::VarPtr> targets;
  if (auto loop = ir::AsLoop(*flow_.back())) {
    for (const auto& iter_arg : loop->iter_args) targets.push_back(iter_arg.var);
  } else {
    targets = flow_.back()->As<ir::IfStmt>()->return_vars();
  }
  if (targets.size() != yield.values().size())
    return Fail(fmt::format("pl.yield_ of {} values for {} results", yield.values().size(), targets.size()));
  // Scalars go through temporaries, so `a, b = pl.yield_(b, a)` swaps.
  std::vector<std::pair<uint32_t, uint32_t>> copies;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& value = yield.values()[i];
    if (targets[i]->type()->As<ir::TileType>()) {
      auto tile = SharedTile(*targets[i], value);
      if (!tile) return Error(tile.error());
      continue;
    }
    auto target = values_.find(targets[i].get());
    if (const auto* array = target == values_.end() ? nullptr : std::get_if<ArrayValue>(&target->second)) {
      auto elements = ArrayOf(value);
      if (!elements) return Error(elements.error());
      for (size_t e = 0; e < array->elements.size(); ++e) {
        const uint32_t temp = NewRegister(targets[i]->name_hint(), "next value");
        pending_.push_back(ScalarInstr{ScalarOp::Add, temp, elements->elements[e], Operand::Imm(0)});
        pending_text_.push_back(fmt::format("{}[{}]", ir::PrintExpr(value), e));
        copies.emplace_back(static_cast<uint32_t>(array->elements[e].reg), temp);
      }
      continue;
    }
    const auto* scalar = target == values_.end() ? nullptr : std::get_if<ScalarValue>(&target->second);
    if (!scalar || !scalar->operand.is_reg())
      return Fail(fmt::format("'{}' is a {} produced by an if; the simulator supports tiles and integer scalars "
                              "there so far",
                              targets[i]->name_hint(), targets[i]->type()->str()));
    auto operand = Scalar(value);
    if (!operand) return Error(operand.error());
    const uint32_t temp = NewRegister(targets[i]->name_hint(), "next value");
    pending_.push_back(ScalarInstr{ScalarOp::Add, temp, *operand, Operand::Imm(0)});
    pending_text_.push_back(ir::PrintExpr(value));
    copies.emplace_back(static_cast<uint32_t>(scalar->operand.reg), temp);
  }
  for (auto [reg, temp] : copies) {
    pending_.push_back(ScalarInstr{ScalarOp::Add, reg, Operand::Reg(temp), Operand::Imm(0)});
    pending_text_.push_back(kernel_.registers[temp].name);
  }
  return {};
}

// `if c:` becomes BranchIfZero(c) -> else; the if branch; Jump -> end; the else branch.
pypto::expected<void, std::string> Decoder::DecodeIf(const ir::IfStmt& branch) {
  const std::string text = fmt::format("if {}", ir::PrintExpr(branch.condition()));
  source_ = InstrSource{text, branch.span().str()};
  span_ = &branch.span();
  if (!IsIntScalar(branch.condition()->type()))
    return Fail(fmt::format("the condition is a {}; the simulator branches on integer and bool scalars",
                            branch.condition()->type()->str()));
  auto cond = Scalar(branch.condition());
  if (!cond) return Error(cond.error());
  for (const auto& result : branch.return_vars()) {
    if (IsIntScalar(result->type())) {  // each branch's yield sets it (DecodeYield)
      values_[result.get()] = ScalarValue{Operand::Reg(NewRegister(result->name_hint(), "if result"))};
      if (loop_depth_ > 0) loop_scalars_.push_back(result.get());
      continue;
    }
    if (result->type()->As<ir::ArrayType>()) {  // each branch's yield sets its registers
      values_[result.get()] = ArrayRegisters(*result, "if result");
      if (loop_depth_ > 0) loop_scalars_.push_back(result.get());
      continue;
    }
    if (!result->type()->As<ir::TileType>())
      return Fail(fmt::format("'{}' is a {} produced by an if; the simulator supports tiles, integer scalars "
                              "and arrays there so far",
                              result->name_hint(), result->type()->str()));
    auto tile = TileOf(*result);
    if (!tile) return Error(tile.error());
    values_[result.get()] = *tile;
  }
  Instr test;
  test.op = Opcode::BranchIfZero;
  test.branch.cond = *cond;
  const size_t test_index = Emit(test);
  if (auto ok = DecodeBranch(branch, branch.then_body()); !ok) return ok;
  if (!branch.else_body()) {
    kernel_.code[test_index].branch.target = static_cast<uint32_t>(kernel_.code.size());
    return {};
  }
  Instr jump;
  jump.op = Opcode::Jump;
  source_ = InstrSource{"else", branch.span().str()};
  const size_t jump_index = Emit(jump);
  kernel_.code[test_index].branch.target = static_cast<uint32_t>(kernel_.code.size());
  if (auto ok = DecodeBranch(branch, branch.else_body()); !ok) return ok;
  kernel_.code[jump_index].branch.target = static_cast<uint32_t>(kernel_.code.size());
  return {};
}

// A branch's body. What it computes is not reused after the if (the other path did not compute
// it), and scalar code it leaves pending runs inside it (a Jump to the next instruction holds it).
pypto::expected<void, std::string> Decoder::DecodeBranch(const ir::IfStmt& branch, const ir::StmtPtr& body) {
  const size_t computed_scope = computed_.size();
  flow_.push_back(&branch);
  auto ok = DecodeStmt(body);
  flow_.pop_back();
  if (!ok) return ok;
  computed_.resize(computed_scope);
  if (!pending_.empty()) {
    Instr hold;
    hold.op = Opcode::Jump;
    source_ = InstrSource{"end of branch", branch.span().str()};
    const size_t index = Emit(hold);
    kernel_.code[index].branch.target = static_cast<uint32_t>(index + 1);
  }
  return {};
}

}  // namespace pypto::sim::decode
