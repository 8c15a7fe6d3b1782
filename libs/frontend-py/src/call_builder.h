// Binding the arguments of an op call as written (positional or keyword, expressions or
// compile-time attributes) to the op's parameters, then building the typed call.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

// An argument as written at an op call: an expression, or a compile-time attribute (pl.FP32,
// pl.Mem.Vec, "round").
using ArgValue = std::variant<ir::ExprPtr, ir::OpAttr>;

// Collects an op call's arguments by parameter, then builds the typed call. `dsl_name` (pl.add)
// prefixes its diagnostics.
class CallBuilder {
 public:
  CallBuilder(std::string dsl_name, const ir::OpDef& op, ir::Span span);

  // Binds `value` to `param`; an argument given twice, or a value where a compile-time attribute is
  // expected (and the reverse), is an error at `at`.
  ir::Result<bool> Bind(const ir::OpParam& param, ArgValue value, const ir::Span& at);
  bool Has(const ir::OpParam& param) const;
  // The call, once every required parameter has an argument; its type comes from the op's deduction.
  ir::Result<ir::ExprPtr> Build(const ir::Span& call_span);

 private:
  // The position of an expression parameter among the op's expression arguments.
  size_t ArgIndex(const ir::OpParam& param) const;
  pypto::unexpected<ir::Diagnostic> Twice(const ir::OpParam& param, const ir::Span& at) const;
  // Literals convert to the attribute's kind (an int literal is a valid float attribute).
  ir::Result<ir::OpAttr> ToAttr(const ir::OpParam& param, const ArgValue& value, const ir::Span& at) const;

  std::string dsl_name_;
  const ir::OpDef& op_;
  ir::Span span_;
  std::vector<ir::ExprPtr> args_;
  ir::Call::Kwargs kwargs_;
};

}  // namespace pypto::frontend
