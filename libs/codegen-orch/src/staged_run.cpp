// RunDeferredPlan: a run of orchestration code that reads tensors, expanded and run in stages. A read
// of a tensor that tasks before it write cannot be answered from the plan alone: the tasks expanded
// so far run to completion first (a stage), then the expansion reads the element and goes on. Kept
// apart from the loop expansion, which only asks its TensorSource for memory and finished tasks.
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "loop_expander.h"
#include "pypto/codegen_orch/orchestration.h"

namespace pypto::codegen_orch {
namespace {

using detail::LoopExpander;
using detail::TensorReads;
using detail::TensorSource;
using ir::DiagnosticKind;
using ir::MakeError;

// A stage's view of a plan tensor: the intermediates are parameters after the caller's.
rt::PlanTensorRef AsStageRef(rt::PlanTensorRef ref, size_t param_count) {
  if (ref.kind != rt::PlanTensorRef::Kind::Intermediate) return ref;
  return {rt::PlanTensorRef::Kind::Param, static_cast<uint32_t>(param_count + ref.index)};
}

// The runtime scopes open after `submit`, given those open before it (outermost first: whether each
// is a manual scope).
void ApplyScopes(std::vector<bool>& open, const rt::PlanSubmit& submit) {
  for (uint16_t s = 0; s < submit.scopes_opened; ++s)
    open.push_back(submit.opens_manual_scope && s + 1 == submit.scopes_opened);
  open.resize(open.size() - std::min<size_t>(submit.scopes_closed, open.size()));
}

class StagedRun final : public TensorSource {
 public:
  StagedRun(const rt::TaskPlan& plan, std::vector<rt::PlanView> views, std::span<const rt::ChipTensor> params,
            const RunStage& run_stage)
      : plan_(plan), params_(params), run_stage_(run_stage), views_(std::move(views)) {}

  // What the loop expansion appends to: the run's submits, and the plan's views followed by those its
  // slices make.
  std::vector<rt::PlanSubmit>& submits() { return submits_; }
  std::vector<rt::PlanView>& views() { return views_; }

  ir::Result<rt::ChipTensor> Buffer(rt::PlanTensorRef ref, const std::string& name, const ir::Span& span) override {
    if (ref.kind == rt::PlanTensorRef::Kind::Param) return params_[ref.index];
    if (auto ok = BeginStaging(span); !ok) return pypto::unexpected(ok.error());
    if (ref.kind != rt::PlanTensorRef::Kind::Intermediate || ref.index >= plan_.intermediates.size())
      return MakeError(DiagnosticKind::Internal, fmt::format("'{}' names no tensor of the plan", name), span);
    return tensors_[params_.size() + ref.index];
  }

  ir::Result<bool> RunPending(const std::string& name, const ir::Span& span) override {
    if (auto ok = BeginStaging(span); !ok) return ok;
    return RunStageUpTo(submits_.size(), name, span);
  }

  // Whether the run went in stages (the intermediates then being parameters of every stage).
  bool staged() const { return staged_; }

  // After the expansion: the tasks not run yet (all of them in a run of one stage).
  ir::Result<bool> Finish() {
    if (!staged_) {
      rt::TaskPlan whole = plan_;
      whole.submits = std::move(submits_);
      whole.views = std::move(views_);
      return run_stage_(whole, params_);
    }
    return RunStageUpTo(submits_.size(), {}, {});
  }

 private:
  // The first staged read: from now on every stage takes the intermediates as parameters.
  ir::Result<bool> BeginStaging(const ir::Span& span) {
    if (staged_) return true;
    staged_ = true;
    tensors_.assign(params_.begin(), params_.end());
    for (size_t i = 0; i < plan_.intermediates.size(); ++i) {
      auto memory = rt::AllocatePlanTensor(plan_.intermediates[i], i);
      if (!memory) return MakeError(DiagnosticKind::Resource, memory.error().message, span);
      tensors_.push_back(rt::MakeExternalTensor(memory->get(), plan_.intermediates[i].shape,
                                                plan_.intermediates[i].dtype));
      memory_.push_back(std::move(*memory));
    }
    return true;
  }

  // Runs the submits from the last stage's end up to `end` as one plan.
  ir::Result<bool> RunStageUpTo(size_t end, const std::string& name, const ir::Span& span) {
    if (end == ran_) return true;
    rt::TaskPlan stage = StagePlan(ran_, end);
    ran_ = end;
    if (auto ok = run_stage_(stage, tensors_); !ok) {
      if (name.empty()) return ok;
      return MakeError(ok.error().kind,
                       fmt::format("{}\n(the tasks before orchestration code reads '{}' were running)",
                                   ok.error().message, name),
                       span);
    }
    return true;
  }

  // Submits [first, end) as a complete plan over the caller's tensors and the intermediates.
  rt::TaskPlan StagePlan(size_t first, size_t end) {
    const size_t param_count = params_.size();
    rt::TaskPlan stage{.orchestration_name = plan_.orchestration_name,
                       .params = plan_.params,
                       .kernels = plan_.kernels,
                       .task_window = plan_.task_window,
                       .ring_heap = plan_.ring_heap,
                       .ring_dep_pool = plan_.ring_dep_pool,
                       .dfx = plan_.dfx};
    stage.params.insert(stage.params.end(), plan_.intermediates.begin(), plan_.intermediates.end());
    for (rt::PlanView view : views_) {
      view.base = AsStageRef(view.base, param_count);
      stage.views.push_back(std::move(view));
    }
    std::vector<bool> open = ScopesOpenBefore(first);
    const size_t reopened = open.size();
    const bool innermost_manual = !open.empty() && open.back();
    for (size_t i = first; i < end; ++i) {
      rt::PlanSubmit submit = submits_[i];
      ApplyScopes(open, submit);
      for (auto& arg : submit.args)
        if (arg.direction != rt::ArgDirection::Scalar) arg.tensor = AsStageRef(arg.tensor, param_count);
      // Dependencies on tasks of earlier stages are met: they have finished.
      std::erase_if(submit.deps, [&](uint32_t dep) { return dep < first; });
      for (uint32_t& dep : submit.deps) dep -= static_cast<uint32_t>(first);
      stage.submits.push_back(std::move(submit));
    }
    // Scopes open across the boundaries: reopened by the first task, closed after the last.
    rt::PlanSubmit& head = stage.submits.front();
    if (reopened > 0 && head.scopes_opened == 0) head.opens_manual_scope = innermost_manual;
    head.scopes_opened = static_cast<uint16_t>(head.scopes_opened + reopened);
    stage.submits.back().scopes_closed = static_cast<uint16_t>(stage.submits.back().scopes_closed + open.size());
    return stage;
  }

  // The scopes open before submit `first`, kept from stage to stage so that each submit is counted
  // once. Only the newest submit's scope counts may still change (a scope that ends after it closes
  // on it), and a stage holds at least one submit, so those before `first` are final.
  std::vector<bool> ScopesOpenBefore(size_t first) {
    for (; settled_ < first; ++settled_) ApplyScopes(settled_open_, submits_[settled_]);
    return settled_open_;
  }

  const rt::TaskPlan& plan_;
  std::span<const rt::ChipTensor> params_;
  const RunStage& run_stage_;
  std::vector<rt::PlanSubmit> submits_;
  std::vector<rt::PlanView> views_;
  bool staged_ = false;
  std::vector<rt::PlanTensorMemory> memory_;  // the intermediates, for the whole run
  std::vector<rt::ChipTensor> tensors_;       // staged: the caller's tensors, then the intermediates
  size_t ran_ = 0;                            // submits run by earlier stages
  std::vector<bool> settled_open_;            // the scopes open after submits [0, settled_)
  size_t settled_ = 0;
};

}  // namespace

ir::Result<bool> RunDeferredPlan(const DeferredPlan& deferred, const rt::TaskPlan& plan,
                                 std::span<const rt::ChipTensor> params, const RunStage& run_stage,
                                 DeferredRun* info) {
  if (auto ok = rt::CheckPlanParams(plan, params); !ok) return MakeError(DiagnosticKind::Type, ok.error().message);
  // The run's own plan: tensors created with extents computed at run time take this run's (ShapeStep).
  rt::TaskPlan run_plan = plan;
  StagedRun run(run_plan, deferred.views, params, run_stage);
  TensorReads reads{.refs = deferred.reads.refs, .source = &run};
  LoopExpander expander(run_plan, run.submits(), run.views(), &reads, &run_plan.intermediates);
  if (auto ok = expander.Run(deferred.steps); !ok) return ok;
  auto finished = run.Finish();
  if (info) info->shapes_only = finished && !expander.ReadAnElement() && !run.staged();
  return finished;
}

}  // namespace pypto::codegen_orch
