// The Planner's checks of tile op calls (kernel_planner.h): the op's lowering and core type, its
// operands by OpForm, the arch-specific limits, and its result: the tile it defines, the buffer it
// must share with an operand, the row-major views it needs, tile.move's buffer pairs and stores.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_planner.h"
#include "mlir_types.h"
#include "pypto/ir/op_registry.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckCall(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
  const ir::Span& span = call.span().known() ? call.span() : stmt.span();
  if (!call.is_op_call()) {
    return Error(span, fmt::format("backend-ptoas cannot lower the call to function '{}' in kernel '{}'",
                                   call.callee(), kernel_.name()));
  }
  const std::string& op = call.target_name();
  if (IsPipeOp(op)) return PipeError(call, stmt);
  const OpLowering* lowering = FindLowering(op);
  if (!lowering) {
    return Error(span, fmt::format("backend-ptoas cannot lower op '{}' in kernel '{}' (the ops it lowers are "
                                   "listed in {})",
                                   op, kernel_.name(), kOpTableDoc));
  }
  if (auto ok = CheckCoreType(call, span); !ok) return ok;
  if (lowering->form == OpForm::Store) return CheckStore(call, span, assign);
  if (lowering->form == OpForm::MemScatter) return CheckMemScatter(call, span, assign);
  if (!assign) return Error(span, fmt::format("the result of '{}' must be assigned to a tile", op));
  if (auto ok = CheckOperands(*lowering, call, span); !ok) return ok;
  if (auto ok = CheckMx(*lowering, call, *assign, span); !ok) return ok;
  if (lowering->form == OpForm::Window)
    if (auto ok = CheckWindow(call, *assign, span); !ok) return ok;
  if (auto ok = DefineTile(*assign, span); !ok) return ok;
  return CheckResult(*lowering, call, *assign, span);
}

// A PTO function runs on one core type, named by its pto.kernel_kind; an op of the other kind
// cannot be expressed in it (ExpandMixedKernel should have split such a kernel).
Status Planner::CheckCoreType(const ir::Call& call, const ir::Span& span) const {
  const bool cube_kernel = kernel_.type() == ir::FunctionType::AIC;
  const ir::CoreAffinity affinity = ir::CallAffinity(call);
  const bool wrong = cube_kernel ? affinity == ir::CoreAffinity::Vector : affinity == ir::CoreAffinity::Cube;
  if (!wrong) return {};
  return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}': the op runs on the {} core, "
                                 "but the kernel is an {} kernel",
                                 call.target_name(), kernel_.name(), cube_kernel ? "vector" : "cube",
                                 cube_kernel ? "AIC (cube)" : "AIV (vector)"));
}

Status Planner::CheckOperands(const OpLowering& lowering, const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  const auto& args = call.args();
  // On a device a transposed operand is a layout of its L0 tile, not a flag of tmatmul.
  if (ir::FindAttr<bool>(call.kwargs(), "a_trans").value_or(false))
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' with a_trans=True in kernel '{}' yet", op,
                                   kernel_.name()));
  if (ir::FindAttr<bool>(call.kwargs(), "b_trans").value_or(false))
    if (auto ok = CheckTransposedRhs(call, span); !ok) return ok;
  // init_cond picks tmatmul (overwrite) or tmatmul.acc: a literal picks one, a condition branches over
  // the two at run time (KernelEmitter::LowerInitCond), so it must be one an scf.if can test.
  if (lowering.form == OpForm::MatmulAcc && args.size() > 3) {
    for (size_t i = 0; i < 3; ++i)
      if (auto ok = CheckTileOperand(args[i], op, span); !ok) return ok;
    if (args[3]->Is<ir::ConstInt>()) return {};
    return CheckCondition(args[3], span, "init_cond");
  }
  switch (lowering.form) {
    case OpForm::Load:
      if (auto ok = CheckTensorOperand(args[0], op, span); !ok) return ok;
      if (auto ok = CheckTensorLayout(*args[0]->As<ir::Var>(), *call.type()->As<ir::TileType>(), "load", span); !ok)
        return ok;
      if (auto ok = CheckOffsets(args[1], op, span); !ok) return ok;
      if (auto ok = CheckStaticInts(args[2], "shapes", op, span); !ok) return ok;
      return args.size() > 3 ? CheckValidExtents(args[3]->As<ir::TupleLiteral>()->elements(), op, span) : Status{};
    case OpForm::FillPad: return CheckTileOperand(args[0], op, span);
    case OpForm::Compare:
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      if (args[1]->type()->As<ir::TileType>()) return CheckTileOperand(args[1], op, span);
      return CheckScalarOperand(args[1], args[0]->type(), op, span);
    case OpForm::ValidShape:
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      return CheckValidExtents({args[1], args[2]}, op, span);
    case OpForm::Alloc: return {};
    case OpForm::Fill: return CheckScalarOperand(args[1], call.type(), op, span);
    case OpForm::TileScalar:
    case OpForm::TileI32:
    case OpForm::TileF32: {
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      if (args.size() > 2)
        if (auto ok = CheckTileOperand(args[2], op, span); !ok) return ok;
      return CheckScalarOperand(args[1], ScalarOperandType(lowering, *args[0]), op, span);
    }
    case OpForm::Broadcast: return CheckTileOperand(args[1], op, span);
    case OpForm::Reshape:
    case OpForm::TransposeView:
    case OpForm::Cast:
    case OpForm::Move: return CheckTileOperand(args[0], op, span);
    case OpForm::Tiles:
    case OpForm::ColSum:
    case OpForm::MatmulAcc:
    case OpForm::MatmulMx:
    case OpForm::MergeLists:
      for (const auto& arg : args) {
        if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
      }
      return {};
    case OpForm::Arange: return CheckScalarOperand(args[0], call.type(), op, span);
    case OpForm::SelectScalar:
      for (size_t i = 0; i < 3; ++i) {
        if (auto ok = CheckTileOperand(args[i], op, span); !ok) return ok;
      }
      if (auto ok = CheckTargetDtype(call, span); !ok) return ok;
      if (const auto* constant = args[3]->As<ir::ConstFloat>();
          constant && constant->value() == std::trunc(constant->value()))
        return {};  // an integer written as a float (-3.0): the emitter passes it as that integer
      return CheckScalarOperand(args[3], args[1]->type(), op, span);
    case OpForm::Triangle:
      if (auto ok = CheckTargetDtype(call, span); !ok) return ok;
      return CheckDiagonal(args[0], op, span);
    case OpForm::MergeSort:
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      if (args[1]->Is<ir::ConstInt>()) return {};
      return CheckIndexExpr(args[1], fmt::format("the block_len of '{}'", op), span);
    case OpForm::GatherMask: return CheckTileOperand(args[0], op, span);
    case OpForm::IndexScatter: return CheckIndexScatter(call, span);
    case OpForm::PagedGather: return CheckPagedGather(call, span);
    case OpForm::ScatterMask:
      if (auto ok = CheckTileOperand(args[1], op, span); !ok) return ok;
      return CheckZeroedDestination(call, span);
    case OpForm::Transpose:
      for (const auto& arg : args) {
        if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
      }
      if (args[0]->type()->As<ir::TileType>()->shape().size() == 3) return CheckBatchTranspose(call, span);
      // ptoas's ttrans always takes a scratch tile. The TransposeScratchTiles pass gives every
      // transpose one as a tile of the IR, placed by AllocateMemoryAddr among the kernel's tiles;
      // past all of them, where the Vec scratch goes, a kernel using most of UB has no room.
      if (args.size() == 1) {
        return Error(span, fmt::format("backend-ptoas cannot lower 'tile.transpose' in kernel '{}' without its "
                                       "scratch tile (pto.ttrans's tmp); lower the program through the "
                                       "TransposeScratchTiles pass, which gives it one",
                                       kernel_.name()));
      }
      return {};
    case OpForm::Gather:
    case OpForm::GatherDim:
      for (const auto& arg : args) {
        if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
      }
      return lowering.form == OpForm::Gather ? CheckGather(call, span) : CheckGatherDim(call, span);
    case OpForm::Window: return CheckTileOperand(args[0], op, span);  // and CheckWindow
    case OpForm::Extract:
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      return CheckOrigin({args[1], args[2]}, op, span);
    case OpForm::Insert:
      if (auto ok = CheckTileOperand(args[1], op, span); !ok) return ok;
      return CheckOrigin(args[2]->As<ir::TupleLiteral>()->elements(), op, span);
    case OpForm::MemGather: return CheckMemGather(call, span);
    case OpForm::Random:
      for (size_t i = 0; i < 6; ++i) {
        if (auto ok = CheckScalarOperand(args[i], ir::DataType::INT32, op, span); !ok) return ok;
      }
      return args.size() > 7 ? CheckValidExtents(args[7]->As<ir::TupleLiteral>()->elements(), op, span) : Status{};
    case OpForm::SinCos: {
      if (auto ok = CheckTileOperand(args[0], op, span); !ok) return ok;
      const auto& tile = *args[0]->type()->As<ir::TileType>();
      // upstream's recipe is for FP32 row-major tiles; its steps use four scratch tiles like the operand.
      if (tile.dtype() != ir::DataType::FP32 || IsColumnVector(tile))
        return Error(span, fmt::format("backend-ptoas cannot lower '{}' of {} in kernel '{}': PTO has no {} "
                                       "instruction, and upstream's expansion into tile arithmetic is for FP32 "
                                       "row-major tiles",
                                       op, tile.str(), kernel_.name(), op == "tile.sin" ? "sine" : "cosine"));
      const TileExtent extent = TileRowsCols(tile);
      return NeedScratch(4 * extent.rows * extent.cols * 4, call, span);
    }
    case OpForm::MemScatter:  // CheckMemScatter
    case OpForm::Store: break;
  }
  return {};
}

// b_trans=True: the Right operand [N, K] must come from a Mat tile of this kernel (tile.move, or
// tile.extract of a K window), whose transposed view it is then moved from (kernel_plan.h).
Status Planner::CheckTransposedRhs(const ir::Call& call, const ir::Span& span) {
  const bool acc = call.target_name() == "tile.matmul_acc";
  const auto* rhs = call.args()[acc ? 2 : 1]->As<ir::Var>();
  const ir::AssignStmt* def = nullptr;
  for (const auto* assign : plan_.tile_defs)
    if (rhs && assign->var().get() == rhs) def = assign;
  const auto* move = def ? def->value()->As<ir::Call>() : nullptr;
  const bool from_mat = move && (move->target_name() == "tile.move" || move->target_name() == "tile.extract") &&
                        move->args()[0]->type()->As<ir::TileType>()->memory_space() == ir::MemorySpace::Mat &&
                        call.target_name().find("gemv") == std::string::npos;
  if (!from_mat) {
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' with b_trans=True in kernel '{}': its rhs must be "
                                   "a Right tile moved or extracted from a Mat tile in the kernel, whose transposed "
                                   "view it reads",
                                   call.target_name(), kernel_.name()));
  }
  // A tile popped from the vector core is read in its pipe slot (the pop's result, no alloc_tile of
  // this kernel): its transposed view is a pto.treshape of the pop (KernelEmitter::LowerPipe).
  const ir::Var* mat = RootTile(*move->args()[0]->As<ir::Var>());
  plan_.transposed_rights.insert(rhs);
  plan_.transposed_mats.insert(mat);
  return {};
}

// Element types a2a3's TSELS and TTRI lack (ptoas has them on a5 only).
Status Planner::CheckTargetDtype(const ir::Call& call, const ir::Span& span) const {
  if (arch_ != "a2a3") return {};
  const bool sels = call.target_name() == "tile.sels";
  const ir::DataType dtype = (sels ? call.args()[1]->type() : call.type())->As<ir::TileType>()->dtype();
  const bool narrow = dtype == ir::DataType::INT8 || dtype == ir::DataType::UINT8;
  if (!narrow && (sels || dtype != ir::DataType::BF16)) return {};
  return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}' on a2a3: {} there takes 16- "
                                 "and 32-bit integers, FP16 and FP32, not {}; a5 takes {}",
                                 call.target_name(), kernel_.name(), sels ? "pto.tsels" : "pto.ttri",
                                 ir::DataTypeName(dtype), ir::DataTypeName(dtype)));
}

// pto.ttri's diagonal is an i32 operand: a literal or an integer scalar parameter.
Status Planner::CheckDiagonal(const ir::ExprPtr& diagonal, std::string_view op, const ir::Span& span) const {
  if (diagonal->Is<ir::ConstInt>()) return {};
  const auto* var = diagonal->As<ir::Var>();
  const bool is_param = var && std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                           [&](const ir::VarPtr& param) { return param.get() == var; });
  if (is_param && IsSignedInteger(var->type()->As<ir::ScalarType>()->dtype())) return {};
  // An integer the kernel computed (an element read, a loop variable) is an index value, narrowed to
  // the i32 ttri takes by one arith.index_cast.
  if (var && (scalars_.contains(var) || std::find(loops_.begin(), loops_.end(), var) != loops_.end())) return {};
  return Error(span, fmt::format("the diagonal of '{}' must be a literal, a signed integer scalar parameter of "
                                 "kernel '{}' or an integer it computes",
                                 op, kernel_.name()));
}

// A valid extent becomes an alloc_tile's valid_row / valid_col operand: an index expression.
Status Planner::CheckValidExtents(const std::vector<ir::ExprPtr>& extents, std::string_view op, const ir::Span& span) {
  for (const auto& extent : extents) {
    if (auto ok = CheckIndexExpr(extent, fmt::format("the valid shape of '{}'", op), span); !ok) return ok;
  }
  return {};
}

// A window's origin: index expressions (constants, loop variables, arithmetic on them).
Status Planner::CheckOrigin(const std::vector<ir::ExprPtr>& origin, std::string_view op, const ir::Span& span) {
  for (const auto& offset : origin) {
    if (auto ok = CheckIndexExpr(offset, fmt::format("the window origin of '{}'", op), span); !ok) return ok;
  }
  return {};
}

// A tile slice copies its window with textract, which ptoas's a2a3 target has only into Left and
// Right (its Vec -> Vec form is A5's). There a Vec window is a pto.subset view of the source (a Vec
// tile is not boxed, so any window is one), which tmov copies into the result.
Status Planner::CheckWindow(const ir::Call& call, const ir::AssignStmt& assign, const ir::Span& span) {
  if (auto ok = CheckOrigin(call.args()[2]->As<ir::TupleLiteral>()->elements(), call.target_name(), span); !ok)
    return ok;
  const auto* source = call.args()[0]->type()->As<ir::TileType>();
  if (RecordBandView(call, assign) || RecordAccView(call, assign)) return {};
  if (arch_ == "a2a3" && source->memory_space() == ir::MemorySpace::Vec) plan_.subset_windows.insert(assign.var().get());
  return {};
}

// A window of an Acc tile that memory allocation placed in the tile's own block (a band of rows read
// out, a window a product accumulates into) is a view of the tile, not a copy: a textract into the
// window's alloc_tile would copy it over the tile's first bytes, which L0C's NZ layout gives to the
// tile's first columns of every row, still to be read.
bool Planner::RecordAccView(const ir::Call& call, const ir::AssignStmt& assign) {
  const auto& source_var = *call.args()[0]->As<ir::Var>();
  const auto* source = source_var.type()->As<ir::TileType>();
  const auto* window = assign.var()->type()->As<ir::TileType>();
  if (source->memory_space() != ir::MemorySpace::Acc || !source->memref() || !window->memref() ||
      *source->memref() != *window->memref())
    return false;
  plan_.acc_views[assign.var().get()] = RootTile(source_var);
  return true;
}

// A product accumulated into a view of an Acc tile writes the view (its result is the view under a
// new name). The MAD has no destination stride, so the view must be contiguous in L0C: whole rows
// of the tile (pto-isa#253; upstream's CanonicalizeTileSlice refuses the same).
Status Planner::CheckAccumulatedWindow(const ir::Call& product, const ir::AssignStmt& assign, const ir::Span& span) {
  if (product.target_name() != "tile.matmul_acc" && product.target_name() != "tile.gemv_acc") return {};
  const ir::Var& window = *RootTile(*product.args()[0]->As<ir::Var>());
  const auto view = plan_.acc_views.find(&window);
  if (view == plan_.acc_views.end()) return {};
  const int64_t rows = TileRowsCols(*view->second->type()->As<ir::TileType>()).rows;
  if (TileRowsCols(*window.type()->As<ir::TileType>()).rows != rows)
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}': it accumulates into '{}', a "
                                   "band of rows of the Acc tile '{}', which is strided in L0C, and a product has "
                                   "no destination stride; accumulate into a window of whole rows (all {} rows)",
                                   product.target_name(), kernel_.name(), window.name_hint(),
                                   view->second->name_hint(), rows));
  return AliasTile(*assign.var(), window, span);
}

// A Vec window memory allocation placed in its source's own block is a view of it (a band of whole
// rows at a constant origin, beside a pipe slot region): no bytes move, its tile starts at the band.
bool Planner::RecordBandView(const ir::Call& call, const ir::AssignStmt& assign) {
  const auto& source_var = *call.args()[0]->As<ir::Var>();
  const auto* source = source_var.type()->As<ir::TileType>();
  const auto* window = assign.var()->type()->As<ir::TileType>();
  if (source->memory_space() != ir::MemorySpace::Vec || !source->memref() || !window->memref() ||
      *source->memref() != *window->memref())
    return false;
  std::vector<int64_t> origin;
  for (const auto& offset : call.args()[2]->As<ir::TupleLiteral>()->elements()) {
    auto value = ir::AsConstInt(offset);
    if (!value) return false;
    origin.push_back(*value);
  }
  if (origin.size() == 1) origin.insert(origin.begin(), 0);  // a 1-D tile is one row
  const int64_t element = ir::DataTypeBytes(source->dtype());
  const auto parent = plan_.band_views.find(&source_var);
  plan_.band_views[assign.var().get()] = (parent == plan_.band_views.end() ? 0 : parent->second) +
                                         origin[0] * TileRowsCols(*source).cols * element + origin[1] * element;
  return true;
}

// Checks that need the result's placement, and the row-major views the op needs.
Status Planner::CheckResult(const OpLowering& lowering, const ir::Call& call, const ir::AssignStmt& assign,
                            const ir::Span& span) {
  if (auto ok = CheckAccumulatedWindow(call, assign, span); !ok) return ok;
  const ir::Var& result = *assign.var();
  const auto& args = call.args();
  switch (lowering.form) {
    case OpForm::Reshape:
    case OpForm::ValidShape: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "source", span);
    case OpForm::FillPad: {
      const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
      plan_.pad_codes[&result] = mode == "max" ? 2 : mode == "min" ? 3 : 1;
      if (call.target_name() == "tile.fillpad_inplace")
        return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "operand", span);
      return {};
    }
    case OpForm::MatmulAcc: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "accumulator", span);
    case OpForm::Insert: return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "target", span);
    case OpForm::Move: return CheckMove(*args[0]->As<ir::Var>(), result, span);
    case OpForm::TransposeView: return CheckTransposeView(call, result, span);
    default: break;
  }
  if (lowering.row_major) {
    std::vector<const ir::Var*> tiles = {&result};
    if (lowering.form == OpForm::Tiles) {
      for (const auto& arg : args) tiles.push_back(arg->As<ir::Var>());
    } else if (lowering.form == OpForm::TileScalar || lowering.form == OpForm::TileI32 ||
               lowering.form == OpForm::TileF32 || lowering.form == OpForm::Cast || lowering.form == OpForm::Compare) {
      tiles.push_back(args[0]->As<ir::Var>());
      if (lowering.form == OpForm::TileScalar && args.size() > 2) tiles.push_back(args[2]->As<ir::Var>());
    } else if (lowering.form == OpForm::SelectScalar) {
      for (size_t i = 0; i < 3; ++i) tiles.push_back(args[i]->As<ir::Var>());
    }
    for (const ir::Var* tile : tiles) {
      if (IsColumnVector(*tile->type()->As<ir::TileType>())) plan_.row_views.insert(RootTile(*tile));
    }
  }
  return {};
}

// An op whose result IS its operand's storage (a reshape view, an accumulator updated in place):
// each variable has its own alloc_tile, so the two must sit at the same address.
Status Planner::CheckSameBuffer(const ir::Call& call, const ir::Var& operand, const ir::Var& result,
                                std::string_view role, const ir::Span& span) const {
  int64_t from = operand.type()->As<ir::TileType>()->memref()->byte_offset;
  int64_t to = result.type()->As<ir::TileType>()->memref()->byte_offset;
  if (from == to) return {};
  return Error(span, fmt::format("the result '{}' of '{}' is at byte offset {} but its {} '{}' is at {}; the "
                                 "result must share the {}'s buffer",
                                 result.name_hint(), call.target_name(), to, role, operand.name_hint(), from,
                                 role));
}

// The buffer pairs ptoas's tmov moves between (its verifier's list).
Status Planner::CheckMove(const ir::Var& source, const ir::Var& result, const ir::Span& span) const {
  const auto* from = source.type()->As<ir::TileType>();
  const auto* to = result.type()->As<ir::TileType>();
  using ir::MemorySpace;
  const MemorySpace src = from->memory_space(), dst = to->memory_space();
  const bool supported = (src == MemorySpace::Mat && (dst == MemorySpace::Left || dst == MemorySpace::Right ||
                                                      dst == MemorySpace::Bias || dst == MemorySpace::LeftScale ||
                                                      dst == MemorySpace::RightScale)) ||
                         (src == MemorySpace::Acc && (dst == MemorySpace::Mat || dst == MemorySpace::Vec)) ||
                         (src == MemorySpace::Vec && dst == MemorySpace::Vec) ||
                         (src == MemorySpace::Vec && dst == MemorySpace::Mat && arch_ == "a5");
  if (!supported) {
    return Error(span, fmt::format("backend-ptoas cannot lower the tile.move of '{}' from {} to {} in kernel '{}': "
                                   "pto.tmov on {} moves Mat -> Left/Right/Bias{}, Acc -> Mat/Vec and Vec -> Vec{}",
                                   source.name_hint(), ir::MemorySpaceName(src), ir::MemorySpaceName(dst),
                                   kernel_.name(), arch_, arch_ == "a5" ? "/LeftScale/RightScale" : "",
                                   arch_ == "a5" ? "/Mat" : ""));
  }
  if (src == dst && from->memref()->byte_offset == to->memref()->byte_offset) {
    return Error(span, fmt::format("tile.move copies '{}' onto itself (both at byte offset {} in {}); pto.tmov "
                                   "needs distinct source and destination buffers",
                                   source.name_hint(), from->memref()->byte_offset, ir::MemorySpaceName(src)));
  }
  return {};
}

Status Planner::CheckStore(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
  if (auto ok = CheckTileOperand(call.args()[0], "tile.store", span); !ok) return ok;
  if (const auto* part = call.args().size() > 3 ? call.args()[3]->As<ir::TupleLiteral>() : nullptr) {
    ir::Shape extents;
    for (const auto& extent : part->elements()) extents.push_back(ir::AsConstInt(extent).value_or(-1));
    const ir::Shape& tile = call.args()[0]->type()->As<ir::TileType>()->shape();
    // Any other shapes= is the tile's top-left corner of that size (type deduction checked).
    if (extents != tile && !IsRowMergedWindow(extents, tile)) plan_.corner_stores.insert(&call);
  }
  if (auto ok = CheckOffsets(call.args()[1], "tile.store", span); !ok) return ok;
  if (auto ok = CheckTensorOperand(call.args()[2], "tile.store", span); !ok) return ok;
  if (auto ok = CheckTensorLayout(*call.args()[2]->As<ir::Var>(), *call.args()[0]->type()->As<ir::TileType>(),
                                  "store", span);
      !ok)
    return ok;
  // `out2 = tile.store(t, offsets, out)` names the same memory as `out`.
  if (assign) {
    const auto* dest = call.args()[2]->As<ir::Var>();
    plan_.tensor_param_of[assign->var().get()] = plan_.tensor_param_of.at(dest);
  }
  return {};
}

Status Planner::DefineTile(const ir::AssignStmt& assign, const ir::Span& span) {
  const auto& var = *assign.var();
  const auto* tile = var.type()->As<ir::TileType>();
  if (!tile) return Error(span, fmt::format("'{}' must be a tile, got {}", var.name_hint(), var.type()->str()));
  const ir::MemorySpace space = tile->memory_space();
  if (space == ir::MemorySpace::DDR || space == ir::MemorySpace::ScalarLocal) {
    return Error(span, fmt::format("tile '{}' lives in {}, which is not an on-chip tile buffer", var.name_hint(),
                                   ir::MemorySpaceName(space)));
  }
  if (kernel_.type() == ir::FunctionType::AIV && space != ir::MemorySpace::Vec) {
    return Error(span, fmt::format("tile '{}' lives in {}, a cube-core buffer, but kernel '{}' is an AIV (vector) "
                                   "kernel",
                                   var.name_hint(), ir::MemorySpaceName(space), kernel_.name()));
  }
  if (!tile->memref()) {
    return Error(span, fmt::format("tile '{}' has no memory address; run memory allocation before backend-ptoas",
                                   var.name_hint()));
  }
  // PTO tile buffers are [rows, cols]; the IR's [1, 1, M, N] matrices are not flattened here yet. A
  // batch of matrices that a batch op reads or writes is typed as the rows of all of them
  // (kernel_plan_batch_tiles.cpp).
  if (tile->shape().empty() || (tile->shape().size() > 2 && !IsBatchTile(assign))) {
    return Error(span, fmt::format("tile '{}' {} has rank {}, but backend-ptoas prints 1-D and 2-D PTO tiles only "
                                   "(pl.reshape it to its last two dimensions)",
                                   var.name_hint(), tile->str(), tile->shape().size()));
  }
  if (auto element = MlirElementType(tile->dtype()); !element) return Error(span, element.error());
  if (!tiles_.insert(&var).second) {
    return Error(span, fmt::format("tile '{}' is assigned twice; backend-ptoas expects SSA form", var.name_hint()));
  }
  plan_.tile_defs.push_back(&assign);
  return {};
}

Status Planner::CheckTileOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) const {
  const auto* var = arg->As<ir::Var>();
  if (!var || !tiles_.contains(var)) {
    return Error(span, fmt::format("an operand of '{}' is not a tile defined earlier in kernel '{}'", op,
                                   kernel_.name()));
  }
  return {};
}

// The scalar of a tile-scalar op or a fill: a literal, or a scalar parameter. Either is passed at
// the tile's element type (a literal 2.0 scales an FP16 tile as FP16), so a parameter of another
// type is converted where that is a plain arith cast.
Status Planner::CheckScalarOperand(const ir::ExprPtr& arg, const ir::TypePtr& tile_type, std::string_view op,
                                   const ir::Span& span) const {
  return CheckScalarOperand(arg, tile_type->As<ir::TileType>()->dtype(), op, span);
}

// A scalar operand passed as a `dtype` value: a literal, or a parameter converted to it.
Status Planner::CheckScalarOperand(const ir::ExprPtr& arg, ir::DataType dtype, std::string_view op,
                                   const ir::Span& span) const {
  if (auto element = MlirElementType(dtype); !element) return Error(span, element.error());
  if (const auto* constant = arg->As<ir::ConstFloat>()) {
    // An integer written as a float (pl.const(2.0, pl.FP32) on an INT16 tile) is that integer.
    if (!ir::IsFloat(dtype) && constant->value() == std::trunc(constant->value())) return {};
    if (!ir::IsFloat(dtype)) {
      return Error(span, fmt::format("the scalar {} of '{}' is not an integer, but the tile is {}",
                                     constant->value(), op, ir::DataTypeName(dtype)));
    }
    if (auto literal = FloatLiteral(constant->value(), dtype); !literal) return Error(span, literal.error());
    return {};
  }
  if (arg->Is<ir::ConstInt>()) return {};
  const auto* var = arg->As<ir::Var>();
  bool is_param = var && std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                     [&](const ir::VarPtr& param) { return param.get() == var; });
  // An integer the kernel computed (`pl.cast(offset, pl.INT32)`, a loop variable) is an index value,
  // narrowed to an integer tile's element type by one arith.index_cast (then, for an unsigned tile,
  // re-typed as ptoas's unsigned constants are).
  const bool index_value =
      var && (scalars_.contains(var) || std::find(loops_.begin(), loops_.end(), var) != loops_.end());
  if (index_value && (IsSignedInteger(dtype) || ir::IsUnsignedInteger(dtype))) return {};
  if (!is_param && !(var && plan_.float_scalars.contains(var))) {
    return Error(span, fmt::format("the scalar operand of '{}' must be a literal, a scalar parameter of kernel "
                                   "'{}' or a floating-point element read with pl.read",
                                   op, kernel_.name()));
  }
  const ir::DataType from = var->type()->As<ir::ScalarType>()->dtype();
  if (from != dtype && !ScalarConvertible(from, dtype)) {
    return Error(span, fmt::format("the scalar operand of '{}' is the {} parameter '{}', but the tile is {}; "
                                   "backend-ptoas converts only floating-point and signed integer scalars",
                                   op, ir::DataTypeName(from), var->name_hint(), ir::DataTypeName(dtype)));
  }
  return {};
}

}  // namespace pypto::backend_ptoas::detail
