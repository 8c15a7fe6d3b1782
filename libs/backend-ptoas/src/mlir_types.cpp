#include "mlir_types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
    case ir::MemorySpace::ScalarLocal: break;
  }
  return "?";
}

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
  if (shape.size() == 2) return {shape[0], shape[1]};
  return {};
}

std::string TileBufType(const ir::TileType& tile, std::string_view element) {
  TileExtent extent = TileRowsCols(tile);
  return fmt::format(
      "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout=row_major, slayout=none_box, "
      "fractal=512, pad=0>",
      TileLoc(tile.memory_space()), element, extent.rows, extent.cols);
}

}  // namespace pypto::backend_ptoas
