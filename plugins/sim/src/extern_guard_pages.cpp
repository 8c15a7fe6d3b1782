#include "extern_guard_pages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace pypto::sim {

// A buffer's guarded copy: a page that can only be read, the writable pages holding the copy, and at
// least one more read-only page (more when a view of the buffer runs past its end, as a window of
// dimension 0 may, so that reading what it covers does not fault).
struct GuardedBuffer {
  uint64_t address = 0;  // the buffer handed to the launch
  uint64_t bytes = 0;
  unsigned char* map = nullptr;
  size_t map_bytes = 0;
  unsigned char* writable = nullptr;      // the first writable byte
  unsigned char* writable_end = nullptr;  // the first byte of the read-only pages after
  unsigned char* data = nullptr;          // the copy's first byte
  std::vector<unsigned char> known;       // the bytes the original and the copy last agreed on
  int users = 0;

  unsigned char* original() const { return reinterpret_cast<unsigned char*>(address); }
};

namespace {

constexpr unsigned char kFill = 0xA5;  // between the page boundaries and a copy's first and last byte

// The copies in use, guarded by their mutex. A handful at a time: a list will do.
std::mutex g_mu;
std::vector<GuardedBuffer*> g_buffers;

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t RoundUp(uint64_t value, uint64_t to) { return (value + to - 1) / to * to; }

// Each byte where `from` differs from `known` goes to `to` and `known`: what one side changed since
// they last agreed. Bytes, not words: another writer may have changed the neighbours on the other side.
void CopyChanges(const unsigned char* from, unsigned char* to, unsigned char* known, uint64_t bytes) {
  constexpr uint64_t kPage = 4096, kLine = 64;  // pages first: most of a buffer is usually unchanged
  for (uint64_t page = 0; page < bytes; page += kPage) {
    const uint64_t page_end = std::min(page + kPage, bytes);
    if (std::memcmp(from + page, known + page, page_end - page) == 0) continue;
    for (uint64_t at = page; at < page_end; at += kLine) {
      const uint64_t n = std::min(kLine, page_end - at);
      if (std::memcmp(from + at, known + at, n) == 0) continue;
      for (uint64_t i = at; i < at + n; ++i) {
        if (from[i] == known[i]) continue;
        to[i] = from[i];
        known[i] = from[i];
      }
    }
  }
}

// A new copy of [address, address + bytes), with `overrun` readable bytes past it; null where the
// mapping fails (the tensor is then handed over unguarded).
GuardedBuffer* NewCopy(uint64_t address, uint64_t bytes, uint64_t overrun) {
  const size_t page = PageSize();
  const uint64_t writable = RoundUp(bytes, page);
  const uint64_t after = page + RoundUp(overrun, page);
  const size_t total = page + writable + after;
  void* map = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return nullptr;
  auto* base = static_cast<unsigned char*>(map);
  if (mprotect(base, page, PROT_READ) != 0 || mprotect(base + page + writable, after, PROT_READ) != 0) {
    munmap(map, total);
    return nullptr;
  }
  auto* buffer = new GuardedBuffer{.address = address, .bytes = bytes, .map = base, .map_bytes = total};
  buffer->writable = base + page;
  buffer->writable_end = base + page + writable;
  // Its last byte as near the page end as the original's alignment allows (kernels may rely on it).
  const uint64_t alignment = std::min<uint64_t>(64, address & (~address + 1));
  const auto end = reinterpret_cast<uintptr_t>(buffer->writable_end);
  buffer->data = reinterpret_cast<unsigned char*>((end - bytes) / alignment * alignment);
  std::memset(buffer->writable, kFill, static_cast<size_t>(buffer->data - buffer->writable));
  std::memset(buffer->data + bytes, kFill, static_cast<size_t>(buffer->writable_end - buffer->data - bytes));
  std::memcpy(buffer->data, buffer->original(), bytes);
  buffer->known.assign(buffer->data, buffer->data + bytes);
  return buffer;
}

// The copy of the buffer for one more kernel: the running kernels' one, brought up to date with
// what others wrote to the original since, or a new one. Null: leave the tensor in place.
GuardedBuffer* Acquire(uint64_t address, uint64_t bytes, uint64_t overrun) {
  std::lock_guard lock(g_mu);
  for (GuardedBuffer* buffer : g_buffers) {
    if (buffer->address == address && buffer->bytes == bytes) {
      CopyChanges(buffer->original(), buffer->data, buffer->known.data(), bytes);
      ++buffer->users;
      return buffer;
    }
    if (address < buffer->address + buffer->bytes && buffer->address < address + bytes) return nullptr;
  }
  GuardedBuffer* buffer = NewCopy(address, bytes, overrun);
  if (!buffer) return nullptr;
  buffer->users = 1;
  g_buffers.push_back(buffer);
  return buffer;
}

// What this kernel (and any still running with it) changed goes back to the original.
void Release(GuardedBuffer* buffer) {
  std::lock_guard lock(g_mu);
  CopyChanges(buffer->data, buffer->original(), buffer->known.data(), buffer->bytes);
  if (--buffer->users > 0) return;
  std::erase(g_buffers, buffer);
  munmap(buffer->map, buffer->map_bytes);
  delete buffer;
}

const rt::ChipTensor* TensorAt(const int64_t* args, uint32_t slot) {
  return reinterpret_cast<const rt::ChipTensor*>(args[slot]);
}

}  // namespace

GuardedTensors::GuardedTensors(const DecodedKernel& kernel, const int64_t* args) : kernel_(kernel) {
  std::copy(args, args + rt::kArgSlots, args_.begin());
  descriptors_.resize(kernel.tensor_count);
  // A buffer overlapping another of the kernel's without being the same one stays in place: two
  // copies would not see each other's writes.
  auto overlaps_another = [&](const rt::ChipTensor& tensor) {
    for (uint32_t other = 0; other < kernel.tensor_count; ++other) {
      const rt::ChipTensor* that = TensorAt(args, other);
      if (!that || (that->buffer_addr == tensor.buffer_addr && that->buffer_size == tensor.buffer_size)) continue;
      if (tensor.buffer_addr < that->buffer_addr + that->buffer_size &&
          that->buffer_addr < tensor.buffer_addr + tensor.buffer_size)
        return true;
    }
    return false;
  };
  for (uint32_t slot = 0; slot < kernel.tensor_count && slot < rt::kArgSlots; ++slot) {
    const rt::ChipTensor* tensor = TensorAt(args, slot);
    if (!tensor || tensor->buffer_addr == 0 || tensor->buffer_size == 0 ||
        tensor->buffer_size > kMaxGuardedBytes || overlaps_another(*tensor))
      continue;
    const uint64_t end = tensor->buffer_addr + tensor->buffer_size;
    const rt::ByteRange view = rt::ViewBytes(*tensor);
    if (!view.empty() && view.first < tensor->buffer_addr) continue;  // not a view of this buffer
    GuardedBuffer* buffer = nullptr;
    for (const Slot& held : guarded_)  // a second descriptor of a buffer already copied
      if (held.buffer->address == tensor->buffer_addr && held.buffer->bytes == tensor->buffer_size)
        buffer = held.buffer;
    if (!buffer) {
      buffer = Acquire(tensor->buffer_addr, tensor->buffer_size, view.last > end ? view.last - end : 0);
      if (!buffer) continue;
      held_.push_back(buffer);
    }
    rt::ChipTensor& copy = descriptors_[slot];
    copy = *tensor;
    copy.buffer_addr = reinterpret_cast<uint64_t>(buffer->data);
    args_[slot] = reinterpret_cast<int64_t>(&copy);
    guarded_.push_back({slot, buffer});
  }
}

GuardedTensors::~GuardedTensors() {
  for (GuardedBuffer* buffer : held_) Release(buffer);
}

std::string GuardedTensors::Describe(const Slot& slot, int64_t offset, bool found_on_return) const {
  std::string name;
  for (const KernelParam& param : kernel_.params)
    if (param.is_tensor && param.slot == slot.slot) name = fmt::format("'{}' ", param.name);
  const rt::ChipTensor& tensor = descriptors_[slot.slot];
  std::vector<uint32_t> shape(tensor.shapes, tensor.shapes + std::min<uint32_t>(tensor.ndims, PYPTO_MAX_TENSOR_DIMS));
  const auto bytes = static_cast<int64_t>(slot.buffer->bytes);
  const auto element = static_cast<int64_t>(std::max<size_t>(rt::ElementSize(tensor.dtype), 1));
  // Floor division: byte -1 is in element -1.
  const int64_t index = offset >= 0 ? offset / element : -((-offset + element - 1) / element);
  // Found afterwards, a changed byte stands for the element it is in (its other bytes may have kept
  // the fill's value); a fault is at the byte the instruction wrote.
  if (found_on_return) offset = index * element;
  const bool past = offset >= bytes;
  std::string message = fmt::format(
      "wrote {} of tensor {}(args[{}], {} [{}], {} bytes): byte {} of its buffer, {} bytes {} (element {} of {})",
      past ? "past the end" : "before the start", name, slot.slot, rt::DtypeName(tensor.dtype), fmt::join(shape, ", "),
      bytes, offset, past ? offset - bytes : -offset, past ? "past its last byte" : "before its first byte", index,
      bytes / element);
  if (found_on_return) message += ", found when the kernel returned";
  return message + "; a kernel writes only inside the tensors it is given";
}

std::optional<std::string> GuardedTensors::DescribeWrite(uintptr_t address) const {
  for (const Slot& slot : guarded_) {
    const GuardedBuffer& buffer = *slot.buffer;
    const auto first = reinterpret_cast<uintptr_t>(buffer.map);
    if (address < first || address >= first + buffer.map_bytes) continue;
    if (address >= reinterpret_cast<uintptr_t>(buffer.writable) &&
        address < reinterpret_cast<uintptr_t>(buffer.writable_end))
      continue;  // a writable byte: the fault is not a guard page's
    return Describe(slot, static_cast<int64_t>(address - reinterpret_cast<uintptr_t>(buffer.data)), false);
  }
  return std::nullopt;
}

std::optional<std::string> GuardedTensors::StrayWrite() const {
  for (const Slot& slot : guarded_) {
    const GuardedBuffer& buffer = *slot.buffer;
    // The nearest to the tensor first: before it, from its first byte down; after it, upwards.
    for (unsigned char* at = buffer.data; at-- > buffer.writable;)
      if (*at != kFill) return Describe(slot, at - buffer.data, true);
    for (unsigned char* at = buffer.data + buffer.bytes; at < buffer.writable_end; ++at)
      if (*at != kFill) return Describe(slot, at - buffer.data, true);
  }
  return std::nullopt;
}

}  // namespace pypto::sim
