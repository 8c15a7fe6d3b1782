// On-core arrays, written as upstream pypto's PTO emitter writes them (hw-native-sys/pypto e2d0f78ae,
// src/backend/common/pto_ops_memory.cpp): stack-local arrays of a PTOAS newer than any revision
// available, so tools/pto-check holds these ops as its separate upstream-emitter source.
//
//   %c = pto.declare_local_array -> !pto.local_array<4xi32>            (array.create, in the prologue)
//   %v = pto.local_array_get %c[%i] : !pto.local_array<4xi32> -> i32   (array.get_element)
//   pto.local_array_set %c[%i], %v : !pto.local_array<4xi32>, i32      (array.update_element)
//
// Every array variable names the storage of the array.create it derives from (kernel_plan_array.cpp),
// so an update writes that storage in place. Indices and values are index values here, cast to and
// from the element type at the op.
#include <fmt/format.h>

#include <string>

#include "kernel_emitter.h"
#include "source_loc.h"

namespace pypto::backend_ptoas {

std::string KernelEmitter::LocalArrayType(const ir::Var& array) const {
  const auto* type = array.type()->As<ir::ArrayType>();
  return fmt::format("!pto.local_array<{}x{}>", type->extent(), ElementOf(type->dtype()));
}

void KernelEmitter::EmitLocalArrays() {
  for (const auto* assign : plan_.local_arrays) {
    const ir::Var& array = *assign->var();
    const TypedValue storage{values_.at(&array), LocalArrayType(array)};
    PtoOp op{.name = "pto.declare_local_array", .result = storage};
    op.custom_syntax = fmt::format("{} = pto.declare_local_array -> {}", storage.value, storage.type);
    op.generic_operands = GenericOperands{};
    Add(prologue_, op, OpSpan(assign->span(), assign->value()->span()));
  }
}

void KernelEmitter::LowerArray(const ir::Call& call, const ir::AssignStmt& assign, const ir::Span& span) {
  const std::string& op = call.target_name();
  if (op == "array.create") return;  // declared in the prologue
  const ir::Var& array = *plan_.array_roots.at(call.args()[0]->As<ir::Var>());
  const TypedValue storage{values_.at(&array), LocalArrayType(array)};
  const std::string element = ElementOf(array.type()->As<ir::ArrayType>()->dtype());
  const TypedValue index{IndexValue(call.args()[1], span), "index"};
  if (op == "array.get_element") {
    const TypedValue raw{names_.Temp(), element};
    PtoOp get{.name = "pto.local_array_get", .result = raw};
    get.custom_syntax = fmt::format("{} = pto.local_array_get {}[{}] : {} -> {}", raw.value, storage.value,
                                    index.value, storage.type, element);
    get.generic_operands = GenericOperands{{{storage}, {index}}};
    Add(body_, get, span);
    std::string value = names_.Named(assign.var()->name_hint());
    Add(body_, fmt::format("{} = arith.index_cast {} : {} to index", value, raw.value, element), span);
    indices_[assign.var().get()] = value;
    return;
  }
  // array.update_element
  TypedValue value{"", element};
  if (auto constant = ir::AsConstInt(call.args()[2])) {
    value.value = names_.Constant(*constant, element);
  } else {
    const std::string wide = IndexValue(call.args()[2], span);
    value.value = names_.Temp();
    Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", value.value, wide, element), span);
  }
  PtoOp set{.name = "pto.local_array_set"};
  set.custom_syntax = fmt::format("pto.local_array_set {}[{}], {} : {}, {}", storage.value, index.value, value.value,
                                  storage.type, element);
  set.generic_operands = GenericOperands{{{storage}, {index}, {value}}};
  Add(body_, set, span);
}

}  // namespace pypto::backend_ptoas
