// prefetch.* ops: a kernel asks the DMA engine to pull a global tensor into the L2 cache ahead of
// its loads, and may wait for that to finish. A prefetch changes no value a kernel reads; its
// handles (context, event, session) only connect the four ops.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using ops::TypeError;

TypePtr Handle(HandleKind kind) { return std::make_shared<HandleType>(kind); }

// `arg`, the `role` of `op`, must be the handle `kind`; `expected` says where such a handle comes from.
Result<bool> ExpectHandle(const ExprPtr& arg, HandleKind kind, const std::string& role, const std::string& op,
                          const std::string& expected, const Span& span) {
  const auto* handle = arg->type()->As<HandleType>();
  if (handle && handle->handle() == kind) return true;
  return TypeError(fmt::format("the {} of {} must be {}, got {}", role, op, expected, arg->type()->str()), span);
}

Result<TypePtr> DeduceMakeContext(const std::vector<ExprPtr>&, const Call::Kwargs&, const Span&) {
  return Handle(HandleKind::PrefetchAsyncContext);
}

Result<TypePtr> DeduceAsyncPrefetch(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ops::ExpectTensor(args[0], "the source of pl.prefetch.async_prefetch", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  auto ctx = ExpectHandle(args[1], HandleKind::PrefetchAsyncContext, "context", "pl.prefetch.async_prefetch",
                          "the result of pl.prefetch.make_context()", span);
  if (!ctx) return pypto::unexpected(ctx.error());
  return Handle(HandleKind::AsyncEvent);
}

Result<TypePtr> DeduceSession(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto ctx = ExpectHandle(args[0], HandleKind::PrefetchAsyncContext, "context", "pl.prefetch.session",
                          "the result of pl.prefetch.make_context()", span);
  if (!ctx) return pypto::unexpected(ctx.error());
  return Handle(HandleKind::AsyncSession);
}

Result<TypePtr> DeduceWait(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto event = ExpectHandle(args[0], HandleKind::AsyncEvent, "event", "pl.prefetch.wait",
                            "the result of pl.prefetch.async_prefetch", span);
  if (!event) return pypto::unexpected(event.error());
  auto session = ExpectHandle(args[1], HandleKind::AsyncSession, "session", "pl.prefetch.wait",
                              "the result of pl.prefetch.session", span);
  if (!session) return pypto::unexpected(session.error());
  return TypePtr(std::make_shared<ScalarType>(DataType::BOOL));  // whether the prefetch completed
}

}  // namespace

void RegisterPrefetchOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "prefetch.make_context",
                          .description = "a context for asynchronous GM-to-L2 prefetches",
                          .params = {},
                          .deduce_type = DeduceMakeContext,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "prefetch.async_prefetch",
                          .description = "start pulling a global tensor into L2; an event marks its completion",
                          .params = {Arg("src"), Arg("ctx")},
                          .deduce_type = DeduceAsyncPrefetch,
                          .affinity = CoreAffinity::Shared,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "prefetch.session",
                          .description = "the session a context's events are waited for in",
                          .params = {Arg("ctx")},
                          .deduce_type = DeduceSession,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "prefetch.wait",
                          .description = "wait until a prefetch's event completes",
                          .params = {Arg("event"), Arg("session")},
                          .deduce_type = DeduceWait,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
