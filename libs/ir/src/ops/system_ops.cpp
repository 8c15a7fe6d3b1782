// Ops that synchronise the cores of an SPMD launch rather than compute. pl.system.syncall is a
// barrier among every block of the running launch: no block passes it before all have reached it.
// It is a statement with no value and no tiles, so any core type may run it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using ops::TypeError;

// The soft barrier counts arrivals in a zeroed global workspace of at least this many INT32.
constexpr int64_t kSoftWorkspaceInts = 16;

Result<bool> CheckChoice(const Call::Kwargs& kwargs, const char* name, std::span<const std::string_view> choices,
                         const Span& span) {
  auto value = FindAttr<std::string>(kwargs, name);
  if (!value || std::find(choices.begin(), choices.end(), *value) != choices.end()) return true;
  return TypeError(fmt::format("{}=\"{}\" is not one of \"{}\"", name, *value,
                               fmt::join(choices, "\", \"")),
                   span);
}

Result<TypePtr> DeduceSyncall(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  static constexpr std::array<std::string_view, 3> kCoreTypes = {"mix", "aic", "aiv"};
  static constexpr std::array<std::string_view, 2> kModes = {"hard", "soft"};
  if (auto ok = CheckChoice(kwargs, "core_type", kCoreTypes, span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckChoice(kwargs, "mode", kModes, span); !ok) return pypto::unexpected(ok.error());
  if (!args.empty()) {
    const auto* workspace = args[0]->type()->As<TensorType>();
    int64_t elements = 1;
    if (workspace)
      for (int64_t dim : workspace->shape()) elements *= dim;
    if (!workspace || workspace->dtype() != DataType::INT32 || elements < kSoftWorkspaceInts)
      return TypeError(fmt::format("syncall gm_workspace must be an INT32 tensor of at least {} elements, "
                                   "got {}",
                                   kSoftWorkspaceInts, args[0]->type()->str()),
                       span, "the soft barrier counts arrivals in it; pass a zeroed pl.Tensor[[16], pl.INT32]");
  }
  if (FindAttr<std::string>(kwargs, "mode") == "soft" && args.empty())
    return TypeError("a soft syncall needs gm_workspace", span,
                     "pass a zeroed pl.Tensor[[16], pl.INT32] as gm_workspace=, or use mode=\"hard\"");
  return TypePtr(std::make_shared<UnknownType>());
}

}  // namespace

bool IsHardSyncall(const Call& call) {
  return call.is_op_call() && call.op()->name == "system.syncall" &&
         FindAttr<std::string>(call.kwargs(), "mode").value_or("hard") == "hard";
}

void RegisterSystemOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "system.syncall",
                          .description = "a barrier among all blocks of the running SPMD launch",
                          .params = {OptionalAttr("core_type", OpAttrKind::String),
                                     OptionalAttr("mode", OpAttrKind::String), OptionalArg("gm_workspace")},
                          .deduce_type = DeduceSyncall,
                          // No effects are declared on gm_workspace: the counters in it are the device
                          // barrier's own (it leaves them zeroed), and the simulator's barrier uses none.
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
