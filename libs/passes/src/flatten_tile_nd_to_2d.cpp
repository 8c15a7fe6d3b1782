// FlattenTileNdTo2D: PTO tile buffers are [rows, cols], so a kernel's tiles of rank 3 or more become
// the matrix of their rows: every leading dimension merges into the row dimension ([2, 16, 64] ->
// [32, 64]). The elements keep their order (row-major), so element-wise ops, reductions along the
// last axis and the matrix ops of tiles whose leading dimensions are 1 compute the same values on
// the merged tile; only the types change.
//
// Loads and stores keep their N-d tensor window: `pl.load(x, [b, 0, 0], [2, 16, 64])` keeps its
// offsets and shapes and yields the [32, 64] tile (tload from an N-d partition into a 2-D tile is
// what PTO does anyway), and a store of a merged tile whose window is not its own shape padded with
// leading 1s names the N-d window as its `shapes`. tile.create / tile.full / reshapes get the merged
// shape; a reshape that becomes one from a shape to itself goes, its result read as its source.
//
// A matmul over a batch has no merged form ([B*M, K] x [B*K, N] is not the batch of products), so
// it is first unrolled into one matmul per batch (batch_matmul_expansion.h), whose rank-3 tiles
// with leading 1s then merge like any other.
//
// Every rewritten op is re-deduced by the op registry and must give the merged form of its old
// result. Where one does not (a transpose over a batch, an element access by N-d indices, a batched
// matmul the expansion refuses), or an N-d tile crosses the kernel's signature, the kernel is left as
// it was: the simulator runs it, and backend-ptoas names the N-d tile it cannot print.
#include "flatten_tile_nd_to_2d.h"

#include <fmt/format.h>

#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/row_merge.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

#include "batch_matmul_expansion.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

const TileType* NdTile(const Type& type) {
  const auto* tile = type.As<TileType>();
  return tile && tile->shape().size() > 2 ? tile : nullptr;
}

ExprPtr Index(int64_t value, const Span& span) { return std::make_shared<ConstInt>(value, DataType::INDEX, span); }

ExprPtr IndexList(const Shape& values, const Span& span) {
  std::vector<ExprPtr> elements;
  for (int64_t value : values) elements.push_back(Index(value, span));
  return std::make_shared<TupleLiteral>(std::move(elements), span);
}

// The merged tile's valid region, when the valid rows of the N-d tile are a prefix of the merged
// rows: at most one row dimension is partly valid, the ones before it have extent 1 and the ones
// after it are valid as a whole. A tail [1, v, 64] of [1, 16, 64] is [v, 64] of [16, 64]; [2, v, 64]
// of [2, 16, 64] leaves holes between the batches and has no merged form.
std::optional<ValidShape> RowMergedValid(const TileType& tile) {
  const ValidShape& valid = tile.valid_shape();
  if (valid.empty()) return ValidShape{};
  const Shape& shape = tile.shape();
  const size_t row_dims = shape.size() - 1;
  auto full = [&](size_t d) { return AsConstInt(valid[d]) == shape[d]; };
  size_t partial = row_dims;
  for (size_t d = 0; d < row_dims && partial == row_dims; ++d)
    if (!full(d)) partial = d;
  const Span& span = valid.back()->span();
  if (partial == row_dims) return ValidShape{Index(RowMerged(shape)[0], span), valid.back()};
  int64_t inner = 1;
  for (size_t d = 0; d < partial; ++d)
    if (shape[d] != 1) return std::nullopt;
  for (size_t d = partial + 1; d < row_dims; ++d) {
    if (!full(d)) return std::nullopt;
    inner *= shape[d];
  }
  if (inner == 1) return ValidShape{valid[partial], valid.back()};
  const auto rows = AsConstInt(valid[partial]);
  if (!rows) return std::nullopt;  // a run-time row count would need a product computed in the kernel
  return ValidShape{Index(*rows * inner, span), valid.back()};
}

// The 2-D form of an N-d tile type; nullopt when its valid region has none.
std::optional<TypePtr> RowMergedType(const TileType& tile) {
  auto valid = RowMergedValid(tile);
  if (!valid) return std::nullopt;
  return std::make_shared<TileType>(RowMerged(tile.shape()), tile.dtype(), tile.memory_space(), tile.memref(),
                                    std::move(*valid));
}

// The index of the positional argument an op names `name`; nullopt when it has none.
std::optional<size_t> ArgIndex(const OpDef& op, std::string_view name) {
  size_t index = 0;
  for (const auto& param : op.params) {
    if (param.is_attr) continue;
    if (param.name == name) return index;
    ++index;
  }
  return std::nullopt;
}

// An empty sequence stands for a dropped statement; MutateSeq leaves it out.
bool IsDropped(const StmtPtr& stmt) {
  const auto* seq = stmt->As<SeqStmts>();
  return seq && seq->stmts().empty();
}

class TileFlattener final : public IRMutator {
 public:
  // Why the kernel keeps its N-d tiles; empty while nothing stands in the way.
  const std::string& refusal() const { return refusal_; }

 protected:
  // Every variable holding an N-d tile becomes one holding its 2-D form, wherever it is defined
  // (an assignment, a loop's carried value, an if's value) and read.
  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    if (auto it = renames_.find(var.get()); it != renames_.end()) return it->second;
    const TileType* tile = NdTile(*var->type());
    if (!tile) return var;
    auto type = RowMergedType(*tile);
    if (!type) {
      Refuse(fmt::format("the valid region of tile '{}' {} has no 2-D form", var->name_hint(), tile->str()));
      return var;
    }
    auto merged = std::make_shared<Var>(var->name_hint(), *type, var->span());
    renames_[var.get()] = merged;
    return merged;
  }

  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    std::vector<ExprPtr> args;
    bool renamed = false;
    for (const auto& arg : call->args()) {
      args.push_back(MutateExpr(arg));
      renamed |= args.back() != arg;
    }
    if (!renamed && !NdTile(*call->type())) return call;
    if (!call->is_op_call()) {
      Refuse(fmt::format("the call of '{}' passes or returns an N-d tile", call->callee()));
      return call;
    }
    const std::string& name = call->target_name();
    // The window stays N-d; only the tile it fills is merged.
    if (name == "tile.load") {
      auto type = RowMergedType(*call->type()->As<TileType>());
      if (!type) {
        Refuse(fmt::format("the valid region of the load's tile {} has no 2-D form", call->type()->str()));
        return call;
      }
      return std::make_shared<Call>(call->op(), std::move(args), call->kwargs(), *type, call->span());
    }
    if (!call->op()->cube_operands.empty() && HasBatch(*call)) {
      Refuse(fmt::format("{} multiplies a batch of matrices", name));
      return call;
    }
    Call::Kwargs kwargs = call->kwargs();
    if (!LastAxisOnly(*call, kwargs)) return call;
    if (name == "tile.store" && !StoreWindow(*call, args)) return call;
    if (name == "tile.slice" && !RowBandWindow(*call, args)) return call;
    if (name == "tile.transpose") MatrixAxes(*call, kwargs);
    if (auto shape_arg = ArgIndex(*call->op(), "shape"); shape_arg && *shape_arg < args.size())
      if (auto merged = MergedShapeArg(args[*shape_arg])) args[*shape_arg] = merged;
    auto rebuilt = OpRegistry::Get().CreateCall(name, std::move(args), std::move(kwargs), call->span());
    if (!rebuilt) {
      Refuse(fmt::format("{} has no 2-D form: {}", name, rebuilt.error().message));
      return call;
    }
    return *rebuilt;
  }

  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    if (auto dropped = DropNoOpReshape(*stmt)) return dropped;
    auto var = As<Var>(MutateVar(stmt->var()));
    auto value = MutateExpr(stmt->value());
    if (var == stmt->var() && value == stmt->value()) return stmt;
    if (!value->type()->equals(*var->type()))
      Refuse(fmt::format("'{}' would be {} but its value is {}", var->name_hint(), var->type()->str(),
                         value->type()->str()));
    return std::make_shared<AssignStmt>(var, value, stmt->span());
  }

  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    std::vector<StmtPtr> stmts;
    bool changed = false;
    for (const auto& stmt : seq->stmts()) {
      auto mutated = MutateStmt(stmt);
      changed |= mutated != stmt;
      if (!IsDropped(mutated) || IsDropped(stmt)) stmts.push_back(mutated);
    }
    return changed ? std::make_shared<SeqStmts>(std::move(stmts), seq->span()) : seq;
  }

 private:
  // The first reason found is the one kept: the kernel is left as it was either way.
  void Refuse(std::string why) {
    if (refusal_.empty()) refusal_ = std::move(why);
  }

  // A store of a merged tile writes the tile's N-d window: its own shape, with the leading 1s the
  // tensor's rank adds or drops (as tile.store reads a tile of another rank). Unless the merged tile
  // padded with leading 1s is that window, the window is passed as the store's `shapes`.
  bool StoreWindow(const Call& store, std::vector<ExprPtr>& args) {
    const auto* tile = NdTile(*store.args()[0]->type());
    if (!tile) return true;
    if (args.size() > 3) {
      Refuse("a store of part of an N-d tile (shapes=) has no 2-D form");
      return false;
    }
    const size_t rank = args[1]->As<TupleLiteral>()->elements().size();
    Shape window = tile->shape();
    while (window.size() > rank && window.front() == 1) window.erase(window.begin());
    while (window.size() < rank) window.insert(window.begin(), 1);
    Shape padded = RowMerged(tile->shape());
    while (padded.size() < rank) padded.insert(padded.begin(), 1);
    if (padded == window) return true;
    if (tile->has_partial_valid_shape()) {
      Refuse(fmt::format("a store of the partly valid tile {} into an N-d window has no 2-D form", tile->str()));
      return false;
    }
    args.push_back(IndexList(window, store.span()));
    return true;
  }

  // A slice of an N-d tile whose window is a band of whole rows of the merged tile: extents of 1,
  // then one extent at any offset, then whole extents (as ExpandBatchMatmuls slices one batch:
  // [1, 16, 64] at [b, 0, 0] of [2, 16, 64] is rows [16b, 16b + 16) of [32, 64]). Constant
  // offsets only, and no valid_shape of its own.
  bool RowBandWindow(const Call& slice, std::vector<ExprPtr>& args) {
    const auto* tile = NdTile(*slice.args()[0]->type());
    if (!tile) return true;
    const Shape& dims = tile->shape();
    std::optional<Shape> window = ConstShape(args[1]), origin = ConstShape(args[2]);
    const size_t rows = dims.size() - 1;
    bool band = args.size() == 3 && window && origin && window->size() == dims.size() && origin->size() == dims.size();
    size_t first = 0;
    while (band && first < rows && (*window)[first] == 1) ++first;
    for (size_t d = first + 1; band && d < rows; ++d) band = (*window)[d] == dims[d] && (*origin)[d] == 0;
    if (!band) {
      Refuse(fmt::format("a slice of the N-d tile {} that is not a band of its rows has no 2-D form", tile->str()));
      return false;
    }
    int64_t row = 0, stride = 1;
    for (size_t d = rows; d-- > 0;) {
      row += (*origin)[d] * stride;
      stride *= dims[d];
    }
    args[1] = IndexList(RowMerged(*window), slice.span());
    args[2] = IndexList({row, origin->back()}, slice.span());
    return true;
  }

  static std::optional<Shape> ConstShape(const ExprPtr& arg) {
    const auto* tuple = arg->As<TupleLiteral>();
    if (!tuple) return std::nullopt;
    Shape values;
    for (const auto& element : tuple->elements()) {
      auto value = AsConstInt(element);
      if (!value) return std::nullopt;
      values.push_back(*value);
    }
    return values;
  }

  // Whether a tile the call reads or writes has a leading dimension above 1: merged into rows, a
  // batch of matrices would be multiplied as one matrix. ExpandBatchMatmuls has unrolled every
  // batched matmul and matmul_acc it could; what is left (a matmul_bias, ...) keeps its kernel N-d.
  static bool HasBatch(const Call& call) {
    auto batched = [](const Type& type) {
      const TileType* tile = NdTile(type);
      if (!tile) return false;
      for (size_t d = 0; d + 2 < tile->shape().size(); ++d)
        if (tile->shape()[d] != 1) return true;
      return false;
    };
    if (batched(*call.type())) return true;
    for (const auto& arg : call.args())
      if (batched(*arg->type())) return true;
    return false;
  }

  // An op working along an axis of its N-d operand (`dim=`) keeps its meaning on the merged tile
  // only along the last axis, which becomes axis 1; along any other axis it has no 2-D form.
  bool LastAxisOnly(const Call& call, Call::Kwargs& kwargs) {
    const auto* tile = call.args().empty() ? nullptr : NdTile(*call.args()[0]->type());
    for (auto& [key, value] : kwargs) {
      if (key != "dim" || !tile) continue;
      const auto rank = static_cast<int64_t>(tile->shape().size());
      const int64_t axis = std::get<int64_t>(value) < 0 ? std::get<int64_t>(value) + rank : std::get<int64_t>(value);
      if (axis != rank - 1) {
        Refuse(fmt::format("{} along axis {} of an N-d tile has no 2-D form", call.target_name(), axis));
        return false;
      }
      value = int64_t{1};
    }
    return true;
  }

  // A transpose of the last two axes of an N-d tile is one of axes 0 and 1 of its merged form
  // (which only type-checks when the leading dimensions are 1: a batch has no 2-D transpose).
  static void MatrixAxes(const Call& transpose, Call::Kwargs& kwargs) {
    const auto rank = static_cast<int64_t>(transpose.args()[0]->type()->As<TileType>()->shape().size());
    for (auto& [key, value] : kwargs) {
      if (key != "axis1" && key != "axis2") continue;
      const int64_t axis = std::get<int64_t>(value);
      value = (axis < 0 ? axis + rank : axis) - (rank - 2);
    }
  }

  // A shape argument of rank 3 or more (tile.create, tile.full, tile.reshape, ...) as its merged form.
  static ExprPtr MergedShapeArg(const ExprPtr& arg) {
    auto shape = ConstShape(arg);
    if (!shape || shape->size() <= 2) return nullptr;
    return IndexList(RowMerged(*shape), arg->span());
  }

  // `r = tile.reshape(t, shape)` whose merged form reshapes t's merged form to itself: r is t.
  StmtPtr DropNoOpReshape(const AssignStmt& stmt) {
    const auto* call = stmt.value()->As<Call>();
    if (!call || call->target_name() != "tile.reshape") return nullptr;
    const auto* result = stmt.var()->type()->As<TileType>();
    if (!result || (!NdTile(*result) && !NdTile(*call->args()[0]->type()))) return nullptr;
    auto source = MutateExpr(call->args()[0]);
    auto target = MutateVar(stmt.var());
    if (!source->type()->equals(*target->type())) return nullptr;
    renames_[stmt.var().get()] = source;
    return std::make_shared<SeqStmts>(std::vector<StmtPtr>{}, stmt.span());
  }

  std::unordered_map<const Var*, ExprPtr> renames_;
  std::string refusal_;
};

// Finds the first N-d tile a kernel defines.
class NdTileFinder final : public IRVisitor {
 public:
  const Var* found = nullptr;

  void Consider(const VarPtr& var) {
    if (!found && NdTile(*var->type())) found = var.get();
  }

 protected:
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    Consider(stmt->var());
    IRVisitor::VisitAssign(stmt);
  }
  void VisitFor(const std::shared_ptr<const ForStmt>& stmt) override {
    for (const auto& iter_arg : stmt->iter_args()) Consider(iter_arg.var);
    IRVisitor::VisitFor(stmt);
  }
  void VisitWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    for (const auto& iter_arg : stmt->iter_args()) Consider(iter_arg.var);
    IRVisitor::VisitWhile(stmt);
  }
  void VisitIf(const std::shared_ptr<const IfStmt>& stmt) override {
    for (const auto& var : stmt->return_vars()) Consider(var);
    IRVisitor::VisitIf(stmt);
  }
};

}  // namespace

const ir::Var* FirstNdTile(const ir::Function& kernel) {
  NdTileFinder finder;
  for (const auto& param : kernel.params()) finder.Consider(param);
  if (kernel.body()) finder.VisitStmt(kernel.body());
  return finder.found;
}

pypto::expected<ir::FunctionPtr, std::string> FlattenKernelTiles(const ir::FunctionPtr& kernel) {
  if (!kernel->body() || !FirstNdTile(*kernel)) return kernel;
  for (const auto& param : kernel->params())
    if (NdTile(*param->type()))
      return pypto::unexpected(fmt::format("its parameter '{}' is an N-d tile", param->name_hint()));
  for (const auto& type : kernel->return_types())
    if (NdTile(*type)) return pypto::unexpected(std::string("it returns an N-d tile"));
  auto expanded = ExpandBatchMatmuls(kernel->body());
  if (!expanded) return pypto::unexpected(expanded.error());
  TileFlattener flattener;
  auto body = flattener.MutateStmt(*expanded);
  if (!flattener.refusal().empty()) return pypto::unexpected(flattener.refusal());
  return kernel->WithBody(body);
}

Pass FlattenTileNdTo2D() {
  return Pass("FlattenTileNdTo2D", {IRProperty::NoNestedCalls, IRProperty::NoInCoreScopes}, {IRProperty::TileOps2D},
              {}, [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (!IsKernel(function->type())) return function;
                  auto flattened = FlattenKernelTiles(function);
                  return flattened ? *flattened : function;
                });
              });
}

}  // namespace pypto::passes
