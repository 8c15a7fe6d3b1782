// tensor.* ops of orchestration code: tensors in global memory that the runtime allocates, and views
// of them.
#include <fmt/format.h>

#include <cmath>

#include "op_checks.h"
#include "pypto/ir/dynamic_extent.h"

namespace pypto::ir {
namespace {

using namespace ops;

// `init_value=v`: every element starts as v, which the element type must hold exactly. As upstream's
// generated C++ cannot spell a half-precision constant, FP16/BF16 tensors start only as zeros.
Result<bool> CheckInitValue(double value, DataType dtype, const Span& span) {
  if (!std::isfinite(value)) return TypeError(fmt::format("init_value must be finite, got {}", value), span);
  if (value == 0) return true;
  if (dtype == DataType::FP16 || dtype == DataType::BF16)
    return TypeError(fmt::format("a {} tensor can only start as zeros, got init_value={}", DataTypeName(dtype),
                                 FloatLiteral(value)),
                     span, "use init_value=0, or a FP32 tensor");
  if (IsInteger(dtype)) {
    const auto [lowest, highest] = IntegerRange(dtype);
    if (value != std::floor(value) || value < static_cast<double>(lowest) || value > static_cast<double>(highest))
      return TypeError(fmt::format("init_value={} is not a {} value", FloatLiteral(value), DataTypeName(dtype)), span);
    return true;
  }
  if (dtype != DataType::FP32 && dtype != DataType::FP64)
    return TypeError(fmt::format("a {} tensor can only start as zeros, got init_value={}", DataTypeName(dtype),
                                 FloatLiteral(value)),
                     span);
  return true;
}

// The shape of a created tensor: integers, or integer scalars computed when the program runs from the
// extents of a program compiled once for every extent (`pl.create_tensor([t_dim, D])`, t_dim read from
// the token axis), each such axis kDynamicExtent; the plan computes it at each run.
Result<Shape> CreateShape(const ExprPtr& expr, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return TypeError("the tensor shape must be a list of integers", span);
  Shape shape;
  bool positive = true;
  for (const auto& element : tuple->elements()) {
    const auto* scalar = element->type()->As<ScalarType>();
    auto value = AsConstInt(element);
    if (!value && (!scalar || !IsInteger(scalar->dtype()))) return TypeError("the tensor shape must be integers", span);
    positive &= !value || *value > 0;
    shape.push_back(value ? *value : kDynamicExtent);
  }
  if (!positive) return TypeError(fmt::format("tensor dimensions must be positive, got {}", ShapeStr(shape)), span);
  return shape;
}

Result<TypePtr> DeduceCreate(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto shape = CreateShape(args[0], span);
  if (!shape) return pypto::unexpected(shape.error());
  const DataType dtype = *FindAttr<DataType>(kwargs, "dtype");
  if (auto init = FindAttr<double>(kwargs, "init_value"))
    if (auto ok = CheckInitValue(*init, dtype, span); !ok) return pypto::unexpected(ok.error());
  return std::make_shared<TensorType>(*shape, dtype);
}

// The new shape of a reshape: integers, any of them integer scalars known when the program runs (in
// a program compiled once for every extent, `pl.reshape(x, [b_dim, s_dim, HEAD_DIM])` with `b_dim` and
// `s_dim` extents of x's, or an inline helper's dynamic annotation given a static tensor); those axes
// are kDynamicExtent, and the orchestration computes each when the program runs (codegen-orch's
// reshape ViewStep), checking the element count there.
Result<Shape> ReshapeTarget(const ExprPtr& expr, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return TypeError("the new shape must be a list of integers", span);
  Shape shape;
  for (const auto& element : tuple->elements()) {
    const auto* scalar = element->type()->As<ScalarType>();
    auto value = AsConstInt(element);
    if (!value && (!scalar || !IsInteger(scalar->dtype())))
      return TypeError("the new shape must be integers", span);
    shape.push_back(value ? *value : kDynamicExtent);
  }
  return shape;
}

// The same elements under another shape: a view of the whole tensor, as the runtime's reshape. With a
// dimension known only when the program runs, the element counts are checked then.
Result<TypePtr> DeduceReshape(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor) return TypeError(fmt::format("tensor.reshape reshapes a tensor, got {}", args[0]->type()->str()), span);
  auto shape = ReshapeTarget(args[1], span);
  if (!shape) return pypto::unexpected(shape.error());
  int64_t from = 1, to = 1;
  for (int64_t dim : tensor->shape()) from *= dim;
  for (int64_t dim : *shape) {
    if (dim <= 0 && dim != kDynamicExtent)
      return TypeError(fmt::format("tensor dimensions must be positive, got {}", ShapeStr(*shape)), span);
    to *= dim;
  }
  const bool run_time = HasDynamicExtent(tensor->shape()) || HasDynamicExtent(*shape);
  if (from != to && !run_time)
    return TypeError(fmt::format("cannot reshape {} to {}: {} elements against {}", tensor->str(), ShapeStr(*shape),
                                 from, to),
                     span);
  return std::make_shared<TensorType>(*shape, tensor->dtype());
}

// `v = pl.slice(t, shape, offsets)` passed to a kernel from orchestration code: a view of the window
// [offsets, offsets + shape) of t, with t's strides, as the runtime's view(). Offsets may be computed
// in orchestration code; those known here are checked here, the others when the plan is expanded.
Result<TypePtr> DeduceSlice(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the source of a tensor slice", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  auto shape = StaticInts(args[1], "the shape of a tensor slice", span);
  if (!shape) return pypto::unexpected(shape.error());
  auto offsets = ScalarOffsets(args[2], "the offsets of a tensor slice", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  const Shape& dims = (*tensor)->shape();
  if (shape->size() != dims.size() || offsets->size() != dims.size())
    return TypeError(fmt::format("a slice of {} needs {} offsets and sizes, got {} and {}", (*tensor)->str(),
                                 dims.size(), OffsetsStr(*offsets), ShapeStr(*shape)),
                     span);
  // The outermost dimension may overhang (a window at its last rows reaching past them), as the
  // runtime's view() allows (WindowFits): a kernel touching an element past the buffer is the error.
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto& origin = (*offsets)[d];
    const bool outside = d == 0 ? origin && (*origin < 0 || *origin >= dims[d])
                                : (*shape)[d] > dims[d] || (origin && (*origin < 0 || *origin + (*shape)[d] > dims[d]));
    if ((*shape)[d] <= 0 || outside)
      return TypeError(fmt::format("the slice at {} of shape {} is outside {} (dimension {})", OffsetsStr(*offsets),
                                   ShapeStr(*shape), (*tensor)->str(), d),
                       span);
  }
  return std::make_shared<TensorType>(*shape, (*tensor)->dtype());
}

// `xt = pl.transpose(x, axis1, axis2)` in orchestration code: a view of x with the two axes (and their
// strides) swapped, as the runtime's transpose(); no data moves, so a kernel reading xt reads x.
Result<TypePtr> DeduceTransposeView(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the operand of a tensor transpose", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  Shape shape = (*tensor)->shape();
  const auto rank = static_cast<int64_t>(shape.size());
  const auto axis1 = *FindAttr<int64_t>(kwargs, "axis1"), axis2 = *FindAttr<int64_t>(kwargs, "axis2");
  const auto normal = [rank](int64_t axis) { return axis < 0 ? axis + rank : axis; };
  const int64_t first = normal(axis1), second = normal(axis2);
  if (rank < 2 || first < 0 || first >= rank || second < 0 || second >= rank || first == second)
    return TypeError(fmt::format("a transpose of {} swaps two different axes in [-{}, {}), got {} and {}",
                                 (*tensor)->str(), rank, rank, axis1, axis2),
                     span);
  std::swap(shape[first], shape[second]);
  return std::make_shared<TensorType>(std::move(shape), (*tensor)->dtype());
}

// pl.dump_tag(t): a statement marking an orchestration tensor for the args dump; it has no value.
Result<TypePtr> DeduceDumpTag(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  if (!args[0]->type()->As<TensorType>())
    return TypeError(fmt::format("pl.dump_tag marks a tensor for the args dump, got {}", args[0]->type()->str()), span);
  return std::make_shared<UnknownType>();
}

// tensor.extent(x, axis=a): the extent of axis a of tensor x when the program runs, as an INDEX. The
// entry of a program compiled once for every extent of a `pl.dynamic` dimension defines the
// dimension with it; it reads the tensor's descriptor, not its data, so it has no effects.
Result<TypePtr> DeduceExtent(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor) return TypeError(fmt::format("tensor.extent reads an axis of a tensor, got {}", args[0]->type()->str()), span);
  const auto rank = static_cast<int64_t>(tensor->shape().size());
  const auto axis = *FindAttr<int64_t>(kwargs, "axis");
  if (axis < 0 || axis >= rank)
    return TypeError(fmt::format("tensor.extent of {} reads an axis in [0, {}), got {}", tensor->str(), rank, axis),
                     span);
  return std::make_shared<ScalarType>(DataType::INDEX);
}

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tensor.create",
                          .description = "a tensor in global memory allocated by the runtime for one run (init_value: "
                                         "its elements' starting value; manual_dep: upstream's opt-out of "
                                         "lifetime tracking, which changes no result here)",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType),
                                     OptionalAttr("init_value", OpAttrKind::Float),
                                     OptionalAttr("manual_dep", OpAttrKind::Bool)},
                          .deduce_type = DeduceCreate,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "tensor.reshape",
                          .description = "a view of a whole tensor under another shape (no data moves)",
                          .params = {Arg("tensor"), Arg("shape")},
                          .deduce_type = DeduceReshape,
                          .affinity = CoreAffinity::Shared,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "tensor.slice",
                          .description = "a view of a window of a tensor (no data moves), passed to kernels",
                          .params = {Arg("tensor"), Arg("shape"), Arg("offset")},
                          .deduce_type = DeduceSlice,
                          .affinity = CoreAffinity::Shared,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "tensor.transpose",
                          .description = "a view of a tensor with two axes swapped (no data moves), passed to kernels",
                          .params = {Arg("tensor"), Attr("axis1", OpAttrKind::Int), Attr("axis2", OpAttrKind::Int)},
                          .deduce_type = DeduceTransposeView,
                          .affinity = CoreAffinity::Shared,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "tensor.extent",
                          .description = "the extent of a tensor axis when the program runs (orchestration code: "
                                         "a pl.dynamic dimension of a program compiled for every extent)",
                          .params = {Arg("tensor"), Attr("axis", OpAttrKind::Int)},
                          .deduce_type = DeduceExtent,
                          .affinity = CoreAffinity::Shared});
  // No effects: it reads nothing when the program runs; codegen-orch marks the tensor's later submits.
  registry.Register(OpDef{.name = "tensor.dump_tag",
                          .description = "marks a tensor variable for the args dump (RunConfig(enable_dump_args=...))",
                          .params = {Arg("tensor")},
                          .deduce_type = DeduceDumpTag,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
