// The GM-to-L2 prefetch ops, written as upstream pypto's PTO emitter writes them (hw-native-sys/pypto
// e2d0f78ae, src/backend/common/pto_ops_prefetch.cpp). PTOAS a56b18c32af3 has async sessions and
// events but no prefetch context, so tools/pto-check holds these ops as its upstream-emitter source.
//
//   %ctx = pto.make_prefetch_async_context(%ws : !pto.ptr<i8>) -> !pto.prefetch_async_context
//   %evt = pto.tprefetch_async(%x_pview, %ctx : !pto.partition_tensor_view<4096xf32>,
//                              !pto.prefetch_async_context) -> !pto.async_event
//   %s = pto.get_prefetch_async_session %ctx : !pto.prefetch_async_context -> !pto.async_session
//   %done = pto.comm.wait_async_event(%evt, %s : !pto.async_event, !pto.async_session) -> i1
//
// %ws is the SDMA workspace the runtime owns, a `!pto.ptr<i8>` argument after the dynamic extents.
// A prefetch takes its whole source tensor.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

namespace {

constexpr const char* kContextType = "!pto.prefetch_async_context";
constexpr const char* kEventType = "!pto.async_event";
constexpr const char* kSessionType = "!pto.async_session";

}  // namespace

void KernelEmitter::LowerPrefetch(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span) {
  const std::string& op = call.target_name();
  const std::string result = assign ? names_.Named(assign->var()->name_hint()) : names_.Temp();
  if (assign) values_[assign->var().get()] = result;
  auto handle = [&](size_t i) { return values_.at(call.args()[i]->As<ir::Var>()); };
  PtoOp pto{.name = "", .result = TypedValue{result, ""}};
  if (op == "prefetch.make_context") {
    const TypedValue workspace{sdma_workspace_arg_, PtrType("i8")};
    pto = {.name = "pto.make_prefetch_async_context", .result = TypedValue{result, kContextType}};
    pto.custom_syntax = fmt::format("{} = pto.make_prefetch_async_context({} : {}) -> {}", result, workspace.value,
                                    workspace.type, kContextType);
    pto.generic_operands = GenericOperands{{{workspace}}};
  } else if (op == "prefetch.async_prefetch") {
    const TypedValue source = WholeTensor(*call.args()[0]->As<ir::Var>(), span);
    const TypedValue context{handle(1), kContextType};
    pto = {.name = "pto.tprefetch_async", .result = TypedValue{result, kEventType}};
    pto.custom_syntax = fmt::format("{} = pto.tprefetch_async({}, {} : {}, {}) -> {}", result, source.value,
                                    context.value, source.type, context.type, kEventType);
    pto.generic_operands = GenericOperands{{{source}, {context}}};
  } else if (op == "prefetch.session") {
    const TypedValue context{handle(0), kContextType};
    pto = {.name = "pto.get_prefetch_async_session", .result = TypedValue{result, kSessionType}};
    pto.custom_syntax =
        fmt::format("{} = pto.get_prefetch_async_session {} : {} -> {}", result, context.value, kContextType,
                    kSessionType);
    pto.generic_operands = GenericOperands{{{context}}};
  } else {  // prefetch.wait
    const TypedValue event{handle(0), kEventType};
    const TypedValue session{handle(1), kSessionType};
    pto = {.name = "pto.comm.wait_async_event", .result = TypedValue{result, "i1"}};
    pto.custom_syntax = fmt::format("{} = pto.comm.wait_async_event({}, {} : {}, {}) -> i1", result, event.value,
                                    session.value, kEventType, kSessionType);
    pto.generic_operands = GenericOperands{{{event}, {session}}};
  }
  Add(body_, pto, span);
}

// The partition of a tensor parameter that is all of it: offsets 0, sizes its shape.
TypedValue KernelEmitter::WholeTensor(const ir::Var& tensor, const ir::Span& span) {
  const ir::Var* param = plan_.tensor_param_of.at(&tensor);
  const auto* type = param->type()->As<ir::TensorType>();
  const std::string element = ElementOf(type->dtype());
  const std::string partition_type = PartitionViewType(type->shape(), element);
  std::vector<TypedValue> offsets, sizes;
  for (int64_t extent : type->shape()) {
    offsets.push_back(IndexConstant(0));
    sizes.push_back(IndexConstant(extent));
  }
  const TypedValue view{views_.at(param), TensorViewType(type->shape().size(), element)};
  const TypedValue window{names_.Named(param->name_hint() + "_pview"), partition_type};
  PtoOp op{.name = "pto.partition_view",
           .result = window,
           .groups = {{OperandSyntax::Source, "", {view}},
                      {OperandSyntax::List, "offsets", std::move(offsets)},
                      {OperandSyntax::List, "sizes", std::move(sizes)}}};
  Add(body_, op, span);
  return window;
}

}  // namespace pypto::backend_ptoas
