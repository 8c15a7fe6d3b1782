// Types of IR values: scalars, global-memory tensors, on-chip tiles, tuples.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/dtype.h"

namespace pypto::ir {

// On-chip buffers and global memory. Values match upstream's MemorySpace.
enum class MemorySpace : uint8_t {
  DDR = 0,    // GM
  Vec = 1,    // UB, unified buffer of a vector core
  Mat = 2,    // L1
  Left = 3,   // L0A
  Right = 4,  // L0B
  Acc = 5,    // L0C
  Bias = 6,
  ScalarLocal = 7,
  LeftScale = 8,   // L0A's MX block-scale buffer (A5 only)
  RightScale = 9,  // L0B's MX block-scale buffer (A5 only)
};

std::string_view MemorySpaceName(MemorySpace space);
std::optional<MemorySpace> MemorySpaceFromName(std::string_view name);  // "Vec" -> Vec

enum class TypeKind { Unknown, Scalar, Tensor, Tile, Tuple, Array, Handle };

class Type;
class Expr;
using TypePtr = std::shared_ptr<const Type>;
using Shape = std::vector<int64_t>;

class Type {
 public:
  explicit Type(TypeKind kind) : kind_(kind) {}
  virtual ~Type() = default;
  TypeKind kind() const { return kind_; }
  template <typename T>
  const T* As() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  // DSL spelling, e.g. "pl.Tensor[[128, 128], pl.FP32]".
  virtual std::string str() const = 0;
  virtual bool equals(const Type& other) const = 0;

 private:
  TypeKind kind_;
};

class UnknownType final : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Unknown;
  UnknownType() : Type(kKind) {}
  std::string str() const override { return "None"; }
  bool equals(const Type& other) const override { return other.kind() == kKind; }
};

class ScalarType final : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Scalar;
  explicit ScalarType(DataType dtype) : Type(kKind), dtype_(dtype) {}
  DataType dtype() const { return dtype_; }
  std::string str() const override;
  bool equals(const Type& other) const override;

 private:
  DataType dtype_;
};

// Whether `type` is pl.Scalar[pl.TASK_ID], the runtime handle launches are ordered by.
inline bool IsTaskId(const Type& type) {
  const auto* scalar = type.As<ScalarType>();
  return scalar && scalar->dtype() == DataType::TASK_ID;
}

// pl.Array[extent, dtype]: a fixed number of scalars of orchestration code (pl.array.create), in
// practice TaskIds that one `deps=[tids]` waits for all of.
class ArrayType final : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Array;
  ArrayType(DataType dtype, int64_t extent) : Type(kKind), dtype_(dtype), extent_(extent) {}
  DataType dtype() const { return dtype_; }
  int64_t extent() const { return extent_; }
  std::string str() const override;
  bool equals(const Type& other) const override;

 private:
  DataType dtype_;
  int64_t extent_;
};

// Whether `type` is pl.Array[n, pl.TASK_ID].
inline bool IsTaskIdArray(const Type& type) {
  const auto* array = type.As<ArrayType>();
  return array && array->dtype() == DataType::TASK_ID;
}

// The opaque handles of the asynchronous GM-to-L2 prefetch (pl.prefetch.*): a kernel passes them
// between the prefetch ops and computes nothing with them.
enum class HandleKind : uint8_t { PrefetchAsyncContext, AsyncEvent, AsyncSession };

class HandleType final : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Handle;
  explicit HandleType(HandleKind handle) : Type(kKind), handle_(handle) {}
  HandleKind handle() const { return handle_; }
  std::string str() const override;  // pl.PrefetchAsyncContext, pl.AsyncEvent, pl.AsyncSession
  bool equals(const Type& other) const override;

 private:
  HandleKind handle_;
};

// The handle kind a DSL name spells (`PrefetchAsyncContext`, without `pl.`).
std::optional<HandleKind> HandleKindFromName(std::string_view name);

// Shared by tensors and tiles: a static shape and an element type.
class ShapedType : public Type {
 public:
  ShapedType(TypeKind kind, Shape shape, DataType dtype) : Type(kind), shape_(std::move(shape)), dtype_(dtype) {}
  const Shape& shape() const { return shape_; }
  DataType dtype() const { return dtype_; }
  int64_t num_elements() const;
  int64_t num_bytes() const;  // both saturate at INT64_MAX

 protected:
  std::string shape_str() const;

 private:
  Shape shape_;
  DataType dtype_;
};

// How a tensor's elements lie in global memory. ND is row-major. The MX layouts hold MX scale
// exponents (FP8E8M0) in the blocks the cube's scale buffers read: logical [M, K/32] for the left
// operand in 16x2 blocks, rows of blocks first (MX_A_ZZ); logical [K/32, N] for the right one in
// 2x16 blocks stored transposed, column of blocks first (MX_B_NN). See mx_layout.h.
enum class TensorLayout : uint8_t { ND = 0, MX_A_ZZ = 1, MX_B_NN = 2 };

std::string_view TensorLayoutName(TensorLayout layout);                      // "MX_A_ZZ"
std::optional<TensorLayout> TensorLayoutFromName(std::string_view name);  // "ND" -> ND

// A tensor in global memory (DDR).
class TensorType final : public ShapedType {
 public:
  static constexpr TypeKind kKind = TypeKind::Tensor;
  TensorType(Shape shape, DataType dtype, TensorLayout layout = TensorLayout::ND)
      : ShapedType(kKind, std::move(shape), dtype), layout_(layout) {}
  TensorLayout layout() const { return layout_; }
  std::string str() const override;  // the layout as a third slot when it is not ND
  bool equals(const Type& other) const override;

 private:
  TensorLayout layout_;
};

// Where the memory-allocation pass placed a tile inside its buffer.
struct TileMemRef {
  int64_t byte_offset = 0;
  int64_t size = 0;
  bool operator==(const TileMemRef&) const = default;
};

// The region of a tile that holds data, one extent per dimension: each a constant or a scalar
// expression of the kernel (a parameter, a value read from a tensor, a `min(...)`). Empty means the
// whole tile, which is what almost every tile has.
using ValidShape = std::vector<std::shared_ptr<const Expr>>;

// A tile in an on-chip buffer; `memref` is set once addresses are allocated. The valid shape is a
// property of the value, not of the buffer: a load may fill only part of the tile it allocates.
class TileType final : public ShapedType {
 public:
  static constexpr TypeKind kKind = TypeKind::Tile;
  // A valid shape whose every extent is the constant full extent is stored as empty, so that two
  // spellings of "the whole tile" compare equal.
  TileType(Shape shape, DataType dtype, MemorySpace space, std::optional<TileMemRef> memref = std::nullopt,
           ValidShape valid_shape = {});
  MemorySpace memory_space() const { return space_; }
  const std::optional<TileMemRef>& memref() const { return memref_; }
  const ValidShape& valid_shape() const { return valid_shape_; }
  bool has_partial_valid_shape() const { return !valid_shape_.empty(); }
  std::string str() const override;
  // str() with the valid shape's expressions spelled by `expr_text` (the printer's names).
  std::string str(const std::function<std::string(const Expr&)>& expr_text) const;
  bool equals(const Type& other) const override;

 private:
  MemorySpace space_;
  std::optional<TileMemRef> memref_;
  ValidShape valid_shape_;
};

// The same tile type with another valid shape (empty: the whole tile).
std::shared_ptr<const TileType> WithValidShape(const TileType& tile, ValidShape valid_shape);

class TupleType final : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tuple;
  explicit TupleType(std::vector<TypePtr> elements) : Type(kKind), elements_(std::move(elements)) {}
  const std::vector<TypePtr>& elements() const { return elements_; }
  std::string str() const override;
  bool equals(const Type& other) const override;

 private:
  std::vector<TypePtr> elements_;
};

}  // namespace pypto::ir
