#include "sim_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>
#include <variant>

#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"
#include "kernels/arg_reduce.h"
#include "kernels/integer_ops.h"
#include "pypto/ir/printer.h"
#include "overwritten_fills.h"
#include "pad_value.h"
#include "tile_ops.h"

namespace pypto::sim {

const char* OpcodeName(Opcode op) {
  switch (op) {
    case Opcode::Load: return "load";
    case Opcode::Store: return "store";
    case Opcode::Add: return "add";
    case Opcode::Sub: return "sub";
    case Opcode::Mul: return "mul";
    case Opcode::Div: return "div";
    case Opcode::LoopBegin: return "for";
    case Opcode::LoopEnd: return "endfor";
    case Opcode::Compute: return "compute";
    case Opcode::BranchIfZero: return "ifnot";
    case Opcode::Jump: return "jump";
    case Opcode::ReadScalar: return "read";
    case Opcode::WriteScalar: return "write";
    case Opcode::ReadTile: return "tread";
    case Opcode::WriteTile: return "twrite";
    case Opcode::SyncAll: return "syncall";
    case Opcode::TPush: return "tpush";
    case Opcode::TPop: return "tpop";
    case Opcode::TFree: return "tfree";
    case Opcode::EventSet: return "evset";
    case Opcode::Comm: return "comm";
    case Opcode::EventWait: return "evwait";
  }
  return "?";
}

const char* ComputeKindName(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::Binary: return "binary";
    case ComputeKind::BinaryScalar: return "scalar";
    case ComputeKind::Unary: return "unary";
    case ComputeKind::LeakyRelu: return "lrelu";
    case ComputeKind::BitNot: return "not";
    case ComputeKind::IntegerBinary: return "integer";
    case ComputeKind::RowReduce: return "rowreduce";
    case ComputeKind::ColReduce: return "colreduce";
    case ComputeKind::RowArgReduce: return "rowargreduce";
    case ComputeKind::ColArgReduce: return "colargreduce";
    case ComputeKind::RowExpand: return "rowexpand";
    case ComputeKind::ColExpand: return "colexpand";
    case ComputeKind::RowExpDif: return "rowexpdif";
    case ComputeKind::ColExpDif: return "colexpdif";
    case ComputeKind::RowBroadcast: return "rowbcast";
    case ComputeKind::ColBroadcast: return "colbcast";
    case ComputeKind::Fill: return "fill";
    case ComputeKind::Copy: return "copy";
    case ComputeKind::Matmul: return "matmul";
    case ComputeKind::Cast: return "cast";
    case ComputeKind::Sort32: return "sort32";
    case ComputeKind::MergeSort: return "mrgsort";
    case ComputeKind::MergeLists: return "mrgsort_lists";
    case ComputeKind::GatherMask: return "gather";
    case ComputeKind::GatherAlong: return "gather_index";
    case ComputeKind::ScatterAlong: return "scatter_index";
    case ComputeKind::ScatterLanes: return "scatter_mask";
    case ComputeKind::ScatterRows: return "scatter_rows";
    case ComputeKind::GatherCompare: return "gather_compare";
    case ComputeKind::Random: return "random";
    case ComputeKind::Slice: return "slice";
    case ComputeKind::Insert: return "insert";
    case ComputeKind::Concat: return "concat";
    case ComputeKind::Transpose: return "transpose";
    case ComputeKind::Arange: return "arange";
    case ComputeKind::FillPad: return "fillpad";
    case ComputeKind::FillBits: return "fillbits";
    case ComputeKind::FillPadExpand: return "fillpad_expand";
    case ComputeKind::Compare: return "cmp";
    case ComputeKind::Select: return "sel";
    case ComputeKind::Prelu: return "prelu";
    case ComputeKind::PartialBinary: return "partial";
    case ComputeKind::Triangle: return "tri";
    case ComputeKind::GatherBlocks: return "gatherb";
  }
  return "?";
}

const char* ScalarOpSymbol(ScalarOp op) {
  switch (op) {
    case ScalarOp::Add: return "+";
    case ScalarOp::Sub: return "-";
    case ScalarOp::Mul: return "*";
    case ScalarOp::FloorDiv: return "//";
    case ScalarOp::FloorMod: return "%";
    case ScalarOp::Min: return "min";
    case ScalarOp::Max: return "max";
    case ScalarOp::Shl: return "<<";
    case ScalarOp::Shr: return ">>";
    case ScalarOp::Eq: return "==";
    case ScalarOp::Ne: return "!=";
    case ScalarOp::Lt: return "<";
    case ScalarOp::Le: return "<=";
    case ScalarOp::Gt: return ">";
    case ScalarOp::Ge: return ">=";
    case ScalarOp::SignExtend: return "sext";
    case ScalarOp::ZeroExtend: return "zext";
    case ScalarOp::FEq: return "==f";
    case ScalarOp::FNe: return "!=f";
    case ScalarOp::FLt: return "<f";
    case ScalarOp::FLe: return "<=f";
    case ScalarOp::FGt: return ">f";
    case ScalarOp::FGe: return ">=f";
    case ScalarOp::FpToSi: return "fptosi";
    case ScalarOp::SiToFp: return "sitofp";
  }
  return "?";
}

int RuntimeDtype(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::FP32: return PYPTO_RT_FLOAT32;
    case DataType::FP16: return PYPTO_RT_FLOAT16;
    case DataType::INT32: return PYPTO_RT_INT32;
    case DataType::INT16: return PYPTO_RT_INT16;
    case DataType::INT8: return PYPTO_RT_INT8;
    case DataType::UINT8: return PYPTO_RT_UINT8;
    case DataType::BF16: return PYPTO_RT_BFLOAT16;
    case DataType::INT64: return PYPTO_RT_INT64;
    case DataType::UINT64: return PYPTO_RT_UINT64;
    case DataType::UINT16: return PYPTO_RT_UINT16;
    case DataType::UINT32: return PYPTO_RT_UINT32;
    case DataType::BOOL: return PYPTO_RT_BOOL;
    case DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: return -1;
  }
}

std::string DecodedKernel::Describe(size_t index) const {
  if (index >= sources.size()) return fmt::format("kernel '{}' instruction #{}", name, index);
  const auto& source = sources[index];
  return fmt::format("kernel '{}' instruction #{} ({}) `{}` at {}", name, index, OpcodeName(code[index].op),
                     source.text, source.location);
}

namespace {

using Error = pypto::unexpected<std::string>;

struct TensorValue {
  uint32_t param = 0;  // index into DecodedKernel::params
};
struct TileValue {
  TileRef ref;
  ir::DataType dtype = ir::DataType::FP32;
  ir::Shape shape;
  int64_t num_elements = 0;
  // The tile as the executor sees it, a row-major matrix: the last dimension is its columns and all
  // the others together its rows (a 1-D tile is one row; [1, 1, M, N] is [M, N]).
  int64_t rows() const { return num_elements / shape.back(); }
  int64_t cols() const { return shape.back(); }
};
// An integer scalar: a constant, or a register (loop variables, computed values, parameters).
struct ScalarValue {
  Operand operand;
};
// A kernel's pl.array: one operand per element. Updates make a new array value (the IR's arrays are
// functional), so an array costs registers only where control flow merges or carries it.
struct ArrayValue {
  std::vector<Operand> elements;
};
using Value = std::variant<TensorValue, TileValue, ScalarValue, ArrayValue>;

// Scalars the simulator computes with: integers of any width, and booleans (comparisons).
bool IsIntScalar(const ir::TypePtr& type) {
  const auto* scalar = type ? type->As<ir::ScalarType>() : nullptr;
  return scalar && (ir::IsInteger(scalar->dtype()) || scalar->dtype() == ir::DataType::BOOL);
}

std::optional<ScalarOp> ToScalarOp(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add: return ScalarOp::Add;
    case ir::BinaryOp::Sub: return ScalarOp::Sub;
    case ir::BinaryOp::Mul: return ScalarOp::Mul;
    case ir::BinaryOp::FloorDiv: return ScalarOp::FloorDiv;
    case ir::BinaryOp::FloorMod: return ScalarOp::FloorMod;
    case ir::BinaryOp::Min: return ScalarOp::Min;
    case ir::BinaryOp::Max: return ScalarOp::Max;
    case ir::BinaryOp::Shl: return ScalarOp::Shl;
    case ir::BinaryOp::Shr: return ScalarOp::Shr;
    case ir::BinaryOp::Eq: return ScalarOp::Eq;
    case ir::BinaryOp::Ne: return ScalarOp::Ne;
    case ir::BinaryOp::Lt: return ScalarOp::Lt;
    case ir::BinaryOp::Le: return ScalarOp::Le;
    case ir::BinaryOp::Gt: return ScalarOp::Gt;
    case ir::BinaryOp::Ge: return ScalarOp::Ge;
    case ir::BinaryOp::FloatDiv: break;
  }
  return std::nullopt;
}

// The runtime's split of a pipe op's `split` code: 1 and 3 cut tiles into upper and lower halves,
// 2 and 4 into left and right ones (3 and 4 name an odd extent; the cut is the same).
rt::PipeSplit PipeSplitOf(int64_t code) {
  if (code == 1 || code == 3) return rt::PipeSplit::UpDown;
  if (code == 2 || code == 4) return rt::PipeSplit::LeftRight;
  return rt::PipeSplit::Whole;
}

// `for i in pl.range(...)` as the DSL spells it, omitting a start of 0 and a step of 1.
std::string ForText(const ir::ForStmt& loop) {
  const bool from_zero = ir::AsConstInt(loop.start()) == 0, unit_step = ir::AsConstInt(loop.step()) == 1;
  std::string args = ir::PrintExpr(loop.stop());
  if (!from_zero || !unit_step) args = fmt::format("{}, {}", ir::PrintExpr(loop.start()), args);
  if (!unit_step) args = fmt::format("{}, {}", args, ir::PrintExpr(loop.step()));
  return fmt::format("for {} in pl.{}({})", loop.loop_var()->name_hint(), ir::ForKindName(loop.kind()), args);
}

class Decoder {
 public:
  Decoder(const ir::Function& function, int32_t func_id, rt::CoreType core_type, const ir::SocSpec& soc)
      : function_(function), soc_(soc) {
    kernel_.name = function.name();
    kernel_.func_id = func_id;
    kernel_.core_type = core_type;
  }

  pypto::expected<DecodedKernel, std::string> Run() {
    if (auto ok = CheckFunctionType(); !ok) return Error(ok.error());
    if (auto ok = DecodeParams(); !ok) return Error(ok.error());
    if (!function_.body()) return Error(fmt::format("{}: kernel '{}' has no body", function_.span().str(), Name()));
    if (auto ok = DecodeStmt(function_.body()); !ok) return Error(ok.error());
    DropOverwrittenFills(kernel_);
    return std::move(kernel_);
  }

 private:
  const std::string& Name() const { return function_.name(); }

  pypto::expected<void, std::string> CheckFunctionType() {
    using ir::FunctionType;
    const auto type = function_.type();
    const bool vector = kernel_.core_type == rt::CoreType::AIV;
    if (type == FunctionType::AIV || type == FunctionType::AIC || type == FunctionType::InCore) {
      if ((type == FunctionType::AIV && !vector) || (type == FunctionType::AIC && vector)) {
        return Error(fmt::format("{}: kernel '{}' is an {} function but the plan runs it on an {} core",
                                 function_.span().str(), Name(), ir::FunctionTypeName(type),
                                 rt::CoreTypeName(kernel_.core_type)));
      }
      return {};
    }
    return Error(fmt::format("{}: function '{}' is a {} function, not a kernel (AIV/AIC)", function_.span().str(),
                             Name(), ir::FunctionTypeName(type)));
  }

  pypto::expected<void, std::string> DecodeParams() {
    // Tensors take args[] slots first, in order; scalars follow.
    std::vector<size_t> scalars;
    for (size_t i = 0; i < function_.params().size(); ++i) {
      const auto& var = function_.params()[i];
      if (const auto* tensor = var->type()->As<ir::TensorType>()) {
        const int rt_dtype = RuntimeDtype(tensor->dtype());
        if (rt_dtype < 0 || ir::DataTypeBits(tensor->dtype()) % 8 != 0) {
          return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has dtype {}, which the simulator does "
                                   "not support yet",
                                   var->span().str(), Name(), var->name_hint(), ir::DataTypeName(tensor->dtype())));
        }
        if (tensor->shape().empty() || tensor->shape().size() > kMaxDims) {
          return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has rank {}; the runtime supports 1 to {}",
                                   var->span().str(), Name(), var->name_hint(), tensor->shape().size(), kMaxDims));
        }
        values_[var.get()] = TensorValue{static_cast<uint32_t>(kernel_.params.size())};
        kernel_.params.push_back(KernelParam{.name = var->name_hint(),
                                             .slot = kernel_.tensor_count++,
                                             .is_tensor = true,
                                             .dtype = tensor->dtype(),
                                             .rt_dtype = static_cast<uint8_t>(rt_dtype),
                                             .shape = tensor->shape()});
      } else if (const auto* scalar = var->type()->As<ir::ScalarType>()) {
        scalars.push_back(i);
        kernel_.params.push_back(KernelParam{.name = var->name_hint(), .is_tensor = false, .dtype = scalar->dtype()});
      } else {
        return Error(fmt::format("{}: kernel '{}': parameter '{}' has type {}; kernels take tensors and scalars",
                                 var->span().str(), Name(), var->name_hint(), var->type()->str()));
      }
    }
    for (auto& param : kernel_.params)
      if (!param.is_tensor) param.slot = kernel_.tensor_count + kernel_.scalar_count++;
    // Integer scalar parameters are read into registers when the kernel starts; FP32 ones too, as
    // their bit pattern, for the tile-scalar ops that read them.
    for (size_t i : scalars) {
      const auto& var = function_.params()[i];
      const auto& param = kernel_.params[i];
      if (param.dtype == ir::DataType::FP32) {
        const uint32_t reg = NewRegister(param.name, "scalar parameter (FP32 bits)");
        kernel_.scalar_params.push_back(ScalarParamInit{.reg = reg, .slot = param.slot, .bits = 32, .is_signed = false});
        float_regs_[var.get()] = reg;
        continue;
      }
      if (!IsIntScalar(var->type())) continue;
      const int bits = param.dtype == ir::DataType::BOOL ? 8 : ir::DataTypeBits(param.dtype);
      const uint32_t reg = NewRegister(param.name, "scalar parameter");
      kernel_.scalar_params.push_back(ScalarParamInit{
          .reg = reg,
          .slot = param.slot,
          .bits = static_cast<uint8_t>(std::clamp(bits, 1, 64)),
          .is_signed = static_cast<uint8_t>(param.dtype) < 0x20 && param.dtype != ir::DataType::BOOL});
      values_[var.get()] = ScalarValue{Operand::Reg(reg)};
    }
    if (kernel_.tensor_count > 32 || kernel_.scalar_count > 16) {
      return Error(fmt::format("{}: kernel '{}' takes {} tensors and {} scalars; the runtime allows 32 and 16",
                               function_.span().str(), Name(), kernel_.tensor_count, kernel_.scalar_count));
    }
    return {};
  }

  pypto::expected<void, std::string> DecodeStmt(const ir::StmtPtr& stmt) {
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
  pypto::expected<void, std::string> DecodeFor(const ir::ForStmt& loop) {
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
  pypto::expected<void, std::string> DecodeLoopBody(const ir::Stmt& loop, const ir::StmtPtr& body,
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
  pypto::expected<void, std::string> DecodeWhile(const ir::WhileStmt& loop) {
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
  pypto::expected<void, std::string> BindCarried(const ir::LoopView& loop) {
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
  pypto::expected<TileValue, std::string> SharedTile(const ir::Var& var, const ir::ExprPtr& other) {
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

  pypto::expected<TileValue, std::string> TileOf(const ir::Var& var) {
    const auto* type = var.type()->As<ir::TileType>();
    if (!type || !type->memref())
      return Fail(fmt::format("tile '{}' has no address; run AllocateMemoryAddr first", var.name_hint()));
    return TileValue{TileRef{type->memory_space(), type->memref()->byte_offset, type->memref()->size},
                     type->dtype(), type->shape(), type->num_elements()};
  }

  // A yield ends a loop body (the next iteration's values) or a branch (the if's results).
  pypto::expected<void, std::string> DecodeYield(const ir::YieldStmt& yield) {
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
  pypto::expected<void, std::string> DecodeIf(const ir::IfStmt& branch) {
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
  pypto::expected<void, std::string> DecodeBranch(const ir::IfStmt& branch, const ir::StmtPtr& body) {
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

  // `a = pl.array.create(n, dtype)` (n zeros), `x = a[i]` and `a[i] = x` (a new array value) in a
  // kernel. The index must be known when the kernel is decoded (a constant, or a pl.unroll loop's
  // variable once UnrollLoops has copied the body), since each element is an operand of its own.
  pypto::expected<void, std::string> DecodeArrayOp(const std::string& op, const ir::VarPtr& target,
                                                   const ir::Call& call) {
    if (op == "array.create") {
      const auto* type = call.type()->As<ir::ArrayType>();
      if (target) values_[target.get()] = ArrayValue{std::vector<Operand>(type->extent(), Operand::Imm(0))};
      return {};
    }
    auto array = ArrayOf(call.args()[0]);
    if (!array) return Error(array.error());
    auto index = Scalar(call.args()[1]);
    if (!index) return Error(index.error());
    if (index->is_reg())
      return Fail(fmt::format("the index `{}` of '{}' is computed at run time; the simulator indexes kernel arrays "
                              "with constants so far (a pl.unroll loop's variable is one)",
                              ir::PrintExpr(call.args()[1]), ir::PrintExpr(call.args()[0])));
    if (index->imm < 0 || index->imm >= static_cast<int64_t>(array->elements.size()))
      return Fail(fmt::format("index {} is out of range for the {} elements of '{}'", index->imm,
                              array->elements.size(), ir::PrintExpr(call.args()[0])));
    if (!target) return {};
    if (op == "array.get_element") {
      values_[target.get()] = ScalarValue{array->elements[static_cast<size_t>(index->imm)]};
    } else {
      auto element = Scalar(call.args()[2]);
      if (!element) return Error(element.error());
      array->elements[static_cast<size_t>(index->imm)] = *element;
      values_[target.get()] = *array;
    }
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    return {};
  }

  pypto::expected<ArrayValue, std::string> ArrayOf(const ir::ExprPtr& expr) {
    const auto* var = expr->As<ir::Var>();
    auto it = var ? values_.find(var) : values_.end();
    const auto* array = it == values_.end() ? nullptr : std::get_if<ArrayValue>(&it->second);
    if (!array) return Fail(fmt::format("`{}` is not an array the kernel defines", ir::PrintExpr(expr)));
    return *array;
  }

  // One register per element of an array that control flow merges or carries.
  ArrayValue ArrayRegisters(const ir::Var& var, const char* role) {
    ArrayValue registers;
    for (int64_t e = 0; e < var.type()->As<ir::ArrayType>()->extent(); ++e)
      registers.elements.push_back(Operand::Reg(NewRegister(fmt::format("{}[{}]", var.name_hint(), e), role)));
    return registers;
  }

  pypto::expected<void, std::string> CopyArray(const ir::ExprPtr& from, const ArrayValue& to) {
    auto source = ArrayOf(from);
    if (!source) return Error(source.error());
    for (size_t e = 0; e < to.elements.size(); ++e) {
      pending_.push_back(ScalarInstr{ScalarOp::Add, static_cast<uint32_t>(to.elements[e].reg), source->elements[e],
                                     Operand::Imm(0)});
      pending_text_.push_back(fmt::format("{}[{}]", ir::PrintExpr(from), e));
    }
    return {};
  }

  uint32_t NewRegister(std::string name, std::string role) {
    kernel_.registers.push_back(RegisterInfo{std::move(name), std::move(role)});
    return static_cast<uint32_t>(kernel_.registers.size() - 1);
  }

  // An integer scalar expression as an operand: constants stay immediates (the frontend has folded
  // constant arithmetic; what is left is folded here too), anything else is computed into a
  // register by scalar code that runs before the next instruction. An expression already computed
  // in the current loop scope is reused.
  pypto::expected<Operand, std::string> Scalar(const ir::ExprPtr& expr) {
    if (const auto* constant = expr->As<ir::ConstInt>()) return Operand::Imm(constant->value());
    if (const auto* constant = expr->As<ir::ConstBool>()) return Operand::Imm(constant->value() ? 1 : 0);
    if (const auto* var = expr->As<ir::Var>()) {
      auto it = values_.find(var);
      if (it != values_.end()) {
        if (const auto* scalar = std::get_if<ScalarValue>(&it->second)) return scalar->operand;
        return Fail(fmt::format("'{}' is a {}, not an integer scalar", var->name_hint(),
                                std::holds_alternative<TileValue>(it->second) ? "tile" : "tensor"));
      }
      if (const auto* scalar = var->type()->As<ir::ScalarType>(); scalar && !IsIntScalar(var->type())) {
        return Fail(fmt::format("'{}' is a {} scalar; the simulator computes only with integer scalars so far",
                                var->name_hint(), ir::DataTypeName(scalar->dtype())));
      }
      return Fail(fmt::format("'{}' is used before it is assigned", var->name_hint()));
    }
    const std::string text = ir::PrintExpr(expr);
    if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "scalar.cast" &&
                                                 IsIntScalar(call->type()) && IsIntScalar(call->args()[0]->type()))
      return CastOperand(*call, text);
    if (IsIntScalar(expr->type()))
      if (auto read = NestedReadOperand(expr)) return *read;
    const auto* binary = expr->As<ir::BinaryExpr>();
    if (!binary) {
      if (expr->Is<ir::ConstFloat>()) {
        return Fail(fmt::format("`{}` is a floating-point scalar; the simulator computes only with integer scalars "
                                "so far",
                                text));
      }
      return Fail(fmt::format("`{}` is not a scalar expression the simulator can evaluate", text));
    }
    if (ir::IsComparison(binary->op()) && IsFp32Scalar(binary->lhs()) && IsFp32Scalar(binary->rhs()))
      return Fp32Comparison(*binary, text);
    const auto op = ToScalarOp(binary->op());
    if (!op) {
      return Fail(fmt::format("`{}` is a true division, which yields a float; the simulator computes only with "
                              "integer scalars so far (use //)",
                              text));
    }
    if (!IsIntScalar(binary->lhs()->type()) || !IsIntScalar(binary->rhs()->type()) ||
        !IsIntScalar(binary->type())) {
      return Fail(fmt::format("`{}` computes with {} and {}; the simulator computes only with integer scalars so "
                              "far",
                              text, binary->lhs()->type()->str(), binary->rhs()->type()->str()));
    }
    auto lhs = Scalar(binary->lhs());
    if (!lhs) return lhs;
    auto rhs = Scalar(binary->rhs());
    if (!rhs) return rhs;
    const bool divides = *op == ScalarOp::FloorDiv || *op == ScalarOp::FloorMod;
    if (divides && !rhs->is_reg() && rhs->imm == 0) return Fail(fmt::format("`{}` divides by zero", text));
    const bool shifts = *op == ScalarOp::Shl || *op == ScalarOp::Shr;
    if (shifts && !rhs->is_reg() && (rhs->imm < 0 || rhs->imm >= 64))
      return Fail(fmt::format("`{}` shifts by {}, outside [0, 64)", text, rhs->imm));
    if (!lhs->is_reg() && !rhs->is_reg()) {
      int64_t value = 0;
      EvalScalar(*op, lhs->imm, rhs->imm, value);
      return Operand::Imm(value);
    }
    for (const auto& done : computed_)
      if (done.op == *op && done.a == *lhs && done.b == *rhs) return Operand::Reg(done.reg);
    const uint32_t reg = NewRegister(text, "");
    pending_.push_back(ScalarInstr{*op, reg, *lhs, *rhs});
    pending_text_.push_back(text);
    computed_.push_back(Computed{*op, *lhs, *rhs, reg});
    return Operand::Reg(reg);
  }

  static bool IsFp32Scalar(const ir::ExprPtr& expr) {
    const auto* scalar = expr->type()->As<ir::ScalarType>();
    return scalar && scalar->dtype() == ir::DataType::FP32;
  }

  // An FP32 operand of a comparison: the bits register of a pl.read element or an FP32 parameter, or
  // the bits of a constant.
  pypto::expected<Operand, std::string> Fp32Operand(const ir::ExprPtr& expr) {
    if (const auto* constant = expr->As<ir::ConstFloat>())
      return Operand::Imm(std::bit_cast<uint32_t>(static_cast<float>(constant->value())));
    if (auto read = NestedReadOperand(expr)) return *read;  // `pl.read(t, [0, c]) == best`: read where compared
    const auto* var = expr->As<ir::Var>();
    if (auto it = var ? float_regs_.find(var) : float_regs_.end(); it != float_regs_.end())
      return Operand::Reg(it->second);
    return Fail(fmt::format("`{}` is an FP32 scalar the simulator does not hold; it compares FP32 values read with "
                            "pl.read, FP32 parameters and constants",
                            ir::PrintExpr(expr)));
  }

  // `val == best_val` on two FP32 scalars: 0 or 1 in an integer register, as other comparisons.
  pypto::expected<Operand, std::string> Fp32Comparison(const ir::BinaryExpr& binary, const std::string& text) {
    auto lhs = Fp32Operand(binary.lhs());
    if (!lhs) return lhs;
    auto rhs = Fp32Operand(binary.rhs());
    if (!rhs) return rhs;
    static constexpr std::pair<ir::BinaryOp, ScalarOp> kOps[] = {
        {ir::BinaryOp::Eq, ScalarOp::FEq}, {ir::BinaryOp::Ne, ScalarOp::FNe}, {ir::BinaryOp::Lt, ScalarOp::FLt},
        {ir::BinaryOp::Le, ScalarOp::FLe}, {ir::BinaryOp::Gt, ScalarOp::FGt}, {ir::BinaryOp::Ge, ScalarOp::FGe}};
    ScalarOp op = ScalarOp::FEq;
    for (auto [from, to] : kOps)
      if (from == binary.op()) op = to;
    if (!lhs->is_reg() && !rhs->is_reg()) {
      int64_t value = 0;
      EvalScalar(op, lhs->imm, rhs->imm, value);
      return Operand::Imm(value);
    }
    const uint32_t reg = NewRegister(text, "");
    pending_.push_back(ScalarInstr{op, reg, *lhs, *rhs});
    pending_text_.push_back(text);
    return Operand::Reg(reg);
  }

  static std::optional<LaunchValue> LaunchValueOf(const std::string& op) {
    if (op == "tile.get_block_idx") return LaunchValue::BlockIdx;
    if (op == "tile.get_block_num") return LaunchValue::BlockNum;
    if (op == "tile.get_subblock_idx") return LaunchValue::SubBlockIdx;
    return std::nullopt;
  }

  // `b = pl.tile.get_block_idx()`: a register the kernel starts with, one per value.
  pypto::expected<void, std::string> DecodeLaunchValue(LaunchValue value, const ir::VarPtr& target) {
    if (!target) return {};
    for (const auto& init : kernel_.launch_values) {
      if (init.value != value) continue;
      values_[target.get()] = ScalarValue{Operand::Reg(init.reg)};
      return {};
    }
    const char* role = value == LaunchValue::BlockIdx   ? "block index"
                       : value == LaunchValue::BlockNum ? "block count"
                                                        : "AIV lane";
    const uint32_t reg = NewRegister(target->name_hint(), role);
    kernel_.launch_values.push_back(LaunchValueInit{.reg = reg, .value = value});
    values_[target.get()] = ScalarValue{Operand::Reg(reg)};
    return {};
  }

  static const ir::Span& SpanOf(const ir::Expr& expr, const ir::Stmt& stmt) {
    if (expr.span().known() || !stmt.span().known()) return expr.span();
    return stmt.span();
  }

  pypto::expected<void, std::string> DecodeValue(const ir::VarPtr& target, const ir::ExprPtr& value,
                                                 const ir::Stmt& stmt) {
    const auto* call = value->As<ir::Call>();
    const std::string text = target ? fmt::format("{} = {}", target->name_hint(), ir::PrintExpr(value))
                                     : ir::PrintExpr(value);
    const ir::Span& span = SpanOf(*value, stmt);
    source_ = InstrSource{text, span.str()};
    span_ = &span;
    if (!call && target && target->type()->As<ir::ScalarType>()) {
      // A scalar assignment computes (or just names) a value; its code runs before the next
      // instruction, which is where it stands in program order.
      if (!IsIntScalar(target->type())) {
        return Fail(fmt::format("'{}' is a {} scalar; the simulator computes only with integer scalars so far",
                                target->name_hint(), target->type()->str()));
      }
      auto operand = Scalar(value);
      if (!operand) return Error(operand.error());
      if (operand->is_reg() && kernel_.registers[static_cast<size_t>(operand->reg)].role.empty()) {
        kernel_.registers[static_cast<size_t>(operand->reg)].role = target->name_hint();
      }
      values_[target.get()] = ScalarValue{*operand};
      if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
      return {};
    }
    if (!call) {
      // A plain alias (x = y) just renames a value.
      if (const auto* var = value->As<ir::Var>(); var && target) {
        auto it = values_.find(var);
        if (it != values_.end()) {
          values_[target.get()] = it->second;
          return {};
        }
      }
      return Error(fmt::format("{}: kernel '{}': `{}` is not an op call; the simulator cannot run it",
                               span.str(), Name(), text));
    }
    if (!call->is_op_call()) {
      return Error(fmt::format("{}: kernel '{}': calls to other functions ('{}') are not supported by the "
                               "simulator yet",
                               span.str(), Name(), call->callee()));
    }
    const std::string& op = call->op()->name;
    if (auto launch = LaunchValueOf(op)) return DecodeLaunchValue(*launch, target);
    if (op == "system.syncall") return DecodeSyncAll();
    if (op == "system.sync_set" || op == "system.sync_wait") return DecodeEvent(op == "system.sync_set", *call);
    if (RunsInProgramOrderHere(op)) return {};
    if (op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe") return DecodeInitPipe(*call);
    if (op == "system.reserve_buffer" || op == "system.import_peer_buffer") {
      // A device address the simulator's pipes have no use for: the pipe setup that reads it is sizing only.
      if (target) values_[target.get()] = ScalarValue{Operand::Imm(0)};
      return {};
    }
    if (ir::IsCrossCorePipeOp(op)) return DecodePipeOp(op, target, *call);
    if (op.starts_with("prefetch.")) return DecodePrefetch(op, target);
    if (op.starts_with("comm.")) return DecodeComm(op, target, *call);
    if (op == "tile.load") return DecodeLoad(target, *call);
    if (op == "tile.paged_gather") return DecodePagedGather(target, *call);
    if (op == "tile.mgather") return DecodeMemGather(target, *call);
    if (op == "tensor.read") return DecodeRead(target, *call);
    if (op == "tensor.write") return DecodeTensorWrite(target, *call);
    if (op == "tile.read" || op == "tile.write") return DecodeTileElement(op == "tile.write", target, *call);
    if (op == "scalar.cast") return DecodeScalarCast(target, *call);
    if (op == "array.create" || op == "array.get_element" || op == "array.update_element")
      return DecodeArrayOp(op, target, *call);
    if (op == "tile.store") return DecodeStore(target, *call);
    if (op == "tile.mscatter") return DecodeScatterStore(target, *call);
    if (op == "tile.add") return DecodeBinary(Opcode::Add, target, *call);
    if (op == "tile.sub") return DecodeBinary(Opcode::Sub, target, *call);
    if (op == "tile.mul") return DecodeBinary(Opcode::Mul, target, *call);
    if (op == "tile.div") return DecodeBinary(Opcode::Div, target, *call);
    if (op == "tile.addc" || op == "tile.subc" || op == "tile.addsc" || op == "tile.subsc")
      return DecodeThreeOperand(op, target, *call);
    if (auto ok = DecodeCompute(op, target, *call)) return *ok;
    return Error(fmt::format("{}: kernel '{}' uses op '{}', which the simulator does not support yet (in `{}`)",
                             span.str(), Name(), op, text));
  }

  // pl.prefetch.*: the simulator has no L2 cache to warm, so a prefetch is complete as soon as it
  // starts; the context, event and session carry nothing, and a wait reports completion (true).
  pypto::expected<void, std::string> DecodePrefetch(std::string_view op, const ir::VarPtr& target) {
    if (op == "prefetch.wait" && target) values_[target.get()] = ScalarValue{Operand::Imm(1)};
    return {};
  }

  // Communication between ranks (comm.*: the pld ops of a distributed chip kernel). The window's
  // communication domain, and so this rank and its peers, is found when the instruction runs, from
  // the address of the tensor it is handed (comm_exec.cpp).
  pypto::expected<void, std::string> DecodeComm(const std::string& op, const ir::VarPtr& target, const ir::Call& call) {
    if (op == "comm.remote_load" || op == "comm.remote_store")
      return DecodeRemoteTransfer(op == "comm.remote_load", target, call);
    auto tensor = Tensor(call.args()[0], "window of a comm op");
    if (!tensor) return Error(tensor.error());
    Instr instr;
    instr.op = Opcode::Comm;
    instr.tensor_slot = (*tensor)->slot;
    instr.rt_dtype = (*tensor)->rt_dtype;
    instr.rank = static_cast<uint8_t>((*tensor)->shape.size());
    if (op == "comm.rank" || op == "comm.nranks") {
      if (!target) return {};
      instr.comm.kind = op == "comm.rank" ? CommKind::Rank : CommKind::Nranks;
      const uint32_t reg = NewRegister(target->name_hint(), op == "comm.rank" ? "rank" : "rank count");
      instr.scalar_dst = static_cast<int32_t>(reg);
      values_[target.get()] = ScalarValue{Operand::Reg(reg)};
      if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
      Emit(instr);
      return {};
    }
    instr.elem_bytes = sizeof(int32_t);
    if (op == "comm.barrier") {
      instr.comm.kind = CommKind::Barrier;
      if (target) values_[target.get()] = values_.at(call.args()[0]->As<ir::Var>());
      Emit(instr);
      return {};
    }
    const bool notify = op == "comm.notify";
    if (!notify && op != "comm.wait") return Fail(fmt::format("the simulator does not run '{}' yet", op));
    const ir::ExprPtr& cell = call.args()[notify ? 2 : 1];
    auto offsets = Offsets(cell, "signal cell");
    if (!offsets) return Error(offsets.error());
    if (auto ok = CheckRegion(**tensor, *offsets, cell, ir::Shape(offsets->size(), 1), instr); !ok) return ok;
    auto value = Scalar(call.args()[notify ? 3 : 2]);
    if (!value) return Error(value.error());
    instr.comm.value = *value;
    if (notify) {
      auto peer = Scalar(call.args()[1]);
      if (!peer) return Error(peer.error());
      instr.comm.kind = CommKind::Notify;
      instr.comm.peer = *peer;
      instr.comm.atomic_add = ir::FindAttr<std::string>(call.kwargs(), "op") == std::optional<std::string>("AtomicAdd");
    } else {
      static constexpr std::array<std::string_view, 6> kCmps = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"};
      const auto cmp = ir::FindAttr<std::string>(call.kwargs(), "cmp").value_or("Eq");
      instr.comm.kind = CommKind::Wait;
      instr.comm.cmp = static_cast<WaitCmp>(std::ranges::find(kCmps, cmp) - kCmps.begin());
    }
    Emit(instr);
    return {};
  }

  // remote_load / remote_store: the local load / store of the same region, run on the peer's copy
  // of the window.
  pypto::expected<void, std::string> DecodeRemoteTransfer(bool load, const ir::VarPtr& target, const ir::Call& call) {
    if (load && !target) return {};  // a read nobody uses
    const auto& args = call.args();
    auto peer = Scalar(args[load ? 1 : 2]);
    if (!peer) return Error(peer.error());
    auto local = load ? ir::OpRegistry::Get().CreateCall("tile.load", {args[0], args[2], args[3]}, {}, call.span())
                      : ir::OpRegistry::Get().CreateCall("tile.store", {args[0], args[3], args[1]}, call.kwargs(),
                                                         call.span());
    if (!local) return Fail(local.error().message);
    const size_t before = kernel_.code.size();
    if (auto ok = load ? DecodeLoad(target, **local) : DecodeStore(nullptr, **local); !ok) return ok;
    if (kernel_.code.size() != before + 1) return Fail("a remote transfer decoded into more than one instruction");
    kernel_.code.back().remote = true;
    kernel_.code.back().comm.peer = *peer;
    return {};
  }

  // `pl.system.syncall(...)`: hard and soft barriers are one here (the gm_workspace of a soft one is
  // the device's counter; the simulator's barrier is the runtime's), so neither mode nor workspace is kept.
  pypto::expected<void, std::string> DecodeSyncAll() {
    Instr instr;
    instr.op = Opcode::SyncAll;
    Emit(instr);
    return {};
  }

  // `pl.system.sync_set(id, pipe=..., ffts_mode=...)` / `sync_wait(id, pipe=...)`: a cross-core
  // event of the mixed task (the runtime's). The pipe only says which of the core's pipes raises or
  // waits, and the simulator runs them in program order. A set without ffts_mode joins the AIC and AIV
  // of the group (mode 2), what a mixed kernel's events are for.
  pypto::expected<void, std::string> DecodeEvent(bool set, const ir::Call& call) {
    auto id = Scalar(call.args()[0]);
    if (!id) return Error(id.error());
    Instr instr;
    instr.op = set ? Opcode::EventSet : Opcode::EventWait;
    instr.event_id = *id;
    instr.event.mode = static_cast<int32_t>(ir::FindAttr<int64_t>(call.kwargs(), "ffts_mode").value_or(2));
    Emit(instr);
    return {};
  }

  // Ops that order a core's own pipes or its view of global memory (pl.system.sync_src/sync_dst,
  // bar_v/bar_m/bar_all, fence, cacheinvalid), or hand the FFTS unit its scratch (set_ffts): the
  // simulator runs every instruction of a core in program order, its stores reach global memory
  // before the next instruction and it caches nothing, so each of them already holds.
  static bool RunsInProgramOrderHere(std::string_view op) {
    static constexpr std::array<std::string_view, 8> kOps = {"system.set_ffts", "system.sync_src", "system.sync_dst",
                                                            "system.bar_v",    "system.bar_m",    "system.bar_all",
                                                            "system.fence",    "system.cacheinvalid"};
    return std::ranges::find(kOps, op) != kOps.end();
  }

  // `pl.aic_initialize_pipe(...)`: the slot buffers are the device's; what the simulator keeps is the
  // ring's depth, for the pipe ops of this id that follow (upstream's defaults: 8 slots for a pipe of
  // one direction, 4 for one of both).
  pypto::expected<void, std::string> DecodeInitPipe(const ir::Call& call) {
    const int64_t id = ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0);
    const int64_t dir_mask = ir::FindAttr<int64_t>(call.kwargs(), "dir_mask").value_or(1);
    pipe_slots_[id] = ir::FindAttr<int64_t>(call.kwargs(), "slot_num").value_or(dir_mask == 3 ? 4 : 8);
    return {};
  }

  // tpush/tpop/tfree: which pipe (id, direction, how the AIV lanes split its tiles), and the tile
  // pushed or popped with its shape, by which a split pipe cuts it.
  pypto::expected<void, std::string> DecodePipeOp(const std::string& op, const ir::VarPtr& target,
                                                  const ir::Call& call) {
    Instr instr;
    const int64_t id = ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0);
    const auto slots = pipe_slots_.find(id);
    // The AIC-to-AIV pipe is the one tpush_to_aiv fills, tpop_from_aic empties and tfree_to_aic frees.
    const bool to_aiv = op == "tile.tpush_to_aiv" || op == "tile.tpop_from_aic" || op == "system.tfree_to_aic";
    instr.pipe = rt::PipeRef{
        .id = static_cast<int32_t>(id),
        .direction = to_aiv ? rt::PipeDirection::AicToAiv : rt::PipeDirection::AivToAic,
        .slots = static_cast<int32_t>(slots == pipe_slots_.end() ? kDefaultPipeSlots : slots->second),
        .split = PipeSplitOf(ir::FindAttr<int64_t>(call.kwargs(), "split").value_or(0))};
    if (op.starts_with("tile.tpush")) {
      auto tile = Tile(call.args()[0], "tile pushed");
      if (!tile) return Error(tile.error());
      instr.op = Opcode::TPush;
      instr.src0 = tile->ref;
      instr.pipe.rows = tile->rows();
      instr.pipe.cols = tile->cols();
    } else if (op.starts_with("tile.tpop")) {
      auto tile = ResultTile(target, op.c_str());
      if (!tile) return Error(tile.error());
      values_[target.get()] = *tile;
      instr.op = Opcode::TPop;
      instr.dst = tile->ref;
      instr.pipe.rows = tile->rows();
      instr.pipe.cols = tile->cols();
    } else {
      instr.op = Opcode::TFree;
    }
    Emit(instr);
    return {};
  }

  Error Fail(const std::string& what) const {
    return Error(fmt::format("{}: kernel '{}': {} (in `{}`)", span_->str(), Name(), what, source_.text));
  }

  // The valid region a tile's type narrows it to, its extents as operands (scalar code computing
  // them runs before the next instruction); nullopt for a tile that is valid as a whole. A rank-1
  // tile is one row; a tile of higher rank is the matrix of its last two dimensions, the others 1.
  pypto::expected<std::optional<ValidRegion>, std::string> ValidRegionOf(const ir::TypePtr& type) {
    const auto* tile = type->As<ir::TileType>();
    if (!tile || !tile->has_partial_valid_shape()) return std::optional<ValidRegion>{};
    const auto& valid = tile->valid_shape();
    if (valid.size() == 1) {
      auto cols = Scalar(valid[0]);
      if (!cols) return Error(cols.error());
      return std::optional<ValidRegion>(ValidRegion{Operand::Imm(1), *cols});
    }
    const size_t row_dim = valid.size() - 2;
    for (size_t d = 0; d < row_dim; ++d) {
      if (tile->shape()[d] != 1 || ir::AsConstInt(valid[d]) != std::optional<int64_t>(1))
        return Fail(fmt::format("a valid region of {}; the simulator narrows tiles whose dimensions before the last "
                                "two are 1",
                                tile->str()));
    }
    auto rows = Scalar(valid[row_dim]);
    if (!rows) return Error(rows.error());
    auto cols = Scalar(valid[row_dim + 1]);
    if (!cols) return Error(cols.error());
    return std::optional<ValidRegion>(ValidRegion{*rows, *cols});
  }

  // Marks `instr` as moving or reading only the valid region of a tile of type `type`.
  pypto::expected<void, std::string> NarrowTo(const ir::TypePtr& type, Instr& instr) {
    auto valid = ValidRegionOf(type);
    if (!valid) return Error(valid.error());
    if (!*valid) return {};
    instr.partial = true;
    instr.valid = **valid;
    return {};
  }

  // Appends `instr`, preceded by the scalar code waiting for it; returns its index.
  size_t Emit(Instr instr) {
    for (const TileRef* ref : {&instr.dst, &instr.src0, &instr.src1, &instr.src2}) {
      if (ref->bytes == 0) continue;
      auto& mark = kernel_.high_water[static_cast<size_t>(ref->space) % kernel_.high_water.size()];
      mark = std::max(mark, ref->byte_offset + ref->bytes);
    }
    instr.scalar_begin = static_cast<uint32_t>(kernel_.scalar_code.size());
    instr.scalar_count = static_cast<uint32_t>(pending_.size());
    kernel_.scalar_code.insert(kernel_.scalar_code.end(), pending_.begin(), pending_.end());
    kernel_.scalar_text.insert(kernel_.scalar_text.end(), pending_text_.begin(), pending_text_.end());
    pending_.clear();
    pending_text_.clear();
    kernel_.code.push_back(instr);
    kernel_.sources.push_back(source_);
    return kernel_.code.size() - 1;
  }

  pypto::expected<const KernelParam*, std::string> Tensor(const ir::ExprPtr& expr, const char* role) const {
    const auto* var = expr->As<ir::Var>();
    auto it = var ? values_.find(var) : values_.end();
    if (it == values_.end() || !std::holds_alternative<TensorValue>(it->second)) {
      return Fail(fmt::format("the {} must be one of the kernel's tensor parameters, got `{}`", role,
                              ir::PrintExpr(expr)));
    }
    return &kernel_.params[std::get<TensorValue>(it->second).param];
  }

  pypto::expected<TileValue, std::string> Tile(const ir::ExprPtr& expr, const char* role) const {
    const auto* var = expr->As<ir::Var>();
    if (!var) return Fail(fmt::format("the {} must be a tile variable, got `{}`", role, ir::PrintExpr(expr)));
    auto it = values_.find(var);
    if (it == values_.end()) return Fail(fmt::format("tile '{}' is used before it is assigned", var->name_hint()));
    if (!std::holds_alternative<TileValue>(it->second)) {
      return Fail(fmt::format("the {} '{}' is a tensor, not a tile", role, var->name_hint()));
    }
    return std::get<TileValue>(it->second);
  }

  pypto::expected<ir::Shape, std::string> Ints(const ir::ExprPtr& expr, const char* role) const {
    const auto* tuple = expr->As<ir::TupleLiteral>();
    if (!tuple) return Fail(fmt::format("the {} must be a list of integers", role));
    ir::Shape values;
    for (const auto& element : tuple->elements()) {
      auto value = ir::AsConstInt(element);
      if (!value) {
        return Fail(fmt::format("the {} must be integer literals; dynamic values are not supported yet", role));
      }
      values.push_back(*value);
    }
    return values;
  }

  // Region offsets: integer scalar expressions, constant or computed.
  pypto::expected<std::vector<Operand>, std::string> Offsets(const ir::ExprPtr& expr, const char* role) {
    const auto* tuple = expr->As<ir::TupleLiteral>();
    if (!tuple) return Fail(fmt::format("the {} must be a list of integers", role));
    std::vector<Operand> offsets;
    for (const auto& element : tuple->elements()) {
      const auto* scalar = element->type()->As<ir::ScalarType>();
      if (!scalar || !ir::IsInteger(scalar->dtype())) {
        return Fail(fmt::format("the {} must be integers, got `{}` of type {}", role, ir::PrintExpr(element),
                                element->type()->str()));
      }
      auto offset = Scalar(element);
      if (!offset) return Error(offset.error());
      offsets.push_back(*offset);
    }
    return offsets;
  }

  // The tile a result variable names, with its allocated place in the core's buffers.
  pypto::expected<TileValue, std::string> ResultTile(const ir::VarPtr& target, const char* op) const {
    if (!target) return Fail(fmt::format("the result of {} is not assigned to a tile", op));
    const auto* tile = target->type()->As<ir::TileType>();
    if (!tile) return Fail(fmt::format("the result '{}' has type {}, not a tile", target->name_hint(),
                                       target->type()->str()));
    if (!tile->memref()) {
      return Fail(fmt::format("tile '{}' has no buffer address; the simulator runs kernels after memory allocation",
                              target->name_hint()));
    }
    const int bits = ir::DataTypeBits(tile->dtype());
    if (bits <= 0 || bits % 8 != 0 || RuntimeDtype(tile->dtype()) < 0) {
      return Fail(fmt::format("tile '{}' has dtype {}, which the simulator does not support yet",
                              target->name_hint(), ir::DataTypeName(tile->dtype())));
    }
    if (tile->shape().empty() || tile->shape().size() > kMaxDims) {
      return Fail(fmt::format("tile '{}' has rank {}; the simulator supports 1 to {}", target->name_hint(),
                              tile->shape().size(), kMaxDims));
    }
    for (int64_t dim : tile->shape())
      if (dim <= 0) return Fail(fmt::format("tile '{}' has a non-positive dimension", target->name_hint()));
    const bool vector = kernel_.core_type == rt::CoreType::AIV;
    if (vector && tile->memory_space() != ir::MemorySpace::Vec) {
      return Fail(fmt::format("tile '{}' lives in {}, but a vector kernel only has the Vec buffer (UB)",
                              target->name_hint(), ir::MemorySpaceName(tile->memory_space())));
    }
    TileValue value;
    value.dtype = tile->dtype();
    value.shape = tile->shape();
    value.num_elements = tile->num_elements();
    value.ref = TileRef{tile->memory_space(), tile->memref()->byte_offset, tile->num_bytes()};
    const int64_t capacity = soc_.capacity(tile->memory_space());
    const int64_t elem_bytes = bits / 8;
    if (value.ref.byte_offset < 0 || value.ref.byte_offset > capacity - value.ref.bytes) {
      return Fail(fmt::format("tile '{}' occupies bytes [{}, {}) of {}, outside its {}-byte capacity on {}",
                              target->name_hint(), value.ref.byte_offset, value.ref.byte_offset + value.ref.bytes,
                              ir::MemorySpaceName(tile->memory_space()), capacity, soc_.name));
    }
    if (tile->memref()->size < value.ref.bytes) {
      return Fail(fmt::format("tile '{}' needs {} bytes but its buffer allocation holds {}", target->name_hint(),
                              value.ref.bytes, tile->memref()->size));
    }
    if (value.ref.byte_offset % elem_bytes != 0) {
      return Fail(fmt::format("tile '{}' starts at byte {}, not aligned to its {}-byte elements",
                              target->name_hint(), value.ref.byte_offset, elem_bytes));
    }
    return value;
  }

  // The region [offsets, offsets + shape) must lie in the kernel's static view of the tensor. A
  // computed offset is checked when the instruction runs (against the view the task was given).
  pypto::expected<void, std::string> CheckRegion(const KernelParam& tensor, const std::vector<Operand>& offsets,
                                                 const ir::ExprPtr& offsets_expr, const ir::Shape& shape,
                                                 Instr& instr, bool valid_only = false) const {
    if (offsets.size() != tensor.shape.size() || shape.size() != tensor.shape.size()) {
      return Fail(fmt::format("region rank {} does not match tensor '{}' of rank {}", offsets.size(), tensor.name,
                              tensor.shape.size()));
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      const Operand& offset = offsets[d];
      // A tile moving only its valid region may reach past the tensor's end (a ragged tail): that
      // region is checked when the instruction runs.
      const bool past_end = !valid_only && (offset.is_reg() ? shape[d] > tensor.shape[d]
                                                            : offset.imm > tensor.shape[d] - shape[d]);
      const bool outside = shape[d] <= 0 || (!offset.is_reg() && offset.imm < 0) || past_end;
      if (outside) {
        std::vector<std::string> text;
        const auto& elements = offsets_expr->As<ir::TupleLiteral>()->elements();
        for (size_t k = 0; k < offsets.size(); ++k)
          text.push_back(offsets[k].is_reg() ? ir::PrintExpr(elements[k]) : std::to_string(offsets[k].imm));
        return Fail(fmt::format("region at [{}] of shape [{}] is outside tensor '{}' of shape [{}]",
                                fmt::join(text, ", "), fmt::join(shape, ", "), tensor.name,
                                fmt::join(tensor.shape, ", ")));
      }
      instr.offsets[d] = offset.is_reg() ? 0 : offset.imm;
      instr.offset_regs[d] = offset.reg;
      instr.dynamic = instr.dynamic || offset.is_reg();
      instr.shape[d] = shape[d];
    }
    instr.rank = static_cast<uint8_t>(shape.size());
    instr.tensor_slot = tensor.slot;
    instr.rt_dtype = tensor.rt_dtype;
    return {};
  }

  pypto::expected<void, std::string> DecodeLoad(const ir::VarPtr& target, const ir::Call& call) {
    if (call.args().size() != 3 && call.args().size() != 4)
      return Fail("tile.load takes (tensor, offsets, shapes[, valid_shape])");
    auto tensor = Tensor(call.args()[0], "source of tile.load");
    if (!tensor) return Error(tensor.error());
    auto offsets = Offsets(call.args()[1], "load offsets");
    if (!offsets) return Error(offsets.error());
    auto shape = Ints(call.args()[2], "load shapes");
    if (!shape) return Error(shape.error());
    auto tile = ResultTile(target, "tile.load");
    if (!tile) return Error(tile.error());

    Instr instr;
    instr.op = Opcode::Load;
    const bool partial = target->type()->As<ir::TileType>()->has_partial_valid_shape();
    if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], *shape, instr, partial); !ok) return ok;
    int64_t count = 1;
    for (int64_t dim : *shape) count *= dim;
    if (tile->dtype != (*tensor)->dtype || count != tile->num_elements) {
      return Fail(fmt::format("tile '{}' ({} x {}) does not match the loaded region ({} x {})", target->name_hint(),
                              tile->num_elements, ir::DataTypeName(tile->dtype), count,
                              ir::DataTypeName((*tensor)->dtype)));
    }
    instr.kind = KindOf(tile->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.dst = tile->ref;
    instr.num_elements = count;
    if (auto ok = NarrowTo(target->type(), instr); !ok) return ok;
    values_[target.get()] = *tile;
    Emit(instr);
    return {};
  }

  // `pl.paged_gather(pool, indices, block_table, ...)`: a load of rows the two tables pick, read when
  // it runs (each checked against its table and the pool).
  pypto::expected<void, std::string> DecodePagedGather(const ir::VarPtr& target, const ir::Call& call) {
    auto pool = Tensor(call.args()[0], "pool of pl.paged_gather");
    if (!pool) return Error(pool.error());
    auto indices = Tensor(call.args()[1], "indices of pl.paged_gather");
    if (!indices) return Error(indices.error());
    auto table = Tensor(call.args()[2], "block table of pl.paged_gather");
    if (!table) return Error(table.error());
    auto tile = ResultTile(target, "pl.paged_gather");
    if (!tile) return Error(tile.error());
    Instr instr;
    instr.op = Opcode::Load;
    const std::vector<Operand> origin((*pool)->shape.size(), Operand::Imm(0));
    std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
    if (auto ok = CheckRegion(**pool, origin, std::make_shared<ir::TupleLiteral>(zeros), (*pool)->shape, instr); !ok)
      return ok;
    instr.kind = KindOf(tile->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.dst = tile->ref;
    instr.num_elements = tile->num_elements;
    instr.paged = {.on = true,
                   .indices = (*indices)->slot,
                   .table = (*table)->slot,
                   .block_size = *ir::FindAttr<int64_t>(call.kwargs(), "block_size"),
                   .col_off = ir::FindAttr<int64_t>(call.kwargs(), "col_off").value_or(0),
                   .rows = tile->rows(),
                   .cols = tile->cols()};
    values_[target.get()] = *tile;
    Emit(instr);
    return {};
  }

  // `pl.mgather(mem, idx, ...)`: a load of the rows or elements the indices pick, each index read
  // when it runs. The indices are a tile, or (a Mat result) a tensor; element mode's Mat scratch
  // tensor is the device's staging area, which the simulator does not need.
  pypto::expected<void, std::string> DecodeMemGather(const ir::VarPtr& target, const ir::Call& call) {
    auto mem = Tensor(call.args()[0], "source of pl.mgather");
    if (!mem) return Error(mem.error());
    auto tile = ResultTile(target, "pl.mgather");
    if (!tile) return Error(tile.error());
    Instr instr;
    instr.op = Opcode::Load;
    const std::vector<Operand> origin((*mem)->shape.size(), Operand::Imm(0));
    std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
    if (auto ok = CheckRegion(**mem, origin, std::make_shared<ir::TupleLiteral>(zeros), (*mem)->shape, instr); !ok)
      return ok;
    instr.kind = KindOf(tile->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.dst = tile->ref;
    instr.num_elements = tile->num_elements;
    Instr::MemGather& gather = instr.mgather;
    gather.on = true;
    gather.rows = ir::FindAttr<std::string>(call.kwargs(), "coalesce").value_or("row") == "row";
    static constexpr std::string_view kOob[] = {"undefined", "clamp", "wrap", "zero"};
    const std::string oob = ir::FindAttr<std::string>(call.kwargs(), "gather_oob").value_or("undefined");
    gather.oob = static_cast<GatherOob>(std::find(std::begin(kOob), std::end(kOob), oob) - std::begin(kOob));
    const ir::ExprPtr& idx = call.args()[1];
    if (idx->type()->As<ir::TensorType>()) {
      auto table = Tensor(idx, "indices of pl.mgather");
      if (!table) return Error(table.error());
      gather.indices_in_tensor = true;
      gather.indices = (*table)->slot;
      gather.index_cols = (*table)->shape.back();
    } else {
      auto indices = Tile(idx, "indices of pl.mgather");
      if (!indices) return Error(indices.error());
      // The a2a3 vector unit takes row indices as a row only; a5 also as a column.
      if (gather.rows && indices->rows() > 1 && soc_.arch == "a2a3")
        return Fail(fmt::format("pl.mgather of rows picked by a column of indices [{}, 1] runs on a5 only; on {} the "
                                "indices must be a row [1, {}]",
                                indices->rows(), soc_.arch, indices->rows()));
      instr.src0 = indices->ref;
      gather.index_cols = indices->cols();
    }
    gather.out_rows = tile->rows();
    gather.out_cols = tile->cols();
    if (auto ok = NarrowTo(target->type(), instr); !ok) return ok;
    values_[target.get()] = *tile;
    Emit(instr);
    return {};
  }

  // `k = pl.cast(s, pl.INDEX)`: registers hold integers as int64 (narrower ones read sign- or
  // zero-extended), so a cast that keeps every value of its source (to a type at least as wide, and
  // signed unless the source is unsigned) names the same value. Any other integer cast wraps, as on a
  // device: the low bits of the target's width, sign- or zero-extended as the target reads them.
  pypto::expected<void, std::string> DecodeScalarCast(const ir::VarPtr& target, const ir::Call& call) {
    if (!target) return {};  // a cast nobody uses
    if (IsFp32Scalar(call.args()[0]) || IsFp32Scalar(target)) return DecodeFloatCast(target, call);
    auto operand = CastOperand(call, target->name_hint());
    if (!operand) return Error(operand.error());
    values_[target.get()] = ScalarValue{*operand};
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    return {};
  }

  // `i = pl.cast(f, pl.INT32)` of an FP32 (rounded toward zero) into an integer register, or
  // `f = pl.cast(i, pl.FP32)` into the FP32-bits register that FP32 comparisons read.
  pypto::expected<void, std::string> DecodeFloatCast(const ir::VarPtr& target, const ir::Call& call) {
    const ir::ExprPtr& source = call.args()[0];
    const bool from_float = IsFp32Scalar(source), to_float = IsFp32Scalar(target);
    auto operand = from_float ? Fp32Operand(source) : Scalar(source);
    if (!operand) return Error(operand.error());
    const ScalarOp op = to_float ? ScalarOp::SiToFp : ScalarOp::FpToSi;
    const ir::DataType to = call.type()->As<ir::ScalarType>()->dtype();
    const auto bits = Operand::Imm(8 * static_cast<int64_t>(ir::DataTypeBytes(to)));
    Operand result = *operand;
    if (from_float == to_float) {
      // pl.cast(0.0, pl.FP32): the value itself.
    } else if (operand->is_reg()) {
      result = Operand::Reg(NewRegister(target->name_hint(), to_float ? "FP32 bits" : "cast of an FP32"));
      pending_.push_back(ScalarInstr{op, result.reg, *operand, bits});
      pending_text_.push_back(fmt::format("pl.cast({}, pl.{})", ir::PrintExpr(source), ir::DataTypeName(to)));
    } else {
      int64_t value = 0;
      EvalScalar(op, operand->imm, bits.imm, value);
      result = Operand::Imm(value);
    }
    if (!to_float) {
      values_[target.get()] = ScalarValue{result};
      if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
      return {};
    }
    if (!result.is_reg()) {  // an FP32 constant still needs a register to be named by
      const uint32_t reg = NewRegister(target->name_hint(), "FP32 bits");
      pending_.push_back(ScalarInstr{ScalarOp::Add, reg, result, Operand::Imm(0)});
      pending_text_.push_back(target->name_hint());
      result = Operand::Reg(reg);
    }
    float_regs_[target.get()] = static_cast<uint32_t>(result.reg);
    return {};
  }

  // The value of an integer scalar cast (named `name` in listings), also where it stands inside a
  // larger expression (`if c == pl.cast(296, pl.INT32)`).
  pypto::expected<Operand, std::string> CastOperand(const ir::Call& call, const std::string& name) {
    const ir::DataType from = call.args()[0]->type()->As<ir::ScalarType>()->dtype();
    const ir::DataType to = call.type()->As<ir::ScalarType>()->dtype();
    const auto is_unsigned = [](ir::DataType dtype) { return std::string_view(ir::DataTypeName(dtype)).starts_with("UINT"); };
    auto operand = Scalar(call.args()[0]);
    if (!operand) return operand;
    if (ir::DataTypeBytes(to) >= ir::DataTypeBytes(from) && (!is_unsigned(to) || is_unsigned(from))) return operand;
    const ScalarOp op = is_unsigned(to) ? ScalarOp::ZeroExtend : ScalarOp::SignExtend;
    const Operand bits = Operand::Imm(8 * static_cast<int64_t>(ir::DataTypeBytes(to)));
    if (!operand->is_reg()) {
      int64_t value = 0;
      EvalScalar(op, operand->imm, bits.imm, value);
      return Operand::Imm(value);
    }
    const uint32_t reg = NewRegister(name, "narrowing cast");
    pending_.push_back(ScalarInstr{op, reg, *operand, bits});
    pending_text_.push_back(fmt::format("pl.cast({}, pl.{})", ir::PrintExpr(call.args()[0]), ir::DataTypeName(to)));
    return Operand::Reg(reg);
  }

  // `s = pl.read(t, [i, j])`: integers become integer registers, an FP32 an FP32-bits register
  // that tile-scalar ops read (as an FP32 scalar parameter is).
  pypto::expected<void, std::string> DecodeRead(const ir::VarPtr& target, const ir::Call& call) {
    if (!target) return {};  // a read nobody uses
    auto read = EmitRead(call, target->name_hint());
    if (!read) return Error(read.error());
    BindRead(target, read->reg, read->is_float);
    return {};
  }

  struct ElementRead {
    uint32_t reg;
    bool is_float;  // the register holds the bits of an FP32
  };

  // `pl.read(tensor, indices)` into a new register named `name`.
  pypto::expected<ElementRead, std::string> EmitRead(const ir::Call& call, const std::string& name) {
    auto tensor = Tensor(call.args()[0], "source of pl.read");
    if (!tensor) return pypto::unexpected(tensor.error());
    auto offsets = Offsets(call.args()[1], "pl.read indices");
    if (!offsets) return pypto::unexpected(offsets.error());
    const ir::DataType dtype = (*tensor)->dtype;
    const bool half = dtype == ir::DataType::FP16 || dtype == ir::DataType::BF16;
    const bool is_float = dtype == ir::DataType::FP32 || half;
    const bool is_int = ir::IsInteger(dtype) && ir::DataTypeBytes(dtype) <= 8;
    if (!is_float && !is_int)
      return Fail(fmt::format("pl.read of a {} tensor: the simulator reads integer, FP32, FP16 and BF16 elements only",
                              ir::DataTypeName(dtype)));
    Instr instr;
    instr.op = Opcode::ReadScalar;
    // An FP16 or BF16 element lands in the register widened to FP32, as the scalar unit computes.
    if (half) instr.widen = dtype == ir::DataType::FP16 ? Widen::Half : Widen::BFloat;
    if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], ir::Shape(offsets->size(), 1), instr); !ok)
      return pypto::unexpected(ok.error());
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(dtype));
    // I32 marks a signed integer (sign-extended); Raw an unsigned one or the bits of an FP32.
    instr.kind = is_int && static_cast<uint8_t>(dtype) < 0x20 ? ElemKind::I32 : ElemKind::Raw;
    const uint32_t reg = NewReadRegister(name, is_float);
    instr.scalar_dst = static_cast<int32_t>(reg);
    Emit(instr);
    return ElementRead{reg, is_float};
  }

  // An element read inside a scalar expression (`if i < n and pl.read(flags, [i]) > 0`), of a tensor
  // or a tile: read where the expression is evaluated, so a read guarded by an enclosing if happens
  // only when it runs; the operand is the register the element lands in. nullopt for any other
  // expression.
  std::optional<pypto::expected<Operand, std::string>> NestedReadOperand(const ir::ExprPtr& expr) {
    const auto* call = expr->As<ir::Call>();
    if (!call || !call->is_op_call()) return std::nullopt;
    const std::string& op = call->op()->name;
    if (op != "tensor.read" && op != "tile.read") return std::nullopt;
    auto read = op == "tensor.read" ? EmitRead(*call, ir::PrintExpr(expr)) : EmitTileRead(*call, ir::PrintExpr(expr));
    if (!read) return pypto::unexpected(read.error());
    return Operand::Reg(read->reg);
  }

  // Binds `target` to the register an element read landed in: an FP32-bits register for an FP32
  // (what tile-scalar ops read), else an integer one.
  void BindRead(const ir::VarPtr& target, uint32_t reg, bool is_float) {
    if (is_float) {
      float_regs_[target.get()] = reg;
    } else {
      values_[target.get()] = ScalarValue{Operand::Reg(reg)};
      if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    }
  }

  // A new register for an element read, bound to `target`.
  uint32_t NewReadRegister(std::string name, bool is_float) {
    return NewRegister(std::move(name), is_float ? "read (FP32 bits)" : "read");
  }

  // The element types pl.read and pl.write move: integers (kept in integer registers) and FP32
  // (its bits in an FP32-bits register).
  pypto::expected<void, std::string> CheckElementDtype(ir::DataType dtype, const char* op, const char* what) const {
    if (dtype == ir::DataType::FP32 || (ir::IsInteger(dtype) && ir::DataTypeBytes(dtype) <= 8)) return {};
    return Fail(fmt::format("{} of a {} {}: the simulator moves integer and FP32 elements only", op,
                            ir::DataTypeName(dtype), what));
  }

  // I32 marks a signed integer element (sign-extended when read); F32 an FP32; Raw an unsigned one.
  static ElemKind ElementKind(ir::DataType dtype) {
    if (dtype == ir::DataType::FP32) return ElemKind::F32;
    return ir::IsInteger(dtype) && static_cast<uint8_t>(dtype) < 0x20 ? ElemKind::I32 : ElemKind::Raw;
  }

  // The value pl.write stores: a constant, an integer register or an FP32 scalar's bits register.
  pypto::expected<ScalarOperand, std::string> WrittenValue(const ir::ExprPtr& value, ir::DataType dtype) {
    if (dtype == ir::DataType::FP32 && value->As<ir::Var>() && !float_regs_.contains(value->As<ir::Var>()))
      return Fail(fmt::format("`{}` is an FP32 scalar the simulator does not hold; it writes FP32 values read with "
                              "pl.read, FP32 parameters and constants",
                              ir::PrintExpr(value)));
    return ScalarArg(value);
  }

  // `pl.write(t, [i, j], v)` into a tensor argument: the result names the tensor written.
  pypto::expected<void, std::string> DecodeTensorWrite(const ir::VarPtr& target, const ir::Call& call) {
    auto tensor = Tensor(call.args()[0], "destination of pl.write");
    if (!tensor) return Error(tensor.error());
    auto offsets = Offsets(call.args()[1], "pl.write indices");
    if (!offsets) return Error(offsets.error());
    const ir::DataType dtype = (*tensor)->dtype;
    if (auto ok = CheckElementDtype(dtype, "pl.write", "tensor"); !ok) return ok;
    Instr instr;
    instr.op = Opcode::WriteScalar;
    if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], ir::Shape(offsets->size(), 1), instr); !ok)
      return ok;
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(dtype));
    instr.kind = ElementKind(dtype);
    auto value = WrittenValue(call.args()[2], dtype);
    if (!value) return Error(value.error());
    instr.value = *value;
    if (target) values_[target.get()] = values_.at(call.args()[0]->As<ir::Var>());
    Emit(instr);
    return {};
  }

  // `s = pl.read(tile, [i, j])` / `tile = pl.write(tile, [i, j], v)`: one element of a tile. A
  // written tile is updated in place, so the result names the same buffer.
  pypto::expected<void, std::string> DecodeTileElement(bool write, const ir::VarPtr& target, const ir::Call& call) {
    if (!write && !target) return {};  // a read nobody uses
    if (!write) {
      auto read = EmitTileRead(call, target->name_hint());
      if (!read) return Error(read.error());
      BindRead(target, read->reg, read->is_float);
      return {};
    }
    auto tile = Tile(call.args()[0], "destination of pl.write");
    if (!tile) return Error(tile.error());
    Instr instr;
    instr.op = Opcode::WriteTile;
    if (auto ok = TileElement(*tile, call.args()[1], "pl.write", instr); !ok) return ok;
    auto value = WrittenValue(call.args()[2], tile->dtype);
    if (!value) return Error(value.error());
    instr.value = *value;
    instr.dst = tile->ref;
    if (target) values_[target.get()] = *tile;
    Emit(instr);
    return {};
  }

  // `pl.read(tile, [i, j])` into a new register named `name` (an FP32's bits, or an integer).
  pypto::expected<ElementRead, std::string> EmitTileRead(const ir::Call& call, const std::string& name) {
    auto tile = Tile(call.args()[0], "source of pl.read");
    if (!tile) return pypto::unexpected(tile.error());
    Instr instr;
    instr.op = Opcode::ReadTile;
    if (auto ok = TileElement(*tile, call.args()[1], "pl.read", instr); !ok)
      return pypto::unexpected(ok.error());
    instr.src0 = tile->ref;
    const bool is_float = tile->dtype == ir::DataType::FP32;
    const uint32_t reg = NewReadRegister(name, is_float);
    instr.scalar_dst = static_cast<int32_t>(reg);
    Emit(instr);
    return ElementRead{reg, is_float};
  }

  // The element of `tile` at `indices_expr` that `instr` (a ReadTile or WriteTile) addresses.
  pypto::expected<void, std::string> TileElement(const TileValue& tile_value, const ir::ExprPtr& indices_expr,
                                                 const char* op, Instr& instr) {
    const TileValue* tile = &tile_value;
    const bool write = instr.op == Opcode::WriteTile;
    auto indices = Offsets(indices_expr, write ? "pl.write indices" : "pl.read indices");
    if (!indices) return Error(indices.error());
    if (auto ok = CheckElementDtype(tile->dtype, op, "tile"); !ok) return ok;
    if (tile->shape.size() != indices->size() || tile->shape.size() > kMaxDims)
      return Fail(fmt::format("{} of a rank-{} tile with {} indices", op, tile->shape.size(), indices->size()));
    for (size_t d = 0; d < indices->size(); ++d) {
      const Operand& index = (*indices)[d];
      if (!index.is_reg() && (index.imm < 0 || index.imm >= tile->shape[d]))
        return Fail(fmt::format("{} index {} of dimension {} is outside the tile of shape [{}]", op, index.imm, d,
                                fmt::join(tile->shape, ", ")));
      instr.offsets[d] = index.is_reg() ? 0 : index.imm;
      instr.offset_regs[d] = index.reg;
      instr.dynamic = instr.dynamic || index.is_reg();
      instr.shape[d] = tile->shape[d];
    }
    instr.rank = static_cast<uint8_t>(indices->size());
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.kind = ElementKind(tile->dtype);
    return {};
  }

  pypto::expected<void, std::string> DecodeStore(const ir::VarPtr& target, const ir::Call& call) {
    if (call.args().size() < 3) return Fail("tile.store takes (tile, offsets, output_tensor[, shapes])");
    auto tile = Tile(call.args()[0], "value of tile.store");
    if (!tile) return Error(tile.error());
    auto offsets = Offsets(call.args()[1], "store offsets");
    if (!offsets) return Error(offsets.error());
    auto tensor = Tensor(call.args()[2], "destination of tile.store");
    if (!tensor) return Error(tensor.error());
    // An FP32 accumulator may go out to an FP16/BF16 tensor, rounded by the fixpipe.
    const bool narrows = tile->ref.space == ir::MemorySpace::Acc && tile->dtype == ir::DataType::FP32 &&
                         ((*tensor)->dtype == ir::DataType::FP16 || (*tensor)->dtype == ir::DataType::BF16);
    if (tile->dtype != (*tensor)->dtype && !narrows) {
      return Fail(fmt::format("cannot store a {} tile into tensor '{}' of {}", ir::DataTypeName(tile->dtype),
                              (*tensor)->name, ir::DataTypeName((*tensor)->dtype)));
    }
    // The tile's shape is the region's; a rank-deficient tile is padded with leading 1s, and one of
    // higher rank drops its extra leading 1s.
    ir::Shape shape = tile->shape;
    while (shape.size() < offsets->size()) shape.insert(shape.begin(), 1);
    while (shape.size() > offsets->size() && shape.front() == 1) shape.erase(shape.begin());
    // A 2-D tile merging an N-d window's rows (FlattenTileNdTo2D) names the window with shapes=; its
    // elements land in it in row-major order, as those of the N-d tile would.
    auto window = StoredWindow(call, tile->shape, offsets->size());
    if (!window) return Error(window.error());
    if (!window->empty()) shape = *window;
    Instr instr;
    instr.op = Opcode::Store;
    instr.atomic_add = ir::AccumulatesIntoWrittenArg(call);
    // A tile narrower than its shape, or stored in part, is checked where its elements land, at run time.
    const bool partial = call.args()[0]->type()->As<ir::TileType>()->has_partial_valid_shape() ||
                         (call.args().size() > 3 && window->empty());
    if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], shape, instr, partial); !ok) return ok;
    instr.kind = KindOf((*tensor)->dtype);
    instr.narrow_to_half = narrows;
    instr.elem_dtype = (*tensor)->dtype;
    static constexpr ir::DataType kAtomic[] = {ir::DataType::FP32,  ir::DataType::FP16,  ir::DataType::BF16,
                                               ir::DataType::INT32, ir::DataType::INT16, ir::DataType::INT8};
    if (instr.atomic_add && std::find(std::begin(kAtomic), std::end(kAtomic), instr.elem_dtype) == std::end(kAtomic)) {
      return Fail(fmt::format("an atomic-add store into a {} tensor is not supported by the simulator",
                              ir::DataTypeName(instr.elem_dtype)));
    }
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes((*tensor)->dtype));
    instr.src0 = tile->ref;
    instr.num_elements = tile->num_elements;
    if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
    if (window->empty())
      if (auto ok = NarrowToStoredPart(call, tile->shape, instr); !ok) return ok;
    // The result names the tensor that was written.
    if (target) values_[target.get()] = values_.at(call.args()[2]->As<ir::Var>());
    Emit(instr);
    return {};
  }

  // `pl.mscatter(src, idx, out)`: a store whose region is the whole tensor, each element of src
  // going to the flat index idx holds at its position (checked when it runs).
  pypto::expected<void, std::string> DecodeScatterStore(const ir::VarPtr& target, const ir::Call& call) {
    auto src = Tile(call.args()[0], "source of pl.mscatter");
    if (!src) return Error(src.error());
    auto idx = Tile(call.args()[1], "indices of pl.mscatter");
    if (!idx) return Error(idx.error());
    auto tensor = Tensor(call.args()[2], "output of pl.mscatter");
    if (!tensor) return Error(tensor.error());
    Instr instr;
    instr.op = Opcode::Store;
    instr.scatter = true;
    const std::vector<Operand> origin((*tensor)->shape.size(), Operand::Imm(0));
    std::vector<ir::ExprPtr> zeros(origin.size(), std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX));
    if (auto ok = CheckRegion(**tensor, origin, std::make_shared<ir::TupleLiteral>(zeros), (*tensor)->shape, instr);
        !ok)
      return ok;
    instr.kind = KindOf(src->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(src->dtype));
    instr.src0 = src->ref;
    instr.src1 = idx->ref;
    instr.num_elements = src->num_elements;
    if (target) values_[target.get()] = values_.at(call.args()[2]->As<ir::Var>());
    Emit(instr);
    return {};
  }

  // The N-d window a 2-D tile's store names with shapes= of more dimensions than the tile, whose
  // leading ones merge into the tile's rows; empty when shapes= is absent or names a corner instead.
  pypto::expected<ir::Shape, std::string> StoredWindow(const ir::Call& call, const ir::Shape& tile_shape,
                                                       size_t rank) {
    if (call.args().size() < 4) return ir::Shape{};
    auto shapes = Ints(call.args()[3], "store shapes");
    if (!shapes) return pypto::unexpected(shapes.error());
    if (tile_shape.size() != 2 || shapes->size() <= 2 || shapes->size() != rank) return ir::Shape{};
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shapes->size(); ++d) rows *= (*shapes)[d];
    if (rows != tile_shape[0] || shapes->back() != tile_shape[1]) return ir::Shape{};
    return *shapes;
  }

  // `pl.store(t, offsets, y, shapes=[r, c])` writes the tile's top-left [r, c] only: a valid region
  // of that size (within the tile's own, when it has one).
  pypto::expected<void, std::string> NarrowToStoredPart(const ir::Call& call, const ir::Shape& tile_shape,
                                                        Instr& instr) {
    if (call.args().size() < 4) return {};
    auto shapes = Ints(call.args()[3], "store shapes");
    if (!shapes) return Error(shapes.error());
    if (*shapes == tile_shape) return {};
    if (shapes->size() < 2 && tile_shape.size() >= 2) return Fail("store shapes must cover the tile's rank");
    const int64_t rows = shapes->size() >= 2 ? (*shapes)[shapes->size() - 2] : 1, cols = shapes->back();
    if (instr.partial && (instr.valid.rows.is_reg() || instr.valid.cols.is_reg()))
      return Fail("storing part of a tile whose valid region is known only at run time is not supported yet");
    if (instr.partial) {
      instr.valid.rows = Operand::Imm(std::min(rows, instr.valid.rows.imm));
      instr.valid.cols = Operand::Imm(std::min(cols, instr.valid.cols.imm));
    } else {
      instr.partial = true;
      instr.valid = ValidRegion{Operand::Imm(rows), Operand::Imm(cols)};
    }
    return {};
  }

  static ElemKind KindOf(ir::DataType dtype) {
    if (dtype == ir::DataType::FP32) return ElemKind::F32;
    if (dtype == ir::DataType::INT32) return ElemKind::I32;
    return ElemKind::Raw;
  }

  // The element types arithmetic runs on: FP32 and INT32 as they are, FP16, BF16 and the 8- and
  // 16-bit integers widened (see Widen). nullopt for the rest (UINT32, 64-bit types).
  struct ComputeType {
    ElemKind kind;
    Widen widen;
  };
  static std::optional<ComputeType> ComputeTypeOf(ir::DataType dtype) {
    switch (dtype) {
      case ir::DataType::FP32: return ComputeType{ElemKind::F32, Widen::None};
      case ir::DataType::FP16: return ComputeType{ElemKind::F32, Widen::Half};
      case ir::DataType::BF16: return ComputeType{ElemKind::F32, Widen::BFloat};
      case ir::DataType::INT32: return ComputeType{ElemKind::I32, Widen::None};
      case ir::DataType::INT16: return ComputeType{ElemKind::I32, Widen::I16};
      case ir::DataType::UINT16: return ComputeType{ElemKind::I32, Widen::U16};
      case ir::DataType::INT8: return ComputeType{ElemKind::I32, Widen::I8};
      case ir::DataType::UINT8: return ComputeType{ElemKind::I32, Widen::U8};
      default: return std::nullopt;
    }
  }

  // The element types an op computes on: floating-point only; every type with arithmetic (see
  // ComputeTypeOf); or those and UINT32, for the ops whose two's-complement result bits do not depend
  // on signedness (add, sub, mul, neg, sums, broadcasts), which run on a UINT32 tile as on INT32.
  enum class Domain : uint8_t { Float, Arith, Wrapping };

  // Sets how `instr` computes on `dtype` tiles, or refuses a type it cannot in `domain`.
  pypto::expected<void, std::string> SetComputeType(const std::string& op, ir::DataType dtype, Domain domain,
                                                    Instr& instr) const {
    auto type = ComputeTypeOf(dtype);
    if (!type && domain == Domain::Wrapping && dtype == ir::DataType::UINT32)
      type = ComputeType{ElemKind::I32, Widen::None};
    if (!type || (domain == Domain::Float && type->kind != ElemKind::F32)) {
      const char* supported = domain == Domain::Float ? "FP32, FP16 and BF16"
                              : dtype == ir::DataType::UINT32
                                  ? "FP32, FP16, BF16, INT32 and 8- and 16-bit integers; UINT32 only for the ops "
                                    "whose result does not depend on signedness: add, sub, mul, neg, sums and "
                                    "broadcasts"
                                  : "FP32, FP16, BF16, INT32 and 8- and 16-bit integers";
      return Fail(fmt::format("{} on {} tiles is not supported yet by the simulator (it computes on {})", op,
                              ir::DataTypeName(dtype), supported));
    }
    instr.kind = type->kind;
    instr.widen = type->widen;
    return {};
  }

  // Whether an integer BinaryOp's two's-complement result is the same for signed and unsigned operands.
  static bool Wraps(BinaryOp op) { return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul; }

  static bool Overlap(const TileRef& a, const TileRef& b) {
    return a.space == b.space && a.byte_offset < b.byte_offset + b.bytes && b.byte_offset < a.byte_offset + a.bytes;
  }

  pypto::expected<void, std::string> DecodeBinary(Opcode op, const ir::VarPtr& target, const ir::Call& call) {
    const std::string& name = call.op()->name;
    if (call.args().size() != 2) return Fail(fmt::format("{} takes two tiles", name));
    auto lhs = Tile(call.args()[0], "left operand");
    if (!lhs) return Error(lhs.error());
    auto rhs = Tile(call.args()[1], "right operand");
    if (!rhs) return Error(rhs.error());
    auto out = ResultTile(target, name.c_str());
    if (!out) return Error(out.error());
    if (lhs->dtype != rhs->dtype || lhs->dtype != out->dtype || lhs->num_elements != rhs->num_elements ||
        lhs->num_elements != out->num_elements) {
      return Fail(fmt::format("operands and result differ in dtype or size: {} x {}, {} x {} -> {} x {}",
                              lhs->num_elements, ir::DataTypeName(lhs->dtype), rhs->num_elements,
                              ir::DataTypeName(rhs->dtype), out->num_elements, ir::DataTypeName(out->dtype)));
    }
    Instr instr;
    const Domain domain = op == Opcode::Div ? Domain::Arith : Domain::Wrapping;
    if (auto ok = SetComputeType(name, out->dtype, domain, instr); !ok) return ok;
    // In-place reuse means the same place; a partial overlap is an allocation bug.
    for (const TileValue* src : {&*lhs, &*rhs}) {
      if (Overlap(out->ref, src->ref) && out->ref.byte_offset != src->ref.byte_offset) {
        return Fail(fmt::format("result tile '{}' at [{}, {}) partially overlaps an operand at [{}, {}) of {}",
                                target->name_hint(), out->ref.byte_offset, out->ref.byte_offset + out->ref.bytes,
                                src->ref.byte_offset, src->ref.byte_offset + src->ref.bytes,
                                ir::MemorySpaceName(src->ref.space)));
      }
    }
    instr.op = op;
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
    instr.dst = out->ref;
    instr.src0 = lhs->ref;
    instr.src1 = rhs->ref;
    instr.num_elements = out->num_elements;
    values_[target.get()] = *out;
    Emit(instr);
    return {};
  }

  // `tile.addc` / `subc` / `addsc` / `subsc`: lhs plus or minus rhs (a tile, or a scalar for the sc
  // forms), then plus rhs2; two element-wise steps, as the PTO instructions are made of (TADDC is two
  // TADDs, TSUBC a TSUB and a TADD), so an FP16 result is rounded after each as on the device.
  pypto::expected<void, std::string> DecodeThreeOperand(const std::string& op, const ir::VarPtr& target,
                                                        const ir::Call& call) {
    const auto& args = call.args();
    const bool scalar_middle = op.ends_with("sc");
    auto out = ResultTile(target, op.c_str());
    if (!out) return Error(out.error());
    auto lhs = Tile(args[0], "left operand");
    if (!lhs) return Error(lhs.error());
    auto third = Tile(args[2], "third operand");
    if (!third) return Error(third.error());
    for (const TileValue* src : {&*lhs, &*third}) {
      if (auto ok = SameSize(*src, *out); !ok) return ok;
    }
    // The second step reads the third operand after the first has written the result.
    if (Overlap(out->ref, third->ref))
      return Fail(fmt::format("the result tile '{}' of {} shares the buffer of its third operand, which the "
                              "instruction reads after writing the result",
                              target->name_hint(), op));
    Instr first;
    first.op = Opcode::Compute;
    first.dst = out->ref;
    first.num_elements = out->num_elements;
    first.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
    if (auto ok = SetComputeType(op, out->dtype, Domain::Wrapping, first); !ok) return ok;
    first.compute.op = static_cast<uint8_t>(op.starts_with("tile.sub") ? BinaryOp::Sub : BinaryOp::Add);
    first.src0 = lhs->ref;
    if (scalar_middle) {
      auto scalar = ScalarArg(args[1]);
      if (!scalar) return Error(scalar.error());
      first.compute.kind = ComputeKind::BinaryScalar;
      first.compute.scalar = *scalar;
    } else {
      auto rhs = Tile(args[1], "right operand");
      if (!rhs) return Error(rhs.error());
      if (auto ok = SameSize(*rhs, *out); !ok) return ok;
      first.compute.kind = ComputeKind::Binary;
      first.src1 = rhs->ref;
    }
    Instr second = first;
    second.compute.kind = ComputeKind::Binary;
    second.compute.op = static_cast<uint8_t>(BinaryOp::Add);
    second.src0 = out->ref;
    second.src1 = third->ref;
    Emit(first);
    Emit(second);
    values_[target.get()] = *out;
    return {};
  }

  // -- Compute ops ---------------------------------------------------------------------------

  struct ComputeSpec {
    ComputeKind kind;
    uint8_t op = 0;
  };

  // The forms of a Matmul (ComputeSpec::op): C = A @ B; C += A @ B on an accumulator (its first
  // argument); C = A @ B + bias (its third).
  enum MatmulForm : uint8_t { kMatmulPlain, kMatmulAcc, kMatmulBias };

  static const ComputeSpec* FindComputeSpec(const std::string& name) {
    static const std::unordered_map<std::string, ComputeSpec> kSpecs = [] {
      std::unordered_map<std::string, ComputeSpec> specs;
      auto put = [&](const std::string& op, ComputeKind kind, auto sub) {
        specs[op] = ComputeSpec{kind, static_cast<uint8_t>(sub)};
      };
      const std::pair<const char*, BinaryOp> binary[] = {{"add", BinaryOp::Add}, {"sub", BinaryOp::Sub},
                                                         {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div},
                                                         {"max", BinaryOp::Max}, {"min", BinaryOp::Min}};
      for (const auto& [name, op] : binary) {
        put(fmt::format("tile.row_expand_{}", name), ComputeKind::RowExpand, op);
        put(fmt::format("tile.col_expand_{}", name), ComputeKind::ColExpand, op);
      }
      put("tile.maximum", ComputeKind::Binary, BinaryOp::Max);
      put("tile.minimum", ComputeKind::Binary, BinaryOp::Min);
      put("tile.fmod", ComputeKind::Binary, BinaryOp::Fmod);
      put("tile.fmods", ComputeKind::BinaryScalar, BinaryOp::Fmod);
      put("tile.cmp", ComputeKind::Compare, 0);
      put("tile.cmps", ComputeKind::Compare, 0);
      put("tile.sel", ComputeKind::Select, 0);
      put("tile.sels", ComputeKind::Select, 0);
      put("tile.prelu", ComputeKind::Prelu, 0);
      const std::pair<const char*, BinaryOp> partial[] = {{"part_add", BinaryOp::Add},
                                                          {"part_mul", BinaryOp::Mul},
                                                          {"part_max", BinaryOp::Max},
                                                          {"part_min", BinaryOp::Min}};
      for (const auto& [name, op] : partial) put(fmt::format("tile.{}", name), ComputeKind::PartialBinary, op);
      put("tile.tri", ComputeKind::Triangle, 0);
      const std::pair<const char*, BinaryOp> scalar[] = {{"adds", BinaryOp::Add},     {"subs", BinaryOp::Sub},
                                                         {"muls", BinaryOp::Mul},     {"divs", BinaryOp::Div},
                                                         {"maximums", BinaryOp::Max}, {"minimums", BinaryOp::Min}};
      for (const auto& [name, op] : scalar) put(fmt::format("tile.{}", name), ComputeKind::BinaryScalar, op);
      const std::pair<const char*, UnaryOp> unary[] = {
          {"exp", UnaryOp::Exp},     {"log", UnaryOp::Log},   {"sqrt", UnaryOp::Sqrt}, {"rsqrt", UnaryOp::Rsqrt},
          {"recip", UnaryOp::Recip}, {"relu", UnaryOp::Relu}, {"abs", UnaryOp::Abs},   {"neg", UnaryOp::Neg},
          {"sin", UnaryOp::Sin},     {"cos", UnaryOp::Cos}};
      for (const auto& [name, op] : unary) put(fmt::format("tile.{}", name), ComputeKind::Unary, op);
      put("tile.lrelu", ComputeKind::LeakyRelu, 0);
      put("tile.not", ComputeKind::BitNot, 0);
      const std::pair<const char*, IntegerOp> integer[] = {{"and", IntegerOp::And}, {"or", IntegerOp::Or},
                                                           {"xor", IntegerOp::Xor}, {"shl", IntegerOp::Shl},
                                                           {"shr", IntegerOp::Shr}, {"rem", IntegerOp::Rem}};
      for (const auto& [name, op] : integer) {
        put(fmt::format("tile.{}", name), ComputeKind::IntegerBinary, op);
        put(fmt::format("tile.{}s", name), ComputeKind::IntegerBinary, op);
      }
      const std::pair<const char*, ReduceOp> reduce[] = {
          {"sum", ReduceOp::Sum}, {"max", ReduceOp::Max}, {"min", ReduceOp::Min}, {"prod", ReduceOp::Prod}};
      for (const auto& [name, op] : reduce) {
        put(fmt::format("tile.row_{}", name), ComputeKind::RowReduce, op);
        put(fmt::format("tile.col_{}", name), ComputeKind::ColReduce, op);
      }
      for (const auto& [name, op] : {std::pair{"max", ArgReduceOp::Max}, std::pair{"min", ArgReduceOp::Min}}) {
        put(fmt::format("tile.row_arg{}", name), ComputeKind::RowArgReduce, op);
        put(fmt::format("tile.col_arg{}", name), ComputeKind::ColArgReduce, op);
      }
      put("tile.row_expand_expdif", ComputeKind::RowExpDif, 0);
      put("tile.col_expand_expdif", ComputeKind::ColExpDif, 0);
      put("tile.row_expand", ComputeKind::RowBroadcast, 0);
      put("tile.col_expand", ComputeKind::ColBroadcast, 0);
      put("tile.full", ComputeKind::Fill, 0);
      put("tile.expands", ComputeKind::Fill, 0);
      put("tile.move", ComputeKind::Copy, 0);
      put("tile.reshape", ComputeKind::Copy, 0);
      put("tile.reinterpret_view", ComputeKind::Copy, 0);
      put("tile.matmul", ComputeKind::Matmul, kMatmulPlain);
      put("tile.matmul_acc", ComputeKind::Matmul, kMatmulAcc);
      put("tile.matmul_bias", ComputeKind::Matmul, kMatmulBias);
      put("tile.gemv", ComputeKind::Matmul, kMatmulPlain);
      put("tile.gemv_acc", ComputeKind::Matmul, kMatmulAcc);
      put("tile.gemv_bias", ComputeKind::Matmul, kMatmulBias);
      put("tile.cast", ComputeKind::Cast, 0);
      put("tile.sort32", ComputeKind::Sort32, 0);
      put("tile.mrgsort_format1", ComputeKind::MergeSort, 0);
      put("tile.mrgsort_format2", ComputeKind::MergeLists, 0);
      put("tile.gather_mask", ComputeKind::GatherMask, 0);
      put("tile.gather", ComputeKind::GatherAlong, 0);
      put("tile.gather_dim", ComputeKind::GatherAlong, 0);
      put("tile.scatter", ComputeKind::ScatterAlong, 0);
      put("tile.scatter_dim", ComputeKind::ScatterAlong, 0);
      put("tile.scatter_mask", ComputeKind::ScatterLanes, 0);
      put("tile.scatter_update", ComputeKind::ScatterRows, 0);
      put("tile.gather_compare", ComputeKind::GatherCompare, 0);
      put("tile.gatherb", ComputeKind::GatherBlocks, 0);
      put("tile.gather_compare_count", ComputeKind::GatherCompare, 0);
      put("tile.random", ComputeKind::Random, 0);
      put("tile.slice", ComputeKind::Slice, 0);
      put("tile.extract", ComputeKind::Slice, 0);
      put("tile.assemble", ComputeKind::Insert, 0);
      put("tile.concat", ComputeKind::Concat, 0);
      put("tile.transpose", ComputeKind::Transpose, 0);
      put("tile.transpose_view", ComputeKind::Transpose, 0);
      put("tile.ci", ComputeKind::Arange, 0);
      put("tile.fillpad", ComputeKind::FillPad, 0);
      put("tile.fillpad_inplace", ComputeKind::FillPad, 0);
      put("tile.fillpad_expand", ComputeKind::FillPadExpand, 0);
      return specs;
    }();
    auto it = kSpecs.find(name);
    return it == kSpecs.end() ? nullptr : &it->second;
  }

  // Decodes the ops a Compute instruction runs, tile.create (which only names a buffer), and
  // tile.reshape of a tile in place (which only renames one); nullopt for any other op.
  std::optional<pypto::expected<void, std::string>> DecodeCompute(const std::string& op, const ir::VarPtr& target,
                                                                  const ir::Call& call) {
    // set_validshape restates the region of the tile's own buffer: nothing runs.
    if (op == "tile.create" || op == "tile.set_validshape") {
      auto tile = ResultTile(target, op.c_str());
      if (!tile) return Error(tile.error());
      values_[target.get()] = *tile;
      return pypto::expected<void, std::string>{};
    }
    const ComputeSpec* spec = FindComputeSpec(op);
    if (!spec) return std::nullopt;
    auto out = ResultTile(target, op.c_str());
    if (!out) return Error(out.error());
    Instr instr;
    instr.op = Opcode::Compute;
    instr.dst = out->ref;
    instr.num_elements = out->num_elements;
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
    instr.kind = KindOf(out->dtype);
    ComputeInfo& info = instr.compute;
    info.kind = spec->kind;
    info.op = spec->op;
    if (auto ok = DecodeComputeOperands(op, *out, call, instr); !ok) return Error(ok.error());
    values_[target.get()] = *out;
    // A reshape or move onto its own storage changes nothing at run time.
    if (info.kind == ComputeKind::Copy && instr.src0.space == instr.dst.space &&
        instr.src0.byte_offset == instr.dst.byte_offset)
      return pypto::expected<void, std::string>{};
    Emit(instr);
    return pypto::expected<void, std::string>{};
  }

  // `pl.tile.fillpad(t, pad_value=...)`: a copy of t whose elements outside t's valid region hold
  // the pad value, fixed here as a bit pattern of the element type.
  pypto::expected<void, std::string> DecodeFillPad(const ir::Call& call, Instr& instr) {
    auto src = Tile(call.args()[0], "operand");
    if (!src) return Error(src.error());
    auto mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
    auto bits = PadBits(src->dtype, mode);
    if (!bits)
      return Fail(fmt::format("fillpad of a {} tile is not supported by the simulator yet",
                              ir::DataTypeName(src->dtype)));
    instr.src0 = src->ref;
    instr.compute.rows = src->rows();
    instr.compute.cols = src->cols();
    instr.compute.pad_bits = *bits;
    if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
    if (!instr.partial) {  // the whole tile is valid: a plain copy
      instr.compute.kind = ComputeKind::Copy;
      instr.compute.rows = instr.compute.cols = 0;
    }
    return {};
  }

  // `pl.tile.fillpad_expand(t, shape, pad_value=...)`: t's valid region into the top-left corner of a
  // larger tile, the pad value (a bit pattern of the element type) everywhere else.
  pypto::expected<void, std::string> DecodeFillPadExpand(const TileValue& out, const ir::Call& call, Instr& instr) {
    auto src = Tile(call.args()[0], "operand");
    if (!src) return Error(src.error());
    auto mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
    auto bits = PadBits(src->dtype, mode);
    if (!bits)
      return Fail(fmt::format("fillpad_expand of a {} tile is not supported by the simulator yet",
                              ir::DataTypeName(src->dtype)));
    ComputeInfo& info = instr.compute;
    instr.src0 = src->ref;
    info.rows = src->rows();
    info.cols = src->cols();
    info.outer_rows = out.rows();
    info.outer_cols = out.cols();
    info.pad_bits = *bits;
    if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
    if (!instr.partial) {  // the whole source is copied
      instr.partial = true;
      instr.valid = ValidRegion{Operand::Imm(info.rows), Operand::Imm(info.cols)};
    }
    return {};
  }

  // `pl.tile.cmp(a, b, cmp_type=k)` / `pl.tile.cmps(a, s, cmp_type=k)`: the packed predicate mask of
  // comparing a's elements (compared in a's compute type, see ComputeTypeOf) into the UINT8 result.
  pypto::expected<void, std::string> DecodeCompare(const std::string& op, const TileValue& out, const ir::Call& call,
                                                   Instr& instr) {
    ComputeInfo& info = instr.compute;
    auto lhs = Tile(call.args()[0], "left operand");
    if (!lhs) return Error(lhs.error());
    Instr operand_type;
    if (auto ok = SetComputeType(op, lhs->dtype, Domain::Arith, operand_type); !ok) return ok;
    instr.src0 = lhs->ref;
    info.in_dtype = lhs->dtype;
    info.rows = lhs->rows();
    info.cols = lhs->cols();
    info.mask_row_bytes = out.cols();
    info.op = static_cast<uint8_t>(ir::FindAttr<int64_t>(call.kwargs(), "cmp_type").value_or(0));
    if (op == "tile.cmp") {
      auto rhs = Tile(call.args()[1], "right operand");
      if (!rhs) return Error(rhs.error());
      if (auto ok = SameSize(*rhs, *lhs); !ok) return ok;
      instr.src1 = rhs->ref;
      return {};
    }
    auto scalar = ScalarArg(call.args()[1]);
    if (!scalar) return Error(scalar.error());
    info.scalar = *scalar;
    return {};
  }

  // `pl.full(shape, dtype=pl.BF16, value=0.0)`: a tile of a type without arithmetic is filled with
  // the constant's bit pattern.
  pypto::expected<void, std::string> DecodeFillBits(const std::string& op, const TileValue& out,
                                                    const ir::ExprPtr& value, Instr& instr) const {
    std::optional<double> constant;
    if (const auto* f = value->As<ir::ConstFloat>()) constant = f->value();
    if (const auto* i = value->As<ir::ConstInt>()) constant = static_cast<double>(i->value());
    auto bits = constant ? ValueBits(out.dtype, *constant) : std::nullopt;
    if (!bits)
      return Fail(fmt::format("{} of a {} tile is supported by the simulator with a constant value only, got `{}`",
                              op, ir::DataTypeName(out.dtype), ir::PrintExpr(value)));
    instr.compute.kind = ComputeKind::FillBits;
    instr.compute.pad_bits = *bits;
    return {};
  }

  // Arithmetic runs on FP32 and INT32 tiles (others are moved and converted, not computed on).
  pypto::expected<void, std::string> RequireArithmetic(const std::string& op, const TileValue& tile,
                                                       bool float_only) const {
    const ElemKind kind = KindOf(tile.dtype);
    if (kind == ElemKind::F32 || (!float_only && kind == ElemKind::I32)) return {};
    return Fail(fmt::format("{} on {} tiles is not supported yet by the simulator (it computes on FP32{})", op,
                            ir::DataTypeName(tile.dtype), float_only ? " and FP16" : ", FP16 and INT32"));
  }

  // The domain of an element-wise Binary, BinaryScalar, Unary or LeakyRelu op.
  static Domain ElementwiseDomain(const ComputeInfo& info) {
    switch (info.kind) {
      case ComputeKind::LeakyRelu:
      case ComputeKind::Prelu: return Domain::Float;
      case ComputeKind::Unary:
        switch (static_cast<UnaryOp>(info.op)) {
          case UnaryOp::Neg: return Domain::Wrapping;
          case UnaryOp::Relu:
          case UnaryOp::Abs: return Domain::Arith;
          default: return Domain::Float;
        }
      default: return Wraps(static_cast<BinaryOp>(info.op)) ? Domain::Wrapping : Domain::Arith;
    }
  }

  // The domain of a row/column expand or broadcast (a broadcast only copies).
  static Domain ExpandDomain(const ComputeInfo& info) {
    switch (info.kind) {
      case ComputeKind::RowExpDif:
      case ComputeKind::ColExpDif: return Domain::Float;
      case ComputeKind::RowBroadcast:
      case ComputeKind::ColBroadcast: return Domain::Wrapping;
      default: return Wraps(static_cast<BinaryOp>(info.op)) ? Domain::Wrapping : Domain::Arith;
    }
  }

  pypto::expected<void, std::string> DecodeComputeOperands(const std::string& op, const TileValue& out,
                                                           const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    const auto& args = call.args();
    auto tile_arg = [&](size_t i, const char* role) { return Tile(args[i], role); };
    auto matrix = [&](const TileValue& tile) {
      info.rows = tile.rows();
      info.cols = tile.cols();
    };
    switch (info.kind) {
      case ComputeKind::Binary:
      case ComputeKind::Prelu:
      case ComputeKind::Unary:
      case ComputeKind::LeakyRelu:
      case ComputeKind::BinaryScalar: {
        auto src = tile_arg(0, "operand");
        if (!src) return Error(src.error());
        if (auto ok = SetComputeType(op, out.dtype, ElementwiseDomain(info), instr); !ok) return ok;
        if (auto ok = SameSize(*src, out); !ok) return ok;
        instr.src0 = src->ref;
        if (info.kind == ComputeKind::Binary || info.kind == ComputeKind::Prelu) {
          auto rhs = tile_arg(1, info.kind == ComputeKind::Prelu ? "slope" : "right operand");
          if (!rhs) return Error(rhs.error());
          if (auto ok = SameSize(*rhs, out); !ok) return ok;
          instr.src1 = rhs->ref;
        } else if (info.kind == ComputeKind::BinaryScalar || info.kind == ComputeKind::LeakyRelu) {
          auto scalar = ScalarArg(args[1]);
          if (!scalar) return Error(scalar.error());
          info.scalar = *scalar;
        }
        return {};
      }
      case ComputeKind::RowReduce:
      case ComputeKind::ColReduce: {
        auto src = tile_arg(0, "operand");
        if (!src) return Error(src.error());
        const Domain domain = static_cast<ReduceOp>(info.op) == ReduceOp::Sum ? Domain::Wrapping : Domain::Arith;
        if (auto ok = SetComputeType(op, out.dtype, domain, instr); !ok) return ok;
        instr.src0 = src->ref;
        matrix(*src);
        info.pairwise = args.size() > 1;
        return NarrowTo(args[0]->type(), instr);
      }
      case ComputeKind::RowArgReduce:
      case ComputeKind::ColArgReduce: {  // FP16 or FP32 values (type deduction checked), INT32 indices
        auto src = tile_arg(0, "operand");
        if (!src) return Error(src.error());
        instr.src0 = src->ref;
        info.in_dtype = src->dtype;
        matrix(*src);
        return NarrowTo(args[0]->type(), instr);
      }
      case ComputeKind::FillPad: return DecodeFillPad(call, instr);
      case ComputeKind::FillPadExpand: return DecodeFillPadExpand(out, call, instr);
      case ComputeKind::Compare: return DecodeCompare(op, out, call, instr);
      case ComputeKind::Select: {
        if (op == "tile.sels") return DecodeSelectScalar(out, call, instr);
        auto mask = tile_arg(0, "mask");
        if (!mask) return Error(mask.error());
        auto lhs = tile_arg(1, "left operand");
        if (!lhs) return Error(lhs.error());
        auto rhs = tile_arg(2, "right operand");
        if (!rhs) return Error(rhs.error());
        if (auto ok = SameSize(*lhs, out); !ok) return ok;
        if (auto ok = SameSize(*rhs, out); !ok) return ok;
        instr.src2 = mask->ref;
        instr.src0 = lhs->ref;
        instr.src1 = rhs->ref;
        matrix(out);
        info.mask_row_bytes = mask->cols() * static_cast<int64_t>(ir::DataTypeBytes(mask->dtype));
        return {};
      }
      case ComputeKind::BitNot: {
        auto src = tile_arg(0, "operand");
        if (!src) return Error(src.error());
        if (!ir::IsInteger(out.dtype))
          return Fail(fmt::format("{} inverts the bits of integer tiles, got {}", op, ir::DataTypeName(out.dtype)));
        if (auto ok = SameSize(*src, out); !ok) return ok;
        instr.src0 = src->ref;
        return {};
      }
      case ComputeKind::IntegerBinary: return DecodeIntegerBinary(op, out, call, instr);
      case ComputeKind::RowExpand:
      case ComputeKind::ColExpand:
      case ComputeKind::RowExpDif:
      case ComputeKind::ColExpDif:
      case ComputeKind::RowBroadcast:
      case ComputeKind::ColBroadcast: {
        auto src = tile_arg(0, "tile operand");
        if (!src) return Error(src.error());
        auto vec = tile_arg(1, "vector operand");
        if (!vec) return Error(vec.error());
        if (auto ok = SetComputeType(op, out.dtype, ExpandDomain(info), instr); !ok) return ok;
        instr.src0 = src->ref;
        instr.src1 = vec->ref;
        matrix(out);
        if (info.kind == ComputeKind::RowExpand) info.vec_lanes = vec->cols();
        return {};
      }
      case ComputeKind::Fill: {
        if (KindOf(out.dtype) == ElemKind::Raw) return DecodeFillBits(op, out, args[1], instr);
        auto scalar = ScalarArg(args[1]);
        if (!scalar) return Error(scalar.error());
        if (auto ok = RequireArithmetic(op, out, false); !ok) return ok;
        info.scalar = *scalar;
        return {};
      }
      case ComputeKind::Copy: {
        auto src = tile_arg(0, "source");
        if (!src) return Error(src.error());
        // A reinterpreted view is the same bytes as elements of another size: only the byte counts agree.
        const auto bytes = [](const TileValue& tile) {
          return tile.num_elements * static_cast<int64_t>(ir::DataTypeBytes(tile.dtype));
        };
        if (op == "tile.reinterpret_view") {
          if (bytes(*src) != bytes(out))
            return Fail(fmt::format("{} views {} bytes as {}", op, bytes(*src), bytes(out)));
        } else if (auto ok = SameSize(*src, out); !ok) {
          return ok;
        }
        instr.src0 = src->ref;
        return {};
      }
      case ComputeKind::Matmul: return DecodeMatmul(op, out, call, instr);
      case ComputeKind::Cast: return DecodeCast(op, out, call, instr);
      case ComputeKind::Sort32:
      case ComputeKind::MergeSort:
      case ComputeKind::GatherMask:
      case ComputeKind::Concat:
      case ComputeKind::Transpose:
      case ComputeKind::Arange: return DecodeTopKFamily(op, out, call, instr);
      case ComputeKind::GatherAlong:
      case ComputeKind::ScatterAlong:
      case ComputeKind::ScatterLanes:
      case ComputeKind::ScatterRows: return DecodeIndexMove(op, out, call, instr);
      case ComputeKind::GatherCompare: return DecodeGatherCompare(op, call, instr);
      case ComputeKind::GatherBlocks: return DecodeGatherBlocks(out, call, instr);
      case ComputeKind::Random: return DecodeRandom(out, call, instr);
      case ComputeKind::MergeLists: return DecodeMergeLists(out, call, instr);
      case ComputeKind::Slice:
      case ComputeKind::Insert: return DecodeWindow(op, out, call, instr);
      case ComputeKind::PartialBinary: return DecodePartialBinary(op, out, call, instr);
      case ComputeKind::Triangle: return DecodeTriangle(out, call, instr);
    }
    return Fail("unknown compute op (decoder bug)");
  }

  // `pl.tile.and(a, b)`, `pl.tile.shls(a, 3)`, `pl.tile.rem(a, b, tmp)` and their kin. An integer
  // tile's op runs at its own width and signedness over the result's valid region; a floating-point
  // tile's rem is the element-wise kernels' Rem. The scratch tile is the device instruction's and
  // plays no part here.
  pypto::expected<void, std::string> DecodeIntegerBinary(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    const bool scalar_rhs = call.args()[1]->type()->As<ir::ScalarType>() != nullptr;
    if (ir::IsFloat(out.dtype) && static_cast<IntegerOp>(info.op) == IntegerOp::Rem) {
      info.kind = scalar_rhs ? ComputeKind::BinaryScalar : ComputeKind::Binary;
      info.op = static_cast<uint8_t>(BinaryOp::Rem);
      return DecodeComputeOperands(op, out, call, instr);
    }
    const int bits = ir::IsInteger(out.dtype) ? ir::DataTypeBits(out.dtype) : 0;
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
      return Fail(fmt::format("{} on {} tiles is not supported by the simulator (it computes on 8- to 64-bit "
                              "integers)",
                              op, ir::DataTypeName(out.dtype)));
    auto src = Tile(call.args()[0], "left operand");
    if (!src) return Error(src.error());
    if (auto ok = SameSize(*src, out); !ok) return ok;
    instr.src0 = src->ref;
    if (scalar_rhs) {
      auto scalar = ScalarArg(call.args()[1]);
      if (!scalar) return Error(scalar.error());
      info.scalar = *scalar;
    } else {
      auto rhs = Tile(call.args()[1], "right operand");
      if (!rhs) return Error(rhs.error());
      if (auto ok = SameSize(*rhs, out); !ok) return ok;
      instr.src1 = rhs->ref;
    }
    info.out_dtype = out.dtype;
    info.rows = out.rows();
    info.cols = out.cols();
    return NarrowTo(call.type(), instr);
  }

  // `pl.tile.sels(mask, src, tmp, scalar)`: src where the mask's bit is set, the scalar elsewhere. The
  // scalar becomes an element of src's type when the instruction runs (it may be computed); the
  // scratch tile is the device instruction's and plays no part here.
  pypto::expected<void, std::string> DecodeSelectScalar(const TileValue& out, const ir::Call& call, Instr& instr) {
    auto mask = Tile(call.args()[0], "mask");
    if (!mask) return Error(mask.error());
    auto src = Tile(call.args()[1], "source");
    if (!src) return Error(src.error());
    if (auto ok = SameSize(*src, out); !ok) return ok;
    if (!ValueBits(out.dtype, 0))
      return Fail(fmt::format("tile.sels of a {} tile is not supported by the simulator", ir::DataTypeName(out.dtype)));
    auto scalar = ScalarArg(call.args()[3]);
    if (!scalar) return Error(scalar.error());
    ComputeInfo& info = instr.compute;
    instr.src2 = mask->ref;
    instr.src0 = src->ref;
    info.scalar = *scalar;
    info.out_dtype = out.dtype;
    info.rows = out.rows();
    info.cols = out.cols();
    info.mask_row_bytes = mask->cols() * static_cast<int64_t>(ir::DataTypeBytes(mask->dtype));
    return {};
  }

  // `pl.tile.part_add(src0, src1)` and its kin: the op where src1 is valid, src0 elsewhere; src1's
  // valid region is read when the instruction runs.
  pypto::expected<void, std::string> DecodePartialBinary(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr) {
    auto src0 = Tile(call.args()[0], "first operand");
    if (!src0) return Error(src0.error());
    auto src1 = Tile(call.args()[1], "second operand");
    if (!src1) return Error(src1.error());
    const Domain domain = Wraps(static_cast<BinaryOp>(instr.compute.op)) ? Domain::Wrapping : Domain::Arith;
    if (auto ok = SetComputeType(op, out.dtype, domain, instr); !ok) return ok;
    if (auto ok = SameSize(*src0, out); !ok) return ok;
    if (auto ok = SameSize(*src1, out); !ok) return ok;
    instr.src0 = src0->ref;
    instr.src1 = src1->ref;
    instr.compute.rows = out.rows();
    instr.compute.cols = out.cols();
    return NarrowTo(call.args()[1]->type(), instr);
  }

  // `pl.tile.tri(diagonal, shape, valid_shape=..., dtype=..., upper=...)`: ones on one side of the
  // diagonal over the valid region, as the element type's bit pattern; the diagonal may be computed.
  pypto::expected<void, std::string> DecodeTriangle(const TileValue& out, const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    auto one = ValueBits(out.dtype, 1.0);
    if (!one)
      return Fail(fmt::format("pl.tile.tri of a {} tile is not supported by the simulator",
                              ir::DataTypeName(out.dtype)));
    auto diagonal = ScalarArg(call.args()[0]);
    if (!diagonal) return Error(diagonal.error());
    info.scalar = *diagonal;
    info.op = ir::FindAttr<bool>(call.kwargs(), "upper").value_or(false) ? 1 : 0;
    info.pad_bits = *one;
    info.rows = out.rows();
    info.cols = out.cols();
    return NarrowTo(call.type(), instr);
  }

  // tile.mrgsort_format2(lists..., tmp): an instruction reads at most two tiles, so each list is
  // first copied into its place in the scratch tile (an Insert), side by side in argument order; the
  // merge then reads the scratch tile as consecutive sorted runs.
  pypto::expected<void, std::string> DecodeMergeLists(const TileValue& out, const ir::Call& call, Instr& instr) {
    const auto& args = call.args();
    const size_t lists = args.size() - 1;
    if (ir::FindAttr<bool>(call.kwargs(), "exhausted").value_or(false))
      return Fail("pl.mrgsort with exhausted=True (stopping when a list runs out) is not supported by the simulator "
                  "yet");
    auto tmp = Tile(args[lists], "scratch tile");
    if (!tmp) return Error(tmp.error());
    if (tmp->dtype != ir::DataType::FP32)
      return Fail(fmt::format("pl.mrgsort of {} values is not supported yet by the simulator (FP32 only)",
                              ir::DataTypeName(tmp->dtype)));
    if (Overlap(out.ref, tmp->ref)) return Fail("the result of pl.mrgsort overlaps its scratch tile");
    int64_t col = 0;
    for (size_t i = 0; i < lists; ++i) {
      auto list = Tile(args[i], "sorted list");
      if (!list) return Error(list.error());
      if (list->cols() % 2 != 0)
        return Fail(fmt::format("sorted list {} of pl.mrgsort has {} lanes, not whole (value, index) pairs", i,
                                list->cols()));
      if (Overlap(tmp->ref, list->ref))
        return Fail(fmt::format("the scratch tile of pl.mrgsort overlaps sorted list {}", i));
      Instr stage;
      stage.op = Opcode::Compute;
      stage.kind = instr.kind;
      stage.elem_bytes = instr.elem_bytes;
      stage.dst = tmp->ref;
      stage.src0 = list->ref;
      stage.num_elements = list->num_elements;
      stage.compute.kind = ComputeKind::Insert;
      stage.compute.rows = stage.compute.outer_rows = 1;
      stage.compute.cols = list->cols();
      stage.compute.outer_cols = tmp->cols();
      stage.compute.row_offset = Operand::Imm(0);
      stage.compute.col_offset = Operand::Imm(col);
      Emit(stage);
      instr.compute.list_lanes[i] = list->cols();
      col += list->cols();
    }
    instr.src0 = tmp->ref;
    instr.compute.rows = 1;
    instr.compute.cols = out.cols();
    return {};
  }

  pypto::expected<void, std::string> SameSize(const TileValue& src, const TileValue& out) const {
    if (src.num_elements == out.num_elements && src.ref.bytes == out.ref.bytes) {
      if (!Overlap(out.ref, src.ref) || out.ref.byte_offset == src.ref.byte_offset) return {};
      return Fail(fmt::format("the result at [{}, {}) partially overlaps an operand at [{}, {}) of {}",
                              out.ref.byte_offset, out.ref.byte_offset + out.ref.bytes, src.ref.byte_offset,
                              src.ref.byte_offset + src.ref.bytes, ir::MemorySpaceName(src.ref.space)));
    }
    return Fail(fmt::format("an operand ({} x {}) and the result ({} x {}) differ in size", src.num_elements,
                            ir::DataTypeName(src.dtype), out.num_elements, ir::DataTypeName(out.dtype)));
  }

  // A tile-scalar operand: a literal, an integer expression, or an FP32 scalar parameter.
  pypto::expected<ScalarOperand, std::string> ScalarArg(const ir::ExprPtr& expr) {
    ScalarOperand scalar;
    if (const auto* f = expr->As<ir::ConstFloat>()) {
      scalar.imm = f->value();
      return scalar;
    }
    if (const auto* var = expr->As<ir::Var>()) {
      if (auto it = float_regs_.find(var); it != float_regs_.end()) {
        scalar.source = ScalarOperand::Source::Fp32BitsReg;
        scalar.reg = static_cast<int32_t>(it->second);
        return scalar;
      }
    }
    auto operand = Scalar(expr);
    if (!operand) return pypto::unexpected(operand.error());
    if (operand->is_reg()) {
      scalar.source = ScalarOperand::Source::IntReg;
      scalar.reg = operand->reg;
    } else {
      scalar.imm = static_cast<double>(operand->imm);
    }
    return scalar;
  }

  // The cube unit's products: floating-point inputs accumulate in FP32, INT8 inputs in INT32.
  static bool MatmulSupported(ir::DataType lhs, ir::DataType rhs, ir::DataType acc) {
    if (lhs != rhs) return false;
    if (lhs == ir::DataType::INT8) return acc == ir::DataType::INT32;
    return acc == ir::DataType::FP32 &&
           (lhs == ir::DataType::FP32 || lhs == ir::DataType::FP16 || lhs == ir::DataType::BF16);
  }

  // A matmul of batches of matrices: the result holds info.batch of them; an operand holds as many
  // (its step is one matrix) or one that serves every batch (step 0). Batches broadcast in any
  // other way ([2, 1] against [1, 3]) are refused.
  pypto::expected<void, std::string> DecodeMatmulBatch(const std::string& op, const TileValue& lhs,
                                                       const TileValue& rhs, const TileValue& out, ComputeInfo& info) {
    const auto matrices = [](const TileValue& tile) {
      return tile.num_elements / (tile.shape[tile.shape.size() - 2] * tile.shape.back());
    };
    info.batch = matrices(out);
    const int64_t lhs_batch = matrices(lhs), rhs_batch = matrices(rhs);
    if ((lhs_batch != 1 && lhs_batch != info.batch) || (rhs_batch != 1 && rhs_batch != info.batch))
      return Fail(fmt::format("{} broadcasts the batches of [{}] and [{}] in a way the simulator does not support yet "
                              "(each operand must hold every batch of the result, or one matrix)",
                              op, fmt::join(lhs.shape, ", "), fmt::join(rhs.shape, ", ")));
    if (info.batch > 1) {
      info.src0_step = lhs_batch == 1 ? 0 : info.rows * info.inner;
      info.src1_step = rhs_batch == 1 ? 0 : info.inner * info.cols;
    }
    return {};
  }

  // The part of K the product sums: the lhs's valid extent along its contraction dimension.
  pypto::expected<Operand, std::string> ValidInner(const ir::ExprPtr& lhs, bool a_trans, int64_t inner) {
    const auto* tile = lhs->type()->As<ir::TileType>();
    if (!tile->has_partial_valid_shape()) return Operand::Imm(inner);
    const auto& valid = tile->valid_shape();
    return Scalar(valid[valid.size() - (a_trans ? 2 : 1)]);
  }

  pypto::expected<void, std::string> DecodeMatmul(const std::string& op, const TileValue& out, const ir::Call& call,
                                                  Instr& instr) {
    ComputeInfo& info = instr.compute;
    const bool acc = info.op == kMatmulAcc;
    const bool bias = info.op == kMatmulBias;
    const size_t first = acc ? 1 : 0;
    auto lhs = Tile(call.args()[first], "left operand");
    if (!lhs) return Error(lhs.error());
    auto rhs = Tile(call.args()[first + 1], "right operand");
    if (!rhs) return Error(rhs.error());
    if (!MatmulSupported(lhs->dtype, rhs->dtype, out.dtype)) {
      return Fail(fmt::format("{} of {} by {} tiles into {} is not supported by the simulator (FP32, FP16 or BF16 "
                              "inputs into an FP32 accumulator, INT8 inputs into an INT32 one)",
                              op, ir::DataTypeName(lhs->dtype), ir::DataTypeName(rhs->dtype),
                              ir::DataTypeName(out.dtype)));
    }
    if (lhs->shape.size() < 2 || rhs->shape.size() < 2) return Fail(fmt::format("{} multiplies 2-D tiles", op));
    // Each operand is a batch of matrices of its last two dimensions (one matrix when the others are 1).
    info.a_trans = ir::FindAttr<bool>(call.kwargs(), "a_trans").value_or(false);
    info.b_trans = ir::FindAttr<bool>(call.kwargs(), "b_trans").value_or(false);
    const int64_t lhs_rows = lhs->shape[lhs->shape.size() - 2], rhs_rows = rhs->shape[rhs->shape.size() - 2];
    info.rows = info.a_trans ? lhs->cols() : lhs_rows;
    info.inner = info.a_trans ? lhs_rows : lhs->cols();
    info.cols = info.b_trans ? rhs_rows : rhs->cols();
    info.in_dtype = lhs->dtype;
    info.accumulate = acc;
    if (auto ok = DecodeMatmulBatch(op, *lhs, *rhs, out, info); !ok) return ok;
    auto valid_inner = ValidInner(call.args()[first], info.a_trans, info.inner);
    if (!valid_inner) return Error(valid_inner.error());
    info.valid_inner = *valid_inner;
    instr.src0 = lhs->ref;
    instr.src1 = rhs->ref;
    if (bias) {
      auto row = Tile(call.args()[2], "bias");
      if (!row) return Error(row.error());
      if (row->dtype != out.dtype || row->num_elements != info.cols)
        return Fail(fmt::format("the bias of {} must be one {} row of {} elements", op, ir::DataTypeName(out.dtype),
                                info.cols));
      instr.src2 = row->ref;
    }
    if (acc && call.args().size() > 3) {
      auto cond = Scalar(call.args()[3]);
      if (!cond) return Error(cond.error());
      info.init_cond = *cond;
    }
    if (acc) {
      auto accumulator = Tile(call.args()[0], "accumulator");
      if (!accumulator) return Error(accumulator.error());
      // The allocator gives the result the accumulator's storage; if it did not, start from a copy.
      if (accumulator->ref.byte_offset != out.ref.byte_offset || accumulator->ref.space != out.ref.space) {
        Instr copy;
        copy.op = Opcode::Compute;
        copy.kind = ElemKind::Raw;
        copy.compute.kind = ComputeKind::Copy;
        copy.dst = out.ref;
        copy.src0 = accumulator->ref;
        copy.num_elements = out.num_elements;
        Emit(copy);
      }
    }
    return {};
  }

  pypto::expected<void, std::string> DecodeCast(const std::string& op, const TileValue& out, const ir::Call& call,
                                                Instr& instr) {
    auto src = Tile(call.args()[0], "operand");
    if (!src) return Error(src.error());
    auto from = ToElemType(src->dtype);
    auto to = ToElemType(out.dtype);
    if (!from || !to) {
      return Fail(fmt::format("{} from {} to {} is not supported yet by the simulator", op,
                              ir::DataTypeName(src->dtype), ir::DataTypeName(out.dtype)));
    }
    instr.src0 = src->ref;
    instr.compute.in_dtype = src->dtype;
    instr.compute.out_dtype = out.dtype;
    static const std::pair<const char*, RoundMode> kModes[] = {
        {"none", RoundMode::None},   {"rint", RoundMode::Rint},   {"round", RoundMode::Round},
        {"floor", RoundMode::Floor}, {"ceil", RoundMode::Ceil},   {"trunc", RoundMode::Trunc},
        {"odd", RoundMode::Odd}};
    const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "mode").value_or("round");
    for (const auto& [name, value] : kModes)
      if (mode == name) instr.compute.round_mode = static_cast<uint8_t>(value);
    return {};
  }

  // A window of a larger 2-D tile: copied out (tile.slice; tile.extract into another buffer) or
  // written in place (tile.assemble, whose result is the target's buffer). The origin may be computed
  // in the kernel; the executor checks the window against the larger tile when it runs.
  pypto::expected<void, std::string> DecodeWindow(const std::string& op, const TileValue& out, const ir::Call& call,
                                                  Instr& instr) {
    ComputeInfo& info = instr.compute;
    const auto& args = call.args();
    const bool insert = info.kind == ComputeKind::Insert;
    auto outer = Tile(args[0], insert ? "target" : "source");
    if (!outer) return Error(outer.error());
    auto window = insert ? Tile(args[1], "source") : pypto::expected<TileValue, std::string>(out);
    if (!window) return Error(window.error());
    if (outer->shape.size() < 2 || window->shape.size() < 2)
      return Fail(fmt::format("{} runs on 2-D tiles in the simulator", op));
    std::vector<Operand> origin;
    if (op == "tile.extract") {
      for (size_t i = 1; i <= 2; ++i) {
        auto index = Scalar(args[i]);
        if (!index) return Error(index.error());
        origin.push_back(*index);
      }
    } else {
      auto offsets = Offsets(args[2], "window offsets");
      if (!offsets) return Error(offsets.error());
      // Dimensions before the last two are 1 (the IR checked it), so only the last two offsets move.
      origin.assign(offsets->end() - 2, offsets->end());
    }
    if (insert) {
      if (Overlap(window->ref, out.ref)) return Fail("the source of tile.assemble overlaps its target");
      instr.src0 = window->ref;
      if (auto ok = NarrowTo(args[1]->type(), instr); !ok) return ok;  // only the valid part is written
    } else {
      if (Overlap(out.ref, outer->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
      instr.src0 = outer->ref;
    }
    info.rows = window->rows();
    info.cols = window->cols();
    info.outer_rows = outer->rows();
    info.outer_cols = outer->cols();
    info.row_offset = origin[0];
    info.col_offset = origin[1];
    return {};
  }

  // sort32, mrgsort, gather (mask form), concat, transposes and arange: the IR checked
  // shapes and dtypes; here only what the simulator adds (FP32 sorting, 2-D tiles, results apart
  // from their operands). A block_len computed at run time is checked when it runs.
  pypto::expected<void, std::string> DecodeTopKFamily(const std::string& op, const TileValue& out,
                                                      const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    const auto& args = call.args();
    info.rows = out.rows();
    info.cols = out.cols();
    if (info.kind == ComputeKind::Arange) {
      auto start = ScalarArg(args[0]);
      if (!start) return Error(start.error());
      info.scalar = *start;
      info.op = ir::FindAttr<bool>(call.kwargs(), "descending").value_or(false) ? 1 : 0;
      return {};
    }
    auto src = Tile(args[0], "source");
    if (!src) return Error(src.error());
    if (src->shape.size() < 2) return Fail(fmt::format("{} runs on 2-D tiles in the simulator", op));
    instr.src0 = src->ref;
    info.src_cols = src->cols();
    switch (info.kind) {
      case ComputeKind::Sort32: {
        if (src->dtype != ir::DataType::FP32)
          return Fail(fmt::format("{} of {} values is not supported yet by the simulator (FP32 only)", op,
                                  ir::DataTypeName(src->dtype)));
        auto idx = Tile(args[1], "indices");
        if (!idx) return Error(idx.error());
        instr.src1 = idx->ref;
        info.cols = src->cols();
        return {};
      }
      case ComputeKind::MergeSort: {
        if (src->dtype != ir::DataType::FP32)
          return Fail(fmt::format("{} of {} values is not supported yet by the simulator (FP32 only)", op,
                                  ir::DataTypeName(src->dtype)));
        auto block_len = Scalar(args[1]);
        if (!block_len) return Error(block_len.error());
        info.block_len = *block_len;
        return {};
      }
      case ComputeKind::GatherMask:
        info.op = static_cast<uint8_t>(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
        return {};
      case ComputeKind::Transpose:
        // Rows and columns are one source matrix's (of a batch of them: a tile's last two dimensions);
        // the result, written element by element, is another buffer.
        info.rows = src->shape.size() < 2 ? 1 : src->shape[src->shape.size() - 2];
        info.cols = src->cols();
        info.batch = src->num_elements / (info.rows * info.cols);
        if (Overlap(out.ref, src->ref)) return Fail("the result of a transpose overlaps its operand");
        return {};
      case ComputeKind::Concat: {
        auto right = Tile(args[1], "second operand");
        if (!right) return Error(right.error());
        instr.src1 = right->ref;
        // The halves are copied row by row into the result, which must not overlap them.
        if (Overlap(out.ref, src->ref) || Overlap(out.ref, right->ref))
          return Fail("the result of pl.concat overlaps an operand");
        return {};
      }
      default: return {};
    }
  }

  // Gathers and scatters by index (the IR checked shapes and dtypes). A scatter's result starts as its
  // input: a Copy runs first unless the result lies on the input's storage. The values and indices
  // read must lie apart from the result, which the instruction writes element by element.
  pypto::expected<void, std::string> DecodeIndexMove(const std::string& op, const TileValue& out,
                                                     const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    const auto& args = call.args();
    const bool gather = info.kind == ComputeKind::GatherAlong;
    const bool along_dim = op.ends_with("_dim");
    // Operand positions: tile.scatter is (dst, src, indexes), the others (data, index[, src]).
    const size_t index_at = op == "tile.scatter" ? 2 : 1;
    const size_t src_at = gather ? 0 : op == "tile.scatter" ? 1 : 2;
    auto src = Tile(args[info.kind == ComputeKind::ScatterLanes ? 1 : src_at], "source");
    if (!src) return Error(src.error());
    std::optional<TileValue> index;
    if (info.kind != ComputeKind::ScatterLanes) {
      auto tile = Tile(args[index_at], "indices");
      if (!tile) return Error(tile.error());
      index = *tile;
      if (Overlap(out.ref, index->ref)) return Fail(fmt::format("the result of {} overlaps its indices", op));
      instr.src1 = index->ref;
      info.index_bytes = static_cast<uint8_t>(ir::DataTypeBytes(index->dtype));
    }
    if (Overlap(out.ref, src->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
    instr.src0 = src->ref;
    if (!gather) {
      auto input = Tile(args[0], "input");
      if (!input) return Error(input.error());
      if (auto ok = CopyInto(*input, out, instr); !ok) return ok;
    }
    switch (info.kind) {
      case ComputeKind::ScatterLanes: {
        const ir::MaskLanes lanes = ir::LanesOf(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
        info.op = static_cast<uint8_t>(*ir::FindAttr<int64_t>(call.kwargs(), "mask_pattern"));
        info.rows = src->rows();
        info.src_cols = src->cols();
        info.cols = src->cols() * lanes.group;
        return {};
      }
      case ComputeKind::ScatterRows:
        info.rows = out.num_elements / out.cols();  // rows counted across the blocks of a paged cache
        info.cols = out.cols();
        info.inner = index->num_elements;
        return {};
      default: break;
    }
    const TileValue& data = gather ? *src : out;
    AxisIndex& view = info.along;
    view.index_bytes = info.index_bytes;
    view.elem_bytes = instr.elem_bytes;
    view.flat = !along_dim;
    if (!along_dim) {
      view.rank = 1;
      view.index_shape[0] = index->num_elements;
      view.data_shape[0] = data.num_elements;
      return {};
    }
    if (data.shape.size() > kMaxIndexRank)
      return Fail(fmt::format("{} of a rank-{} tile is not supported by the simulator (at most {})", op,
                              data.shape.size(), kMaxIndexRank));
    const auto rank = static_cast<int64_t>(data.shape.size());
    const int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
    view.rank = data.shape.size();
    view.axis = static_cast<size_t>(dim < 0 ? dim + rank : dim);
    for (size_t d = 0; d < view.rank; ++d) {
      view.index_shape[d] = index->shape[d];
      view.data_shape[d] = data.shape[d];
    }
    return {};
  }

  // `tile.gatherb(src, offset)`: the offsets' valid region picks the blocks written (the IR checked
  // dtypes and shapes); each offset is checked against the source when it runs.
  pypto::expected<void, std::string> DecodeGatherBlocks(const TileValue& out, const ir::Call& call, Instr& instr) {
    auto src = Tile(call.args()[0], "source");
    if (!src) return Error(src.error());
    auto offsets = Tile(call.args()[1], "offsets");
    if (!offsets) return Error(offsets.error());
    if (Overlap(out.ref, src->ref) || Overlap(out.ref, offsets->ref))
      return Fail("the result of tile.gatherb overlaps an operand");
    instr.src0 = src->ref;
    instr.src1 = offsets->ref;
    instr.compute.rows = offsets->rows();
    instr.compute.cols = offsets->cols();
    return NarrowTo(call.args()[1]->type(), instr);
  }

  // The compare-form gather: one instruction per result, the columns or their counts.
  pypto::expected<void, std::string> DecodeGatherCompare(const std::string& op, const ir::Call& call, Instr& instr) {
    static constexpr std::string_view kModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    ComputeInfo& info = instr.compute;
    auto src = Tile(call.args()[0], "source");
    if (!src) return Error(src.error());
    auto kvalue = ScalarArg(call.args()[1]);
    if (!kvalue) return Error(kvalue.error());
    if (Overlap(instr.dst, src->ref)) return Fail(fmt::format("the result of {} overlaps its source", op));
    const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "cmp_mode").value_or("eq");
    info.op = static_cast<uint8_t>(std::find(std::begin(kModes), std::end(kModes), mode) - std::begin(kModes));
    info.scalar = *kvalue;
    info.in_dtype = src->dtype;
    info.rows = src->rows();
    info.src_cols = src->cols();
    info.inner = *ir::FindAttr<int64_t>(call.kwargs(), "out_cols");
    info.compare_offset = ir::FindAttr<int64_t>(call.kwargs(), "offset").value_or(0);
    info.compare_counts = op.ends_with("_count");
    instr.src0 = src->ref;
    return {};
  }

  // pl.random: the six seeds (constants or registers), rounds, and the valid region filled.
  pypto::expected<void, std::string> DecodeRandom(const TileValue& out, const ir::Call& call, Instr& instr) {
    ComputeInfo& info = instr.compute;
    for (size_t i = 0; i < info.seeds.size(); ++i) {
      auto seed = ScalarArg(call.args()[i]);
      if (!seed) return Error(seed.error());
      info.seeds[i] = *seed;
    }
    info.rounds = static_cast<uint8_t>(ir::FindAttr<int64_t>(call.kwargs(), "rounds").value_or(10));
    info.rows = out.rows();
    info.cols = out.cols();
    return NarrowTo(call.type(), instr);
  }

  // Emits the copy of `input` into `out` a destination-passing op starts from, unless they share
  // storage.
  pypto::expected<void, std::string> CopyInto(const TileValue& input, const TileValue& out, const Instr& instr) {
    if (auto ok = SameSize(input, out); !ok) return ok;
    if (input.ref.space == out.ref.space && input.ref.byte_offset == out.ref.byte_offset) return {};
    Instr copy;
    copy.op = Opcode::Compute;
    copy.kind = instr.kind;
    copy.elem_bytes = instr.elem_bytes;
    copy.dst = out.ref;
    copy.src0 = input.ref;
    copy.num_elements = out.num_elements;
    copy.compute.kind = ComputeKind::Copy;
    Emit(copy);
    return {};
  }

  static std::optional<ElemType> ToElemType(ir::DataType dtype) {
    switch (dtype) {
      case ir::DataType::FP32: return ElemType::F32;
      case ir::DataType::FP16: return ElemType::F16;
      case ir::DataType::BF16: return ElemType::BF16;
      case ir::DataType::INT32: return ElemType::I32;
      case ir::DataType::INT16: return ElemType::I16;
      case ir::DataType::INT8: return ElemType::I8;
      case ir::DataType::UINT8: return ElemType::U8;
      default: return std::nullopt;
    }
  }

  const ir::Function& function_;
  const ir::SocSpec& soc_;
  DecodedKernel kernel_;
  std::unordered_map<const ir::Var*, Value> values_;
  std::unordered_map<const ir::Var*, uint32_t> float_regs_;  // FP32 scalar (parameter or pl.read) -> its register
  InstrSource source_;
  const ir::Span* span_ = nullptr;
  bool done_ = false;
  int loop_depth_ = 0;
  std::map<int64_t, int64_t> pipe_slots_;  // slots of each pipe id, from its initialize_pipe
  // The ring depth of a pipe no initialize_pipe sized (the compiler's default slot count).
  static constexpr int64_t kDefaultPipeSlots = 2;
  // Scalar code waiting for the next instruction, which runs it first.
  std::vector<ScalarInstr> pending_;
  std::vector<std::string> pending_text_;
  // Expressions computed so far in the current loop scope, and the registers holding them.
  struct Computed {
    ScalarOp op;
    Operand a, b;
    uint32_t reg;
  };
  std::vector<Computed> computed_;
  // Scalar variables defined inside the loops being decoded, innermost last.
  std::vector<const ir::Var*> loop_scalars_;
  // The loops and ifs around the statement being decoded, innermost last (whose results a yield sets).
  std::vector<const ir::Stmt*> flow_;
};

std::string OperandText(const Operand& operand) {
  return operand.is_reg() ? fmt::format("r{}", operand.reg) : std::to_string(operand.imm);
}

// ", valid [rows, cols]" for an instruction that moves or reads only a tile's valid region.
std::string ValidText(const Instr& instr) {
  if (!instr.partial) return "";
  return fmt::format(", valid [{}, {}]", OperandText(instr.valid.rows), OperandText(instr.valid.cols));
}

std::string Region(const Instr& instr) {
  std::vector<std::string> parts;
  for (int d = 0; d < instr.rank; ++d) {
    if (instr.offset_regs[d] >= 0) {
      parts.push_back(fmt::format("r{0}:r{0}+{1}", instr.offset_regs[d], instr.shape[d]));
    } else {
      parts.push_back(fmt::format("{}:{}", instr.offsets[d], instr.offsets[d] + instr.shape[d]));
    }
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// The element pl.read / pl.write address: `[r3, 0]`.
std::string ElementIndex(const Instr& instr) {
  std::vector<std::string> parts;
  for (int d = 0; d < instr.rank; ++d)
    parts.push_back(instr.offset_regs[d] >= 0 ? fmt::format("r{}", instr.offset_regs[d])
                                              : std::to_string(instr.offsets[d]));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string ScalarOperandText(const ScalarOperand& scalar) {
  return scalar.source == ScalarOperand::Source::Imm ? fmt::format("{}", scalar.imm) : fmt::format("r{}", scalar.reg);
}

std::string ScalarText(const ScalarInstr& instr) {
  if (instr.op == ScalarOp::Min || instr.op == ScalarOp::Max || instr.op == ScalarOp::SignExtend ||
      instr.op == ScalarOp::ZeroExtend || instr.op == ScalarOp::FpToSi || instr.op == ScalarOp::SiToFp) {
    return fmt::format("r{} = {}({}, {})", instr.dst, ScalarOpSymbol(instr.op), OperandText(instr.a),
                       OperandText(instr.b));
  }
  return fmt::format("r{} = {} {} {}", instr.dst, OperandText(instr.a), ScalarOpSymbol(instr.op),
                     OperandText(instr.b));
}

std::string Place(const TileRef& ref) {
  return fmt::format("{}[0x{:05x}, +{}]", ir::MemorySpaceName(ref.space), ref.byte_offset, ref.bytes);
}

const char* KindName(ElemKind kind) {
  switch (kind) {
    case ElemKind::F32: return "f32";
    case ElemKind::I32: return "i32";
    case ElemKind::Raw: return "raw";
  }
  return "?";
}

}  // namespace

pypto::expected<DecodedKernel, std::string> DecodeKernel(const ir::Function& function, int32_t func_id,
                                                         rt::CoreType core_type, const ir::SocSpec& soc) {
  return Decoder(function, func_id, core_type, soc).Run();
}

std::string FormatListing(const DecodedKernel& kernel, const ir::SocSpec& soc) {
  std::string out = fmt::format("kernel {} (func_id {}, {} core, {} / {})\n", kernel.name, kernel.func_id,
                                rt::CoreTypeName(kernel.core_type), soc.name, soc.arch);
  out += fmt::format("params ({} tensors, {} scalars):\n", kernel.tensor_count, kernel.scalar_count);
  for (const auto& param : kernel.params) {
    if (param.is_tensor) {
      out += fmt::format("  args[{}] {}: tensor {} [{}]\n", param.slot, param.name, ir::DataTypeName(param.dtype),
                         fmt::join(param.shape, ", "));
    } else {
      out += fmt::format("  args[{}] {}: scalar {}\n", param.slot, param.name, ir::DataTypeName(param.dtype));
    }
  }
  if (!kernel.registers.empty()) {
    out += fmt::format("registers ({} x int64):\n", kernel.registers.size());
    for (size_t r = 0; r < kernel.registers.size(); ++r) {
      const auto& info = kernel.registers[r];
      out += fmt::format("  r{:<3} {}{}\n", r, info.name, info.role.empty() ? "" : fmt::format("  ({})", info.role));
    }
  }
  out += fmt::format("code ({} instructions", kernel.code.size());
  if (!kernel.scalar_code.empty()) {
    out += fmt::format(", {} scalar operation{}", kernel.scalar_code.size(), kernel.scalar_code.size() == 1 ? "" : "s");
  }
  out += "):\n";
  int depth = 0;  // loop nesting, shown as indentation
  for (size_t i = 0; i < kernel.code.size(); ++i) {
    const Instr& instr = kernel.code[i];
    if (instr.op == Opcode::LoopEnd) depth = std::max(depth - 1, 0);
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    // The scalar code runs first, so it is listed first.
    for (uint32_t s = instr.scalar_begin; s < instr.scalar_begin + instr.scalar_count; ++s) {
      out += fmt::format("       {}{:<24} ; {}\n", indent, ScalarText(kernel.scalar_code[s]), kernel.scalar_text[s]);
    }
    std::string line;
    switch (instr.op) {
      case Opcode::Load:
        line = fmt::format("{:<5} {:<3} {} <- args[{}]{}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           Place(instr.dst), instr.tensor_slot, Region(instr), instr.num_elements) +
               ValidText(instr) + (instr.remote ? fmt::format(", of peer {}", OperandText(instr.comm.peer)) : "");
        break;
      case Opcode::Store:
        line = fmt::format("{:<5} {:<3} args[{}]{} <- {}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           instr.tensor_slot, Region(instr), Place(instr.src0), instr.num_elements) +
               ValidText(instr) + (instr.remote ? fmt::format(", of peer {}", OperandText(instr.comm.peer)) : "");
        break;
      case Opcode::LoopBegin:
        line = fmt::format("{:<5} r{} in {}({}, {}, {}), exits to #{}", OpcodeName(instr.op), instr.loop.var,
                           ir::ForKindName(instr.loop.kind), OperandText(instr.loop.start),
                           OperandText(instr.loop.stop), OperandText(instr.loop.step), instr.loop.partner + 1);
        break;
      case Opcode::LoopEnd:
        line = fmt::format("{} r{} += {}, back to #{} while r{} > 0", OpcodeName(instr.op), instr.loop.var,
                           OperandText(instr.loop.step), instr.loop.partner + 1, instr.loop.trips);
        break;
      case Opcode::BranchIfZero:
        line = fmt::format("{} {} -> #{}", OpcodeName(instr.op), OperandText(instr.branch.cond), instr.branch.target);
        break;
      case Opcode::Jump:
        line = fmt::format("{} -> #{}", OpcodeName(instr.op), instr.branch.target);
        break;
      case Opcode::SyncAll:
        line = OpcodeName(instr.op);
        break;
      case Opcode::EventSet:
      case Opcode::EventWait:
        line = fmt::format("{:<5} event {}{}", OpcodeName(instr.op), OperandText(instr.event_id),
                           instr.op == Opcode::EventSet ? fmt::format(", ffts_mode {}", instr.event.mode) : "");
        break;
      case Opcode::TPush:
      case Opcode::TPop:
      case Opcode::TFree: {
        const TileRef& tile = instr.op == Opcode::TPush ? instr.src0 : instr.dst;
        const std::string split = instr.pipe.split == rt::PipeSplit::Whole
                                      ? ""
                                      : fmt::format(", split {}", rt::PipeSplitName(instr.pipe.split));
        line = fmt::format("{:<5} pipe {} ({}, {} slots{}){}", OpcodeName(instr.op), instr.pipe.id,
                           rt::PipeDirectionName(instr.pipe.direction), instr.pipe.slots, split,
                           tile.bytes > 0 ? (instr.op == Opcode::TPush ? " <- " : " -> ") + Place(tile) : "");
        break;
      }
      case Opcode::ReadScalar:
      case Opcode::WriteScalar: {
        const std::string element = fmt::format("args[{}]{}", instr.tensor_slot, ElementIndex(instr));
        line = instr.op == Opcode::ReadScalar
                   ? fmt::format("{:<5} {:<3} r{} <- {}", OpcodeName(instr.op), KindName(instr.kind), instr.scalar_dst,
                                 element)
                   : fmt::format("{:<5} {:<3} {} <- {}", OpcodeName(instr.op), KindName(instr.kind), element,
                                 ScalarOperandText(instr.value));
        break;
      }
      case Opcode::Comm: {
        static constexpr const char* kKinds[] = {"rank", "nranks", "notify", "wait", "barrier"};
        static constexpr const char* kCmps[] = {"==", "!=", ">", ">=", "<", "<="};
        const auto kind = static_cast<size_t>(instr.comm.kind);
        const std::string window = fmt::format("args[{}]", instr.tensor_slot);
        if (instr.comm.kind == CommKind::Rank || instr.comm.kind == CommKind::Nranks)
          line = fmt::format("{:<5} {} r{} <- {}", OpcodeName(instr.op), kKinds[kind], instr.scalar_dst, window);
        else if (instr.comm.kind == CommKind::Notify)
          line = fmt::format("{:<5} {} peer {}: {}{} {} {}", OpcodeName(instr.op), kKinds[kind],
                             OperandText(instr.comm.peer), window, ElementIndex(instr),
                             instr.comm.atomic_add ? "+=" : "=", OperandText(instr.comm.value));
        else if (instr.comm.kind == CommKind::Wait)
          line = fmt::format("{:<5} {} {}{} {} {}", OpcodeName(instr.op), kKinds[kind], window, ElementIndex(instr),
                             kCmps[static_cast<size_t>(instr.comm.cmp)], OperandText(instr.comm.value));
        else
          line = fmt::format("{:<5} {} {}", OpcodeName(instr.op), kKinds[kind], window);
        break;
      }
      case Opcode::ReadTile:
        line = fmt::format("{:<5} {:<3} r{} <- {}{}", OpcodeName(instr.op), KindName(instr.kind), instr.scalar_dst,
                           Place(instr.src0), ElementIndex(instr));
        break;
      case Opcode::WriteTile:
        line = fmt::format("{:<5} {:<3} {}{} <- {}", OpcodeName(instr.op), KindName(instr.kind), Place(instr.dst),
                           ElementIndex(instr), ScalarOperandText(instr.value));
        break;
      case Opcode::Compute: {
        std::string operands;
        for (const TileRef* ref : {&instr.src0, &instr.src1, &instr.src2})
          if (ref->bytes > 0) operands += (operands.empty() ? "" : ", ") + Place(*ref);
        if (instr.compute.kind == ComputeKind::Fill || instr.compute.kind == ComputeKind::BinaryScalar ||
            instr.compute.kind == ComputeKind::LeakyRelu || instr.compute.kind == ComputeKind::Triangle ||
            ((instr.compute.kind == ComputeKind::Compare || instr.compute.kind == ComputeKind::Select) &&
             instr.src1.bytes == 0)) {
          const ScalarOperand& scalar = instr.compute.scalar;
          operands += (operands.empty() ? "" : ", ") + ScalarOperandText(scalar);
        }
        line = fmt::format("{:<9} {:<3} {} <- {}  ({} elements)", ComputeKindName(instr.compute.kind),
                           KindName(instr.kind), Place(instr.dst), operands, instr.num_elements) +
               ValidText(instr);
        break;
      }
      default:
        line = fmt::format("{:<5} {:<3} {} <- {}, {}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           Place(instr.dst), Place(instr.src0), Place(instr.src1), instr.num_elements);
        break;
    }
    out += fmt::format("  {:3}: {}{}\n", i, indent, line);
    out += fmt::format("       {}; {}  @ {}\n", indent, kernel.sources[i].text, kernel.sources[i].location);
    if (instr.op == Opcode::LoopBegin) ++depth;
  }
  out += "buffers:\n";
  for (auto space : {ir::MemorySpace::Vec, ir::MemorySpace::Mat, ir::MemorySpace::Left, ir::MemorySpace::Right,
                     ir::MemorySpace::Acc, ir::MemorySpace::Bias}) {
    const int64_t used = kernel.high_water[static_cast<size_t>(space)];
    if (used > 0 || (space == ir::MemorySpace::Vec && kernel.core_type == rt::CoreType::AIV)) {
      out += fmt::format("  {}: {} of {} bytes used\n", ir::MemorySpaceName(space), used, soc.capacity(space));
    }
  }
  return out;
}

}  // namespace pypto::sim
