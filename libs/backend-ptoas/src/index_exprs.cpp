// Loops, ifs and index arithmetic. A pl.range / pl.parallel loop becomes an scf.for over `index`; its
// bounds, and the offsets of the windows loaded and stored inside it, are integer expressions whose
// arith ops are emitted where they are used. Everything is computed in `index`, the type scf.for
// and partition_view take, so no value needs a cast after the prologue's casts of scalar parameters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerFor(const ir::ForStmt& loop) {
  // The bounds are evaluated once, before the loop, in the loop statement's location.
  std::string start = IndexValue(loop.start(), loop.span());
  std::string stop = IndexValue(loop.stop(), loop.span());
  std::string step = IndexValue(loop.step(), loop.span());
  std::string var = names_.Named(loop.loop_var()->name_hint());
  indices_[loop.loop_var().get()] = var;
  // Carried integer scalars are the loop's iter_args and results; carried tiles stay in their buffer.
  std::vector<size_t> carried = ScalarPositions(loop.return_vars());
  std::string iter_args;
  for (size_t i : carried) {
    const auto& iter_arg = loop.iter_args()[i];
    std::string init = IndexValue(iter_arg.init, loop.span());
    std::string arg = names_.Named(iter_arg.var->name_hint());
    indices_[iter_arg.var.get()] = arg;
    iter_args += fmt::format("{}{} = {}", iter_args.empty() ? "" : ", ", arg, init);
  }
  std::string results = ResultNames(loop.return_vars(), carried);
  std::string header = fmt::format("scf.for {} = {} to {} step {}", var, start, stop, step);
  if (!carried.empty()) header = fmt::format("{} = {} iter_args({}) -> ({})", results, header, iter_args,
                                             IndexTypes(carried.size()));
  AddStructural(header + " {");
  ++depth_;
  const auto& body = plan_.loop_bodies.at(&loop);
  for (const auto& stmt : body) LowerStmt(*stmt);
  if (!carried.empty()) YieldScalars(*body.back()->As<ir::YieldStmt>(), carried, loop.span());
  --depth_;
  AddStructural("}");
}

std::vector<size_t> KernelEmitter::ScalarPositions(const std::vector<ir::VarPtr>& results) {
  std::vector<size_t> positions;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i]->type()->As<ir::ScalarType>()) positions.push_back(i);
  return positions;
}

std::string KernelEmitter::ResultNames(const std::vector<ir::VarPtr>& results, const std::vector<size_t>& scalars) {
  if (scalars.empty()) return "";
  std::string base = names_.Named(results[scalars[0]]->name_hint());
  for (size_t k = 0; k < scalars.size(); ++k)
    indices_[results[scalars[k]].get()] = scalars.size() == 1 ? base : fmt::format("{}#{}", base, k);
  return scalars.size() == 1 ? base : fmt::format("{}:{}", base, scalars.size());
}

std::string KernelEmitter::IndexTypes(size_t count) {
  std::string types;
  for (size_t k = 0; k < count; ++k) types += k ? ", index" : "index";
  return types;
}

void KernelEmitter::YieldScalars(const ir::YieldStmt& yield, const std::vector<size_t>& scalars,
                                 const ir::Span& span) {
  std::string values;
  for (size_t i : scalars) values += (values.empty() ? "" : ", ") + IndexValue(yield.values()[i], span);
  Add(body_, fmt::format("scf.yield {} : {}", values, IndexTypes(scalars.size())), yield.span());
}

// %r:2 = scf.while (%a = %a0, %b = %b0) : (index, index) -> (index, index) {
//   %c = arith.cmpi ..., %a, ... : index
//   scf.condition(%c) %a, %b : index, index
// } do {
// ^bb0(%a_1: index, %b_1: index):
//   ...
//   scf.yield %a_next, %b_next : index, index
// }
// The condition reads the "before" region's arguments, the body the "do" region's: the carried
// variable is bound to each in turn, and to the scf.while's result after it.
void KernelEmitter::LowerWhile(const ir::WhileStmt& loop) {
  std::vector<const ir::IterArg*> carried;  // the scalars; carried tiles are updated in their buffer
  std::vector<size_t> positions;
  for (size_t i = 0; i < loop.iter_args().size(); ++i) {
    if (loop.iter_args()[i].var->type()->As<ir::TileType>()) continue;
    carried.push_back(&loop.iter_args()[i]);
    positions.push_back(i);
  }
  const std::vector<std::string> types(carried.size(), "index");
  const std::string type_list = fmt::format("{}", fmt::join(types, ", "));
  const std::string result_types = carried.size() == 1 ? "index" : fmt::format("({})", type_list);
  std::vector<std::string> operands, before_args, after_args;
  for (const auto* iter_arg : carried) {
    std::string init = IndexValue(iter_arg->init, loop.span());
    before_args.push_back(names_.Named(iter_arg->var->name_hint()));
    operands.push_back(fmt::format("{} = {}", before_args.back(), init));
  }
  std::string results;
  if (carried.empty()) {
    AddStructural("scf.while : () -> () {");
  } else {
    results = names_.Named(loop.return_vars()[positions[0]]->name_hint());
    const std::string count = carried.size() == 1 ? "" : fmt::format(":{}", carried.size());
    AddStructural(fmt::format("{}{} = scf.while ({}) : ({}) -> {} {{", results, count, fmt::join(operands, ", "),
                              type_list, result_types));
  }
  ++depth_;
  for (size_t k = 0; k < carried.size(); ++k) indices_[carried[k]->var.get()] = before_args[k];
  std::string condition = ConditionValue(loop.condition(), loop.span());
  Add(body_,
      carried.empty() ? fmt::format("scf.condition({})", condition)
                      : fmt::format("scf.condition({}) {} : {}", condition, fmt::join(before_args, ", "), type_list),
      loop.span());
  --depth_;
  AddStructural("} do {");
  std::vector<std::string> block_args;
  for (const auto* iter_arg : carried) {
    after_args.push_back(names_.Named(iter_arg->var->name_hint()));
    block_args.push_back(after_args.back() + ": index");
  }
  ++depth_;
  if (!carried.empty()) AddStructural(fmt::format("^bb0({}):", fmt::join(block_args, ", ")));
  for (size_t k = 0; k < carried.size(); ++k) indices_[carried[k]->var.get()] = after_args[k];
  const ir::YieldStmt* yield = nullptr;
  for (const auto& stmt : plan_.while_bodies.at(&loop)) {
    if ((yield = stmt->As<ir::YieldStmt>())) break;
    LowerStmt(*stmt);
  }
  std::vector<std::string> next;
  for (size_t position : positions) next.push_back(IndexValue(yield->values()[position], yield->span()));
  const ir::Span& yield_span = yield ? yield->span() : loop.span();
  Add(body_, carried.empty() ? "scf.yield" : fmt::format("scf.yield {} : {}", fmt::join(next, ", "), type_list),
      yield_span);
  --depth_;
  AddStructural("}");
  for (size_t k = 0; k < carried.size(); ++k)
    indices_[loop.return_vars()[positions[k]].get()] =
        carried.size() == 1 ? results : fmt::format("{}#{}", results, k);
}

std::string KernelEmitter::IndexValue(const ir::ExprPtr& expr, const ir::Span& span) {
  if (auto value = ir::AsConstInt(expr)) return names_.Constant(*value, "index");
  if (const auto* var = expr->As<ir::Var>()) return indices_.at(var);
  if (IsElementRead(*expr)) return ReadElement(*expr->As<ir::Call>(), "element", span);  // pl.read(t, [i])
  if (const auto* cast = expr->As<ir::Call>()) return CastIndex(*cast, "cast", span);  // pl.cast(i, pl.INT32)
  const auto& binary = *expr->As<ir::BinaryExpr>();
  std::string lhs = IndexValue(binary.lhs(), span);
  std::string rhs = IndexValue(binary.rhs(), span);
  switch (binary.op()) {
    case ir::BinaryOp::Add: return Arith("arith.addi", lhs, rhs, span);
    case ir::BinaryOp::Sub: return Arith("arith.subi", lhs, rhs, span);
    case ir::BinaryOp::Mul: return Arith("arith.muli", lhs, rhs, span);
    // The DSL divides as Python does, rounding toward negative infinity (the IR folds constants
    // that way too); arith.divsi / arith.remsi would truncate toward zero instead.
    case ir::BinaryOp::FloorDiv: return Arith("arith.floordivsi", lhs, rhs, span);
    case ir::BinaryOp::FloorMod: {
      // a % b == a - (a // b) * b, with the sign of b; arith has no floored remainder.
      std::string quotient = Arith("arith.floordivsi", lhs, rhs, span);
      return Arith("arith.subi", lhs, Arith("arith.muli", quotient, rhs, span), span);
    }
    case ir::BinaryOp::Min: return Arith("arith.minsi", lhs, rhs, span);
    case ir::BinaryOp::Max: return Arith("arith.maxsi", lhs, rhs, span);
    case ir::BinaryOp::Shl: return Arith("arith.shli", lhs, rhs, span);
    case ir::BinaryOp::Shr: return Arith("arith.shrsi", lhs, rhs, span);
    default: break;  // the plan refuses the rest
  }
  return "?";
}

void KernelEmitter::LowerIf(const ir::IfStmt& branch) {
  std::string condition = ConditionValue(branch.condition(), branch.span());
  const auto& [then_body, else_body] = plan_.branch_bodies.at(&branch);
  // Merged integer scalars are the scf.if's results, yielded by each branch; merged tiles share a buffer.
  std::vector<size_t> merged = ScalarPositions(branch.return_vars());
  std::string header = fmt::format("scf.if {}", condition);
  if (!merged.empty())
    header = fmt::format("{} = {} -> ({})", ResultNames(branch.return_vars(), merged), header,
                         IndexTypes(merged.size()));
  // The results are named before the branches are lowered, but only read after the if.
  AddStructural(header + " {");
  ++depth_;
  for (const auto& stmt : then_body) LowerStmt(*stmt);
  if (!merged.empty()) YieldScalars(*then_body.back()->As<ir::YieldStmt>(), merged, branch.span());
  --depth_;
  if (!else_body.empty()) {
    AddStructural("} else {");
    ++depth_;
    for (const auto& stmt : else_body) LowerStmt(*stmt);
    if (!merged.empty()) YieldScalars(*else_body.back()->As<ir::YieldStmt>(), merged, branch.span());
    --depth_;
  }
  AddStructural("}");
}

std::string KernelEmitter::ConditionValue(const ir::ExprPtr& condition, const ir::Span& span) {
  if (const auto* constant = condition->As<ir::ConstBool>()) {
    std::string value = names_.Temp();
    Add(body_, fmt::format("{} = arith.constant {} : i1", value, constant->value() ? "true" : "false"), span);
    return value;
  }
  // A boolean scalar parameter is its i1 argument (Planner::CheckCondition).
  if (const auto* flag = condition->As<ir::Var>()) return values_.at(flag);
  const auto& binary = *condition->As<ir::BinaryExpr>();
  if (const auto dtype = ComparedFloatType(binary)) return FloatComparison(binary, *dtype, span);
  std::string lhs = IndexValue(binary.lhs(), span);
  std::string rhs = IndexValue(binary.rhs(), span);
  const char* predicate = "eq";
  switch (binary.op()) {
    case ir::BinaryOp::Eq: predicate = "eq"; break;
    case ir::BinaryOp::Ne: predicate = "ne"; break;
    case ir::BinaryOp::Lt: predicate = "slt"; break;
    case ir::BinaryOp::Le: predicate = "sle"; break;
    case ir::BinaryOp::Gt: predicate = "sgt"; break;
    case ir::BinaryOp::Ge: predicate = "sge"; break;
    default: break;  // the plan refuses the rest
  }
  std::string value = names_.Temp();
  Add(body_, fmt::format("{} = arith.cmpi {}, {}, {} : index", value, predicate, lhs, rhs), span);
  return value;
}

void KernelEmitter::LowerScalarAssign(const ir::AssignStmt& assign) {
  const ir::Var* var = assign.var().get();
  const auto* call = assign.value()->As<ir::Call>();
  if (!call) {
    indices_[var] = IndexValue(assign.value(), assign.span());
    return;
  }
  const std::string& op = call->target_name();
  if (op == "tensor.read" || op == "tile.read") {
    // A floating-point element stays at its type, a scalar operand for tile ops (ScalarOperand).
    if (plan_.float_scalars.contains(var)) {
      values_[var] = ReadElement(*call, var->name_hint(), assign.span());
      return;
    }
    indices_[var] = ReadElement(*call, var->name_hint(), assign.span());
    return;
  }
  if (op == "scalar.cast" && plan_.float_scalars.contains(var)) {
    values_[var] = CastToFloat(*call, assign.span());
    return;
  }
  if (op == "scalar.cast") {
    indices_[var] = CastIndex(*call, var->name_hint(), assign.span());
    return;
  }
  const std::string& arg = op == "tile.get_block_idx"   ? block_idx_arg_
                           : op == "tile.get_block_num" ? block_num_arg_
                                                        : subblock_idx_arg_;
  std::string value = names_.Named(var->name_hint());
  Add(body_, fmt::format("{} = arith.index_cast {} : i32 to index", value, arg), assign.span());
  indices_[var] = value;
}

// sum(index[d] * stride[d]) over `strides` (a tile's, or a tensor parameter's from EmitDenseStrides).
std::string KernelEmitter::FlatOffset(const std::vector<DenseStride>& strides, const ir::ExprPtr& indices,
                                      const ir::Span& span) {
  const auto& index = indices->As<ir::TupleLiteral>()->elements();
  std::string offset;
  for (size_t d = strides.size(); d-- > 0;) {
    std::string term = IndexValue(index[d], span);
    if (!strides[d].run_time.empty())
      term = Arith("arith.muli", term, strides[d].run_time, span);
    else if (strides[d].constant != 1)
      term = Arith("arith.muli", term, names_.Constant(strides[d].constant, "index"), span);
    offset = offset.empty() ? term : Arith("arith.addi", offset, term, span);
  }
  return offset;
}

// The dense row-major strides of a tile's shape.
std::vector<KernelEmitter::DenseStride> KernelEmitter::TileStrides(const ir::Shape& shape) {
  std::vector<DenseStride> strides;
  for (int64_t stride : RowMajorStrides(shape)) strides.push_back({.constant = stride});
  return strides;
}

// %raw = pto.load_scalar %argN[%off] : !pto.ptr<i32> -> i32 (a tensor parameter's element) or
// %raw = pto.tgetval ins(%t, %off : <tile>, index) outs : i32 (a tile's), widened to index. Their
// generic forms list the operands as PTOAS's definitions do: (ptr, offset), (src, offset).
std::string KernelEmitter::ReadElement(const ir::Call& read, const std::string& name, const ir::Span& span) {
  const auto& operand = *read.args()[0]->As<ir::Var>();
  const auto* tile = operand.type()->As<ir::TileType>();
  const ir::Var* param = tile ? nullptr : plan_.tensor_param_of.at(&operand);
  const auto* tensor = tile ? nullptr : param->type()->As<ir::TensorType>();
  const std::string element = ElementOf(tile ? tile->dtype() : tensor->dtype());
  const std::string offset =
      FlatOffset(tile ? TileStrides(tile->shape()) : dense_strides_.at(param), read.args()[1], span);
  const TypedValue raw{names_.Temp(), element};
  const TypedValue index{offset, "index"};
  PtoOp op{.name = tile ? "pto.tgetval" : "pto.load_scalar", .result = raw};
  if (tile) {
    const TypedValue source{values_.at(&operand), TileOperandType(operand)};
    op.custom_syntax = fmt::format("{} = pto.tgetval ins({}, {} : {}, index) outs : {}", raw.value, source.value,
                                   offset, source.type, element);
    op.generic_operands = GenericOperands{{{source}, {index}}};
  } else {
    const TypedValue pointer{values_.at(param), PtrType(element)};
    op.custom_syntax = fmt::format("{} = pto.load_scalar {}[{}] : {} -> {}", raw.value, pointer.value, offset,
                                   pointer.type, element);
    op.generic_operands = GenericOperands{{{pointer}, {index}}};
  }
  Add(body_, op, span);
  if (element == "index" || ir::IsFloat(tile ? tile->dtype() : tensor->dtype())) return raw.value;
  std::string value = names_.Named(name);
  Add(body_, fmt::format("{} = arith.index_cast {} : {} to index", value, raw.value, element), span);
  return value;
}

// An integer cast: index values are 64-bit, so a cast to a narrower integer wraps the value through
// that width (arith.index_cast truncates, and sign-extends on the way back); any other is the value.
// pl.cast to a floating-point type: a literal becomes a constant of that type; a floating-point
// scalar is converted as a scalar operand is (extf / truncf); an integer index value goes through
// i64 (`arith.index_cast`, then `arith.sitofp`).
std::string KernelEmitter::CastToFloat(const ir::Call& cast, const ir::Span& span) {
  const ir::ExprPtr& value = cast.args()[0];
  const ir::DataType to = cast.type()->As<ir::ScalarType>()->dtype();
  const auto* scalar = value->type()->As<ir::ScalarType>();
  if (value->Is<ir::ConstFloat>() || value->Is<ir::ConstInt>() || (scalar && ir::IsFloat(scalar->dtype())))
    return ScalarOperand(value, to, span).value;
  const std::string wide = names_.Temp();
  Add(body_, fmt::format("{} = arith.index_cast {} : index to i64", wide, IndexValue(value, span)), span);
  const std::string converted = names_.Temp();
  Add(body_, fmt::format("{} = arith.sitofp {} : i64 to {}", converted, wide, ElementOf(to)), span);
  return converted;
}

std::string KernelEmitter::CastIndex(const ir::Call& cast, const std::string& name, const ir::Span& span) {
  if (IsComparisonExpr(*cast.args()[0])) return BoolToIndex(ConditionValue(cast.args()[0], span), name, span);
  if (IsFloatScalarExpr(*cast.args()[0])) return FloatToIndex(cast, name, span);
  std::string value = IndexValue(cast.args()[0], span);
  const ir::DataType to = cast.type()->As<ir::ScalarType>()->dtype();
  const ir::DataType from = cast.args()[0]->type()->As<ir::ScalarType>()->dtype();
  const auto bits = [](ir::DataType dtype) { return dtype == ir::DataType::INDEX ? 64 : ir::DataTypeBits(dtype); };
  if (bits(to) >= bits(from)) return value;
  // Truncated to the width in arith's signless type, then widened back: sign-extended for a signed
  // type, zero-extended (arith.index_castui) for an unsigned one.
  const bool is_unsigned = ir::IsUnsignedInteger(to);
  const std::string narrow = is_unsigned ? fmt::format("i{}", ir::DataTypeBits(to)) : ElementOf(to);
  std::string truncated = names_.Temp();
  Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", truncated, value, narrow), span);
  std::string wrapped = names_.Named(name);
  Add(body_, fmt::format("{} = arith.{} {} : {} to index", wrapped, is_unsigned ? "index_castui" : "index_cast",
                         truncated, narrow),
      span);
  return wrapped;
}

// The index value narrowed to the element type, then
// pto.store_scalar %v, %argN[%off] : !pto.ptr<i32>, i32 (a tensor parameter's element) or
// pto.tsetval ins(%off, %v : index, i32) outs(%t : <tile>) (a tile's, in place); generically
// (ptr, offset, value) and (dst, offset, val), PTOAS's argument order.
void KernelEmitter::WriteElement(const ir::Call& write, const ir::Span& span) {
  const auto& operand = *write.args()[0]->As<ir::Var>();
  const auto* tile = operand.type()->As<ir::TileType>();
  const ir::Var* param = tile ? nullptr : plan_.tensor_param_of.at(&operand);
  const auto& shape = tile ? tile->shape() : param->type()->As<ir::TensorType>()->shape();
  const std::string element = ElementOf(tile ? tile->dtype() : param->type()->As<ir::TensorType>()->dtype());
  const std::string offset =
      FlatOffset(tile ? TileStrides(shape) : dense_strides_.at(param), write.args()[1], span);
  const ir::DataType dtype = tile ? tile->dtype() : param->type()->As<ir::TensorType>()->dtype();
  // A floating-point element takes a scalar operand at its type; an integer one the index value narrowed.
  const bool float_element = ir::IsFloat(dtype);
  std::string value = float_element ? ScalarOperand(write.args()[2], dtype, span).value : IndexValue(write.args()[2], span);
  if (element != "index" && !float_element) {
    std::string narrowed = names_.Temp();
    Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", narrowed, value, element), span);
    value = narrowed;
  }
  const TypedValue index{offset, "index"}, scalar{value, element};
  PtoOp op{.name = tile ? "pto.tsetval" : "pto.store_scalar"};
  if (tile) {
    const TypedValue target{values_.at(&operand), TileOperandType(operand)};
    op.custom_syntax = fmt::format("pto.tsetval ins({}, {} : index, {}) outs({} : {})", offset, value, element,
                                   target.value, target.type);
    op.generic_operands = GenericOperands{{{target}, {index}, {scalar}}};
  } else {
    const TypedValue pointer{values_.at(param), PtrType(element)};
    op.custom_syntax = fmt::format("pto.store_scalar {}, {}[{}] : {}, {}", value, pointer.value, offset,
                                   pointer.type, element);
    op.generic_operands = GenericOperands{{{pointer}, {index}, {scalar}}};
  }
  Add(body_, op, span);
}

std::string KernelEmitter::Arith(std::string_view op, const std::string& lhs, const std::string& rhs,
                                 const ir::Span& span) {
  std::string result = names_.Temp();
  Add(body_, fmt::format("{} = {} {}, {} : index", result, op, lhs, rhs), span);
  return result;
}

}  // namespace pypto::backend_ptoas
