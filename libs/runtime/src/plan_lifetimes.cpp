// The scopes of a plan replayed from its submits' open/close counts, and for each intermediate the
// innermost scope that holds every use: upstream allocates a tensor in the scope that creates it and
// reclaims it when that scope has ended and its users are done; the creating scope holds every use,
// and the innermost such scope is the tightest the plan can tell.
#include "plan_lifetimes.h"

#include <algorithm>
#include <limits>

namespace pypto::rt {

namespace {

constexpr uint32_t kOpen = std::numeric_limits<uint32_t>::max();

struct ScopeRecord {
  size_t parent = 0;  // the outer scope's index (the run's outer scope is its own parent)
  size_t depth = 0;
  uint32_t closed_after = kOpen;  // the submit after which it closed
};

}  // namespace

std::vector<IntermediateLifetime> IntermediateLifetimes(const TaskPlan& plan) {
  std::vector<IntermediateLifetime> lifetimes(plan.intermediates.size());
  std::vector<size_t> first_scope(plan.intermediates.size(), 0);
  std::vector<ScopeRecord> scopes{{}};
  std::vector<size_t> open{0};
  for (uint32_t s = 0; s < plan.submits.size(); ++s) {
    const PlanSubmit& submit = plan.submits[s];
    for (int i = 0; i < submit.scopes_opened; ++i) {
      scopes.push_back({.parent = open.back(), .depth = open.size()});
      open.push_back(scopes.size() - 1);
    }
    for (const PlanTaskArg& arg : submit.args) {
      if (arg.direction == ArgDirection::Scalar) continue;
      std::optional<PlanTensorRef> root = BufferRefOf(plan, arg.tensor);
      if (!root || root->kind != PlanTensorRef::Kind::Intermediate) continue;
      IntermediateLifetime& lifetime = lifetimes[root->index];
      if (!lifetime.used) {
        lifetime = {.used = true, .first_submit = s};
        first_scope[root->index] = open.back();
      }
      lifetime.release_after = s;  // the last use, for now
    }
    for (int i = 0; i < submit.scopes_closed && open.size() > 1; ++i) {
      scopes[open.back()].closed_after = s;
      open.pop_back();
    }
  }
  const uint32_t last = plan.submits.empty() ? 0 : static_cast<uint32_t>(plan.submits.size() - 1);
  for (ScopeRecord& scope : scopes) scope.closed_after = std::min(scope.closed_after, last);
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    IntermediateLifetime& lifetime = lifetimes[i];
    if (!lifetime.used) continue;
    size_t scope = first_scope[i];
    while (scope != 0 && scopes[scope].closed_after < lifetime.release_after) scope = scopes[scope].parent;
    lifetime.release_after = scopes[scope].closed_after;
    lifetime.ring = scopes[scope].depth;
  }
  return lifetimes;
}

}  // namespace pypto::rt
