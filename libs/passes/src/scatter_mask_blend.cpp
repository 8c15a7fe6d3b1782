// ScatterMaskBlend: `tile.scatter_mask(dst, src)` keeps the lanes of dst the mask pattern does not
// select (the IR's meaning, and the simulator's), but the device instruction for it, the mask form of
// pto.tscatter, writes the whole destination: the selected lanes from src, zero everywhere else. The
// two agree when dst is a tile of zeros, so a scatter into some other tile is rewritten here into
// one into zeros, blended with dst by a select:
//
//     out_lanes_zero = pl.tile.full([R, C], dtype, 0)       # src's lanes written into zeros
//     out_lanes      = pl.tile.scatter_mask(out_lanes_zero, src, mask_pattern=p)
//     out_ones       = pl.tile.full([R, c], mask dtype, 1)  # the same lanes marked with ones
//     out_mask_zero  = pl.tile.full([R, C], mask dtype, 0)
//     out_mask       = pl.tile.scatter_mask(out_mask_zero, out_ones, mask_pattern=p)
//     out_pred       = pl.tile.cmps(out_mask, 0, cmp_type=NE)   # the packed predicate of those lanes
//     out_sel_tmp    = pl.tile.create([1, 32], UINT8)          # tsel's scratch
//     out            = pl.tile.sel(out_pred, out_lanes, dst, out_sel_tmp)
//
// The mask dtype is FP32 or FP16 by the element's width, so that the compare is one of floats
// whatever dst holds. Every new tile is a tile of the IR, so AllocateMemoryAddr places it where bytes
// are free at the scatter, as it does TransposeScratchTiles' scratch. A scatter whose dst is already
// a tile.full of zero (the usual first scatter into a fresh tile) is left as it is: the device's
// zeros are the ones the IR keeps. backend-ptoas lowers tile.scatter_mask only into such a tile.
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"
#include "index_exprs.h"
#include "mutate_body.h"
#include "splicing_mutator.h"

#include <unordered_set>

namespace pypto::passes {
namespace {

using namespace pypto::ir;

constexpr int64_t kCmpNotEqual = 1;         // tile.cmps' cmp_type for NE
constexpr int64_t kSelScratchBytes = 32;    // TSEL's scratch: one 32-byte block of UINT8

// Whether `value` is a literal zero (a tile.full's fill value).
bool IsZeroLiteral(const ExprPtr& value) {
  if (const auto* f = value->As<ConstFloat>()) return f->value() == 0.0;
  if (const auto* i = value->As<ConstInt>()) return i->value() == 0;
  return false;
}

ExprPtr Literal(DataType dtype, double value, const Span& span) {
  if (IsFloat(dtype)) return std::make_shared<ConstFloat>(value, dtype, span);
  return std::make_shared<ConstInt>(static_cast<int64_t>(value), dtype, span);
}

class BlendMaskScatters final : public SplicingMutator {
 public:
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto* call = stmt->value()->As<Call>();
    if (error_ || !call || !call->is_op_call()) return stmt;
    if (call->target_name() == "tile.full" && IsZeroLiteral(call->args()[1])) zero_tiles_.insert(stmt->var().get());
    if (call->target_name() != "tile.scatter_mask") return stmt;
    const auto* dst = call->args()[0]->As<Var>();
    if (dst && zero_tiles_.contains(dst)) return stmt;
    const auto* dst_type = call->args()[0]->type()->As<TileType>();
    const auto* src_type = call->args()[1]->type()->As<TileType>();
    // The select keeps the whole of dst's box; a narrowed dst or src is left to backend-ptoas, which
    // refuses it, naming this pass.
    if (!dst_type || !src_type || dst_type->has_partial_valid_shape() || src_type->has_partial_valid_shape())
      return stmt;
    return Blend(stmt, *call, *dst_type, *src_type);
  }

 private:
  StmtPtr Blend(const std::shared_ptr<const AssignStmt>& stmt, const Call& call, const TileType& dst,
                const TileType& src) {
    const Span& span = call.span();
    const std::string name = stmt->var()->name_hint();
    const DataType mask_dtype = DataTypeBits(dst.dtype()) == 32 ? DataType::FP32 : DataType::FP16;
    std::vector<StmtPtr> stmts;
    auto emit = [&](const std::string& suffix, const std::string& op, std::vector<ExprPtr> args,
                    Call::Kwargs kwargs) -> ExprPtr {
      auto value = OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
      if (!value) {
        error_ = value.error();
        return nullptr;
      }
      auto var = std::make_shared<Var>(name + suffix, (*value)->type(), stmt->span());
      stmts.push_back(std::make_shared<AssignStmt>(var, *value, stmt->span()));
      return var;
    };
    auto full = [&](const std::string& suffix, const Shape& shape, DataType dtype, double value) {
      return emit(suffix, "tile.full", {IndexTuple(shape, span), Literal(dtype, value, span)}, {{"dtype", dtype}});
    };
    auto lanes_zero = full("_lanes_zero", dst.shape(), dst.dtype(), 0.0);
    auto lanes = lanes_zero ? emit("_lanes", "tile.scatter_mask", {lanes_zero, call.args()[1]}, call.kwargs()) : nullptr;
    auto ones = lanes ? full("_ones", src.shape(), mask_dtype, 1.0) : nullptr;
    auto mask_zero = ones ? full("_mask_zero", dst.shape(), mask_dtype, 0.0) : nullptr;
    auto mask = mask_zero ? emit("_mask", "tile.scatter_mask", {mask_zero, ones}, call.kwargs()) : nullptr;
    auto pred = mask ? emit("_pred", "tile.cmps", {mask, Literal(mask_dtype, 0.0, span)},
                            {{"cmp_type", kCmpNotEqual}})
                     : nullptr;
    auto tmp = pred ? emit("_sel_tmp", "tile.create", {IndexTuple({1, kSelScratchBytes}, span)},
                           {{"dtype", DataType::UINT8}, {"target_memory", MemorySpace::Vec}})
                    : nullptr;
    if (!tmp) return stmt;
    auto select = OpRegistry::Get().CreateCall("tile.sel", {pred, lanes, call.args()[0], tmp}, {}, span);
    if (!select) {
      error_ = select.error();
      return stmt;
    }
    stmts.push_back(std::make_shared<AssignStmt>(stmt->var(), *select, stmt->span()));
    return std::make_shared<SeqStmts>(std::move(stmts), stmt->span());
  }

  std::unordered_set<const Var*> zero_tiles_;
  std::optional<Diagnostic> error_;
};

}  // namespace

Pass ScatterMaskBlend() {
  // After ExpandMixedKernel, so a vector kernel split between the two AIV lanes sizes the new tiles
  // from its halved tiles; before AllocateMemoryAddr, which places them.
  return Pass("ScatterMaskBlend", {IRProperty::NoNestedCalls, IRProperty::CoreTypesResolved}, {}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (!IsKernel(function->type())) return function;
                  BlendMaskScatters blend;
                  return MutateBody(function, blend);
                });
              });
}

}  // namespace pypto::passes
