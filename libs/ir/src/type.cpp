#include "pypto/ir/type.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/printer.h"

namespace pypto::ir {

std::string_view MemorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::DDR: return "DDR";
    case MemorySpace::Vec: return "Vec";
    case MemorySpace::Mat: return "Mat";
    case MemorySpace::Left: return "Left";
    case MemorySpace::Right: return "Right";
    case MemorySpace::Acc: return "Acc";
    case MemorySpace::Bias: return "Bias";
    case MemorySpace::ScalarLocal: return "ScalarLocal";
    case MemorySpace::LeftScale: return "LeftScale";
    case MemorySpace::RightScale: return "RightScale";
  }
  return "?";
}

std::optional<MemorySpace> MemorySpaceFromName(std::string_view name) {
  for (auto space : {MemorySpace::DDR, MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right,
                     MemorySpace::Acc, MemorySpace::Bias, MemorySpace::ScalarLocal,
                     MemorySpace::LeftScale, MemorySpace::RightScale})
    if (MemorySpaceName(space) == name) return space;
  return std::nullopt;
}

std::string_view TensorLayoutName(TensorLayout layout) {
  switch (layout) {
    case TensorLayout::ND: return "ND";
    case TensorLayout::MX_A_ZZ: return "MX_A_ZZ";
    case TensorLayout::MX_B_NN: return "MX_B_NN";
  }
  return "?";
}

std::optional<TensorLayout> TensorLayoutFromName(std::string_view name) {
  for (auto layout : {TensorLayout::ND, TensorLayout::MX_A_ZZ, TensorLayout::MX_B_NN})
    if (TensorLayoutName(layout) == name) return layout;
  return std::nullopt;
}

std::string ScalarType::str() const { return fmt::format("pl.Scalar[pl.{}]", DataTypeName(dtype_)); }

bool ScalarType::equals(const Type& other) const {
  const auto* scalar = other.As<ScalarType>();
  return scalar && scalar->dtype_ == dtype_;
}

std::string ArrayType::str() const { return fmt::format("pl.Array[{}, pl.{}]", extent_, DataTypeName(dtype_)); }

bool ArrayType::equals(const Type& other) const {
  const auto* array = other.As<ArrayType>();
  return array && array->dtype_ == dtype_ && array->extent_ == extent_;
}

namespace {
constexpr std::string_view kHandleNames[] = {"PrefetchAsyncContext", "AsyncEvent", "AsyncSession"};
}  // namespace

std::string HandleType::str() const { return fmt::format("pl.{}", kHandleNames[static_cast<size_t>(handle_)]); }

bool HandleType::equals(const Type& other) const {
  const auto* handle = other.As<HandleType>();
  return handle && handle->handle_ == handle_;
}

std::optional<HandleKind> HandleKindFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kHandleNames); ++i)
    if (kHandleNames[i] == name) return static_cast<HandleKind>(i);
  return std::nullopt;
}

// Saturating: an absurd shape ([2^31, 2^31]) is too large for any buffer, not a wrapped small size.
int64_t ShapedType::num_elements() const {
  int64_t count = 1;
  for (int64_t dim : shape_)
    if (__builtin_mul_overflow(count, dim, &count)) return std::numeric_limits<int64_t>::max();
  return count;
}

int64_t ShapedType::num_bytes() const {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(num_elements(), DataTypeBytes(dtype_), &bytes)) return std::numeric_limits<int64_t>::max();
  return bytes;
}

std::string ShapedType::shape_str() const { return fmt::format("[{}]", fmt::join(shape_, ", ")); }

// A dynamic axis prints as pl.DYN, which the printed-program parser reads back as one.
std::string TensorType::str() const {
  std::vector<std::string> dims;
  for (int64_t dim : shape()) dims.push_back(dim == kDynamicExtent ? kDynamicExtentName : std::to_string(dim));
  const std::string layout = layout_ == TensorLayout::ND ? "" : fmt::format(", pl.{}", TensorLayoutName(layout_));
  return fmt::format("pl.Tensor[[{}], pl.{}{}]", fmt::join(dims, ", "), DataTypeName(dtype()), layout);
}

bool TensorType::equals(const Type& other) const {
  const auto* tensor = other.As<TensorType>();
  return tensor && tensor->shape() == shape() && tensor->dtype() == dtype() && tensor->layout_ == layout_;
}

namespace {

// Whether `valid` names every extent of `shape` as that very constant.
bool IsWholeTile(const Shape& shape, const ValidShape& valid) {
  if (valid.size() != shape.size()) return false;
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto* constant = valid[i]->As<ConstInt>();
    if (!constant || constant->value() != shape[i]) return false;
  }
  return true;
}

// Outside a printer's scope a variable is spelled by its name hint.
std::string PlainText(const Expr& expr) {
  if (const auto* var = expr.As<Var>()) return var->name_hint();
  if (const auto* constant = expr.As<ConstInt>()) return std::to_string(constant->value());
  return PrintExpr(std::shared_ptr<const Expr>(std::shared_ptr<const Expr>{}, &expr));
}

// Structural identity of two valid extents without a binding context: the same constant or the
// same expression object (StructuralEqual compares them through its variable mapping instead).
bool SameExtent(const std::shared_ptr<const Expr>& a, const std::shared_ptr<const Expr>& b) {
  if (a == b) return true;
  const auto* x = a->As<ConstInt>();
  const auto* y = b->As<ConstInt>();
  return x && y && x->value() == y->value();
}

}  // namespace

TileType::TileType(Shape shape, DataType dtype, MemorySpace space, std::optional<TileMemRef> memref,
                   ValidShape valid_shape)
    : ShapedType(kKind, std::move(shape), dtype), space_(space), memref_(memref), valid_shape_(std::move(valid_shape)) {
  if (IsWholeTile(this->shape(), valid_shape_)) valid_shape_.clear();
}

std::string TileType::str() const { return str(PlainText); }

std::string TileType::str(const std::function<std::string(const Expr&)>& expr_text) const {
  std::string memref;
  if (memref_) memref = fmt::format(", pl.MemRef({}, {})", memref_->byte_offset, memref_->size);
  std::string view;
  if (!valid_shape_.empty()) {
    std::vector<std::string> extents;
    for (const auto& extent : valid_shape_) extents.push_back(expr_text(*extent));
    view = fmt::format(", pl.TileView(valid_shape=[{}])", fmt::join(extents, ", "));
  }
  return fmt::format("pl.Tile[{}, pl.{}{}, pl.Mem.{}{}]", shape_str(), DataTypeName(dtype()), memref,
                     MemorySpaceName(space_), view);
}

bool TileType::equals(const Type& other) const {
  const auto* tile = other.As<TileType>();
  if (!tile || tile->shape() != shape() || tile->dtype() != dtype() || tile->space_ != space_ ||
      tile->memref_ != memref_ || tile->valid_shape_.size() != valid_shape_.size())
    return false;
  for (size_t i = 0; i < valid_shape_.size(); ++i)
    if (!SameExtent(valid_shape_[i], tile->valid_shape_[i])) return false;
  return true;
}

std::shared_ptr<const TileType> WithValidShape(const TileType& tile, ValidShape valid_shape) {
  return std::make_shared<TileType>(tile.shape(), tile.dtype(), tile.memory_space(), tile.memref(),
                                    std::move(valid_shape));
}

std::string TupleType::str() const {
  std::vector<std::string> parts;
  for (const auto& element : elements_) parts.push_back(element->str());
  return fmt::format("tuple[{}]", fmt::join(parts, ", "));
}

bool TupleType::equals(const Type& other) const {
  const auto* tuple = other.As<TupleType>();
  if (!tuple || tuple->elements_.size() != elements_.size()) return false;
  for (size_t i = 0; i < elements_.size(); ++i)
    if (!elements_[i]->equals(*tuple->elements_[i])) return false;
  return true;
}

}  // namespace pypto::ir
