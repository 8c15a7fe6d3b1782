// The orchestration as the task plan runs it: the steps (submits, scalar definitions, loops, ifs,
// scopes, views, carries) the emitter records while it writes the C++, which the loop expansion
// unrolls into submits. Shared by the emitter, the expander and the deferred plan kept for each run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "pypto/ir/stmt.h"
#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/task_plan.h"

namespace pypto::codegen_orch::detail {

// A scalar argument of one submit: a literal encoded once, or an expression over loop variables and
// orchestration scalars, evaluated in every iteration.
struct ScalarOperand {
  std::optional<uint64_t> bits;
  ir::ExprPtr expr;
  ir::DataType dtype = ir::DataType::INT64;  // the kernel parameter's
  std::string what;
};

// The orchestration as the task plan runs it: submits, scalar definitions and loops, in program order.
struct Step;

struct SubmitStep {
  rt::PlanSubmit submit;  // its tensors; the scalars follow them in each expanded submit
  std::vector<ScalarOperand> scalars;
  // A pl.spmd launch whose block count (its core_num) is computed in orchestration code: evaluated in
  // every iteration (submit.block_num is then unused).
  const ir::Call* computed_blocks = nullptr;
  std::vector<const ir::Var*> deps;  // the TaskIds it waits for (deps=[...])
  const ir::Var* task_id = nullptr;  // the TaskId variable it defines (as tid), if any
  const ir::Call* call = nullptr;    // the kernel call, for diagnostics
};

// A TaskId or TaskId-array variable takes a value. Copy: `t = u`, or `t = pl.system.task_invalid()`
// (from is null). Create: `tids = pl.array.create(extent, pl.TASK_ID)`, all invalid. Get:
// `t = tids[index]` (from is the array). Update: `tids = pl.array.update_element(from, index, value)`.
struct TaskIdStep {
  enum class Kind : uint8_t { Copy, Create, Get, Update } kind = Kind::Copy;
  const ir::Var* var = nullptr;
  const ir::Var* from = nullptr;
  ir::ExprPtr index;
  const ir::Var* value = nullptr;
  int64_t extent = 0;
};

struct ScalarStep {
  const ir::Var* var = nullptr;
  ir::ExprPtr value;
  ir::DataType dtype = ir::DataType::INDEX;
};

// `v = pl.slice(t, shape, offsets)` at offsets computed in orchestration code (or of such a view): the
// plan holds a template view (`view`, at offset 0); each expansion of this step adds the view at this
// iteration's offsets, which later submits naming the template take.
// A reshape of a tensor with an extent known only when the program runs (`reshape`) is one too: each
// expansion evaluates its new shape's computed dimensions (`dims`, null where constant) and checks the
// element count against the tensor's then, so a mismatch stops the run at the reshape's span.
struct ViewStep {
  uint32_t view = 0;
  std::vector<ir::ExprPtr> offsets;
  ir::Span span;
  bool reshape = false;
  std::vector<ir::ExprPtr> dims;
};

// The end of a loop body carrying scalars: each takes its next value, all computed before any is
// assigned (`a, b = b, a + b`).
struct CarryStep {
  std::vector<ScalarStep> updates;
};

// Tensors a loop carries by rebinding them (CarryKind::Rebind) name other buffers: each `slot` (the
// template view a carried variable is bound to) takes the buffer its `value` names in this iteration,
// all read before any is rebound (`a, b = b, a`).
struct RebindStep {
  struct Rebinding {
    uint32_t slot = 0;
    rt::PlanTensorRef value;
  };
  std::vector<Rebinding> rebindings;
};

// `t = pl.create_tensor(...)` in a loop body that runs again while a loop-carried tensor may still
// name one of t's earlier buffers: t is a template view (`slot`) that each expansion points at the
// first buffer of its pool (plan intermediates) that none of `carried` (the Rebind slots in scope
// there) names. The pool has one buffer more than `carried` has slots, so one is always free.
struct CreateStep {
  uint32_t slot = 0;
  std::vector<uint32_t> pool;
  std::vector<uint32_t> carried;
};

// `t = pl.create_tensor([t_dim, D])` in a program compiled once for every extent, `t_dim` computed
// from the extents it reads: the plan's intermediate holds UINT32_MAX on such an axis, and each run's
// expansion sets it from `dims` (one expression per axis; null for a static one) before any task runs.
// One a loop runs again (only its first axis computed) has a template view, `slot`: each expansion
// points it at a view of the intermediate's first rows at this iteration's shape, and the
// intermediate's first axis grows to the largest any iteration asks for. Every iteration reuses the
// one buffer, as a pooled create does; the runtime orders a task writing it after those still reading.
struct ShapeStep {
  uint32_t intermediate = 0;
  std::vector<ir::ExprPtr> dims;
  std::optional<uint32_t> slot;
  ir::Span span;
};

struct LoopStep {
  const ir::ForStmt* loop = nullptr;
  std::vector<Step> body;
  bool submits = false;  // whether any submit is inside; a loop without one expands to nothing
  bool carries_values_out = false;  // ... unless code after it reads scalars it computes or tensors it rebinds
  bool scoped = true;    // each iteration is a runtime scope (not inside a manual scope)
};

// `with pl.manual_scope():` / `with pl.scope():`: a runtime scope around its body's submits.
struct ScopeStep {
  bool manual = false;
  std::vector<Step> body;
};

// `if cond: ... else: ...` on orchestration scalars: the expansion evaluates the condition with the
// values it has there and runs one branch. Each branch ends by defining the if's scalar and TaskId
// results (ScalarSteps, TaskIdSteps), so later steps read whichever branch ran.
struct IfStep {
  const ir::IfStmt* stmt = nullptr;
  std::vector<Step> then_body, else_body;
};

struct Step {
  std::variant<SubmitStep, ScalarStep, LoopStep, TaskIdStep, ScopeStep, IfStep, CarryStep, ViewStep, RebindStep,
               CreateStep, ShapeStep>
      node;
};

// What a run gives the loop expansion to read tensors with: their memory, and a way to finish the
// tasks expanded so far, so that a read sees what they wrote (upstream's get_tensor_data waits for
// the tensor's producer the same way).
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // The memory of a parameter or an intermediate as the tasks run so far left it; an error at `span`
  // for a tensor this source cannot give.
  virtual ir::Result<rt::ChipTensor> Buffer(rt::PlanTensorRef ref, const std::string& name, const ir::Span& span) = 0;
  // Runs every submit expanded so far that has not run yet, and waits for them: the read of `name`
  // at `span` needs what they write.
  virtual ir::Result<bool> RunPending(const std::string& name, const ir::Span& span) = 0;
};

// What `pl.tensor.read` in orchestration code reads while the plan is expanded: the plan tensor each
// tensor variable read is bound to (a parameter, an intermediate or a view), and the run's tensors
// (present only when a run expands the plan).
struct TensorReads {
  std::unordered_map<const ir::Var*, rt::PlanTensorRef> refs;
  TensorSource* source = nullptr;
};

}  // namespace pypto::codegen_orch::detail

namespace pypto::codegen_orch {

// The steps of orchestration code that reads its tensors, kept to be expanded at each run.
struct DeferredPlan {
  std::vector<detail::Step> steps;
  detail::TensorReads reads;
  std::vector<rt::PlanView> views;  // the plan's views (slices' templates among them)
};

}  // namespace pypto::codegen_orch
