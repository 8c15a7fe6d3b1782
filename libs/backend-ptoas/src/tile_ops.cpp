// How each supported tile op prints (the table is FindLowering's). Loads and stores go through a
// partition_view: the window [offsets, offsets + sizes) of a tensor view, statically shaped but
// possibly at offsets computed in a loop, which tload/tstore then move as a whole. Every other op is
// `pto.<op> ins(operands [attrs] : types) outs(result : type)`. Each op is described once, as a
// PtoOp, and printed in the form ModuleOptions asks for (pto_op.h).
#include <fmt/format.h>

#include <cctype>

#include "kernel_emitter.h"
#include "mlir_types.h"
#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"
#include "source_loc.h"

namespace pypto::backend_ptoas {
namespace {

ir::Shape StaticInts(const ir::ExprPtr& tuple) {
  ir::Shape values;
  for (const auto& element : tuple->As<ir::TupleLiteral>()->elements()) values.push_back(*ir::AsConstInt(element));
  return values;
}

// `high_precision=True` of tile.div / tile.log selects PTOAS's precise template, named by an enum
// attribute after outs(...).
std::vector<PtoAttr> PrecisionAttrs(const OpLowering& lowering, const ir::Call& call) {
  if (!ir::FindAttr<bool>(call.kwargs(), "high_precision").value_or(false)) return {};
  const std::string_view kind = lowering.pto == "pto.tdiv" ? "div_precision" : "log_precision";
  return {{"precisionType", fmt::format("#pto<{} high_precision>", kind)}};
}

}  // namespace

void KernelEmitter::LowerStmt(const ir::Stmt& stmt) {
  if (const auto* loop = stmt.As<ir::ForStmt>()) return LowerFor(*loop);
  if (const auto* loop = stmt.As<ir::WhileStmt>()) return LowerWhile(*loop);
  if (const auto* branch = stmt.As<ir::IfStmt>()) return LowerIf(*branch);
  const ir::Call* call = nullptr;
  const auto* assign = stmt.As<ir::AssignStmt>();
  const auto* value = assign ? assign->value()->As<ir::Call>() : nullptr;
  // An explicit pipe setup is the one the module's pipes already have (Planner::CheckPipeSetup).
  const auto* eval = stmt.As<ir::EvalStmt>();
  const auto* evaluated = eval ? eval->expr()->As<ir::Call>() : nullptr;
  for (const ir::Call* setup : {value, evaluated})
    if (setup && IsPipeSetupOp(setup->target_name())) return;
  // comm.rank, array.get_element and prefetch.wait give scalars too.
  const bool own_form =
      value && (value->target_name().starts_with("comm.") || value->target_name().starts_with("array.") ||
                value->target_name().starts_with("prefetch."));
  if (assign && assign->var()->type()->As<ir::ScalarType>() && !own_form) return LowerScalarAssign(*assign);
  if (assign) {
    call = assign->value()->As<ir::Call>();
  } else if (const auto* eval = stmt.As<ir::EvalStmt>()) {
    call = eval->expr()->As<ir::Call>();
  }
  if (!call) return;  // the return: results leave through output tensors
  if (call->target_name() == "tensor.write" || call->target_name() == "tile.write")
    return WriteElement(*call, OpSpan(stmt.span(), call->span()));
  if (assign && deferred_allocs_.contains(assign->var().get())) EmitDeferredAlloc(*assign);
  const ir::Span& span = OpSpan(stmt.span(), call->span());
  if (ir::IsCrossCorePipeOp(call->target_name())) return LowerPipe(*call, assign, span);
  if (const std::string& op = call->target_name();
      op == "system.set_ffts" || op == "system.sync_set" || op == "system.sync_wait")
    return LowerSync(*call, span);
  if (call->target_name().starts_with("comm.")) return LowerComm(*call, assign, span);
  if (call->target_name().starts_with("array.")) return LowerArray(*call, *assign, span);
  if (call->target_name().starts_with("prefetch.")) return LowerPrefetch(*call, assign, span);
  const OpLowering& lowering = *FindLowering(call->target_name());
  switch (lowering.form) {
    case OpForm::Load: return LowerLoad(*assign, *call, span);
    case OpForm::Store: return LowerStore(*call, span);
    case OpForm::MemScatter: return LowerMemScatter(*call, span);
    // The result's alloc_tile (at the address memory allocation chose, with the result's shape) is the op.
    case OpForm::Alloc:
    case OpForm::Reshape:
    case OpForm::TransposeView:
    case OpForm::ValidShape: return;
    default: return LowerCompute(lowering, *assign, *call, span);
  }
}

void KernelEmitter::LowerLoad(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span) {
  const auto& tensor = *call.args()[0]->As<ir::Var>();
  const auto* tensor_type = tensor.type()->As<ir::TensorType>();
  ir::Shape sizes = StaticInts(call.args()[2]);
  std::string partition_type = PartitionViewType(sizes, ElementOf(tensor_type->dtype()));
  TypedValue window{PartitionView(tensor, call.args()[1], sizes, partition_type, span), partition_type};
  TypedValue tile{values_.at(assign.var().get()), TileOperandType(*assign.var())};
  PtoOp load = DpsOp("pto.tload", {window}, tile);
  load.attrs = MxLoadAttrs(*tensor_type);
  Add(body_, load, span);
}

void KernelEmitter::LowerStore(const ir::Call& call, const ir::Span& span) {
  const auto& tile = *call.args()[0]->As<ir::Var>();
  const auto& tensor = *call.args()[2]->As<ir::Var>();
  const auto* tensor_type = tensor.type()->As<ir::TensorType>();
  // The window has the tile's shape in the rank of the offsets: a [16, 64] tile stored into a 3-D
  // tensor writes its [1, 16, 64] window, a [1, 16, 64] one into a 2-D tensor its [16, 64] window
  // (the IR checked the two agree). A merged tile's shapes= names its N-d window (the plan checked
  // it is the tile's rows). An Acc tile may be stored into a narrower tensor: the window has the
  // tensor's element type.
  ir::Shape sizes = call.args().size() > 3 ? StaticInts(call.args()[3]) : tile.type()->As<ir::TileType>()->shape();
  const size_t rank = call.args()[1]->As<ir::TupleLiteral>()->elements().size();
  while (sizes.size() < rank) sizes.insert(sizes.begin(), 1);
  while (sizes.size() > rank && sizes.front() == 1) sizes.erase(sizes.begin());
  std::string partition_type = PartitionViewType(sizes, ElementOf(tensor_type->dtype()));
  TypedValue window{PartitionView(tensor, call.args()[1], sizes, partition_type, span), partition_type};
  TypedValue source{values_.at(&tile), TileOperandType(tile)};
  if (plan_.corner_stores.contains(&call)) source = CornerView(tile, StaticInts(call.args()[3]), span);
  PtoOp op = DpsOp("pto.tstore", {source}, window);
  // An atomic-add store (`atomic="add"`) adds the tile into the window: tstore's atomicType.
  if (ir::AccumulatesIntoWrittenArg(call)) op.attrs = {{"atomicType", "#pto<atomic_type atomic_add>"}};
  Add(body_, op, span);
}

void KernelEmitter::LowerCompute(const OpLowering& lowering, const ir::AssignStmt& assign, const ir::Call& call,
                                 const ir::Span& span) {
  const auto& args = call.args();
  const ir::Var& result = *assign.var();
  auto tile = [&](const ir::ExprPtr& arg) { return TileOperand(*arg->As<ir::Var>(), lowering.row_major); };
  std::vector<TypedValue> ins;
  std::vector<PtoAttr> attrs;
  AttrPlacement placement = AttrPlacement::AfterOperands;
  switch (lowering.form) {
    case OpForm::Arange:
      ins = {ScalarOperand(args[0], result.type()->As<ir::TileType>()->dtype(), span)};
      if (ir::FindAttr<bool>(call.kwargs(), "descending").value_or(false)) attrs = {{"descending", "true"}};
      break;
    case OpForm::MergeSort: {
      // tmrgsort takes block_len as an i32; one computed in a loop is an index value, cast down.
      std::string block_len;
      if (auto constant = ir::AsConstInt(args[1])) {
        block_len = names_.Constant(*constant, "i32");
      } else {
        block_len = names_.Temp();
        Add(body_, fmt::format("{} = arith.index_cast {} : index to i32", block_len, IndexValue(args[1], span)), span);
      }
      ins = {tile(args[0]), {block_len, "i32"}};
      // PTOAS's groups: srcs, blockLen, dsts, and format 2's tmp and excuted (none here).
      PtoOp op = DpsOp(std::string(lowering.pto), ins, TileOperand(result, false));
      op.generic_operands = GenericOperands{{{ins[0]}, {ins[1]}, {op.groups.back().operands[0]}, {}, {}}, true};
      return Add(body_, op, span);
    }
    case OpForm::MergeLists: return LowerMergeLists(call, result, span);
    case OpForm::GatherMask: {
      ins = {tile(args[0])};
      auto pattern = ir::MaskPatternName(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
      placement = AttrPlacement::InInsAfterComma;
      attrs = {{"maskPattern", fmt::format("#pto.mask_pattern<{}>", pattern)}};
      break;
    }
    case OpForm::ScatterMask: return LowerScatterMask(call, result, span);
    case OpForm::Window:
      if (plan_.band_views.contains(&result)) return;  // its alloc_tile is at the band (RecordBandView)
      if (plan_.subset_windows.contains(&result)) return LowerSubsetWindow(call, result, span);
      if (plan_.acc_views.contains(&result)) return LowerAccView(call, result, span);
      ins = {tile(args[0])};
      for (const auto& offset : args[2]->As<ir::TupleLiteral>()->elements())
        ins.push_back({IndexValue(offset, span), "index"});
      break;
    case OpForm::Extract:
      ins = {tile(args[0]), {IndexValue(args[1], span), "index"}, {IndexValue(args[2], span), "index"}};
      // A b_trans operand: the [k, N] window at (col, row) of the source's [K, N] transposed view.
      if (plan_.transposed_rights.contains(&result)) ins = {TransposedView(*args[0]->As<ir::Var>()), ins[2], ins[1]};
      break;
    case OpForm::Insert:
      ins = {tile(args[1])};
      for (const auto& offset : args[2]->As<ir::TupleLiteral>()->elements())
        ins.push_back({IndexValue(offset, span), "index"});
      break;
    case OpForm::Fill: ins = {ScalarOperand(args[1], result.type()->As<ir::TileType>()->dtype(), span)}; break;
    case OpForm::TileScalar:
    case OpForm::TileI32:
    case OpForm::TileF32: {
      ins = {tile(args[0]), ScalarOperand(args[1], ScalarOperandType(lowering, *args[0]), span)};
      if (args.size() > 2) ins.push_back(tile(args[2]));  // trems / txors's scratch, taddsc's third operand
      break;
    }
    case OpForm::Cast:
      ins = {tile(args[0])};
      placement = AttrPlacement::InIns;
      attrs = {{"rmode", fmt::format("#pto<round_mode {}>", RoundMode(call))}};
      break;
    case OpForm::Broadcast: ins = {tile(args[1])}; break;
    case OpForm::FillPad: ins = {tile(args[0])}; break;  // fillpad_expand's shape is the result's
    case OpForm::Compare: {
      static constexpr const char* kModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};
      const int64_t mode = ir::FindAttr<int64_t>(call.kwargs(), "cmp_type").value_or(0);
      ins = {tile(args[0]), args[1]->type()->As<ir::TileType>()
                                ? tile(args[1])
                                : ScalarOperand(args[1], args[0]->type()->As<ir::TileType>()->dtype(), span)};
      placement = AttrPlacement::InIns;
      attrs = {{"cmpMode", fmt::format("#pto<cmp {}>", kModes[mode])}};
      break;
    }
    case OpForm::Move:
      ins = {plan_.transposed_rights.contains(&result) ? TransposedView(*args[0]->As<ir::Var>()) : tile(args[0])};
      break;
    case OpForm::SelectScalar:
      ins = {tile(args[0]), tile(args[1]), tile(args[2]), SelectScalarOperand(call, span)};
      break;
    case OpForm::Triangle: return LowerTriangle(call, result, span);
    case OpForm::MatmulMx: return LowerMatmulMx(lowering, call, result, span);
    case OpForm::MemGather: return LowerMemGather(call, result, span);
    case OpForm::Random: return LowerRandom(call, result, span);
    case OpForm::SinCos: return LowerSinCos(call, result, span);
    case OpForm::Gather: return LowerGather(call, result, span);
    case OpForm::GatherDim: return LowerGatherDim(call, result, span);
    case OpForm::IndexScatter: return LowerIndexScatter(call, result, span);
    case OpForm::PagedGather: return LowerPagedGather(call, result, span);
    // The scratch tile is the program's tmp_tile or the one TransposeScratchTiles gave it.
    case OpForm::Transpose:
      if (args.size() == 1) return LowerBatchTranspose(call, result, span);  // the plan allowed only a batch
      ins = {tile(args[0]), tile(args[1])};
      break;
    // ptoas wants the accumulator in ins() to be the very value outs() names: the result, which
    // sits in the accumulator's buffer.
    case OpForm::MatmulAcc:
      if (args.size() > 3) return LowerInitCond(lowering, call, result, span);
      ins = {TileOperand(result, false), tile(args[1]), tile(args[2])};
      break;
    case OpForm::ColSum:
      placement = AttrPlacement::InIns;
      if (args.size() == 2) attrs = {{"isBinary", "true"}};
      [[fallthrough]];
    default:
      for (const auto& arg : args) ins.push_back(tile(arg));
      if (lowering.form == OpForm::Tiles) attrs = PrecisionAttrs(lowering, call);
      break;
  }
  // GEMV's accumulation phase, a hint to the cube pipeline; the default is spelled by leaving it out.
  if (auto phase = ir::FindAttr<std::string>(call.kwargs(), "acc_phase"); phase && *phase != "unspecified")
    attrs.push_back({"accPhase", fmt::format("#pto<acc_phase {}>", *phase)});
  PtoOp op = DpsOp(std::string(lowering.pto), std::move(ins), TileOperand(result, lowering.row_major));
  op.attrs = std::move(attrs);
  op.attr_placement = placement;
  Add(body_, op, span);
}

// tile.matmul_acc's init_cond: where it holds the accumulator is overwritten (pto.tmatmul of lhs and
// rhs), elsewhere added to (pto.tmatmul.acc). The pto ops have no such flag, so a literal picks one
// and any other condition branches over the two, each writing the result in place; upstream's
// emitter does the same.
void KernelEmitter::LowerInitCond(const OpLowering& lowering, const ir::Call& call, const ir::Var& result,
                                  const ir::Span& span) {
  const auto& args = call.args();
  auto form = [&](bool overwrite) {
    std::vector<TypedValue> ins = {TileOperand(*args[1]->As<ir::Var>(), false),
                                   TileOperand(*args[2]->As<ir::Var>(), false)};
    if (!overwrite) ins.insert(ins.begin(), TileOperand(result, false));
    std::string name(lowering.pto);
    if (overwrite) name.resize(name.size() - std::string_view(".acc").size());  // pto.tmatmul
    return DpsOp(std::move(name), std::move(ins), TileOperand(result, false));
  };
  if (const auto* constant = args[3]->As<ir::ConstInt>()) return Add(body_, form(constant->value() != 0), span);
  if (const auto* constant = args[3]->As<ir::ConstBool>()) return Add(body_, form(constant->value()), span);
  AddStructural(fmt::format("scf.if {} {{", ConditionValue(args[3], span)));
  ++depth_;
  Add(body_, form(true), span);
  --depth_;
  AddStructural("} else {");
  ++depth_;
  Add(body_, form(false), span);
  --depth_;
  AddStructural("}");
}

// pto.tsels takes its scalar at the source's element type, in the signed type of that width for an
// unsigned source (upstream's convention): a constant keeps its bit pattern, 0x8007 becoming -32761.
// An integer source's floating-point constant holds an integer (type deduction checked): it is that.
TypedValue KernelEmitter::SelectScalarOperand(const ir::Call& call, const ir::Span& span) {
  const ir::DataType dtype = call.args()[1]->type()->As<ir::TileType>()->dtype();
  ir::DataType scalar_dtype = dtype;
  if (dtype == ir::DataType::UINT8) scalar_dtype = ir::DataType::INT8;
  if (dtype == ir::DataType::UINT16) scalar_dtype = ir::DataType::INT16;
  if (dtype == ir::DataType::UINT32) scalar_dtype = ir::DataType::INT32;
  ir::ExprPtr scalar = call.args()[3];
  if (const auto* constant = scalar->As<ir::ConstFloat>(); constant && !ir::IsFloat(dtype))
    scalar = std::make_shared<ir::ConstInt>(static_cast<int64_t>(constant->value()), dtype, constant->span());
  if (const auto* constant = scalar->As<ir::ConstInt>(); constant && scalar_dtype != dtype) {
    const int bits = static_cast<int>(ir::DataTypeBits(dtype));
    const int64_t modulus = int64_t{1} << bits;
    int64_t value = constant->value() % modulus;
    if (value >= modulus / 2) value -= modulus;
    if (value < -modulus / 2) value += modulus;
    scalar = std::make_shared<ir::ConstInt>(value, scalar_dtype, constant->span());
  }
  return ScalarOperand(scalar, scalar_dtype, span);
}

// TTRI's side is an attribute ptoas reads only in the generic form:
// `"pto.ttri"(%diagonal, %r) {upperOrLower = 1 : i32} : (i32, T) -> ()`.
void KernelEmitter::LowerTriangle(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  PtoOp op = DpsOp("pto.ttri", {ScalarOperand(call.args()[0], ir::DataType::INT32, span)}, TileOperand(result, false));
  const bool upper = ir::FindAttr<bool>(call.kwargs(), "upper").value_or(false);
  op.attrs = {{"upperOrLower", fmt::format("{} : i32", upper ? 1 : 0)}};
  op.generic_only = true;
  Add(body_, op, span);
}

// A Vec window on a2a3: `%w = pto.subset %src[%row, %col] sizes [R, C] : <src type>`, a view that
// keeps the source's layout (PTOAS infers its type), then `pto.tmov` of the view into the result.
void KernelEmitter::LowerSubsetWindow(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& source = *call.args()[0]->As<ir::Var>();
  std::vector<TypedValue> offsets;
  for (const auto& offset : call.args()[2]->As<ir::TupleLiteral>()->elements())
    offsets.push_back({IndexValue(offset, span), "index"});
  if (offsets.size() == 1) offsets.insert(offsets.begin(), IndexConstant(0));  // a 1-D tile is one row
  const TypedValue view = SubsetView(source, offsets[0], offsets[1], TileRowsCols(*result.type()->As<ir::TileType>()),
                                     source.name_hint() + "_window", span);
  Add(body_, DpsOp("pto.tmov", {view}, TileOperand(result, false)), span);
}

// The top-left `corner` of a tile: the tile's bytes and type, its valid extents the corner's.
TypedValue KernelEmitter::CornerView(const ir::Var& tile, const ir::Shape& corner, const ir::Span& span) {
  const TypedValue view{names_.Named(tile.name_hint() + "_corner"), TileOperandType(tile)};
  const TypedValue addr{names_.Constant(tile.type()->As<ir::TileType>()->memref()->byte_offset, "i64"), "i64"};
  const int64_t rows = corner.size() == 1 ? 1 : corner[0];
  Add(body_, AllocTile(view, addr, IndexConstant(rows), IndexConstant(corner.back())), span);
  return view;
}

TypedValue KernelEmitter::ScratchTile(const std::string& name, std::string_view element, TileExtent extent,
                                      const ir::Span& span) {
  return ScratchAt(name, element, extent, 0, span);
}

TypedValue KernelEmitter::SubsetView(const ir::Var& source, const TypedValue& row, const TypedValue& col,
                                     TileExtent window, const std::string& name, const ir::Span& span) {
  const auto& source_type = *source.type()->As<ir::TileType>();
  const TypedValue src = TileOperand(source, false);
  const auto pad = plan_.pad_codes.find(&source);
  const TypedValue view{names_.Named(name),
                        TileBufType(source_type.memory_space(), ElementOf(source_type.dtype()), window,
                                    ImplicitTileLayout(source_type.memory_space(), TileRowsCols(source_type)),
                                    pad == plan_.pad_codes.end() ? 0 : pad->second)};
  const std::string sizes = fmt::format("[{}, {}]", window.rows, window.cols);
  Add(body_, SubsetOp(view, src, row, col, sizes), span);
  return view;
}

// tmrgsort format 2 also writes how many elements it took from each list, into a vector<4xi16>
// operand of outs(); nothing reads the counts, so each merge gets a fresh zero vector for them.
void KernelEmitter::LowerMergeLists(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  std::vector<TypedValue> ins;
  for (const auto& arg : call.args()) ins.push_back(TileOperand(*arg->As<ir::Var>(), false));
  const TypedValue executed{names_.Named("executed"), "vector<4xi16>"};
  Add(body_, fmt::format("{} = arith.constant dense<0> : {}", executed.value, executed.type), span);
  const TypedValue tmp = ins.back();
  const std::vector<TypedValue> lists(ins.begin(), ins.end() - 1);
  PtoOp op = DpsOp("pto.tmrgsort", std::move(ins), TileOperand(result, false));
  op.groups.back().operands.push_back(executed);
  // PTOAS's groups: srcs, blockLen (none in format 2), dsts, tmp, excuted.
  op.generic_operands = GenericOperands{{lists, {}, {op.groups.back().operands[0]}, {tmp}, {executed}}, true};
  const bool exhausted = ir::FindAttr<bool>(call.kwargs(), "exhausted").value_or(false);
  op.attrs = {{"exhausted", exhausted ? "true" : "false"}};
  op.attr_placement = AttrPlacement::InIns;
  Add(body_, op, span);
}

TypedValue KernelEmitter::TileOperand(const ir::Var& tile, bool row_major) const {
  if (row_major) {
    if (auto it = row_views_.find(&tile); it != row_views_.end()) return {it->second, RowViewType(tile)};
  }
  return {values_.at(&tile), TileOperandType(tile)};
}

std::string KernelEmitter::RowViewType(const ir::Var& tile) const {
  const auto* type = tile.type()->As<ir::TileType>();
  return TileBufType(type->memory_space(), ElementOf(type->dtype()), {1, TileRowsCols(*type).rows});
}

TypedValue KernelEmitter::ScalarOperand(const ir::ExprPtr& scalar, ir::DataType dtype, const ir::Span& span) {
  std::string element = ElementOf(dtype);
  if (const auto* constant = scalar->As<ir::ConstFloat>()) {
    // An integer tile's float literal holds an integer (the plan checked): it is that integer.
    if (!ir::IsFloat(dtype)) return {names_.Constant(static_cast<int64_t>(constant->value()), element), element};
    return {names_.FloatConstant(*FloatLiteral(constant->value(), dtype), element), element};
  }
  if (const auto* constant = scalar->As<ir::ConstInt>()) {
    if (ir::IsFloat(dtype)) {
      return {names_.FloatConstant(*FloatLiteral(static_cast<double>(constant->value()), dtype), element), element};
    }
    return {names_.Constant(constant->value(), element), element};
  }
  // An integer index value the kernel computed, for an integer tile: narrowed to its width (arith's
  // signless type; an unsigned tile's then re-typed with builtin.unrealized_conversion_cast).
  const auto& param = *scalar->As<ir::Var>();
  if (!values_.contains(&param)) {
    const bool is_unsigned = ir::IsUnsignedInteger(dtype);
    const std::string signless = is_unsigned ? "i" + element.substr(2) : element;
    std::string value = names_.Temp();
    Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", value, indices_.at(&param), signless), span);
    if (!is_unsigned) return {value, element};
    std::string typed = names_.Temp();
    Add(body_, fmt::format("{} = builtin.unrealized_conversion_cast {} : {} to {}", typed, value, signless, element),
        span);
    return {typed, element};
  }
  // A scalar parameter; the plan accepted only conversions arith has one op for.
  const ir::DataType from = param.type()->As<ir::ScalarType>()->dtype();
  if (from == dtype) return {values_.at(&param), element};
  std::string_view cast;
  if (ir::IsFloat(dtype)) {
    cast = !ir::IsFloat(from) ? "arith.sitofp"
           : ir::DataTypeBits(from) < ir::DataTypeBits(dtype) ? "arith.extf"
                                                              : "arith.truncf";
  } else {
    cast = ir::DataTypeBits(from) < ir::DataTypeBits(dtype) ? "arith.extsi" : "arith.trunci";
  }
  std::string value = names_.Temp();
  Add(body_, fmt::format("{} = {} {} : {} to {}", value, cast, values_.at(&param), ElementOf(from), element), span);
  return {value, element};
}

PtoOp KernelEmitter::DpsOp(std::string name, std::vector<TypedValue> ins, TypedValue out) {
  return {.name = std::move(name),
          .groups = {{OperandSyntax::Ins, "", std::move(ins)}, {OperandSyntax::Outs, "", {std::move(out)}}}};
}

std::string KernelEmitter::RoundMode(const ir::Call& call) {
  // The DSL's default is "round", as upstream's.
  std::string mode = ir::FindAttr<std::string>(call.kwargs(), "mode").value_or("round");
  for (char& c : mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return mode;
}

std::string KernelEmitter::PartitionView(const ir::Var& tensor, const ir::ExprPtr& offsets, const ir::Shape& sizes,
                                         const std::string& partition_type, const ir::Span& span) {
  // A store's result names the same memory as its destination; views exist only for parameters.
  const ir::Var* param = plan_.tensor_param_of.at(&tensor);
  const auto* tensor_type = param->type()->As<ir::TensorType>();
  TypedValue view{views_.at(param), TensorViewType(tensor_type->shape().size(), ElementOf(tensor_type->dtype()))};
  return PartitionViewOf(view, param->name_hint(), offsets, sizes, partition_type, span);
}

std::string KernelEmitter::PartitionViewOf(const TypedValue& view, const std::string& hint,
                                           const ir::ExprPtr& offsets, const ir::Shape& sizes,
                                           const std::string& partition_type, const ir::Span& span) {
  std::vector<std::string> offset_values;
  // Offsets computed from loop variables get their arith ops here, just before the view that reads them.
  for (const auto& offset : offsets->As<ir::TupleLiteral>()->elements())
    offset_values.push_back(IndexValue(offset, span));
  return PartitionViewAt(view, hint, offset_values, sizes, partition_type, span);
}

std::string KernelEmitter::PartitionViewAt(const TypedValue& view, const std::string& hint,
                                           const std::vector<std::string>& offsets, const ir::Shape& sizes,
                                           const std::string& partition_type, const ir::Span& span) {
  std::vector<TypedValue> offset_values, size_values;
  for (const auto& offset : offsets) offset_values.push_back({offset, "index"});
  for (int64_t size : sizes) size_values.push_back(IndexConstant(size));
  std::string window = names_.Named(hint + "_pview");
  PtoOp op{.name = "pto.partition_view",
           .result = TypedValue{window, partition_type},
           .groups = {{OperandSyntax::Source, "", {view}},
                      {OperandSyntax::List, "offsets", std::move(offset_values)},
                      {OperandSyntax::List, "sizes", std::move(size_values)}}};
  Add(body_, op, span);
  return window;
}

}  // namespace pypto::backend_ptoas
