#include "sim_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"
#include "block_race.h"
#include "comm_exec.h"
#include "compute_exec.h"
#include "extern_guard.h"
#include "kernel_failure.h"
#include "kernels/convert.h"
#include "progress_mark.h"
#include "tile_ops.h"

namespace pypto::sim {

namespace {

using Result = pypto::expected<void, rt::FatalError>;

std::string TensorName(const DecodedKernel& kernel, uint32_t slot) {
  for (const auto& param : kernel.params)
    if (param.is_tensor && param.slot == slot) return fmt::format("tensor '{}' (args[{}])", param.name, slot);
  return fmt::format("args[{}]", slot);
}

// A region walk after merging dimensions that are contiguous with each other: dims[0] is the
// innermost, and the tile side is always dense row-major in the same order.
struct Walk {
  int count = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
};

Walk MakeWalk(const Instr& instr, const rt::ChipTensor& tensor) {
  Walk walk;
  for (int d = instr.rank - 1; d >= 0; --d) {
    const int64_t extent = instr.shape[d];
    const int64_t stride = tensor.strides[d];
    if (extent == 1) continue;
    if (walk.count > 0 && stride == walk.stride[walk.count - 1] * walk.shape[walk.count - 1]) {
      walk.shape[walk.count - 1] *= extent;
    } else {
      walk.shape[walk.count] = extent;
      walk.stride[walk.count] = stride;
      ++walk.count;
    }
  }
  if (walk.count == 0) {
    walk.count = 1;
    walk.shape[0] = 1;
    walk.stride[0] = 1;
  }
  return walk;
}

template <size_t kBytes>
void CopyStrided(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t count) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * dst_step, src + i * src_step, kBytes);
}

// The log of the block this thread runs, if this access is one that can race (block_race.h): a plain
// store, or a load from a buffer the kernel stores into.
BlockAccesses* RaceLog(const Instr& instr, bool load) {
  BlockAccesses* log = t_block_accesses;
  if (!log || instr.atomic_add || (load && !log->LogsReadsOf(instr.tensor_slot))) return nullptr;
  return log;
}

// Copies `count` elements between a strided global row and a dense tile row.
void CopyRow(bool load, std::byte* global, int64_t global_step, std::byte* tile, int64_t count, size_t elem) {
  if (global_step == static_cast<int64_t>(elem)) {
    if (load) std::memcpy(tile, global, static_cast<size_t>(count) * elem);
    else std::memcpy(global, tile, static_cast<size_t>(count) * elem);
    return;
  }
  const int64_t tile_step = static_cast<int64_t>(elem);
  std::byte* dst = load ? tile : global;
  const std::byte* src = load ? global : tile;
  const int64_t dst_step = load ? tile_step : global_step;
  const int64_t src_step = load ? global_step : tile_step;
  switch (elem) {
    case 1: return CopyStrided<1>(dst, dst_step, src, src_step, count);
    case 2: return CopyStrided<2>(dst, dst_step, src, src_step, count);
    case 4: return CopyStrided<4>(dst, dst_step, src, src_step, count);
    case 8: return CopyStrided<8>(dst, dst_step, src, src_step, count);
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * dst_step, src + i * src_step, elem);
  }
}

// An atomic-add store of one row: global[i] += tile[i]. Blocks of one launch run side by side and
// may add into the same elements (a split-K matmul's partial sums), so each element is added with an
// atomic read-modify-write, as the store unit's own adder is: a plain load, add and store loses one
// block's partial when two interleave. Integer elements are added unsigned: the sum wraps modulo
// 2^bits, as the hardware's does, where a signed overflow would be undefined.
template <typename T>
void AddRow(std::byte* global, int64_t global_step, const std::byte* tile, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    T part;
    std::memcpy(&part, tile + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    std::atomic_ref<T>(*reinterpret_cast<T*>(global + i * global_step)).fetch_add(part, std::memory_order_relaxed);
  }
}

// FP16 and BF16 elements: each sum is formed in FP32 and rounded to nearest even once, as the
// store unit's half-precision adder does; a compare-and-swap makes the element's update atomic.
void AddHalfRow(ElemType type, std::byte* global, int64_t global_step, const std::byte* tile, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    float part;
    Convert(type, ElemType::F32, &part, tile + i * 2, 1, RoundMode::None);
    std::atomic_ref<uint16_t> element(*reinterpret_cast<uint16_t*>(global + i * global_step));
    uint16_t old_bits = element.load(std::memory_order_relaxed);
    uint16_t new_bits;
    do {
      float sum;
      Convert(type, ElemType::F32, &sum, &old_bits, 1, RoundMode::None);
      sum += part;
      Convert(ElemType::F32, type, &new_bits, &sum, 1, RoundMode::Rint);
    } while (!element.compare_exchange_weak(old_bits, new_bits, std::memory_order_relaxed));
  }
}

void AtomicAddRow(ir::DataType dtype, std::byte* global, int64_t global_step, const std::byte* tile, int64_t count) {
  switch (dtype) {
    case ir::DataType::FP32: return AddRow<float>(global, global_step, tile, count);
    case ir::DataType::FP16: return AddHalfRow(ElemType::F16, global, global_step, tile, count);
    case ir::DataType::BF16: return AddHalfRow(ElemType::BF16, global, global_step, tile, count);
    case ir::DataType::INT16: return AddRow<uint16_t>(global, global_step, tile, count);
    case ir::DataType::INT8: return AddRow<uint8_t>(global, global_step, tile, count);
    default: return AddRow<uint32_t>(global, global_step, tile, count);
  }
}

// The tile a store writes out: its own bytes, or, for an FP32 accumulator stored into an FP16/BF16
// tensor, its elements rounded to that type (the fixpipe's conversion on the way out of L0C).
const std::byte* StoredTile(const Instr& instr, const std::byte* tile) {
  if (!instr.narrow_to_half) return tile;
  thread_local std::vector<uint16_t> narrowed;
  const auto n = static_cast<size_t>(instr.src0.bytes) / sizeof(float);
  narrowed.resize(n);
  Convert(ElemType::F32, instr.elem_dtype == ir::DataType::BF16 ? ElemType::BF16 : ElemType::F16, narrowed.data(),
          tile, n, RoundMode::Rint);
  return reinterpret_cast<const std::byte*>(narrowed.data());
}

// The address of the region's first element in global memory, after checking the descriptor
// against the instruction and the region against the view (`write` names the access in errors).
// `offsets` is the region origin: the instruction's own constants, or those with the computed
// offsets filled in.
pypto::expected<std::byte*, rt::FatalError> RegionBase(const DecodedKernel& kernel, size_t index, const int64_t* args,
                                                       const int64_t* offsets, bool write, const int64_t* extent) {
  const Instr& instr = kernel.code[index];
  const bool load = !write;
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  if (!tensor) {
    return KernelFailure(kernel, index, fmt::format("{} is a null descriptor", TensorName(kernel, instr.tensor_slot)));
  }
  if (tensor->ndims != instr.rank) {
    return KernelFailure(kernel, index,
                         fmt::format("{} has {} dimensions but the kernel indexes it with {}",
                                     TensorName(kernel, instr.tensor_slot), tensor->ndims, instr.rank));
  }
  if (tensor->dtype != instr.rt_dtype) {
    return KernelFailure(kernel, index,
                         fmt::format("{} has runtime dtype {} but the kernel expects {}",
                                     TensorName(kernel, instr.tensor_slot), tensor->dtype, instr.rt_dtype));
  }
  // The region must stay inside the view the task was given (its dependencies cover only that).
  // Constant offsets are never negative (the decoder checked); computed ones may be anything.
  for (int d = 0; d < instr.rank; ++d) {
    if (offsets[d] < 0 || offsets[d] > static_cast<int64_t>(tensor->shapes[d]) - extent[d]) {
      std::vector<std::string> region;
      for (int k = 0; k < instr.rank; ++k) {
        int64_t end = 0;
        region.push_back(__builtin_add_overflow(offsets[k], extent[k], &end)
                             ? fmt::format("{}:{}+{}", offsets[k], offsets[k], extent[k])
                             : fmt::format("{}:{}", offsets[k], end));
      }
      return KernelFailure(kernel, index,
                           fmt::format("out-of-bounds global {}: region [{}] is outside the view of {} with shape [{}]",
                                       load ? "read" : "write", fmt::join(region, ", "),
                                       TensorName(kernel, instr.tensor_slot),
                                       fmt::join(std::span(tensor->shapes, tensor->ndims), ", ")));
    }
  }
  // Exact byte range touched (strides are non-negative): first and one past the last element.
  const size_t elem = instr.elem_bytes;
  unsigned __int128 first = tensor->start_offset;
  unsigned __int128 last = 0;
  for (int d = 0; d < instr.rank; ++d) {
    first += static_cast<unsigned __int128>(offsets[d]) * tensor->strides[d];
    last += static_cast<unsigned __int128>(extent[d] - 1) * tensor->strides[d];
  }
  last += first;
  const unsigned __int128 begin_byte = first * elem;
  const unsigned __int128 end_byte = (last + 1) * elem;
  if (tensor->buffer_addr == 0 || end_byte > tensor->buffer_size) {
    return KernelFailure(kernel, index,
                         fmt::format("out-of-bounds global {} of {}: bytes [{}, {}) from its buffer start 0x{:x} "
                                     "(start_offset {}, strides [{}]), but the buffer holds {} bytes",
                                     load ? "read" : "write", TensorName(kernel, instr.tensor_slot),
                                     static_cast<uint64_t>(begin_byte), static_cast<uint64_t>(end_byte),
                                     tensor->buffer_addr, tensor->start_offset,
                                     fmt::join(std::span(tensor->strides, tensor->ndims), ", "), tensor->buffer_size));
  }

  return reinterpret_cast<std::byte*>(tensor->buffer_addr) + static_cast<size_t>(begin_byte);
}

// pl.mscatter: element i of the tile src0 written at the flat index src1[i] of the tensor's view.
Result ScatterStore(const DecodedKernel& kernel, size_t index, const int64_t* args, CoreMemory& memory) {
  const Instr& instr = kernel.code[index];
  const std::byte* src = memory.Access(instr.src0.space, instr.src0.byte_offset, instr.src0.bytes);
  const std::byte* idx = memory.Access(instr.src1.space, instr.src1.byte_offset, instr.src1.bytes);
  if (!src || !idx) return KernelFailure(kernel, index, "an operand lies outside its buffer on this core");
  const int64_t origin[kMaxDims] = {};
  auto base = RegionBase(kernel, index, args, origin, true, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  int64_t elements = 1;
  for (int d = 0; d < instr.rank; ++d) elements *= instr.shape[d];
  const size_t elem = instr.elem_bytes;
  BlockAccesses* const log = RaceLog(instr, /*load=*/false);  // each element where its index puts it
  for (int64_t i = 0; i < instr.num_elements; ++i) {
    int32_t at = 0;
    std::memcpy(&at, idx + i * 4, 4);
    if (at < 0 || at >= elements)
      return KernelFailure(kernel, index,
                           fmt::format("the index {} at position {} of the indices is outside the {} elements of {}",
                                       at, i, elements, TensorName(kernel, instr.tensor_slot)));
    int64_t offset = 0, rest = at;
    for (int d = instr.rank - 1; d >= 0; --d) {
      offset += (rest % instr.shape[d]) * static_cast<int64_t>(tensor->strides[d]);
      rest /= instr.shape[d];
    }
    std::memcpy(*base + offset * static_cast<int64_t>(elem), src + i * static_cast<int64_t>(elem), elem);
    if (log) log->Write(*base + offset * static_cast<int64_t>(elem), static_cast<int64_t>(elem), 1, elem,
                        src + i * static_cast<int64_t>(elem));
  }
  return {};
}

// Element `at` (row-major) of an INT32 tensor view, checked against the view and its buffer.
pypto::expected<int64_t, rt::FatalError> ReadTableEntry(const DecodedKernel& kernel, size_t index, const int64_t* args,
                                                       uint32_t slot, int64_t at) {
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[slot]);
  if (!tensor || tensor->buffer_addr == 0)
    return KernelFailure(kernel, index, fmt::format("{} is a null descriptor", TensorName(kernel, slot)));
  int64_t elements = 1;
  for (uint32_t d = 0; d < tensor->ndims; ++d) elements *= static_cast<int64_t>(tensor->shapes[d]);
  if (at < 0 || at >= elements)
    return KernelFailure(kernel, index,
                         fmt::format("entry {} is outside {} of {} elements", at, TensorName(kernel, slot), elements));
  uint64_t offset = tensor->start_offset;
  int64_t rest = at;
  for (int d = static_cast<int>(tensor->ndims) - 1; d >= 0; --d) {
    offset += static_cast<uint64_t>(rest % static_cast<int64_t>(tensor->shapes[d])) * tensor->strides[d];
    rest /= static_cast<int64_t>(tensor->shapes[d]);
  }
  if ((offset + 1) * 4 > tensor->buffer_size)
    return KernelFailure(kernel, index,
                         fmt::format("entry {} of {} is outside its buffer", at, TensorName(kernel, slot)));
  int32_t value = 0;
  const std::byte* entry = reinterpret_cast<const std::byte*>(tensor->buffer_addr) + offset * 4;
  std::memcpy(&value, entry, 4);
  // An index table another block of the launch writes races with this read (block_race.h).
  if (BlockAccesses* log = t_block_accesses; log && log->LogsReadsOf(slot)) log->Read(entry, 4, 1, 4);
  return value;
}

// How many indices a paged gather's [n] or [1, n] table holds at run time (n), checked against the
// max_indices rows of its tile.
pypto::expected<int64_t, rt::FatalError> PagedIndexCount(const DecodedKernel& kernel, size_t index,
                                                         const int64_t* args) {
  const Instr::PagedRows& paged = kernel.code[index].paged;
  const auto* indices = reinterpret_cast<const rt::ChipTensor*>(args[paged.indices]);
  if (!indices || indices->buffer_addr == 0)
    return KernelFailure(kernel, index, fmt::format("{} is a null descriptor", TensorName(kernel, paged.indices)));
  const int64_t count = indices->ndims == 0 ? 1 : static_cast<int64_t>(indices->shapes[indices->ndims - 1]);
  if (count > paged.rows)
    return KernelFailure(kernel, index,
                         fmt::format("{} holds {} indices, more than the max_indices={} rows of the tile; raise "
                                     "max_indices or pass fewer indices",
                                     TensorName(kernel, paged.indices), count, paged.rows));
  return count;
}

// pl.paged_gather: each row of the tile read from the pool row its index and block table pick, for
// as many rows as there are indices (upstream's loop runs to the indices' length); the rows past
// them keep what the tile held, which upstream leaves undefined.
Result PagedGather(const DecodedKernel& kernel, size_t index, const int64_t* args, CoreMemory& memory) {
  const Instr& instr = kernel.code[index];
  const Instr::PagedRows& paged = instr.paged;
  auto count = PagedIndexCount(kernel, index, args);
  if (!count) return pypto::unexpected(std::move(count.error()));
  std::byte* tile = memory.Access(instr.dst.space, instr.dst.byte_offset, instr.dst.bytes);
  if (!tile) return KernelFailure(kernel, index, "the tile lies outside its buffer on this core");
  const int64_t origin[kMaxDims] = {};
  auto base = RegionBase(kernel, index, args, origin, false, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const auto* pool = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  const int64_t elem = instr.elem_bytes;
  BlockAccesses* const log = RaceLog(instr, /*load=*/true);  // each pool row where its index puts it
  for (int64_t i = 0; i < *count; ++i) {
    auto logical = ReadTableEntry(kernel, index, args, paged.indices, i);
    if (!logical) return pypto::unexpected(std::move(logical.error()));
    if (*logical < 0)
      return KernelFailure(kernel, index, fmt::format("the logical row {} at position {} is negative", *logical, i));
    auto block = ReadTableEntry(kernel, index, args, paged.table, *logical / paged.block_size);
    if (!block) return pypto::unexpected(std::move(block.error()));
    const int64_t row = *block * paged.block_size + *logical % paged.block_size;
    if (row < 0 || row >= instr.shape[0])
      return KernelFailure(kernel, index,
                           fmt::format("the logical row {} maps to pool row {}, outside the {} rows of {}", *logical,
                                       row, instr.shape[0], TensorName(kernel, instr.tensor_slot)));
    for (int64_t c = 0; c < paged.cols; ++c) {
      const auto offset = static_cast<int64_t>(row * static_cast<int64_t>(pool->strides[0]) +
                                               (paged.col_off + c) * static_cast<int64_t>(pool->strides[1]));
      std::memcpy(tile + (i * paged.cols + c) * elem, *base + offset * elem, static_cast<size_t>(elem));
    }
    if (log && paged.cols > 0) {
      const auto first = static_cast<int64_t>(row * static_cast<int64_t>(pool->strides[0]) +
                                              paged.col_off * static_cast<int64_t>(pool->strides[1]));
      log->Read(*base + first * elem, static_cast<int64_t>(pool->strides[1]) * elem, paged.cols,
                static_cast<size_t>(elem));
    }
  }
  return {};
}

// pl.mgather: each element of the tile's valid region read from the row or element of the tensor's
// view its index picks (PickIndex: unsigned indices, gather_oob past the end), or zero.
Result MemGather(const DecodedKernel& kernel, size_t index, const int64_t* args, CoreMemory& memory,
                 const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const Instr::MemGather& gather = instr.mgather;
  std::byte* tile = memory.Access(instr.dst.space, instr.dst.byte_offset, instr.dst.bytes);
  const std::byte* indices =
      gather.indices_in_tensor ? nullptr : memory.Access(instr.src0.space, instr.src0.byte_offset, instr.src0.bytes);
  if (!tile || (!gather.indices_in_tensor && !indices))
    return KernelFailure(kernel, index, "an operand lies outside its buffer on this core");
  int64_t rows = gather.out_rows, cols = gather.out_cols;
  if (instr.partial) {
    auto read = [&](const Operand& operand) { return operand.is_reg() ? regs[operand.reg] : operand.imm; };
    rows = read(instr.valid.rows);
    cols = read(instr.valid.cols);
    if (rows < 0 || cols < 0 || rows > gather.out_rows || cols > gather.out_cols)
      return KernelFailure(kernel, index,
                           fmt::format("the valid region [{}, {}] is outside the [{}, {}] tile", rows, cols,
                                       gather.out_rows, gather.out_cols));
  }
  const int64_t origin[kMaxDims] = {};
  auto base = RegionBase(kernel, index, args, origin, false, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  int64_t elements = 1;
  for (int d = 0; d < instr.rank; ++d) elements *= instr.shape[d];
  const int64_t row_len = instr.shape[instr.rank - 1];
  const auto count = static_cast<uint64_t>(gather.rows ? elements / row_len : elements);
  auto element_offset = [&](uint64_t flat) {  // of element `flat` (row-major) of the view, in elements
    int64_t offset = 0;
    auto rest = static_cast<int64_t>(flat);
    for (int d = instr.rank - 1; d >= 0; --d) {
      offset += (rest % instr.shape[d]) * static_cast<int64_t>(tensor->strides[d]);
      rest /= instr.shape[d];
    }
    return offset;
  };
  const size_t elem = instr.elem_bytes;
  BlockAccesses* const log = RaceLog(instr, /*load=*/true);  // each element where its index puts it
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t position = gather.rows ? r : r * gather.index_cols + c;
      int32_t value = 0;
      if (gather.indices_in_tensor) {
        auto entry = ReadTableEntry(kernel, index, args, gather.indices, position);
        if (!entry) return pypto::unexpected(std::move(entry.error()));
        value = static_cast<int32_t>(*entry);
      } else {
        std::memcpy(&value, indices + position * 4, 4);
      }
      auto picked = PickIndex(value, count, gather.oob);
      if (!picked)
        return KernelFailure(kernel, index,
                             fmt::format("the index {} at position {} of the indices is past the {} {} of {} (with "
                                         "gather_oob=\"undefined\" nothing defines what it reads)",
                                         static_cast<uint32_t>(value), position, count,
                                         gather.rows ? "rows" : "elements", TensorName(kernel, instr.tensor_slot)));
      std::byte* to = tile + (r * gather.out_cols + c) * static_cast<int64_t>(elem);
      if (picked->zero) {
        std::memset(to, 0, elem);
        continue;
      }
      const uint64_t flat = gather.rows ? picked->at * static_cast<uint64_t>(row_len) + static_cast<uint64_t>(c)
                                        : picked->at;
      const std::byte* from = *base + element_offset(flat) * static_cast<int64_t>(elem);
      std::memcpy(to, from, elem);
      if (log) log->Read(from, static_cast<int64_t>(elem), 1, elem);
    }
  }
  return {};
}

Result Transfer(const DecodedKernel& kernel, size_t index, const int64_t* args, CoreMemory& memory,
                const int64_t* offsets, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const bool load = instr.op == Opcode::Load;
  const TileRef& ref = load ? instr.dst : instr.src0;
  const int64_t at = ref.At(regs);
  std::byte* tile = memory.Access(ref.space, at, ref.bytes);
  if (!tile) {
    return KernelFailure(kernel, index,
                         fmt::format("tile bytes [{}, {}) are outside the core's {}-byte {} buffer", at,
                                     at + ref.bytes, memory.capacity(ref.space),
                                     ir::MemorySpaceName(ref.space)));
  }
  if (!load) tile = const_cast<std::byte*>(StoredTile(instr, tile));  // a store only reads it
  auto base = RegionBase(kernel, index, args, offsets, !load, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  const size_t elem = instr.elem_bytes;
  const Walk walk = MakeWalk(instr, *tensor);
  const int64_t row = walk.shape[0];
  const int64_t row_bytes = row * static_cast<int64_t>(elem);
  const int64_t row_step = walk.stride[0] * static_cast<int64_t>(elem);
  int64_t rows = 1;
  for (int d = 1; d < walk.count; ++d) rows *= walk.shape[d];
  int64_t counter[kMaxDims] = {};
  int64_t offset = 0;  // element offset of the current row from `base`
  BlockAccesses* const log = RaceLog(instr, load);
  for (int64_t r = 0; r < rows; ++r) {
    std::byte* global = *base + offset * static_cast<int64_t>(elem);
    if (log && load) log->Read(global, row_step, row, elem);
    else if (log) log->Write(global, row_step, row, elem, tile + r * row_bytes);
    if (!instr.atomic_add) CopyRow(load, global, row_step, tile + r * row_bytes, row, elem);
    else AtomicAddRow(instr.elem_dtype, global, row_step, tile + r * row_bytes, row);
    for (int d = 1; d < walk.count; ++d) {
      if (++counter[d] < walk.shape[d]) {
        offset += walk.stride[d];
        break;
      }
      offset -= (walk.shape[d] - 1) * walk.stride[d];
      counter[d] = 0;
    }
  }
  return {};
}

// A load or store of a tile's valid region only: its [valid_rows, valid_cols] corner moves, row by
// row, and the rest of the tile (on a load) keeps what it held. The region's leading dimensions,
// if any, are 1 (the decoder narrows 1-D and 2-D tiles only); a 1-D tile is one row.
Result TransferValid(const DecodedKernel& kernel, size_t index, const int64_t* args, CoreMemory& memory,
                     const int64_t* offsets, const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const bool load = instr.op == Opcode::Load;
  const int last = instr.rank - 1;
  const int row_dim = last - 1;  // -1: a 1-D tile
  const int64_t tile_rows = row_dim >= 0 ? instr.shape[row_dim] : 1;
  auto read = [&](const Operand& operand) { return operand.is_reg() ? regs[operand.reg] : operand.imm; };
  const int64_t rows = read(instr.valid.rows), cols = read(instr.valid.cols);
  if (rows < 0 || cols < 0 || rows > tile_rows || cols > instr.shape[last])
    return KernelFailure(kernel, index,
                         fmt::format("the valid region [{}, {}] is outside the [{}, {}] tile", rows, cols, tile_rows,
                                     instr.shape[last]));
  if (rows == 0 || cols == 0) return {};
  const TileRef& ref = load ? instr.dst : instr.src0;
  std::byte* tile = memory.Access(ref.space, ref.At(regs), ref.bytes);
  if (!tile) return KernelFailure(kernel, index, "the tile lies outside its buffer on this core");
  if (!load) tile = const_cast<std::byte*>(StoredTile(instr, tile));  // a store only reads it
  std::array<int64_t, kMaxDims> extent = instr.shape;
  if (row_dim >= 0) extent[row_dim] = rows;
  extent[last] = cols;
  auto base = RegionBase(kernel, index, args, offsets, !load, extent.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  const auto elem = static_cast<int64_t>(instr.elem_bytes);
  const int64_t tile_row_bytes = instr.shape[last] * elem;
  const auto row_stride = row_dim >= 0 ? static_cast<int64_t>(tensor->strides[row_dim]) * elem : 0;
  const auto col_step = static_cast<int64_t>(tensor->strides[last]) * elem;
  BlockAccesses* const log = RaceLog(instr, load);
  for (int64_t r = 0; r < rows; ++r) {
    std::byte* global = *base + r * row_stride;
    std::byte* local = tile + r * tile_row_bytes;
    if (log && load) log->Read(global, col_step, cols, static_cast<size_t>(elem));
    else if (log) log->Write(global, col_step, cols, static_cast<size_t>(elem), local);
    if (!instr.atomic_add) CopyRow(load, global, col_step, local, cols, static_cast<size_t>(elem));
    else AtomicAddRow(instr.elem_dtype, global, col_step, local, cols);
  }
  return {};
}

// `s = pl.read(t, [i, j])`: one element into a register, an integer sign- or zero-extended to 64
// bits, an FP32 as its bit pattern (what tile-scalar ops read), an FP16 or BF16 widened to FP32 first.
Result ReadScalar(const DecodedKernel& kernel, size_t index, const int64_t* args, const int64_t* offsets,
                  int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto base = RegionBase(kernel, index, args, offsets, /*write=*/false, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  if (BlockAccesses* log = RaceLog(instr, /*load=*/true)) log->Read(*base, instr.elem_bytes, 1, instr.elem_bytes);
  if (instr.widen == Widen::Half || instr.widen == Widen::BFloat) {
    float value = 0.0f;
    Convert(instr.widen == Widen::Half ? ElemType::F16 : ElemType::BF16, ElemType::F32, &value, *base, 1,
            RoundMode::None);
    uint32_t fp32_bits = 0;
    std::memcpy(&fp32_bits, &value, sizeof fp32_bits);
    regs[instr.scalar_dst] = static_cast<int64_t>(fp32_bits);
    return {};
  }
  uint64_t bits = 0;
  std::memcpy(&bits, *base, instr.elem_bytes);  // little-endian: the low bytes
  const int shift = 64 - 8 * instr.elem_bytes;
  const bool sign_extend = instr.kind == ElemKind::I32;  // signed integers (see DecodeRead)
  regs[instr.scalar_dst] = sign_extend && shift > 0 ? static_cast<int64_t>(bits << shift) >> shift
                                                    : static_cast<int64_t>(bits);
  return {};
}

// The bit pattern pl.write stores: an FP32 element from an FP32-bits register or a constant, an
// integer element from an integer register or a constant (its low elem_bytes bytes are kept).
uint64_t WrittenBits(const Instr& instr, const int64_t* regs) {
  const ScalarOperand& value = instr.value;
  if (instr.kind == ElemKind::F32) {
    if (value.source == ScalarOperand::Source::Fp32BitsReg) return static_cast<uint32_t>(regs[value.reg]);
    const float f = value.source == ScalarOperand::Source::IntReg ? static_cast<float>(regs[value.reg])
                                                                  : static_cast<float>(value.imm);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
  }
  return static_cast<uint64_t>(value.source == ScalarOperand::Source::Imm ? static_cast<int64_t>(value.imm)
                                                                          : regs[value.reg]);
}

// `pl.write(t, [i, j], v)`: one element of a tensor argument.
Result WriteScalar(const DecodedKernel& kernel, size_t index, const int64_t* args, const int64_t* offsets,
                   const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto base = RegionBase(kernel, index, args, offsets, /*write=*/true, instr.shape.data());
  if (!base) return pypto::unexpected(std::move(base.error()));
  const uint64_t bits = WrittenBits(instr, regs);
  if (BlockAccesses* log = RaceLog(instr, /*load=*/false))  // little-endian: the low bytes
    log->Write(*base, instr.elem_bytes, 1, instr.elem_bytes, reinterpret_cast<const std::byte*>(&bits));
  std::memcpy(*base, &bits, instr.elem_bytes);  // little-endian: the low bytes
  return {};
}

// The address of one element of a tile, after checking its indices against the tile's shape.
pypto::expected<std::byte*, rt::FatalError> TileElement(const DecodedKernel& kernel, size_t index, CoreMemory& memory,
                                                        const TileRef& ref, const int64_t* indices) {
  const Instr& instr = kernel.code[index];
  int64_t flat = 0;
  for (int d = 0; d < instr.rank; ++d) {
    if (indices[d] < 0 || indices[d] >= instr.shape[d])
      return KernelFailure(kernel, index,
                           fmt::format("element [{}] is outside the tile of shape [{}]",
                                       fmt::join(std::span(indices, instr.rank), ", "),
                                       fmt::join(std::span(instr.shape.data(), instr.rank), ", ")));
    flat = flat * instr.shape[d] + indices[d];
  }
  std::byte* tile = memory.Access(ref.space, ref.byte_offset, ref.bytes);
  if (!tile) return KernelFailure(kernel, index, "the tile lies outside its buffer on this core");
  return tile + flat * instr.elem_bytes;
}

// `s = pl.read(tile, [i, j])` / `pl.write(tile, [i, j], v)`: as ReadScalar/WriteScalar, on the core's
// buffer.
Result AccessTileElement(const DecodedKernel& kernel, size_t index, CoreMemory& memory, const int64_t* indices,
                         int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const bool write = instr.op == Opcode::WriteTile;
  auto element = TileElement(kernel, index, memory, write ? instr.dst : instr.src0, indices);
  if (!element) return pypto::unexpected(std::move(element.error()));
  if (write) {
    const uint64_t bits = WrittenBits(instr, regs);
    std::memcpy(*element, &bits, instr.elem_bytes);
    return {};
  }
  uint64_t bits = 0;
  std::memcpy(&bits, *element, instr.elem_bytes);
  const int shift = 64 - 8 * instr.elem_bytes;
  const bool sign_extend = instr.kind == ElemKind::I32;  // signed integers (see DecodeTileRead)
  regs[instr.scalar_dst] = sign_extend && shift > 0 ? static_cast<int64_t>(bits << shift) >> shift
                                                    : static_cast<int64_t>(bits);
  return {};
}

BinaryOp ToBinary(Opcode op) {
  switch (op) {
    case Opcode::Sub: return BinaryOp::Sub;
    case Opcode::Mul: return BinaryOp::Mul;
    case Opcode::Div: return BinaryOp::Div;
    default: return BinaryOp::Add;
  }
}

Result Elementwise(const DecodedKernel& kernel, size_t index, CoreMemory& memory) {
  const Instr& instr = kernel.code[index];
  std::byte* dst = memory.Access(instr.dst.space, instr.dst.byte_offset, instr.dst.bytes);
  const std::byte* a = memory.Access(instr.src0.space, instr.src0.byte_offset, instr.src0.bytes);
  const std::byte* b = memory.Access(instr.src1.space, instr.src1.byte_offset, instr.src1.bytes);
  if (!dst || !a || !b) {
    return KernelFailure(kernel, index, fmt::format("an operand lies outside the core's {}-byte {} buffer",
                                                    memory.capacity(instr.dst.space),
                                                    ir::MemorySpaceName(instr.dst.space)));
  }
  const auto n = static_cast<size_t>(instr.num_elements);
  if (instr.widen == Widen::Half || instr.widen == Widen::BFloat) {  // computed in FP32, each result rounded back
    std::vector<float> wide_a = WidenFloats(instr.widen, a, instr.src0.bytes);
    std::vector<float> wide_b = WidenFloats(instr.widen, b, instr.src1.bytes);
    std::vector<float> out(n);
    BinaryF32(ToBinary(instr.op), out.data(), wide_a.data(), wide_b.data(), n);
    NarrowFloats(instr.widen, dst, out);
    return {};
  }
  if (instr.widen != Widen::None) {  // 8- and 16-bit integers: computed in INT32, each result wrapped
    std::vector<int32_t> wide_a = WidenInts(instr.widen, a, instr.src0.bytes);
    std::vector<int32_t> wide_b = WidenInts(instr.widen, b, instr.src1.bytes);
    std::vector<int32_t> out(n);
    if (!BinaryI32(ToBinary(instr.op), out.data(), wide_a.data(), wide_b.data(), n))
      return KernelFailure(kernel, index, "integer division by zero");
    NarrowInts(instr.widen, dst, out);
    return {};
  }
  switch (instr.kind) {
    case ElemKind::F32:
      BinaryF32(ToBinary(instr.op), reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(a),
                reinterpret_cast<const float*>(b), n);
      return {};
    case ElemKind::I32:
      if (!BinaryI32(ToBinary(instr.op), reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int32_t*>(a),
                     reinterpret_cast<const int32_t*>(b), n)) {
        return KernelFailure(kernel, index, "integer division by zero");
      }
      return {};
    case ElemKind::Raw: break;
  }
  return KernelFailure(kernel, index, "element type without arithmetic (decoder bug)");
}

}  // namespace

SimExecutor::SimExecutor(const ir::SocSpec& soc, std::vector<DecodedKernel> kernels, int aic_cores, int aiv_cores)
    : kernels_(std::move(kernels)), memory_(soc, aic_cores, aiv_cores), aborts_(aic_cores + aiv_cores),
      aic_cores_(aic_cores) {
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const int32_t id = kernels_[i].func_id;
    if (id < 0) continue;
    if (static_cast<size_t>(id) >= by_func_id_.size()) by_func_id_.resize(static_cast<size_t>(id) + 1, -1);
    by_func_id_[static_cast<size_t>(id)] = static_cast<int32_t>(i);
  }
}

namespace {

inline int64_t Read(const Operand& operand, const int64_t* regs) {
  return operand.is_reg() ? regs[operand.reg] : operand.imm;
}

// The scalar code attached to instruction `index`.
Result RunScalars(const DecodedKernel& kernel, size_t index, int64_t* regs) {
  const Instr& instr = kernel.code[index];
  const ScalarInstr* code = kernel.scalar_code.data() + instr.scalar_begin;
  for (uint32_t s = 0; s < instr.scalar_count; ++s) {
    const ScalarInstr& op = code[s];
    if (op.op == ScalarOp::LoadIndexed) {  // guarded by a CheckIndex before it
      regs[op.dst] = regs[op.a.imm + Read(op.b, regs)];
      continue;
    }
    if (op.op == ScalarOp::StoreIndexed) {
      regs[op.dst + Read(op.a, regs)] = Read(op.b, regs);
      continue;
    }
    if (!EvalScalar(op.op, Read(op.a, regs), Read(op.b, regs), regs[op.dst])) [[unlikely]] {
      const std::string what =
          op.op == ScalarOp::CheckIndex ? fmt::format("index {} is outside the {} elements of the array",
                                                      Read(op.a, regs), Read(op.b, regs))
          : op.op == ScalarOp::Shl || op.op == ScalarOp::Shr ? std::string("a shift count outside [0, 64)")
                                                             : std::string("integer division by zero");
      return KernelFailure(kernel, index, fmt::format("{} in `{}`", what, kernel.scalar_text[instr.scalar_begin + s]));
    }
  }
  return {};
}

// The value of a scalar parameter from its 64-bit pattern: an FP16 / BF16 one (the pattern's low 16
// bits, as the runtime's to_u64 packs it) widened to FP32 bits.
int64_t ParamValue(const ScalarParamInit& init, int64_t bits) {
  if (init.widen == Widen::Half || init.widen == Widen::BFloat) {
    const auto half = static_cast<uint16_t>(static_cast<uint64_t>(bits));
    float value = 0.0f;
    Convert(init.widen == Widen::Half ? ElemType::F16 : ElemType::BF16, ElemType::F32, &value, &half, 1,
            RoundMode::None);
    return static_cast<int64_t>(std::bit_cast<uint32_t>(value));
  }
  if (init.bits >= 64) return bits;
  const int shift = 64 - init.bits;
  const uint64_t raw = static_cast<uint64_t>(bits) << shift;
  return init.is_signed ? static_cast<int64_t>(raw) >> shift : static_cast<int64_t>(raw >> shift);
}

// A block's identity from the contexts the runtime put after the arguments.
int64_t LaunchContextValue(LaunchValue value, const int64_t* args) {
  const auto* local = reinterpret_cast<const rt::LocalContext*>(args[rt::kLocalContextSlot]);
  const auto* global = reinterpret_cast<const rt::GlobalContext*>(args[rt::kGlobalContextSlot]);
  switch (value) {
    case LaunchValue::BlockIdx: return local ? local->block_idx : 0;
    case LaunchValue::BlockNum: return local ? local->block_num : 1;
    case LaunchValue::SubBlockIdx: return global ? global->sub_block_id : 0;
  }
  return 0;
}

// `pl.system.syncall`: every block of the launch must reach it before any passes. The runtime keeps
// the barrier, since only its scheduler knows whether the blocks still missing can ever arrive.
Result SyncAll(const DecodedKernel& kernel, size_t index, const int64_t* args, const rt::KernelLaunch* launch) {
  if (launch && launch->barrier) return launch->barrier->SyncAll(*launch, kernel.name);
  if (LaunchContextValue(LaunchValue::BlockNum, args) == 1) return {};
  return KernelFailure(kernel, index, "a syncall among several blocks needs the runtime's barrier");
}

// tpush/tpop/tfree: the pipe's ring lives in the runtime, which knows whether the peer member
// waited for can still move.
Result Pipe(const DecodedKernel& kernel, size_t index, CoreMemory& memory, const rt::KernelLaunch* launch,
            const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  if (!launch || !launch->barrier)
    return KernelFailure(kernel, index, "a cross-core pipe needs the runtime that runs the mixed task");
  MemberOrder* const order = t_member_order;  // the order the op gives the members (mixed_race.h)
  if (instr.op == Opcode::TFree) {
    if (order) order->BeforeFree(instr.pipe);
    return launch->barrier->PipeFree(*launch, kernel.name, instr.pipe);
  }
  const TileRef& ref = instr.op == Opcode::TPush ? instr.src0 : instr.dst;
  std::byte* tile = memory.Access(ref.space, ref.At(regs), ref.bytes);
  if (!tile) return KernelFailure(kernel, index, "the tile leaves its buffer");
  const auto bytes = static_cast<size_t>(ref.bytes);
  if (instr.op == Opcode::TPush) {
    if (order) order->BeforePush(instr.pipe);
    Result result = launch->barrier->PipePush(*launch, kernel.name, instr.pipe, {tile, bytes});
    if (result && order) order->AfterPush(instr.pipe);
    return result;
  }
  Result result = launch->barrier->PipePop(*launch, kernel.name, instr.pipe, {tile, bytes});
  if (result && order) order->AfterPop(instr.pipe);
  return result;
}

// sync_set/sync_wait: the event counters live in the runtime, which knows whether the raise waited
// for can still come.
Result Event(const DecodedKernel& kernel, size_t index, const int64_t* regs, const rt::KernelLaunch* launch) {
  const Instr& instr = kernel.code[index];
  if (!launch || !launch->barrier)
    return KernelFailure(kernel, index, "a cross-core event needs the runtime that runs the mixed task");
  const int64_t id = Read(instr.event_id, regs);
  if (id < 0 || id >= rt::kEventIds)
    return KernelFailure(kernel, index, fmt::format("event id {} is out of range [0, {}]", id, rt::kEventIds - 1));
  rt::EventRef event = instr.event;
  event.id = static_cast<int32_t>(id);
  MemberOrder* const order = t_member_order;
  if (instr.op == Opcode::EventSet) {
    if (order) order->BeforeSet(event);
    return launch->barrier->EventSet(*launch, kernel.name, event);
  }
  Result result = launch->barrier->EventWait(*launch, kernel.name, event);
  if (result && order) order->AfterWait(event);
  return result;
}

}  // namespace

pypto::expected<void, rt::FatalError> SimExecutor::Run(const DecodedKernel& kernel, const int64_t* args,
                                                        CoreMemory& memory, const rt::KernelLaunch* launch,
                                                        const KernelAbort* abort) {
  // Polled where a kernel can loop forever (a backward branch): the watchdog gave up on this task.
  const auto aborted = [&] { return abort && launch && abort->requested(launch->task_id); };
  const auto gave_up = [&] {
    return pypto::unexpected(rt::FatalError{
        rt::FatalCode::SchedulerTimeout,
        fmt::format("kernel '{}' (task {}) aborted by the scheduler's watchdog", kernel.name, launch->task_id)});
  };
  // The register file: on the stack unless the kernel needs an unusual number of registers.
  constexpr size_t kInlineRegisters = 128;
  std::array<int64_t, kInlineRegisters> inline_regs;
  std::vector<int64_t> heap_regs;
  int64_t* regs = inline_regs.data();
  if (kernel.registers.size() > kInlineRegisters) {
    heap_regs.resize(kernel.registers.size());
    regs = heap_regs.data();
  }
  // Every register is written before it is read; zeroing them keeps a decoder bug deterministic.
  std::fill_n(regs, kernel.registers.size(), int64_t{0});
  for (const auto& init : kernel.scalar_params) regs[init.reg] = ParamValue(init, args[init.slot]);
  for (const auto& init : kernel.launch_values) regs[init.reg] = LaunchContextValue(init.value, args);

  const Instr* code = kernel.code.data();
  const size_t size = kernel.code.size();
  int64_t offsets[kMaxDims];
  for (size_t pc = 0; pc < size;) {
    const Instr& instr = code[pc];
    if (instr.scalar_count != 0) {
      if (Result result = RunScalars(kernel, pc, regs); !result) return result;
    }
    Result result;
    switch (instr.op) {
      case Opcode::ReadScalar:
      case Opcode::WriteScalar:
      case Opcode::ReadTile:
      case Opcode::WriteTile: {
        const int64_t* at = instr.offsets.data();
        if (instr.dynamic) {
          for (int d = 0; d < instr.rank; ++d)
            offsets[d] = instr.offset_regs[d] >= 0 ? regs[instr.offset_regs[d]] : instr.offsets[d];
          at = offsets;
        }
        if (instr.op == Opcode::ReadScalar) result = ReadScalar(kernel, pc, args, at, regs);
        else if (instr.op == Opcode::WriteScalar) result = WriteScalar(kernel, pc, args, at, regs);
        else result = AccessTileElement(kernel, pc, memory, at, regs);
        break;
      }
      case Opcode::Load:
      case Opcode::Store: {
        const bool gathers = instr.scatter || instr.paged.on || instr.mgather.on;
        if (!gathers && (instr.dynamic || instr.partial))
          for (int d = 0; d < instr.rank; ++d)
            offsets[d] = instr.offset_regs[d] >= 0 ? regs[instr.offset_regs[d]] : instr.offsets[d];
        const int64_t* origin = !gathers && (instr.dynamic || instr.partial) ? offsets : instr.offsets.data();
        auto transfer = [&](const int64_t* transfer_args) -> Result {
          if (instr.scatter) return ScatterStore(kernel, pc, transfer_args, memory);
          if (instr.paged.on) return PagedGather(kernel, pc, transfer_args, memory);
          if (instr.mgather.on) return MemGather(kernel, pc, transfer_args, memory, regs);
          if (instr.partial) return TransferValid(kernel, pc, transfer_args, memory, origin, regs);
          return Transfer(kernel, pc, transfer_args, memory, origin, regs);
        };
        // A remote load or store moves data through the peer's copy of the window region.
        result = instr.remote ? RunRemoteTransfer(kernel, pc, args, regs, origin, transfer) : transfer(args);
        break;
      }
      case Opcode::Comm: {
        const int64_t* at = instr.offsets.data();
        if (instr.dynamic) {
          for (int d = 0; d < instr.rank; ++d)
            offsets[d] = instr.offset_regs[d] >= 0 ? regs[instr.offset_regs[d]] : instr.offsets[d];
          at = offsets;
        }
        result = RunComm(kernel, pc, args, at, regs);
        break;
      }
      case Opcode::LoopBegin: {
        const LoopInfo& loop = instr.loop;
        const int64_t start = Read(loop.start, regs), stop = Read(loop.stop, regs), step = Read(loop.step, regs);
        if (step == 0) [[unlikely]] {
          return KernelFailure(kernel, pc, fmt::format("the loop step is 0 (range({}, {}, 0))", start, stop));
        }
        const uint64_t trips = TripCount(start, stop, step);
        if (trips == 0) {
          pc = loop.partner + 1;
          continue;
        }
        regs[loop.var] = start;
        regs[loop.trips] = static_cast<int64_t>(trips);
        if (loop.step_copy >= 0) regs[loop.step_copy] = step;
        ++pc;
        continue;
      }
      case Opcode::LoopEnd: {
        const LoopInfo& loop = instr.loop;
        const uint64_t left = static_cast<uint64_t>(regs[loop.trips]) - 1;
        if (left != 0) {
          if (aborted()) [[unlikely]] return gave_up();
          regs[loop.trips] = static_cast<int64_t>(left);
          regs[loop.var] = static_cast<int64_t>(static_cast<uint64_t>(regs[loop.var]) +
                                                static_cast<uint64_t>(Read(loop.step, regs)));
          pc = loop.partner + 1;
          continue;
        }
        ++pc;
        continue;
      }
      case Opcode::Compute:
        result = RunCompute(kernel, pc, memory, regs);
        break;
      case Opcode::BranchIfZero:
        pc = Read(instr.branch.cond, regs) == 0 ? instr.branch.target : pc + 1;
        continue;
      case Opcode::Jump:
        if (instr.branch.target <= pc && aborted()) [[unlikely]] return gave_up();
        pc = instr.branch.target;
        continue;
      case Opcode::SyncAll:
        if (t_member_order) t_member_order->BeforeSyncAll();
        result = SyncAll(kernel, pc, args, launch);
        if (result && t_member_order) t_member_order->AfterSyncAll();  // it keeps the epochs of a member
        else if (result && t_block_accesses) t_block_accesses->PassedBarrier();
        break;
      case Opcode::TPush:
      case Opcode::TPop:
      case Opcode::TFree:
        result = Pipe(kernel, pc, memory, launch, regs);
        break;
      case Opcode::EventSet:
      case Opcode::EventWait:
        result = Event(kernel, pc, regs, launch);
        break;
      default:
        result = Elementwise(kernel, pc, memory);
        break;
    }
    if (!result) return result;
    ++pc;
  }
  return {};
}

pypto::expected<void, rt::FatalError> SimExecutor::Execute(const rt::KernelLaunch& launch) {
  try {
    const auto id = launch.func_id;
    if (id < 0 || static_cast<size_t>(id) >= by_func_id_.size() || by_func_id_[static_cast<size_t>(id)] < 0) {
      return pypto::unexpected(
          rt::FatalError{rt::FatalCode::InvalidArgs,
                         fmt::format("task {}: no kernel with func_id {} was decoded", launch.task_id, id)});
    }
    const DecodedKernel& kernel = kernels_[static_cast<size_t>(by_func_id_[static_cast<size_t>(id)])];
    if (launch.core_type != kernel.core_type) {
      return pypto::unexpected(rt::FatalError{
          rt::FatalCode::InvalidArgs,
          fmt::format("task {}: kernel '{}' is an {} kernel but was dispatched to an {} core", launch.task_id,
                      kernel.name, rt::CoreTypeName(kernel.core_type), rt::CoreTypeName(launch.core_type))});
    }
    CoreMemory* memory = memory_.For(launch.core_type, launch.core_index);
    if (!memory || !launch.args) {
      return pypto::unexpected(rt::FatalError{
          rt::FatalCode::Internal, fmt::format("task {}: kernel '{}' launched on {} core {} {}", launch.task_id,
                                               kernel.name, rt::CoreTypeName(launch.core_type), launch.core_index,
                                               memory ? "without args" : "which does not exist")});
    }
    KernelAbort& abort = aborts_[AbortSlot(launch)];
    const KernelAbort::Running running(abort, launch.task_id);
    if (kernel.external_entry) {  // hand-written: it reads args[] itself
      if (launch.launch_id != rt::kInvalidTaskId)  // a block of an AIC or AIV launch
        return block_races_.RunBlock(kernel, launch, [&] { return RunExternGuarded(kernel, launch, *memory); });
      if (kernel.dual_lanes && launch.mixed_group != rt::kInvalidTaskId)
        return lane_races_.RunLane(kernel, launch, [&] { return RunExternGuarded(kernel, launch, *memory); });
      return RunExternGuarded(kernel, launch, *memory);
    }
    const auto run = [&] { return Run(kernel, launch.args, *memory, &launch, &abort); };
    if (launch.mixed_group != rt::kInvalidTaskId) return mixed_races_.RunMember(kernel, launch, run);
    return block_races_.RunBlock(kernel, launch, run);
  } catch (const std::bad_alloc&) {
    return pypto::unexpected(
        rt::FatalError{rt::FatalCode::OutOfMemory, "the simulator could not allocate a core's on-chip buffers"});
  } catch (const std::exception& e) {
    return pypto::unexpected(rt::FatalError{rt::FatalCode::Internal, fmt::format("simulator: {}", e.what())});
  }
}

void SimExecutor::Abort(const rt::KernelLaunch& launch) {
  if (launch.core_index < 0 || AbortSlot(launch) >= aborts_.size()) return;
  aborts_[AbortSlot(launch)].Abort(launch.task_id);
}

std::optional<uint64_t> SimExecutor::ProgressMark(const rt::KernelLaunch& launch) {
  const auto id = launch.func_id;
  if (id < 0 || static_cast<size_t>(id) >= by_func_id_.size() || by_func_id_[static_cast<size_t>(id)] < 0 ||
      !launch.args || launch.core_index < 0 || AbortSlot(launch) >= aborts_.size())
    return std::nullopt;
  const CoreMemory* memory = memory_.For(launch.core_type, launch.core_index);
  if (!memory) return std::nullopt;
  const DecodedKernel& kernel = kernels_[static_cast<size_t>(by_func_id_[static_cast<size_t>(id)])];
  KernelAbort& core = aborts_[AbortSlot(launch)];
  return core.WithSeenArgs(launch.task_id, launch.args, [&](const int64_t* args) {
    return sim::ProgressMark(kernel, args, *memory, core.peer_waits());
  });
}

std::string SimExecutor::KernelName(int32_t func_id) const {
  if (func_id < 0 || static_cast<size_t>(func_id) >= by_func_id_.size() || by_func_id_[func_id] < 0) return {};
  return kernels_[static_cast<size_t>(by_func_id_[static_cast<size_t>(func_id)])].name;
}

}  // namespace pypto::sim
