// Synchronisation inside a core and between the cores of one core group: statements with no value.
//
// - system.sync_set / sync_wait (pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2)): a
//   cross-core event. Each of the flag ids 0-13 (14 and 15 are the device's own) counts the raises
//   delivered to a core; a wait consumes one, blocking while there is none. `ffts_mode` (sets only)
//   says who receives a raise: 0 every core of the raiser's type, 1 the AIV lanes of its group, 2
//   (the default here) the other side of its group. In a mixed kernel, `core_type="aic"|"aiv"` keeps
//   the op on that member when the kernel is split (ExpandMixedKernel); elsewhere it is left out.
// - system.set_ffts(workspace): hands the FFTS unit its INT64 scratch (at least 256 elements); it
//   moves no data the program sees.
// - system.sync_src / sync_dst: a flag between two pipes of one core (set_pipe raises event_id 0-7,
//   wait_pipe waits for it).
// - system.bar_v / bar_m / bar_all: wait until the vector, matrix or every pipe of the core drained;
//   system.fence orders global-memory accesses; system.cacheinvalid() drops the core's cached copy of
//   all of global memory, cacheinvalid(tensor, shapes, offsets) of the cache line holding the region's
//   first element.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using ops::TypeError;

constexpr int64_t kMaxUserEventId = 13;  // 14 and 15 are reserved by the device
constexpr int64_t kMaxPipeEventId = 7;   // EVENT_ID0 .. EVENT_ID7
constexpr int64_t kMinFftsWorkspace = 256;
constexpr std::array<std::string_view, 8> kPipes = {"MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"};
constexpr std::array<std::string_view, 2> kCoreTypes = {"aic", "aiv"};

TypePtr NoValue() { return std::make_shared<UnknownType>(); }

// The messages leave out the op's name: the frontend puts the DSL's spelling of it in front.

Result<bool> CheckPipe(const Call::Kwargs& kwargs, std::string_view key, const Span& span) {
  auto pipe = FindAttr<std::string>(kwargs, key);
  if (!pipe || std::ranges::find(kPipes, *pipe) != kPipes.end()) return true;
  return TypeError(fmt::format("{}=\"{}\" is not a pipe", key, *pipe), span,
                   fmt::format("pipes: pl.PipeType.{}", fmt::join(kPipes, ", pl.PipeType.")));
}

// An event id: a constant in [0, max], or an integer scalar known when the kernel runs.
Result<bool> CheckEventId(const ExprPtr& id, int64_t max, const Span& span) {
  const Span& where = id->span().known() ? id->span() : span;
  if (auto value = AsConstInt(id)) {
    if (*value >= 0 && *value <= max) return true;
    return TypeError(fmt::format("event id {} is out of range [0, {}]", *value, max), where,
                     max == kMaxUserEventId ? "ids 14 and 15 are reserved for the device" : "");
  }
  const auto* scalar = id->type()->As<ScalarType>();
  if (scalar && IsInteger(scalar->dtype())) return true;
  return TypeError(fmt::format("the event id must be an integer, got {}", id->type()->str()), where);
}

Result<TypePtr> DeduceCrossCoreEvent(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  if (auto ok = CheckEventId(args[0], kMaxUserEventId, span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckPipe(kwargs, "pipe", span); !ok) return pypto::unexpected(ok.error());
  if (auto mode = FindAttr<int64_t>(kwargs, "ffts_mode"); mode && (*mode < 0 || *mode > 2))
    return TypeError(fmt::format("ffts_mode={} is not 0, 1 or 2", *mode), span,
                     "0: every core of the raiser's type, 1: the AIV lanes of a group, 2: AIC and AIV of a group");
  auto core_type = FindAttr<std::string>(kwargs, "core_type");
  if (core_type && std::ranges::find(kCoreTypes, *core_type) == kCoreTypes.end())
    return TypeError(fmt::format("core_type=\"{}\" is not \"aic\" or \"aiv\"", *core_type), span);
  return NoValue();
}

std::optional<CoreAffinity> EventCore(const OpAttrs& attrs) {
  auto core_type = FindAttr<std::string>(attrs, "core_type");
  if (!core_type) return std::nullopt;
  return *core_type == "aic" ? CoreAffinity::Cube : CoreAffinity::Vector;
}

Result<TypePtr> DeduceSetFfts(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  int64_t elements = 0;
  if (tensor && tensor->shape().size() == 1) elements = tensor->shape()[0];
  if (!tensor || tensor->dtype() != DataType::INT64 || elements < kMinFftsWorkspace)
    return TypeError(fmt::format("the FFTS workspace must be a 1-D INT64 tensor of at least {} elements, got {}",
                                 kMinFftsWorkspace, args[0]->type()->str()),
                     span, "pass a pl.Tensor[[256], pl.INT64] the FFTS unit may use as scratch");
  return NoValue();
}

Result<TypePtr> DeducePipeFlag(const std::vector<ExprPtr>&, const Call::Kwargs& kwargs, const Span& span) {
  for (std::string_view key : {"set_pipe", "wait_pipe"})
    if (auto ok = CheckPipe(kwargs, key, span); !ok) return pypto::unexpected(ok.error());
  const int64_t id = *FindAttr<int64_t>(kwargs, "event_id");
  if (id < 0 || id > kMaxPipeEventId)
    return TypeError(fmt::format("event_id={} is out of range [0, {}]", id, kMaxPipeEventId), span);
  return NoValue();
}

Result<TypePtr> DeduceNoOperands(const std::vector<ExprPtr>&, const Call::Kwargs&, const Span&) { return NoValue(); }

// cacheinvalid(): all of global memory; cacheinvalid(tensor, shapes, offsets): a region of the tensor.
Result<TypePtr> DeduceCacheInvalid(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  if (args.empty()) return NoValue();
  if (args.size() != 3)
    return TypeError("the region form takes (tensor, shapes, offsets); without arguments it is all of global memory",
                     span);
  auto tensor = ops::ExpectTensor(args[0], "the tensor of pl.system.cacheinvalid", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  auto shapes = ops::ScalarOffsets(args[1], "the shapes of pl.system.cacheinvalid", span);
  if (!shapes) return pypto::unexpected(shapes.error());
  auto offsets = ops::ScalarOffsets(args[2], "the offsets of pl.system.cacheinvalid", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  const size_t rank = (*tensor)->shape().size();
  if (shapes->size() != rank || offsets->size() != rank)
    return TypeError(fmt::format("the shapes ({}) and offsets ({}) must have one entry per dimension of the tensor "
                                 "({})",
                                 shapes->size(), offsets->size(), rank),
                     span);
  return NoValue();
}

}  // namespace

void RegisterSystemSyncOps(OpRegistry& registry) {
  // The simulator runs each pipe of a core in program order, so the intra-core flags, barriers and
  // fences order nothing there; the events between the members of a mixed task it does enforce.
  for (const auto* name : {"system.sync_set", "system.sync_wait"}) {
    const bool set = std::string_view(name) == "system.sync_set";
    std::vector<OpParam> params = {Arg("event_id"), EnumAttr("pipe", "pl.PipeType")};
    if (set) params.push_back(OptionalAttr("ffts_mode", OpAttrKind::Int));
    params.push_back(OptionalAttr("core_type", OpAttrKind::String));
    registry.Register(OpDef{.name = name,
                            .description = set ? "raise a cross-core event" : "wait for a cross-core event",
                            .params = std::move(params),
                            .deduce_type = DeduceCrossCoreEvent,
                            .affinity = CoreAffinity::Shared,
                            .affinity_from_attrs = EventCore});
  }
  registry.Register(OpDef{.name = "system.set_ffts",
                          .description = "hand the FFTS unit its scratch for cross-core events",
                          .params = {Arg("workspace")},
                          .deduce_type = DeduceSetFfts,
                          .affinity = CoreAffinity::Shared});
  for (const auto* name : {"system.sync_src", "system.sync_dst"}) {
    const bool src = std::string_view(name) == "system.sync_src";
    registry.Register(OpDef{.name = name,
                            .description = src ? "raise a flag from one pipe of the core to another"
                                               : "wait in one pipe of the core for another's flag",
                            .params = {EnumAttr("set_pipe", "pl.PipeType"), EnumAttr("wait_pipe", "pl.PipeType"),
                                       Attr("event_id", OpAttrKind::Int)},
                            .deduce_type = DeducePipeFlag,
                            .affinity = CoreAffinity::Shared});
  }
  static constexpr std::array<std::pair<const char*, const char*>, 4> kBarriers = {{
      {"system.bar_v", "wait until the vector pipe drained"},
      {"system.bar_m", "wait until the matrix pipe drained"},
      {"system.bar_all", "wait until every pipe of the core drained"},
      {"system.fence", "order the core's global-memory accesses"},
  }};
  for (const auto& [name, description] : kBarriers)
    registry.Register(OpDef{.name = name,
                            .description = description,
                            .params = {},
                            .deduce_type = DeduceNoOperands,
                            .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.cacheinvalid",
                          .description = "drop cached copies of global memory (all, or one tensor region's line)",
                          .params = {OptionalArg("tensor"), OptionalArg("shapes"), OptionalArg("offsets")},
                          .deduce_type = DeduceCacheInvalid,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
