#include "pypto/ir/type.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <numeric>

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
  }
  return "?";
}

std::optional<MemorySpace> MemorySpaceFromName(std::string_view name) {
  for (auto space : {MemorySpace::DDR, MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right,
                     MemorySpace::Acc, MemorySpace::Bias, MemorySpace::ScalarLocal})
    if (MemorySpaceName(space) == name) return space;
  return std::nullopt;
}

std::string ScalarType::str() const { return fmt::format("pl.Scalar[pl.{}]", DataTypeName(dtype_)); }

bool ScalarType::equals(const Type& other) const {
  const auto* scalar = other.As<ScalarType>();
  return scalar && scalar->dtype_ == dtype_;
}

int64_t ShapedType::num_elements() const {
  return std::accumulate(shape_.begin(), shape_.end(), int64_t{1}, std::multiplies<>());
}

std::string ShapedType::shape_str() const { return fmt::format("[{}]", fmt::join(shape_, ", ")); }

std::string TensorType::str() const { return fmt::format("pl.Tensor[{}, pl.{}]", shape_str(), DataTypeName(dtype())); }

bool TensorType::equals(const Type& other) const {
  const auto* tensor = other.As<TensorType>();
  return tensor && tensor->shape() == shape() && tensor->dtype() == dtype();
}

std::string TileType::str() const {
  std::string memref;
  if (memref_) memref = fmt::format(", pl.MemRef({}, {})", memref_->byte_offset, memref_->size);
  return fmt::format("pl.Tile[{}, pl.{}{}, pl.Mem.{}]", shape_str(), DataTypeName(dtype()), memref,
                     MemorySpaceName(space_));
}

bool TileType::equals(const Type& other) const {
  const auto* tile = other.As<TileType>();
  return tile && tile->shape() == shape() && tile->dtype() == dtype() && tile->space_ == space_ &&
         tile->memref_ == memref_;
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
