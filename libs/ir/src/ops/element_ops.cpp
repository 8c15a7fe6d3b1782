// Single-element access: pl.read / pl.write of one element of a global tensor (tensor.read,
// tensor.write) or of an on-chip tile (tile.read, tile.write). The indices are one integer scalar
// per dimension, known or computed when the kernel runs.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// The element's indices: a list of integer scalars, one per dimension of `container`.
Result<bool> CheckIndices(const std::string& op, const Type& container, size_t rank, const ExprPtr& arg,
                          const Span& span) {
  const auto* indices = arg->As<TupleLiteral>();
  if (!indices)
    return TypeError(fmt::format("the element's indices are a list: {}(x, [i, j]{})", op,
                                 op == "pl.write" ? ", value" : ""),
                     span);
  if (indices->elements().size() != rank)
    return TypeError(fmt::format("an element of {} has {} indices, got {}", container.str(), rank,
                                 indices->elements().size()),
                     span);
  for (const auto& index : indices->elements()) {
    const auto* scalar = index->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return TypeError(fmt::format("element indices are integers, got {}", index->type()->str()), span);
  }
  return true;
}

// The value pl.write stores: a scalar of the element's dtype exactly, as no conversion is implied.
Result<bool> CheckWrittenValue(const Type& container, DataType dtype, const ExprPtr& value, const Span& span) {
  const auto* scalar = value->type()->As<ScalarType>();
  if (!scalar)
    return TypeError(fmt::format("the value written into {} is a scalar, got {}", container.str(),
                                 value->type()->str()),
                     span);
  if (scalar->dtype() != dtype)
    return TypeError(fmt::format("the value is {} but the elements of {} are {}", DataTypeName(scalar->dtype()),
                                 container.str(), DataTypeName(dtype)),
                     span, fmt::format("convert the value first: pl.cast(value, pl.{})", DataTypeName(dtype)));
  return true;
}

// One element of a tensor (tensor.read), as a scalar of its dtype.
Result<TypePtr> DeduceTensorRead(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor) return TypeError(fmt::format("reads an element of a tensor, got {}", args[0]->type()->str()), span);
  if (auto ok = CheckIndices("pl.read", *tensor, tensor->shape().size(), args[1], span); !ok)
    return pypto::unexpected(ok.error());
  return std::make_shared<ScalarType>(tensor->dtype());
}

// One element of a tile (tile.read), as a scalar of its dtype.
Result<TypePtr> DeduceTileRead(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tile = args[0]->type()->As<TileType>();
  if (!tile) return TypeError(fmt::format("reads an element of a tile, got {}", args[0]->type()->str()), span);
  if (auto ok = CheckIndices("pl.read", *tile, tile->shape().size(), args[1], span); !ok)
    return pypto::unexpected(ok.error());
  return std::make_shared<ScalarType>(tile->dtype());
}

// pl.write into a tensor in global memory: the result names the tensor written (as tile.store's).
Result<TypePtr> DeduceTensorWrite(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor)
    return TypeError(fmt::format("writes an element of a tensor, got {}", args[0]->type()->str()), span);
  if (auto ok = CheckIndices("pl.write", *tensor, tensor->shape().size(), args[1], span); !ok)
    return pypto::unexpected(ok.error());
  if (auto ok = CheckWrittenValue(*tensor, tensor->dtype(), args[2], span); !ok) return pypto::unexpected(ok.error());
  return args[0]->type();
}

// pl.write into a tile: the result is the same tile (its buffer), with that one element replaced.
Result<TypePtr> DeduceTileWrite(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tile = args[0]->type()->As<TileType>();
  if (!tile) return TypeError(fmt::format("writes an element of a tile, got {}", args[0]->type()->str()), span);
  if (auto ok = CheckIndices("pl.write", *tile, tile->shape().size(), args[1], span); !ok)
    return pypto::unexpected(ok.error());
  if (auto ok = CheckWrittenValue(*tile, tile->dtype(), args[2], span); !ok) return pypto::unexpected(ok.error());
  return args[0]->type();
}

}  // namespace

void RegisterElementOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tensor.read",
                          .description = "one element of a tensor in global memory, as a scalar",
                          .params = {Arg("tensor"), Arg("indices")},
                          .deduce_type = DeduceTensorRead,
                          .affinity = CoreAffinity::Shared,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "tensor.write",
                          .description = "one element of a tensor in global memory set to a scalar",
                          .params = {Arg("tensor"), Arg("indices"), Arg("value")},
                          .deduce_type = DeduceTensorWrite,
                          .affinity = CoreAffinity::Shared,
                          .writes_arg = 0});
  registry.Register(OpDef{.name = "tile.read",
                          .description = "one element of a tile, as a scalar",
                          .params = {Arg("tile"), Arg("indices")},
                          .deduce_type = DeduceTileRead});
  // The element is replaced in place: the result is the tile's own buffer.
  registry.Register(OpDef{.name = "tile.write",
                          .description = "one element of a tile set to a scalar, in place",
                          .params = {Arg("tile"), Arg("indices"), Arg("value")},
                          .deduce_type = DeduceTileWrite,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
