// OrchestrationEmitter: the one walk of the lowered orchestration that writes its C++ and records
// the plan steps. Its member definitions are grouped by what they emit (orchestration_emitter.cpp
// and emit_*.cpp); this private header holds the class and the helpers those files share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cpp_names.h"
#include "plan_steps.h"
#include "pypto/codegen_orch/orchestration.h"

namespace pypto::codegen_orch::detail {

// The manifest's token (IN / OUT / INOUT) for a parameter direction.
const char* DirectionToken(ir::ParamDirection direction);

// The statements of a body that is an automatic runtime scope (RuntimeScopesMaterialized): the
// scope's, then the body's terminator after it (a loop's yield, whose carry updates belong to the
// iteration, or the function's return).
std::vector<ir::StmtPtr> StmtsInScope(const ir::RuntimeScopeStmt& scope, const ir::StmtPtr& body);

class OrchestrationEmitter {
  // A tensor the orchestration names: its place in the plan and its C++ variable.
  struct Binding {
    rt::PlanTensorRef ref;
    std::string cpp_name;
  };

  // The buffers a pl.create_tensor in a loop takes one of in each run (AllocateIntermediates): plan
  // intermediates, the C++ array of pointers to them, the template view the variable is, and the
  // loop-carried tensors that may name one of them.
  struct Pool {
    uint32_t slot = 0;
    std::vector<uint32_t> buffers;
    std::string cpp_name;
    std::vector<const ir::Var*> carried;
  };

  // A pl.create_tensor whose shape is computed at run time: its plan intermediate and, for one a loop
  // runs again, the template view its variable is, which each run points at a view of the
  // intermediate's first rows (ShapeStep::slot).
  struct RunTimeShaped {
    uint32_t intermediate = 0;
    std::optional<uint32_t> slot;
  };

 public:
  explicit OrchestrationEmitter(const ir::Program& program) : program_(program) {}

  ir::Result<Orchestration> Run();

 private:
  // The walk (orchestration_emitter.cpp): parameters, each statement, runtime scopes, the source.
  ir::Result<bool> BindParams(const ir::Function& entry);
  ir::Result<bool> EmitStmt(const ir::StmtPtr& stmt);
  ir::Result<bool> EmitRuntimeScope(const ir::RuntimeScopeStmt& scope);
  void Separate();
  std::string Declared(std::string_view type, const std::string& name);
  std::string TaskIdDecl(const std::string& name);
  std::string Source(const ir::Function& entry) const;

  // pl.create_tensor: plan intermediates and buffer pools (emit_intermediates.cpp).
  //
  // A pl.create_tensor of the orchestration. One that a loop runs again makes a new tensor each time;
  // `carried` are the tensors loops carry by rebinding (CarryKind::Rebind) that are in scope where it
  // runs and have its dtype: the only names under which one of its earlier tensors can still be read
  // there (anything else naming one was defined in an iteration that has ended).
  struct TensorCreate {
    ir::StmtPtr stmt;
    bool repeated = false;
    std::vector<const ir::Var*> carried;
  };

  static bool IsTensorCreate(const ir::StmtPtr& stmt);
  static void CollectTensorCreates(const std::vector<ir::StmtPtr>& stmts, bool repeats,
                                   std::vector<const ir::Var*>& carried, std::vector<TensorCreate>& creates);
  static bool RunsOnce(const ir::ForStmt& loop);
  void SetInitialValue(const ir::AssignStmt& create, const std::string& name, rt::PlanTensor& plan_tensor);
  ir::Result<bool> AllocateIntermediates(const std::vector<ir::StmtPtr>& body);
  ir::Result<bool> EmitCreate(const ir::AssignStmt& create);
  ir::Result<bool> EmitPooledCreate(const ir::AssignStmt& create, const Pool& pool, bool select_in_cpp);
  void EmitRefill(const ir::AssignStmt& create, uint64_t bits);
  ir::Result<bool> AddRunTimeShaped(const TensorCreate& create, const ir::TensorType& tensor, rt::PlanTensor plan_tensor);
  ir::Result<bool> EmitRunTimeShapedCreate(const ir::AssignStmt& create, const RunTimeShaped& shaped);
  ir::Result<bool> CheckLoopShapesBeforeReads(const ir::Function& entry) const;

  // TaskIds, TaskId arrays and deps= (emit_task_ids.cpp).
  const std::string* TaskNameOf(const ir::ExprPtr& expr) const;
  ir::Result<bool> EmitTaskIdDef(const ir::AssignStmt& assign);
  ir::Result<bool> EmitTaskDummy(const ir::AssignStmt& assign, const ir::Call& call);
  ir::Result<bool> EmitTaskIdArray(const ir::AssignStmt& assign);
  ir::Result<bool> EmitArrayElement(const ir::AssignStmt& assign, const ir::Call& call);
  ir::Result<std::string> ElementIndexCpp(const ir::ExprPtr& index, const ir::Call& call);
  ir::Result<bool> EmitDependencies(const std::vector<ir::ExprPtr>& deps, const std::string& params,
                                    SubmitStep& step);

  // Orchestration loops and what they carry (emit_loops.cpp).
  ir::Result<bool> EmitLoop(const ir::ForStmt& loop);
  static bool CarriesValuesOut(const ir::ForStmt& loop);
  ir::Result<bool> EmitCarries(const ir::ForStmt& loop);
  ir::Result<bool> EmitCarriedScalar(const ir::ForStmt& loop, const ir::IterArg& iter_arg);
  ir::Result<bool> EmitCarriedTaskId(const ir::IterArg& iter_arg);
  ir::Result<bool> EmitCarriedTensor(const ir::ForStmt& loop, const ir::IterArg& iter_arg);
  ir::Result<bool> EmitLoopYield(const ir::YieldStmt& yield);
  ir::Result<bool> EmitTensorYield(const ir::YieldStmt& yield);
  ir::Result<bool> EmitScalarYield(const ir::YieldStmt& yield);
  static bool ContainsSubmit(const std::vector<Step>& steps);

  // Orchestration ifs (emit_ifs.cpp).
  ir::Result<bool> EmitIf(const ir::IfStmt& branch);
  // The C++ "variable" of an if result that is a TaskId array: none of its own, as both branches
  // update one array in place.
  static constexpr const char* kArrayResult = "[]";
  ir::Result<bool> EmitBranch(const ir::StmtPtr& body, const ir::IfStmt& branch,
                              const std::vector<std::string>& results, std::vector<Step>& steps,
                              std::vector<std::optional<Binding>>& tensors);
  ir::Result<bool> BindIfTensors(const ir::IfStmt& branch, const std::vector<std::optional<Binding>>& then_tensors,
                                 const std::vector<std::optional<Binding>>& else_tensors);

  // Scalar definitions, element reads and scalar expressions as C++ (emit_scalars.cpp).
  ir::Result<bool> EmitScalarDef(const ir::AssignStmt& assign);
  ir::Result<bool> EmitTensorRead(const ir::AssignStmt& assign, const ir::Call& read);
  ir::Result<bool> EmitTensorExtent(const ir::AssignStmt& assign, const ir::Call& extent);
  ir::Result<bool> HoistElementReads(const ir::ExprPtr& expr);
  ir::Result<std::string> EmitElementRead(const ir::Call& read, const std::string& hint, ir::DataType dtype,
                                          const ir::Span& span);
  const ir::Var* UnknownScalar(const ir::ExprPtr& expr) const;
  const ir::Call* RunTimeCall(const ir::ExprPtr& expr) const;
  ir::Result<std::string> CppExpr(const ir::ExprPtr& expr) const;
  ir::Result<std::string> ScalarArgCpp(const ir::ExprPtr& arg, ir::DataType dtype, const std::string& what) const;

  // Views: reshape, transpose, slice (emit_views.cpp).
  ir::Result<const Binding*> ViewedTensor(const ir::AssignStmt& assign, const ir::Call& call,
                                          std::string_view what) const;
  static std::string ViewShape(const ir::Var& var, rt::PlanView& view);
  ir::Result<bool> EmitReshape(const ir::AssignStmt& assign, const ir::Call& call);
  ir::Result<std::string> ReshapeDims(const ir::AssignStmt& assign, const ir::Call& call);
  ir::Result<bool> EmitTranspose(const ir::AssignStmt& assign, const ir::Call& call);
  Binding AddView(rt::PlanView view, const std::string& cpp_name, const ir::Span& span);
  ir::Result<bool> EmitSlice(const ir::AssignStmt& assign, const ir::Call& call);

  // Kernel launches (emit_submits.cpp).
  ir::Result<bool> EmitDumpTag(const ir::Call& call);
  // The kernels a Group function runs as one MixedKernels task: its calls of one AIC and/or one AIV
  // function, each passing the group's parameters in order, since the members share one args[].
  struct GroupMembers {
    ir::FunctionPtr aic, aiv;
  };
  ir::Result<GroupMembers> MembersOf(const ir::Function& group) const;
  ir::Result<rt::MixedKernels> MixedKernelsOf(const ir::Function& group);
  // How many blocks a kernel call launches: none given (one), a literal (0: nothing to launch), or an
  // orchestration scalar expression (`computed`) the plan evaluates at each submit. `text` is the count
  // set_block_num takes in the C++: the literal, or a variable (`cpp` is its value, unless it is an
  // orchestration scalar's own); empty for a plain call.
  struct Blocks {
    std::optional<int32_t> literal;
    ir::ExprPtr computed;
    std::string text, cpp;
  };
  ir::Result<Blocks> BlocksOf(const ir::Call& call, const ir::Function& callee);
  static std::string KernelIdCpp(int32_t id);
  ir::Result<bool> EmitSubmit(const ir::Call& call, const ir::Var* result);
  ir::Result<bool> BindCallResult(const ir::Call& call, const ir::Function& callee, const ir::Var* result,
                                  const std::vector<std::optional<Binding>>& written);
  int32_t FuncId(const ir::Function& callee);

  const ir::Program& program_;
  Orchestration result_;
  std::unordered_map<const ir::Var*, Binding> bindings_;
  std::unordered_map<const ir::AssignStmt*, Binding> view_of_;  // each reshape's view, made once
  std::unordered_map<const ir::Stmt*, Pool> pools_;  // the creates that take a buffer of a pool in each run
  // The creates with init_value that a loop runs again: the bits of their starting value, which a fill
  // task sets in the buffer at each run (EmitRefill).
  std::unordered_map<const ir::Stmt*, uint64_t> refills_;
  // The creates whose shape is computed at run time (a program compiled for every extent), each with its
  // plan intermediate: allocated where the statement runs (EmitRunTimeShapedCreate), not at scope entry.
  // One a loop runs again also has the template view its variable is (RunTimeShaped::slot).
  std::unordered_map<const ir::Stmt*, RunTimeShaped> run_time_shaped_;
  // Each pl.read of orchestration code: the tensor it reads, and the read (CheckLoopShapesBeforeReads).
  std::vector<std::pair<rt::PlanTensorRef, const ir::Call*>> element_reads_;
  std::set<uint32_t> template_views_;  // slices whose views each expansion makes (ViewStep)
  std::unordered_map<const ir::Var*, std::string> scalars_;  // loop variables and scalar definitions
  std::unordered_map<const ir::Var*, std::string> task_names_;  // TaskId variables, by their C++ names
  std::set<const ir::Var*> dump_tagged_;                     // pl.dump_tag'ed so far
  CppNames names_;
  std::map<std::string, int32_t> func_ids_;
  std::string params_, body_;
  std::string indent_ = "    ";
  bool block_start_ = true, after_scalar_ = false;
  int task_count_ = 0;
  int mixed_count_ = 0;
  int loop_depth_ = 0;
  int if_depth_ = 0;
  const ir::ForStmt* current_loop_ = nullptr;  // the innermost loop being emitted
  std::string* hoisted_ = nullptr;  // inside a runtime scope: the declarations made before the outermost one
  std::string hoist_indent_;        // the indentation of that scope
  std::vector<Step> steps_root_;
  std::vector<Step>* steps_ = &steps_root_;
  TensorReads reads_;  // the tensors pl.tensor.read reads
  std::unordered_map<const ir::Call*, std::string> read_names_;  // element reads in conditions -> C++ names
};

}  // namespace pypto::codegen_orch::detail
