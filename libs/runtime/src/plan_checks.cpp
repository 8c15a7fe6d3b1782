#include "pypto/runtime/plan_checks.h"

#include <optional>

namespace pypto::rt {
namespace {

// The intermediate a tensor reference lies in; nullopt for a parameter.
std::optional<uint32_t> IntermediateOf(const TaskPlan& plan, PlanTensorRef ref) {
  const auto buffer = BufferRefOf(plan, ref);
  if (!buffer || buffer->kind != PlanTensorRef::Kind::Intermediate) return std::nullopt;
  return buffer->index;
}

// Anything but a plain input may write (NoDep included: it is not known to be read only).
bool MayWrite(ArgDirection direction) { return direction != ArgDirection::Input && direction != ArgDirection::Scalar; }

std::string ReaderName(const TaskPlan& plan, const PlanSubmit& submit) {
  if (submit.mixed) return "a mixed kernel group";
  const auto id = static_cast<size_t>(submit.func_id);
  return id < plan.kernels.size() ? plan.kernels[id].name : "kernel #" + std::to_string(submit.func_id);
}

}  // namespace

std::vector<UnwrittenIntermediateRead> FindUnwrittenIntermediateReads(const TaskPlan& plan) {
  std::vector<bool> written(plan.intermediates.size(), false);
  for (size_t i = 0; i < plan.intermediates.size(); ++i) written[i] = plan.intermediates[i].initial_bits.has_value();
  for (const auto& submit : plan.submits)
    for (const auto& arg : submit.args)
      if (MayWrite(arg.direction))
        if (auto index = IntermediateOf(plan, arg.tensor)) written[*index] = true;

  std::vector<UnwrittenIntermediateRead> reads;
  std::vector<bool> reported(plan.intermediates.size(), false);
  for (size_t s = 0; s < plan.submits.size(); ++s) {
    const auto& submit = plan.submits[s];
    if (submit.dummy || submit.fill) continue;
    for (const auto& arg : submit.args) {
      if (arg.direction != ArgDirection::Input) continue;
      auto index = IntermediateOf(plan, arg.tensor);
      if (!index || written[*index] || reported[*index]) continue;
      reported[*index] = true;
      reads.push_back({plan.intermediates[*index].name, ReaderName(plan, submit), s});
    }
  }
  return reads;
}

}  // namespace pypto::rt
