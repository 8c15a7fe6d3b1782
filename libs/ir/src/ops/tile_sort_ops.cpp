// tile.* ops of the top-k family: sorting 32-element blocks into (value, index) pairs, merging
// sorted runs of pairs, and picking lanes out of a tile by a fixed mask pattern (which separates
// the values from the indices again).
//
// A sorted tile stores each element as a pair of lanes: the value, then the bits of its UINT32
// index, in the value's dtype. So sort32 doubles the last dimension, and `block_len` counts lanes
// (two per element).
#include <fmt/format.h>

#include "op_checks.h"
#include "pypto/ir/mask_pattern.h"

namespace pypto::ir {
namespace {

using namespace ops;

constexpr int64_t kSortBlock = 32;      // elements tsort32 sorts together
constexpr int64_t kMergeWays = 4;       // runs tmrgsort format 1 merges at once
constexpr int64_t kMergeLaneUnit = 64;  // block_len granularity of tmrgsort format 1
constexpr int64_t kMaxMergeRepeats = 255;

Result<MatrixTile> ExpectVecMatrix(const ExprPtr& expr, const std::string& what, const Span& span) {
  auto tile = ExpectMatrixTile(expr, what, span);
  if (tile && (*tile)->memory_space() != MemorySpace::Vec)
    return TypeError(fmt::format("{} must be a Vec tile, got {}", what, (*tile)->str()), span);
  return tile;
}

Result<bool> CheckSortDtype(DataType dtype, const std::string& op, const Span& span) {
  if (dtype == DataType::FP32 || dtype == DataType::FP16) return true;
  return TypeError(fmt::format("{} sorts FP32 or FP16 values, got {}", op, DataTypeName(dtype)), span);
}

Result<TypePtr> DeduceSort32(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto src = ExpectVecMatrix(args[0], "the values of pl.sort32", span);
  if (!src) return pypto::unexpected(src.error());
  auto idx = ExpectVecMatrix(args[1], "the indices of pl.sort32", span);
  if (!idx) return pypto::unexpected(idx.error());
  if (auto ok = CheckSortDtype((*src)->dtype(), "pl.sort32", span); !ok) return pypto::unexpected(ok.error());
  if ((*idx)->dtype() != DataType::UINT32) {
    return TypeError(fmt::format("pl.sort32 carries UINT32 indices, got {}", DataTypeName((*idx)->dtype())), span,
                     "create them with pl.arange(0, [1, N], dtype=pl.UINT32)");
  }
  if ((*idx)->shape() != (*src)->shape()) {
    return TypeError(fmt::format("the indices {} and the values {} of pl.sort32 differ in shape", (*idx)->str(),
                                 (*src)->str()),
                     span);
  }
  if (src->cols() % kSortBlock != 0) {
    return TypeError(fmt::format("pl.sort32 sorts blocks of {} elements; the row length {} is not a multiple of {}",
                                 kSortBlock, src->cols(), kSortBlock),
                     span);
  }
  return std::make_shared<TileType>(src->Reshaped(src->rows(), src->cols() * 2), (*src)->dtype(), MemorySpace::Vec);
}

Result<TypePtr> DeduceMergeSort(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto src = ExpectVecMatrix(args[0], "the source of pl.mrgsort", span);
  if (!src) return pypto::unexpected(src.error());
  if (auto ok = CheckSortDtype((*src)->dtype(), "pl.mrgsort", span); !ok) return pypto::unexpected(ok.error());
  const Shape& shape = (*src)->shape();
  if (src->rows() != 1) {
    return TypeError(fmt::format("pl.mrgsort merges the runs of a single row, got {}", (*src)->str()), span,
                     "sort one row at a time, e.g. in a pl.range loop over the rows");
  }
  const auto* block_len_type = args[1]->type()->As<ScalarType>();
  if (!block_len_type || !IsInteger(block_len_type->dtype()))
    return TypeError(fmt::format("block_len of pl.mrgsort must be an integer, got {}", args[1]->type()->str()), span);
  // A block_len computed in a loop (`1 << (6 + 2 * i)`) is checked when the merge runs.
  auto block_len = AsConstInt(args[1]);
  if (!block_len) return std::make_shared<TileType>(shape, (*src)->dtype(), MemorySpace::Vec);
  if (*block_len <= 0 || *block_len % kMergeLaneUnit != 0) {
    return TypeError(fmt::format("block_len of pl.mrgsort must be a positive multiple of {}, got {}", kMergeLaneUnit,
                                 *block_len),
                     span, "block_len counts lanes: a sorted element is two lanes (value, index)");
  }
  const int64_t merged = *block_len * kMergeWays;
  if (src->cols() % merged != 0 || src->cols() / merged > kMaxMergeRepeats) {
    return TypeError(fmt::format("pl.mrgsort merges {} runs of block_len={} at a time, so the row length must be a "
                                 "multiple of {} (at most {} of them), got {}",
                                 kMergeWays, *block_len, merged, kMaxMergeRepeats, src->cols()),
                     span);
  }
  return std::make_shared<TileType>(shape, (*src)->dtype(), MemorySpace::Vec);
}

// `tile.mrgsort_format2(src0, src1[, src2[, src3]], tmp)`: 2 to 4 sorted rows of pairs merged into
// one sorted row as long as all of them together. The scratch tile comes last, whatever the number of
// lists, and the result takes its shape (tmrgsort writes through it).
Result<TypePtr> DeduceMergeLists(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const size_t lists = args.size() - 1;
  DataType dtype = DataType::FP32;
  int64_t total_cols = 0;
  for (size_t i = 0; i < lists; ++i) {
    auto src = ExpectVecMatrix(args[i], fmt::format("sorted list {} of pl.mrgsort", i), span);
    if (!src) return pypto::unexpected(src.error());
    if (auto ok = CheckSortDtype((*src)->dtype(), "pl.mrgsort", span); !ok) return pypto::unexpected(ok.error());
    if (i == 0) dtype = (*src)->dtype();
    if ((*src)->dtype() != dtype) {
      return TypeError(fmt::format("the sorted lists of pl.mrgsort differ in dtype: list 0 is {}, list {} is {}",
                                   DataTypeName(dtype), i, DataTypeName((*src)->dtype())),
                       span);
    }
    if (src->rows() != 1) {
      return TypeError(fmt::format("pl.mrgsort merges single-row lists, got {} for list {}", (*src)->str(), i), span);
    }
    total_cols += src->cols();
  }
  auto tmp = ExpectVecMatrix(args[lists], "the scratch tile of pl.mrgsort", span);
  if (!tmp) return pypto::unexpected(tmp.error());
  if ((*tmp)->dtype() != dtype || tmp->rows() != 1 || tmp->cols() != total_cols) {
    return TypeError(fmt::format("the scratch tile of pl.mrgsort must be a [1, {}] {} tile (the lists together), "
                                 "got {}",
                                 total_cols, DataTypeName(dtype), (*tmp)->str()),
                     span, "leave tmp out and pl.mrgsort creates one");
  }
  return std::make_shared<TileType>((*tmp)->shape(), dtype, MemorySpace::Vec);
}

Result<TypePtr> DeduceGatherMask(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto src = ExpectVecMatrix(args[0], "the source of pl.gather", span);
  if (!src) return pypto::unexpected(src.error());
  const DataType dtype = (*src)->dtype();
  const int bits = DataTypeBits(dtype);
  if (bits != 16 && bits != 32) {
    return TypeError(fmt::format("pl.gather with a mask pattern selects 16- or 32-bit lanes, got {}",
                                 DataTypeName(dtype)),
                     span);
  }
  const int64_t pattern = *FindAttr<int64_t>(kwargs, "mask_pattern");
  if (!IsMaskPattern(pattern)) {
    return TypeError(fmt::format("mask_pattern must be one of pl.tile.MaskPattern (1 to 7), got {}", pattern), span);
  }
  const DataType out_dtype = FindAttr<DataType>(kwargs, "output_dtype").value_or(dtype);
  if (DataTypeBits(out_dtype) != bits) {
    return TypeError(fmt::format("output_dtype {} reinterprets the lanes, so it must be as wide as the source's {}",
                                 DataTypeName(out_dtype), DataTypeName(dtype)),
                     span);
  }
  const MaskLanes lanes = LanesOf(pattern);
  if (src->cols() % lanes.group != 0) {
    return TypeError(fmt::format("mask pattern {} keeps one lane of every {}; the row length {} is not a multiple "
                                 "of {}",
                                 MaskPatternName(pattern), lanes.group, src->cols(), lanes.group),
                     span);
  }
  return std::make_shared<TileType>(src->Reshaped(src->rows(), src->cols() / lanes.group), out_dtype,
                                    MemorySpace::Vec);
}

}  // namespace

void RegisterTileSortOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.sort32",
                          .description = "sort every 32-element block of each row descending, as (value, index) pairs",
                          .params = {Arg("src"), Arg("idx")},
                          .deduce_type = DeduceSort32,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.mrgsort_format1",
                          .description = "merge each 4 consecutive sorted runs of block_len lanes of one row",
                          .params = {Arg("src"), Arg("block_len")},
                          .deduce_type = DeduceMergeSort,
                          .affinity = CoreAffinity::Vector});
  // The scratch tile is the last argument: the third of a 2-way merge, the fifth of a 4-way one.
  registry.Register(OpDef{.name = "tile.mrgsort_format2",
                          .description = "merge 2 to 4 sorted single-row lists into one, through a scratch tile",
                          .params = {Arg("src0"), Arg("src1"), Arg("src2_or_tmp"), OptionalArg("src3_or_tmp"),
                                     OptionalArg("tmp"), OptionalAttr("exhausted", OpAttrKind::Bool)},
                          .deduce_type = DeduceMergeLists,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.gather_mask",
                          .description = "keep the lanes of each row that a mask pattern selects",
                          .params = {Arg("src"), Attr("mask_pattern", OpAttrKind::Int),
                                     OptionalAttr("output_dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceGatherMask,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
