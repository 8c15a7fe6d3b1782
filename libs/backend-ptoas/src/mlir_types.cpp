#include "mlir_types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>

#include "pypto/ir/dtype.h"

namespace pypto::backend_ptoas {

pypto::expected<std::string, std::string> MlirElementType(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::BOOL: return std::string("i1");
    case DataType::INT8: return std::string("i8");
    case DataType::INT16: return std::string("i16");
    case DataType::INT32: return std::string("i32");
    case DataType::INT64: return std::string("i64");
    case DataType::INDEX: return std::string("index");
    case DataType::UINT8: return std::string("ui8");
    case DataType::UINT16: return std::string("ui16");
    case DataType::UINT32: return std::string("ui32");
    case DataType::UINT64: return std::string("ui64");
    case DataType::FP16: return std::string("f16");
    case DataType::FP32: return std::string("f32");
    case DataType::BF16: return std::string("bf16");
    // ptoas parses the FP8 builtins with MLIR's capitalisation; E8M0 exists only as a dialect type.
    case DataType::FP8E4M3FN: return std::string("f8E4M3FN");
    case DataType::FP8E5M2: return std::string("f8E5M2");
    case DataType::FP8E8M0: return std::string("!pto.f8E8M0");
    // Packed E2M1, two to a byte: upstream pypto's dialect type (PTOAS a56b18c has none).
    case DataType::FP4: return std::string("!pto.f4E2M1x2");
    default: break;
  }
  return pypto::unexpected(fmt::format("element type {} is not supported by backend-ptoas", ir::DataTypeName(dtype)));
}

std::string_view TileLoc(ir::MemorySpace space) {
  switch (space) {
    case ir::MemorySpace::DDR: return "gm";
    case ir::MemorySpace::Vec: return "vec";
    case ir::MemorySpace::Mat: return "mat";
    case ir::MemorySpace::Left: return "left";
    case ir::MemorySpace::Right: return "right";
    case ir::MemorySpace::Acc: return "acc";
    case ir::MemorySpace::Bias: return "bias";
    // Both MX scale buffers are ptoas's one `scaling` space; their layouts tell them apart.
    case ir::MemorySpace::LeftScale:
    case ir::MemorySpace::RightScale: return "scaling";
    case ir::MemorySpace::ScalarLocal: break;
  }
  return "?";
}

std::string PtrType(std::string_view element) { return fmt::format("!pto.ptr<{}>", element); }

std::string TensorViewType(size_t rank, std::string_view element) {
  std::string dims;
  for (size_t i = 0; i < rank; ++i) dims += "?x";
  return fmt::format("!pto.tensor_view<{}{}>", dims, element);
}

std::string PartitionViewType(const ir::Shape& dims, std::string_view element) {
  return fmt::format("!pto.partition_tensor_view<{}x{}>", fmt::join(dims, "x"), element);
}

TileExtent TileRowsCols(const ir::TileType& tile) {
  const auto& shape = tile.shape();
  if (shape.size() == 1) return {1, shape[0]};
  // A Vec tile of packed FP4 counts its pairs along the row, as ptoas's f4E2M1x2 elements do.
  if (shape.size() == 2 && tile.dtype() == ir::DataType::FP4 && tile.memory_space() == ir::MemorySpace::Vec)
    return {shape[0], shape[1] / 2};
  if (shape.size() == 2) return {shape[0], shape[1]};
  // A batch of matrices ([B, R, C], only where the planner allows one): the rows of all of them, as a
  // row-major tile lays it out.
  if (shape.size() > 2) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    return {rows, shape.back()};
  }
  return {};
}

TileLayout ImplicitTileLayout(ir::MemorySpace space, TileExtent extent) {
  const std::string_view by_shape = extent.cols == 1 && extent.rows > 1 ? "col_major" : "row_major";
  switch (space) {
    case ir::MemorySpace::Mat:
    case ir::MemorySpace::Left: return {"col_major", "row_major", 512};
    case ir::MemorySpace::Right: return {by_shape, "col_major", 512};
    case ir::MemorySpace::Acc: return {"col_major", "row_major", 1024};
    case ir::MemorySpace::LeftScale: return MxScaleLayout(ir::TensorLayout::MX_A_ZZ);
    case ir::MemorySpace::RightScale: return MxScaleLayout(ir::TensorLayout::MX_B_NN);
    default: break;
  }
  return {by_shape, "none_box", 512};
}

TileLayout MxScaleLayout(ir::TensorLayout layout) {
  if (layout == ir::TensorLayout::MX_B_NN) return {"col_major", "col_major", 32};
  return {"row_major", "row_major", 32};
}

bool IsColumnVector(const ir::TileType& tile) {
  return tile.memory_space() == ir::MemorySpace::Vec &&
         ImplicitTileLayout(tile.memory_space(), TileRowsCols(tile)).blayout == "col_major";
}

bool IsColumnVectorTensor(const ir::TensorType& tensor) {
  return tensor.shape().size() >= 2 && tensor.shape().back() == 1;
}

std::vector<int64_t> RowMajorStrides(const ir::Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::string TileBufType(ir::MemorySpace space, std::string_view element, TileExtent extent, int pad) {
  return TileBufType(space, element, extent, ImplicitTileLayout(space, extent), pad);
}

std::string TileBufType(ir::MemorySpace space, std::string_view element, TileExtent extent, const TileLayout& layout,
                        int pad) {
  return fmt::format(
      "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout={}, slayout={}, fractal={}, "
      "pad={}>",
      TileLoc(space), element, extent.rows, extent.cols, layout.blayout, layout.slayout, layout.fractal, pad);
}

std::string TileBufType(const ir::TileType& tile, std::string_view element, int pad) {
  return TileBufType(tile.memory_space(), element, TileRowsCols(tile), pad);
}

pypto::expected<std::string, std::string> FloatLiteral(double value, ir::DataType dtype) {
  if (std::isfinite(value)) return fmt::format("{:.17e}", value);
  // MLIR reads a hexadecimal literal of a float type as its bit pattern.
  struct Bits {
    uint32_t positive_inf, sign, nan;
    int digits;
  };
  std::optional<Bits> bits;
  switch (dtype) {
    case ir::DataType::FP32: bits = Bits{0x7F800000u, 0x80000000u, 0x7FC00000u, 8}; break;
    case ir::DataType::FP16: bits = Bits{0x7C00u, 0x8000u, 0x7E00u, 4}; break;
    case ir::DataType::BF16: bits = Bits{0x7F80u, 0x8000u, 0x7FC0u, 4}; break;
    default: break;
  }
  if (!bits) {
    return pypto::unexpected(fmt::format("the constant {} has no {} spelling in backend-ptoas", value,
                                         ir::DataTypeName(dtype)));
  }
  uint32_t pattern = std::isnan(value) ? bits->nan : bits->positive_inf | (std::signbit(value) ? bits->sign : 0u);
  return fmt::format("0x{:0{}X}", pattern, bits->digits);
}

}  // namespace pypto::backend_ptoas
