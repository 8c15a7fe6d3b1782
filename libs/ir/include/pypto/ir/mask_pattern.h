// The lane-selection patterns of the mask form of gather (`pl.tile.MaskPattern.P0101`). A pattern
// reads right to left over a group of lanes: P0101 keeps lanes 0 and 2 of every 4 (the even lanes),
// P1000 keeps lane 3 of every 4. The numbering is the DSL's and PTO-ISA's (1..7).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pypto::ir {

enum class MaskPattern : uint8_t { P0101 = 1, P1010 = 2, P0001 = 3, P0010 = 4, P0100 = 5, P1000 = 6, P1111 = 7 };

inline constexpr std::array<std::string_view, 7> kMaskPatternNames = {"P0101", "P1010", "P0001", "P0010",
                                                                      "P0100", "P1000", "P1111"};

// Whether `value` numbers a pattern (the attribute is stored as a plain integer).
constexpr bool IsMaskPattern(int64_t value) { return value >= 1 && value <= 7; }

// "P0101" for 1; callers check IsMaskPattern first.
constexpr std::string_view MaskPatternName(int64_t value) { return kMaskPatternNames[value - 1]; }

constexpr std::optional<int64_t> MaskPatternFromName(std::string_view name) {
  for (size_t i = 0; i < kMaskPatternNames.size(); ++i)
    if (kMaskPatternNames[i] == name) return static_cast<int64_t>(i + 1);
  return std::nullopt;
}

// The lanes a pattern keeps: lane `lane` of every group of `group` consecutive lanes (P0101 and
// P1111 repeat every 2 and every lane, so they are groups of 2 and 1). A row of `cols` lanes keeps
// cols / group of them.
struct MaskLanes {
  int64_t group = 1;
  int64_t lane = 0;
};
constexpr MaskLanes LanesOf(int64_t value) {
  switch (static_cast<MaskPattern>(value)) {
    case MaskPattern::P0101: return {2, 0};
    case MaskPattern::P1010: return {2, 1};
    case MaskPattern::P0001: return {4, 0};
    case MaskPattern::P0010: return {4, 1};
    case MaskPattern::P0100: return {4, 2};
    case MaskPattern::P1000: return {4, 3};
    case MaskPattern::P1111: return {1, 0};
  }
  return {};
}

}  // namespace pypto::ir
