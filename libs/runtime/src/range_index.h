// Byte ranges of one buffer, each with a value, ordered by their first byte: the dependency tracker's
// record of who reads and who writes what (runtime_dependencies.cpp). A query looks only at the entries that can
// overlap its range, those starting after its first byte less the longest range held, so that the
// disjoint parts of one tensor that many tasks write (the blocks of an SPMD launch, each its tile of
// the output) are found in logarithmic time rather than by walking every one of them, which made N
// such tasks cost N^2. Entries are removed through the handle Insert returned, in logarithmic time
// too, whatever their position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "pypto/runtime/chip_tensor.h"

namespace pypto::rt {

template <typename T>
class RangeIndex {
  struct Entry {
    uint64_t last;
    T value;
  };
  using Entries = std::multimap<uint64_t, Entry>;  // by first byte

 public:
  using Handle = typename Entries::iterator;

  bool empty() const { return entries_.empty(); }

  // `range` must not be empty: an empty range overlaps nothing, so it is never worth holding.
  Handle Insert(const ByteRange& range, T value) {
    max_length_ = std::max(max_length_, range.last - range.first);
    return entries_.emplace(range.first, Entry{range.last, std::move(value)});
  }

  void Erase(Handle handle) {
    entries_.erase(handle);
    if (entries_.empty()) max_length_ = 0;
  }

  // f(value) for every entry overlapping `range`, in the order of their first bytes.
  template <typename F>
  void ForEachOverlapping(const ByteRange& range, F f) const {
    if (range.empty()) return;
    // An entry [s, e) with e - s <= max_length_ reaches past range.first only if s > first - max_length_.
    const uint64_t from = range.first > max_length_ ? range.first - max_length_ + 1 : 0;
    for (auto it = entries_.lower_bound(from); it != entries_.end() && it->first < range.last; ++it)
      if (it->second.last > range.first) f(it->second.value);
  }

  // Erases every entry that lies inside `range`, calling f(value) on each first.
  template <typename F>
  void EraseCovered(const ByteRange& range, F f) {
    for (auto it = entries_.lower_bound(range.first); it != entries_.end() && it->first < range.last;) {
      if (it->second.last > range.last) {
        ++it;
        continue;
      }
      f(it->second.value);
      it = entries_.erase(it);
    }
    if (entries_.empty()) max_length_ = 0;
  }

 private:
  Entries entries_;
  uint64_t max_length_ = 0;  // the longest range inserted since the index was last empty
};

}  // namespace pypto::rt
