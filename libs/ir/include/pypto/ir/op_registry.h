// The catalog of ops (tile.*, tensor.*, ...). Each op declares its arguments, how it deduces its
// result type (rejecting wrong shapes and dtypes), which core runs it and what it writes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/expr.h"

namespace pypto::ir {

enum class CoreAffinity { Vector, Cube, Shared };

struct OpDef {
  using DeduceFn = std::function<Result<TypePtr>(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                                                 const Span& span)>;
  std::string name;  // "tile.add"
  std::string description;
  std::vector<std::string> arg_names;
  DeduceFn deduce_type;
  CoreAffinity affinity = CoreAffinity::Vector;
  // Index of the global tensor argument the op writes (tile.store's destination), if any.
  std::optional<int> writes_arg;
  // Index of a global tensor argument the op reads (tile.load's source), if any.
  std::optional<int> reads_tensor_arg;
  // The result may share storage with an input whose last use is this op (element-wise ops).
  bool inplace_safe = false;
};

class OpRegistry {
 public:
  static const OpRegistry& Get();

  const OpDef* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

  // Builds a typed call, validating arity and running the op's type deduction.
  Result<CallPtr> CreateCall(std::string_view name, std::vector<ExprPtr> args, Call::Kwargs kwargs,
                             const Span& span) const;

  void Register(OpDef def);

 private:
  OpRegistry();
  std::map<std::string, OpDef, std::less<>> ops_;
};

// Registration entry points, one per op family (src/ops/*.cpp).
void RegisterTileOps(OpRegistry& registry);

}  // namespace pypto::ir
