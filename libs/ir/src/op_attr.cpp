#include "pypto/ir/op_attr.h"

#include <fmt/format.h>

#include <cmath>

#include "pypto/ir/printer.h"

namespace pypto::ir {

const char* OpAttrKindName(OpAttrKind kind) {
  switch (kind) {
    case OpAttrKind::Bool: return "bool";
    case OpAttrKind::Int: return "int";
    case OpAttrKind::Float: return "float";
    case OpAttrKind::String: return "str";
    case OpAttrKind::DType: return "dtype";
    case OpAttrKind::MemorySpace: return "memory space";
  }
  return "?";
}

OpAttrKind KindOf(const OpAttr& value) {
  struct Visitor {
    OpAttrKind operator()(bool) const { return OpAttrKind::Bool; }
    OpAttrKind operator()(int64_t) const { return OpAttrKind::Int; }
    OpAttrKind operator()(double) const { return OpAttrKind::Float; }
    OpAttrKind operator()(const std::string&) const { return OpAttrKind::String; }
    OpAttrKind operator()(DataType) const { return OpAttrKind::DType; }
    OpAttrKind operator()(MemorySpace) const { return OpAttrKind::MemorySpace; }
  };
  return std::visit(Visitor{}, value);
}

std::string FloatLiteral(double value) {
  if (std::isnan(value)) return "float(\"nan\")";
  if (std::isinf(value)) return value > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  std::string text = fmt::format("{}", value);  // the shortest text that reads back exactly
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string OpAttrText(const OpAttr& value) {
  struct Visitor {
    std::string operator()(bool v) const { return v ? "True" : "False"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return FloatLiteral(v); }
    std::string operator()(const std::string& v) const { return PythonStringLiteral(v); }
    std::string operator()(DataType v) const { return fmt::format("pl.{}", DataTypeName(v)); }
    std::string operator()(MemorySpace v) const { return fmt::format("pl.Mem.{}", MemorySpaceName(v)); }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace pypto::ir
