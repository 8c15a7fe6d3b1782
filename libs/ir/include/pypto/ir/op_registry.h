// The catalog of ops (tile.*, tensor.*). Each op declares its parameters in the DSL's positional
// order (expression arguments and compile-time attributes), how it deduces its result type
// (rejecting wrong shapes and dtypes), which core runs it and what it writes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/expr.h"

namespace pypto::ir {

// Which core type runs an op. Most ops run wherever their tiles live: a tile in Vec (UB) belongs
// to a vector core, a tile in Mat/Left/Right/Acc/Bias to a cube core (FromMemorySpaces).
enum class CoreAffinity { Vector, Cube, Shared, FromMemorySpaces };

// One parameter as the DSL spells it. Expression parameters become Call::args() in order (optional
// ones trail); attribute parameters become Call::kwargs().
struct OpParam {
  std::string name;
  bool is_attr = false;
  OpAttrKind attr_kind = OpAttrKind::Int;
  bool required = true;
  // A string attribute naming a member of a DSL enum (`pl.PipeType`): the DSL spells its value
  // `pl.PipeType.MTE3`, the IR keeps the member's name ("MTE3").
  const char* enum_type = nullptr;
};
OpParam Arg(std::string name);
OpParam OptionalArg(std::string name);
OpParam Attr(std::string name, OpAttrKind kind);
OpParam OptionalAttr(std::string name, OpAttrKind kind);
OpParam EnumAttr(std::string name, const char* enum_type, bool required = true);

struct OpDef {
  using DeduceFn = std::function<Result<TypePtr>(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                                                 const Span& span)>;
  std::string name;  // "tile.add"
  std::string description;
  std::vector<OpParam> params;
  DeduceFn deduce_type;
  CoreAffinity affinity = CoreAffinity::FromMemorySpaces;
  // When set, decides the core from the call's attributes (an explicit `core_type=`), overriding
  // `affinity` where it returns one.
  std::optional<CoreAffinity> (*affinity_from_attrs)(const OpAttrs& attrs) = nullptr;
  // Index of the global tensor argument the op writes (tile.store's destination), if any.
  std::optional<int> writes_arg;
  // Index of a global tensor argument the op reads (tile.load's source), if any.
  std::optional<int> reads_tensor_arg;
  // Whether a call also reads what it writes at writes_arg: an accumulating (atomic-add) store.
  bool (*accumulates)(const OpAttrs& attrs) = nullptr;
  // The result may share storage with an input whose last use is this op (element-wise ops).
  bool inplace_safe = false;
  // The result IS the storage of this argument (a reshape view, an accumulator updated in place).
  std::optional<int> result_aliases_arg;
  // The arguments the cube unit reads from one of its operand buffers, and which: a matmul's lhs
  // from Left (L0A), its rhs from Right (L0B), a bias row from Bias (BT). InferTileMemorySpace
  // moves each such operand there.
  std::vector<std::pair<int, MemorySpace>> cube_operands;

  std::vector<std::string> arg_names() const;  // expression parameters, in order
  size_t min_args() const;
  size_t max_args() const;
  const OpParam* FindAttrParam(std::string_view attr) const;
};

// Whether `arg_count` expression arguments are what `op` takes; otherwise the error naming its
// parameters ("'tile.add' takes 2 arguments (lhs, rhs), got 1"). OpRegistry::CreateCall makes this
// check; code that reads calls it did not build (the JSON reader, passes) makes it before indexing
// their arguments.
Result<bool> CheckArity(const OpDef& op, size_t arg_count, const Span& span);
Result<bool> CheckArity(const Call& call);  // true for a call of a function, not an op

// Whether the call reads the tensor it writes (OpDef::accumulates), so that it is InOut there.
bool AccumulatesIntoWrittenArg(const Call& call);

// The core type a call needs (resolving FromMemorySpaces from its tile operands and result).
CoreAffinity CallAffinity(const Call& call);

// Whether the call is a pl.system.syncall in hard mode (the default), which only a launch with
// sync_start=True may reach: a block waiting for blocks not yet started would wait forever.
bool IsHardSyncall(const Call& call);

// Whether `op` pushes, pops or frees a cross-core pipe slot (tile.tpush_to_aiv, system.tfree_to_aic, ...).
bool IsCrossCorePipeOp(std::string_view op);

class OpRegistry {
 public:
  static const OpRegistry& Get();

  const OpDef* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

  // Builds a typed call, validating arity and attributes and running the op's type deduction.
  Result<CallPtr> CreateCall(std::string_view name, std::vector<ExprPtr> args, Call::Kwargs kwargs,
                             const Span& span) const;

  void Register(OpDef def);

 private:
  OpRegistry();
  std::map<std::string, OpDef, std::less<>> ops_;
};

// Registration entry points, one per op family (src/ops/*.cpp).
void RegisterTileMemoryOps(OpRegistry& registry);
void RegisterTileElementwiseOps(OpRegistry& registry);
void RegisterTileBitwiseOps(OpRegistry& registry);
void RegisterTileCompareOps(OpRegistry& registry);
void RegisterTilePartialOps(OpRegistry& registry);
void RegisterTileReductionOps(OpRegistry& registry);
void RegisterTileMatmulOps(OpRegistry& registry);
void RegisterTileMxOps(OpRegistry& registry);
void RegisterTileSortOps(OpRegistry& registry);
void RegisterTileIndexOps(OpRegistry& registry);
void RegisterTileGatherOps(OpRegistry& registry);
void RegisterTileRandomOps(OpRegistry& registry);
void RegisterTileTriangleOps(OpRegistry& registry);
void RegisterTileSpmdOps(OpRegistry& registry);
void RegisterTileValidShapeOps(OpRegistry& registry);
void RegisterTileWindowOps(OpRegistry& registry);
void RegisterSystemOps(OpRegistry& registry);
void RegisterSystemSyncOps(OpRegistry& registry);
void RegisterTensorOps(OpRegistry& registry);
void RegisterElementOps(OpRegistry& registry);
void RegisterScalarOps(OpRegistry& registry);
void RegisterTaskOps(OpRegistry& registry);
void RegisterCrossCoreOps(OpRegistry& registry);
void RegisterArrayOps(OpRegistry& registry);
void RegisterPrefetchOps(OpRegistry& registry);
void RegisterCommOps(OpRegistry& registry);

}  // namespace pypto::ir
