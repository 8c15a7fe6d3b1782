// LoopExpander: runs the plan steps with every loop unrolled, appending each submit, with the values
// its scalars take in that iteration, to the task plan (at compile time, or at each run for a plan
// that reads its tensors).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "orchestration_scalars.h"
#include "plan_steps.h"

namespace pypto::codegen_orch::detail {

// Runs the steps with every loop unrolled, appending each submit, with its scalars' values for that
// iteration, to the plan.
class LoopExpander {
  // The submit indices of a TaskId (one) or a TaskId array (one per element); nullopt: invalid.
  using TaskIds = std::vector<std::optional<uint32_t>>;

 public:
  // Whether this expansion read an element of a tensor (pl.tensor.read); without one, what it
  // expanded depends on the run's tensors only through their shapes.
  bool ReadAnElement() const { return read_element_; }

  // `views` holds the plan's views; the expansion appends those its slices make. `plan` gives the
  // extents of the tensors they slice.
  // `shaped` (a run's copy of `plan`'s intermediates, which `plan` itself holds) takes the shapes
  // ShapeSteps compute; without it a ShapeStep is an error.
  LoopExpander(const rt::TaskPlan& plan, std::vector<rt::PlanSubmit>& submits, std::vector<rt::PlanView>& views,
               const TensorReads* reads = nullptr, std::vector<rt::PlanTensor>* shaped = nullptr)
      : plan_(plan), submits_(submits), views_(views), reads_(reads), shaped_(shaped) {}

  ir::Result<bool> Run(const std::vector<Step>& steps);

 private:
  // The steps (loop_expander.cpp).
  ir::Result<bool> Submit(const SubmitStep& step);
  ir::Result<bool> CheckRebindHazard(const SubmitStep& step, const rt::PlanSubmit& submit) const;
  std::string NameOf(rt::PlanTensorRef ref) const;
  ir::Result<int32_t> BlockCount(const ir::Call& launch) const;
  ir::Result<const TaskIds*> TaskIdOf(const ir::Var* var) const;
  ir::Result<bool> DefineTaskId(const TaskIdStep& step);
  ir::Result<size_t> ElementIndex(const TaskIdStep& step, size_t extent) const;
  ir::Result<bool> Define(const ScalarStep& step);
  rt::PlanTensorRef Current(rt::PlanTensorRef ref) const;
  ir::Result<bool> Rebind(const RebindStep& step);
  rt::PlanTensorRef BufferOf(rt::PlanTensorRef ref) const;
  ir::Result<bool> Create(const CreateStep& step);
  ir::Result<bool> Shape(const ShapeStep& step);
  ir::Result<bool> View(const ViewStep& step);
  ir::Result<bool> Reshape(const ViewStep& step, rt::PlanView& view) const;
  ir::Result<bool> EvalDims(const std::vector<ir::ExprPtr>& dims, std::vector<uint32_t>& shape, const std::string& what,
                            const ir::Span& span) const;
  std::vector<uint32_t> RunShapeOf(rt::PlanTensorRef ref) const;
  uint32_t ExtentOf(rt::PlanTensorRef ref, size_t d) const;
  ir::Result<bool> Carry(const CarryStep& step);
  ir::Result<bool> If(const IfStep& step);
  ir::Result<bool> Loop(const LoopStep& step);
  ir::Result<bool> Scope(const std::vector<Step>& body, bool manual);
  static __int128 MinSubmits(const std::vector<Step>& steps);
  ir::Result<bool> CountTasks(const SubmitStep& step, int32_t blocks);
  pypto::unexpected<ir::Diagnostic> TooLarge(const std::string& what) const;
  std::string Where() const;

  // Orchestration scalar expressions in this iteration (loop_expander_eval.cpp).
  ir::Result<Value> ReadTensor(const ir::Call& read) const;
  ir::Result<Value> TensorExtent(const ir::Call& extent) const;
  ir::Result<rt::ChipTensor> TensorOf(rt::PlanTensorRef ref, const std::string& name, const ir::Span& span) const;
  ir::Result<Value> Eval(const ir::ExprPtr& expr) const;
  pypto::unexpected<ir::Diagnostic> Failure(const ir::BinaryExpr& binary, const std::string& what) const;
  ir::Result<uint64_t> Encode(const Value& value, const ScalarOperand& scalar, const ir::Expr& arg) const;

  const rt::TaskPlan& plan_;
  std::vector<rt::PlanSubmit>& submits_;
  std::vector<rt::PlanView>& views_;
  const TensorReads* reads_;
  std::vector<rt::PlanTensor>* shaped_;
  std::unordered_map<uint32_t, rt::PlanTensorRef> current_views_;  // template view -> this iteration's
  // The parameters and intermediates (by kind and index) that submits not yet run write, and the
  // intermediates any submit so far writes. A read of the former runs those submits first.
  mutable std::set<std::pair<rt::PlanTensorRef::Kind, uint32_t>> pending_writes_;
  mutable bool read_element_ = false;  // ReadTensor ran: the expansion depends on what a tensor holds
  // A read ran tasks or took an intermediate's memory: the run has allocated its intermediates (a staged
  // run, staged_run.cpp), so a tensor shaped at run time can no longer grow.
  mutable bool allocated_ = false;
  std::set<uint32_t> written_intermediates_;
  uint16_t unopened_scopes_ = 0;  // scopes begun with no submit yet to open them
  bool unopened_manual_ = false;  // the innermost of them is a manual scope
  std::unordered_map<const ir::Var*, Value> values_;
  std::unordered_map<const ir::Var*, TaskIds> task_ids_;
  std::vector<std::pair<const ir::ForStmt*, int64_t>> enclosing_;  // the loops around, with their values
  uint64_t iterations_ = 0;
  uint64_t tasks_ = 0;  // the blocks of every submit so far
};

}  // namespace pypto::codegen_orch::detail
