// Keyword attributes of op calls: compile-time values such as a dtype, a memory space or a rounding
// mode (`pl.create_tile(..., dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)`). They are not
// expressions: nothing computes them at run time, and passes never rewrite them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "pypto/ir/dtype.h"
#include "pypto/ir/type.h"

namespace pypto::ir {

using OpAttr = std::variant<bool, int64_t, double, std::string, DataType, MemorySpace>;
using OpAttrs = std::vector<std::pair<std::string, OpAttr>>;

// The kind of value an attribute takes, for checking calls and for parsing.
enum class OpAttrKind : uint8_t { Bool, Int, Float, String, DType, MemorySpace };
const char* OpAttrKindName(OpAttrKind kind);  // "bool", "int", ..., "dtype", "memory space"
OpAttrKind KindOf(const OpAttr& value);

// A float as Python reads it back to the same value: 2.0, 0.015625, 1e-05, float("inf").
std::string FloatLiteral(double value);

// The DSL spelling: True, 3, 1.5, "round", pl.FP32, pl.Mem.Vec (pl.Mem is pl.MemorySpace).
std::string OpAttrText(const OpAttr& value);

// The value of attribute `name`, when present and of type T.
template <typename T>
std::optional<T> FindAttr(const OpAttrs& attrs, std::string_view name) {
  for (const auto& [key, value] : attrs)
    if (key == name)
      if (const T* typed = std::get_if<T>(&value)) return *typed;
  return std::nullopt;
}

}  // namespace pypto::ir
