// Walks the lowered orchestration once, producing the C++ source and the task plan together.
//
// `x = pl.create_tensor(...)` at the top of the body makes plan intermediates (one alloc_tensors at
// scope entry in the C++), and each kernel call becomes one submit whose tensors come first and whose
// scalars follow, encoded as 64-bit patterns (add_scalar). Orchestration loops become C++ `for`
// loops and ifs C++ `if`s; scalar definitions (`k0 = kb * 64`) become C++ variables. The walk also
// records the body as steps (submits, scalar definitions, loops, ifs), which the plan runs unrolled at
// compile time: loop bounds and if conditions must be known then, and each submit in a loop carries
// that iteration's scalar values.
#include "pypto/codegen_orch/orchestration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/submit_dumps.h"
#include "pypto/passes/ir_property.h"
#include "pypto/runtime/chip_tensor.h"
#include "tensor_element.h"

namespace pypto::codegen_orch {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

const char* DirectionToken(ir::ParamDirection direction) {
  switch (direction) {
    case ir::ParamDirection::In: return "IN";
    case ir::ParamDirection::Out: return "OUT";
    case ir::ParamDirection::InOut: return "INOUT";
  }
  return "IN";
}

rt::ArgDirection ToRuntime(ir::ArgDirection direction) {
  switch (direction) {
    case ir::ArgDirection::Input: return rt::ArgDirection::Input;
    case ir::ArgDirection::Output: return rt::ArgDirection::Output;
    case ir::ArgDirection::InOut: return rt::ArgDirection::InOut;
    case ir::ArgDirection::OutputExisting: return rt::ArgDirection::OutputExisting;
    case ir::ArgDirection::NoDep: return rt::ArgDirection::NoDep;
    case ir::ArgDirection::Scalar: return rt::ArgDirection::Scalar;
  }
  return rt::ArgDirection::Input;
}

// The CoreTaskArgs method for a call-site direction.
const char* AddMethod(ir::ArgDirection direction) {
  switch (direction) {
    case ir::ArgDirection::Input: return "add_input";
    case ir::ArgDirection::Output:
    case ir::ArgDirection::OutputExisting: return "add_output";
    case ir::ArgDirection::InOut: return "add_inout";
    case ir::ArgDirection::NoDep: return "add_no_dep";
    case ir::ArgDirection::Scalar: return "add_scalar";
  }
  return "add_input";
}

// A scalar kernel argument: its 64-bit pattern for the plan and the same value as C++ for add_scalar.
struct ScalarArg {
  uint64_t bits = 0;
  std::string cpp;
};

// The shortest decimal text that reads back as the same value, as a C++ floating literal.
template <typename T>
std::string FloatLiteral(T value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Encodes a literal for a kernel scalar parameter of `dtype`, as upstream's add_scalar receives it:
// floats as their bit pattern zero-extended (to_u64), integers sign- or zero-extended to 64 bits.
ir::Result<ScalarArg> EncodeScalar(const ir::Expr& arg, ir::DataType dtype, const std::string& what) {
  const auto* as_int = arg.As<ir::ConstInt>();
  const auto* as_float = arg.As<ir::ConstFloat>();
  const auto* as_bool = arg.As<ir::ConstBool>();
  if (!as_int && !as_float && !as_bool)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{} must be a literal; scalar values computed in orchestration code are not "
                                 "supported yet",
                                 what),
                     arg.span());
  if (dtype == ir::DataType::FP32 || dtype == ir::DataType::FP64) {
    if (as_bool)
      return MakeError(DiagnosticKind::Type, fmt::format("{} is {}, but a bool was passed", what,
                                                         ir::DataTypeName(dtype)),
                       arg.span());
    const double value = as_float ? as_float->value() : static_cast<double>(as_int->value());
    if (dtype == ir::DataType::FP64) {
      if (!std::isfinite(value))
        return ScalarArg{std::bit_cast<uint64_t>(value), fmt::format("{:#x}ull", std::bit_cast<uint64_t>(value))};
      return ScalarArg{std::bit_cast<uint64_t>(value), fmt::format("to_u64({})", FloatLiteral(value))};
    }
    const float narrowed = static_cast<float>(value);
    const uint64_t bits = std::bit_cast<uint32_t>(narrowed);
    if (!std::isfinite(narrowed)) return ScalarArg{bits, fmt::format("(uint64_t){:#x}", bits)};
    return ScalarArg{bits, fmt::format("to_u64({}f)", FloatLiteral(narrowed))};
  }
  if (dtype == ir::DataType::BOOL || ir::IsInteger(dtype)) {
    if (as_float)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} is {}, but the floating-point literal {} was passed", what,
                                   ir::DataTypeName(dtype), as_float->value()),
                       arg.span());
    const int64_t value = as_bool ? int64_t{as_bool->value()} : as_int->value();
    if (dtype == ir::DataType::BOOL) {
      if (value != 0 && value != 1)
        return MakeError(DiagnosticKind::Type, fmt::format("{} is BOOL, but {} was passed", what, value), arg.span());
      return ScalarArg{static_cast<uint64_t>(value), fmt::format("(uint64_t){}", value)};
    }
    if (ir::DataTypeBits(dtype) < 64) {
      const auto [lowest, highest] = ir::IntegerRange(dtype);
      if (value < lowest || value > highest)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{} is {}, which cannot hold {}", what, ir::DataTypeName(dtype), value),
                         arg.span());
    }
    // Negative values reach 64 bits sign-extended, as `(uint64_t)` of the signed value does.
    if (value == std::numeric_limits<int64_t>::min()) return ScalarArg{static_cast<uint64_t>(value), "(uint64_t)INT64_MIN"};
    return ScalarArg{static_cast<uint64_t>(value), fmt::format("(uint64_t){}", value)};
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("{} is {}; kernel scalars of that dtype are not supported yet", what,
                               ir::DataTypeName(dtype)),
                   arg.span());
}

// The dtype a scalar argument is passed as: the callee parameter's, or the literal's own.
ir::DataType ScalarDtype(const ir::Var& param, const ir::Expr& arg) {
  if (const auto* scalar = param.type()->As<ir::ScalarType>()) return scalar->dtype();
  if (const auto* scalar = arg.type()->As<ir::ScalarType>()) return scalar->dtype();
  return ir::DataType::INT64;
}

// The statements of a body that is an automatic runtime scope (RuntimeScopesMaterialized): the
// scope's, then the body's terminator after it (a loop's yield, whose carry updates belong to the
// iteration, or the function's return).
std::vector<ir::StmtPtr> StmtsInScope(const ir::RuntimeScopeStmt& scope, const ir::StmtPtr& body) {
  std::vector<ir::StmtPtr> stmts = ir::FlattenStmts(scope.body());
  const auto outer = ir::FlattenStmts(body);
  if (outer.back().get() != &scope) stmts.push_back(outer.back());
  return stmts;
}

// What the emitter reads from the IR instead of deciding it, each established by a pass of the
// default pipeline; a program lacking one is refused, naming it.
ir::Result<bool> CheckPreconditions(const ir::Program& program) {
  using passes::IRProperty;
  for (IRProperty property : {IRProperty::NoInCoreScopes, IRProperty::CallDirectionsDerived,
                              IRProperty::ReturnParamsExplicit, IRProperty::RuntimeScopesMaterialized,
                              IRProperty::IterArgCarryClassified}) {
    auto holds = passes::VerifyProperty(property, program);
    if (!holds)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("codegen-orch requires {}: {}", passes::IRPropertyName(property),
                                   holds.error().message),
                       holds.error().span, "lower the program with the default pipeline (passes::Lower) first");
  }
  return true;
}

// C++ names for intermediates: identifiers, unique, and clear of the names the emitter generates.
class CppNames {
 public:
  std::string Take(std::string_view hint) {
    static const std::set<std::string_view> kReserved = {
        "alignas", "auto",     "bool",   "break",  "case",     "char",      "class",  "const",    "continue",
        "default", "delete",   "do",     "double", "else",     "enum",      "extern", "false",    "float",
        "for",     "goto",     "if",     "inline", "int",      "long",      "new",    "operator", "private",
        "public",  "return",   "short",  "signed", "sizeof",   "static",    "struct", "switch",   "template",
        "this",    "true",     "typedef", "union", "unsigned", "using",     "void",   "volatile", "while",
        "orch_args", "alloc_tensors", "to_u64", "DataType", "ChipTensor", "CoreTaskArgs", "TensorCreateInfo",
        "TaskOutputTensors"};
    std::string name(hint);
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    const bool generated_prefix = name.starts_with("ext_") || name.starts_with("params_t") ||
                                  name.starts_with("alloc_") || name.starts_with("__");
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || kReserved.contains(name) ||
        generated_prefix)
      name.insert(0, "t_");
    // The intermediate's TensorCreateInfo and shape array are named after it, so those must be free too.
    auto free = [&](const std::string& candidate) {
      return !taken_.contains(candidate) && !taken_.contains(candidate + "_ci") &&
             !taken_.contains(candidate + "_ci_shapes");
    };
    std::string unique = name;
    for (int n = 1; !free(unique); ++n) unique = fmt::format("{}_{}", name, n);
    taken_.insert({unique, unique + "_ci", unique + "_ci_shapes"});
    return unique;
  }

 private:
  std::set<std::string> taken_;
};

// The plan holds every task of one run, so loops expand into at most this many submits.
constexpr size_t kMaxPlanSubmits = 1'000'000;
// Iterations that submit nothing (an inner loop with no trips) still take time to expand.
constexpr uint64_t kMaxLoopIterations = 16 * kMaxPlanSubmits;

// An orchestration scalar while the loops expand: an integer (INDEX, INTn, UINTn, BOOL) or a float.
struct Value {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  double AsDouble() const { return is_float ? f : static_cast<double>(i); }
};

// The C++ type that holds an orchestration scalar of `dtype`.
std::optional<std::string_view> CppScalarType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::BOOL: return "bool";
    case ir::DataType::INT8: return "int8_t";
    case ir::DataType::INT16: return "int16_t";
    case ir::DataType::INT32: return "int32_t";
    case ir::DataType::INT64:
    case ir::DataType::INDEX: return "int64_t";
    case ir::DataType::UINT8: return "uint8_t";
    case ir::DataType::UINT16: return "uint16_t";
    case ir::DataType::UINT32: return "uint32_t";
    case ir::DataType::UINT64: return "uint64_t";
    case ir::DataType::FP32: return "float";
    case ir::DataType::FP64: return "double";
    default: return std::nullopt;
  }
}

// The bit pattern of `value` as an element of `dtype`: a tensor's starting value, which the type
// deduction of tensor.create has checked the dtype holds (any dtype holds 0).
uint64_t ElementBits(double value, ir::DataType dtype) {
  if (value == 0) return 0;
  if (dtype == ir::DataType::FP32) return std::bit_cast<uint32_t>(static_cast<float>(value));
  if (dtype == ir::DataType::FP64) return std::bit_cast<uint64_t>(value);
  if (value >= 0x1p63) return static_cast<uint64_t>(value);  // UINT64 beyond INT64's range
  return static_cast<uint64_t>(static_cast<int64_t>(value));
}

// What assigning `value` to a C++ variable of `dtype` leaves in it.
Value Narrow(Value value, ir::DataType dtype) {
  if (ir::IsFloat(dtype)) {
    const double f = value.AsDouble();
    return Value{.is_float = true, .f = dtype == ir::DataType::FP32 ? static_cast<double>(static_cast<float>(f)) : f};
  }
  int64_t i = value.is_float ? static_cast<int64_t>(value.f) : value.i;
  switch (dtype) {
    case ir::DataType::BOOL: i = i != 0; break;
    case ir::DataType::INT8: i = static_cast<int8_t>(i); break;
    case ir::DataType::INT16: i = static_cast<int16_t>(i); break;
    case ir::DataType::INT32: i = static_cast<int32_t>(i); break;
    case ir::DataType::UINT8: i = static_cast<uint8_t>(i); break;
    case ir::DataType::UINT16: i = static_cast<uint16_t>(i); break;
    case ir::DataType::UINT32: i = static_cast<uint32_t>(i); break;
    default: break;
  }
  return Value{.i = i};
}

// `pl.cast(n, pl.INDEX)` on an orchestration scalar: a conversion the C++ and the plan expansion both
// compute (as a C++ static_cast does).
const ir::Call* AsScalarCast(const ir::Expr& expr) {
  const auto* call = expr.As<ir::Call>();
  if (!call || !call->is_op_call() || call->op()->name != "scalar.cast" || call->args().size() != 1) return nullptr;
  return call->args()[0]->type()->As<ir::ScalarType>() && call->type()->As<ir::ScalarType>() ? call : nullptr;
}

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
struct ViewStep {
  uint32_t view = 0;
  std::vector<ir::ExprPtr> offsets;
  ir::Span span;
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
               CreateStep>
      node;
};

// What `pl.tensor.read` in orchestration code reads while the plan is expanded: the caller's tensors
// (present only when a run expands it) and, for each tensor variable read, its parameter index.
struct TensorReads {
  std::unordered_map<const ir::Var*, uint32_t> params;
  std::span<const rt::ChipTensor> tensors;
};

// Runs the steps with every loop unrolled, appending each submit, with its scalars' values for that
// iteration, to the plan.
class LoopExpander {
  // The submit indices of a TaskId (one) or a TaskId array (one per element); nullopt: invalid.
  using TaskIds = std::vector<std::optional<uint32_t>>;

 public:
  // `views` holds the plan's views; the expansion appends those its slices make. `plan` gives the
  // extents of the tensors they slice.
  LoopExpander(const rt::TaskPlan& plan, std::vector<rt::PlanSubmit>& submits, std::vector<rt::PlanView>& views,
               const TensorReads* reads = nullptr)
      : plan_(plan), submits_(submits), views_(views), reads_(reads) {}

  ir::Result<bool> Run(const std::vector<Step>& steps) {
    for (const auto& step : steps) {
      ir::Result<bool> ok = true;
      if (const auto* submit = std::get_if<SubmitStep>(&step.node)) ok = Submit(*submit);
      else if (const auto* scalar = std::get_if<ScalarStep>(&step.node)) ok = Define(*scalar);
      else if (const auto* task_id = std::get_if<TaskIdStep>(&step.node)) ok = DefineTaskId(*task_id);
      else if (const auto* scope = std::get_if<ScopeStep>(&step.node)) ok = Scope(scope->body, scope->manual);
      else if (const auto* branch = std::get_if<IfStep>(&step.node)) ok = If(*branch);
      else if (const auto* carry = std::get_if<CarryStep>(&step.node)) ok = Carry(*carry);
      else if (const auto* view = std::get_if<ViewStep>(&step.node)) ok = View(*view);
      else if (const auto* rebind = std::get_if<RebindStep>(&step.node)) ok = Rebind(*rebind);
      else if (const auto* create = std::get_if<CreateStep>(&step.node)) ok = Create(*create);
      else ok = Loop(std::get<LoopStep>(step.node));
      if (!ok) return ok;
    }
    return true;
  }

 private:
  ir::Result<bool> Submit(const SubmitStep& step) {
    if (submits_.size() >= kMaxPlanSubmits)
      return TooLarge(fmt::format("submits more than {} tasks", kMaxPlanSubmits));
    rt::PlanSubmit submit = step.submit;
    for (auto& arg : submit.args)
      if (arg.direction != rt::ArgDirection::Scalar) arg.tensor = Current(arg.tensor);
    if (auto ok = CheckRebindHazard(step, submit); !ok) return ok;
    if (step.computed_blocks) {
      auto blocks = BlockCount(*step.computed_blocks);
      if (!blocks) return pypto::unexpected(blocks.error());
      if (*blocks == 0) {  // launches nothing: no task, and a TaskId naming it is invalid
        if (step.task_id) task_ids_[step.task_id] = TaskIds(1);
        return true;
      }
      submit.block_num = *blocks;
    }
    for (const auto& scalar : step.scalars) {
      uint64_t bits = 0;
      if (scalar.bits) {
        bits = *scalar.bits;
      } else {
        auto value = Eval(scalar.expr);
        if (!value) return pypto::unexpected(value.error());
        auto encoded = Encode(*value, scalar, *scalar.expr);
        if (!encoded) return pypto::unexpected(encoded.error());
        bits = *encoded;
      }
      submit.args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar, .scalar = bits});
    }
    for (const ir::Var* dep : step.deps) {  // a TaskId, or every element of a TaskId array
      auto ids = TaskIdOf(dep);
      if (!ids) return pypto::unexpected(ids.error());
      for (const auto& id : **ids)
        if (id) submit.deps.push_back(*id);
    }
    for (const auto& arg : submit.args)
      if (arg.direction != rt::ArgDirection::Input && arg.direction != rt::ArgDirection::Scalar)
        if (auto param = ParamOf(arg.tensor)) written_params_.insert(*param);
    submit.scopes_opened = unopened_scopes_;
    submit.opens_manual_scope = unopened_scopes_ > 0 && unopened_manual_;
    unopened_scopes_ = 0;
    unopened_manual_ = false;
    if (step.task_id) task_ids_[step.task_id] = {static_cast<uint32_t>(submits_.size())};
    submits_.push_back(std::move(submit));
    return true;
  }

  // A tensor a loop carries by rebinding names, in each iteration, the buffer of the tensor it was
  // rebound to. A task reading it and writing another tensor that is the same buffer in this iteration
  // (`cur` alternating between two tensors created before the loop while a kernel always writes one
  // of them) would read and write one buffer through two parameters: refused, as its results would
  // depend on the order the kernel touches the elements in. (A tensor created in the loop body is a
  // buffer no carried tensor names: see AllocateIntermediates.)
  ir::Result<bool> CheckRebindHazard(const SubmitStep& step, const rt::PlanSubmit& submit) const {
    const auto& args = submit.args;
    for (size_t r = 0; r < args.size(); ++r) {
      if (args[r].direction != rt::ArgDirection::Input) continue;
      for (size_t w = 0; w < args.size(); ++w) {
        const auto direction = args[w].direction;
        if (direction == rt::ArgDirection::Input || direction == rt::ArgDirection::Scalar) continue;
        const auto& read = step.submit.args[r].tensor;
        const auto& written = step.submit.args[w].tensor;
        if (read == written || args[r].tensor != args[w].tensor) continue;
        const std::string kernel = step.call ? step.call->callee() : "the kernel";
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' would read '{}' and write '{}', which name one buffer here{}: the loop "
                                     "rebinds '{}' to the tensor the task writes, so the task would overwrite what "
                                     "it reads",
                                     kernel, NameOf(read), NameOf(written), Where(), NameOf(read)),
                         step.call ? step.call->span() : ir::Span{},
                         "write into a tensor created in the loop body (a new one in each iteration), or let the "
                         "kernel update the carried tensor in place (pl.InOut)");
      }
    }
    return true;
  }

  std::string NameOf(rt::PlanTensorRef ref) const {
    if (ref.kind == rt::PlanTensorRef::Kind::View) return ref.index < views_.size() ? views_[ref.index].name : "?";
    const auto& list = ref.kind == rt::PlanTensorRef::Kind::Param ? plan_.params : plan_.intermediates;
    return ref.index < list.size() ? list[ref.index].name : "?";
  }

  // The blocks of a pl.spmd launch in this iteration: 0 (nothing to launch) up to what LaunchSpec holds.
  ir::Result<int32_t> BlockCount(const ir::Call& launch) const {
    auto value = Eval(launch.core_num());
    if (!value) return pypto::unexpected(value.error());
    if (value->i < 0 || value->i > std::numeric_limits<int32_t>::max())
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("the pl.spmd launch of '{}' has {} blocks{}; a block count must be {}",
                                   launch.callee(), value->i, Where(), value->i < 0 ? "at least 0" : "below 2^31"),
                       launch.span());
    return static_cast<int32_t>(value->i);
  }

  // The submits a TaskId variable (one) or TaskId array (one per element) names in this iteration.
  ir::Result<const TaskIds*> TaskIdOf(const ir::Var* var) const {
    auto it = task_ids_.find(var);
    if (it == task_ids_.end())
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("TaskId '{}' has no value in the loop expansion", var->name_hint()), var->span());
    return &it->second;
  }

  ir::Result<bool> DefineTaskId(const TaskIdStep& step) {
    using Kind = TaskIdStep::Kind;
    if (step.kind == Kind::Create) {
      task_ids_[step.var] = TaskIds(static_cast<size_t>(step.extent));
      return true;
    }
    if (step.kind == Kind::Copy && !step.from) {
      task_ids_[step.var] = TaskIds(1);
      return true;
    }
    auto from = TaskIdOf(step.from);
    if (!from) return pypto::unexpected(from.error());
    if (step.kind == Kind::Copy) {
      TaskIds copy = **from;  // `from` may be step.var's own entry
      task_ids_[step.var] = std::move(copy);
      return true;
    }
    auto index = ElementIndex(step, (*from)->size());
    if (!index) return pypto::unexpected(index.error());
    if (step.kind == Kind::Get) {
      task_ids_[step.var] = TaskIds{(**from)[*index]};
      return true;
    }
    auto value = TaskIdOf(step.value);
    if (!value) return pypto::unexpected(value.error());
    TaskIds updated = **from;
    updated[*index] = (*value)->front();
    task_ids_[step.var] = std::move(updated);
    return true;
  }

  // The element an array step reads or writes in this iteration, checked against the array's extent.
  ir::Result<size_t> ElementIndex(const TaskIdStep& step, size_t extent) const {
    auto index = Eval(step.index);
    if (!index) return pypto::unexpected(index.error());
    if (index->i < 0 || static_cast<uint64_t>(index->i) >= extent)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("index {} is out of range for TaskId array '{}' of {} elements{}", index->i,
                                   step.from->name_hint(), extent, Where()),
                       step.index->span());
    return static_cast<size_t>(index->i);
  }

  ir::Result<bool> Define(const ScalarStep& step) {
    auto value = Eval(step.value);
    if (!value) return pypto::unexpected(value.error());
    values_[step.var] = Narrow(*value, step.dtype);
    return true;
  }

  // A template view's view in this iteration (the last expansion of its ViewStep); any other as is.
  rt::PlanTensorRef Current(rt::PlanTensorRef ref) const {
    if (ref.kind != rt::PlanTensorRef::Kind::View) return ref;
    auto it = current_views_.find(ref.index);
    return it == current_views_.end() ? ref : it->second;
  }

  ir::Result<bool> Rebind(const RebindStep& step) {
    std::vector<rt::PlanTensorRef> next;
    for (const auto& rebinding : step.rebindings) next.push_back(Current(rebinding.value));
    for (size_t i = 0; i < next.size(); ++i) current_views_[step.rebindings[i].slot] = next[i];
    return true;
  }

  // The tensor a template view names in this iteration, followed through views to the parameter or
  // intermediate it is part of.
  rt::PlanTensorRef BufferOf(rt::PlanTensorRef ref) const {
    for (ref = Current(ref); ref.kind == rt::PlanTensorRef::Kind::View; ref = Current(views_[ref.index].base)) {
    }
    return ref;
  }

  ir::Result<bool> Create(const CreateStep& step) {
    for (uint32_t buffer : step.pool) {
      const rt::PlanTensorRef candidate{rt::PlanTensorRef::Kind::Intermediate, buffer};
      const bool named = std::ranges::any_of(step.carried, [&](uint32_t slot) {
        return BufferOf({rt::PlanTensorRef::Kind::View, slot}) == candidate;
      });
      if (named) continue;
      current_views_[step.slot] = candidate;
      return true;
    }
    return MakeError(DiagnosticKind::Internal,
                     fmt::format("every buffer of '{}' is named by a loop-carried tensor{}", views_[step.slot].name,
                                 Where()));
  }

  ir::Result<bool> View(const ViewStep& step) {
    rt::PlanView view = views_[step.view];
    view.base = Current(view.base);
    for (size_t d = 0; d < step.offsets.size(); ++d) {
      auto value = Eval(step.offsets[d]);
      if (!value) return pypto::unexpected(value.error());
      const uint32_t extent = ExtentOf(view.base, d);
      if (value->i < 0 || !rt::WindowFits(static_cast<uint32_t>(d), static_cast<uint64_t>(value->i), view.shape[d],
                                          extent))
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("the slice '{}' at offset {} of size {} is outside its tensor's extent {} in "
                                     "dimension {}{}",
                                     view.name, value->i, view.shape[d], extent, d, Where()),
                         step.span);
      view.offsets[d] = static_cast<uint32_t>(value->i);
    }
    current_views_[step.view] = {rt::PlanTensorRef::Kind::View, static_cast<uint32_t>(views_.size())};
    views_.push_back(std::move(view));
    return true;
  }

  // The extent of dimension `d` of a tensor operand.
  uint32_t ExtentOf(rt::PlanTensorRef ref, size_t d) const {
    if (ref.kind == rt::PlanTensorRef::Kind::View) return d < views_[ref.index].shape.size() ? views_[ref.index].shape[d] : 0;
    const auto& list = ref.kind == rt::PlanTensorRef::Kind::Param ? plan_.params : plan_.intermediates;
    return ref.index < list.size() && d < list[ref.index].shape.size() ? list[ref.index].shape[d] : 0;
  }

  ir::Result<bool> Carry(const CarryStep& step) {
    std::vector<Value> next;
    for (const auto& update : step.updates) {
      auto value = Eval(update.value);
      if (!value) return pypto::unexpected(value.error());
      next.push_back(Narrow(*value, update.dtype));
    }
    for (size_t i = 0; i < next.size(); ++i) values_[step.updates[i].var] = next[i];
    return true;
  }

  ir::Result<bool> If(const IfStep& step) {
    auto condition = Eval(step.stmt->condition());
    if (!condition) return pypto::unexpected(condition.error());
    const bool taken = condition->is_float ? condition->f != 0 : condition->i != 0;
    return Run(taken ? step.then_body : step.else_body);
  }

  ir::Result<bool> Loop(const LoopStep& step) {
    if (!step.submits && !step.carries_values_out) return true;
    const ir::ForStmt& loop = *step.loop;
    int64_t bounds[3];
    const ir::ExprPtr* exprs[3] = {&loop.start(), &loop.stop(), &loop.step()};
    for (int b = 0; b < 3; ++b) {
      auto value = Eval(*exprs[b]);
      if (!value) return pypto::unexpected(value.error());
      bounds[b] = value->i;
    }
    const auto [start, stop, stride] = bounds;
    if (stride == 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("the step of orchestration loop '{}' is zero{}", loop.loop_var()->name_hint(),
                                   Where()),
                       loop.span());
    enclosing_.push_back({&loop, 0});
    // Refuse a plan that is certain to be too large before building it.
    const __int128 trips = stride > 0 ? (start < stop ? (__int128{stop} - start + stride - 1) / stride : 0)
                                      : (start > stop ? (__int128{start} - stop - stride - 1) / -__int128{stride} : 0);
    if (submits_.size() + trips * MinSubmits(step.body) > kMaxPlanSubmits)
      return TooLarge(fmt::format("submits more than {} tasks", kMaxPlanSubmits));
    // 128-bit, so that the last step past the bound cannot overflow.
    for (__int128 i = start; stride > 0 ? i < stop : i > stop; i += stride) {
      if (++iterations_ > kMaxLoopIterations)
        return TooLarge(fmt::format("runs more than {} loop iterations", kMaxLoopIterations));
      values_[loop.loop_var().get()] = Value{.i = static_cast<int64_t>(i)};
      enclosing_.back().second = static_cast<int64_t>(i);
      if (auto ok = step.scoped ? Scope(step.body, false) : Run(step.body); !ok) return ok;
    }
    enclosing_.pop_back();
    return true;
  }

  // A runtime scope (one iteration of a loop body, or a pl.manual_scope / pl.scope): opened before its
  // first submit, closed after its last; one that submits nothing opens none.
  ir::Result<bool> Scope(const std::vector<Step>& body, bool manual) {
    const size_t before = submits_.size();
    ++unopened_scopes_;
    unopened_manual_ = manual;  // nothing nests in a manual scope, so it is the innermost one opened
    auto ok = Run(body);
    if (submits_.size() > before) {
      ++submits_.back().scopes_closed;
    } else {
      --unopened_scopes_;
      unopened_manual_ = false;
    }
    return ok;
  }

  // A lower bound on the submits one run of `steps` makes: its own (but for launches whose block count
  // may come to 0), and those of inner loops whose bounds are literals (others may depend on values not
  // known yet). Saturates at the plan limit.
  static __int128 MinSubmits(const std::vector<Step>& steps) {
    __int128 count = 0;
    for (const auto& step : steps) {
      if (const auto* submit = std::get_if<SubmitStep>(&step.node); submit && !submit->computed_blocks) ++count;
      const auto* inner = std::get_if<LoopStep>(&step.node);
      if (!inner || !inner->submits) continue;
      auto start = ir::AsConstInt(inner->loop->start()), stop = ir::AsConstInt(inner->loop->stop()),
           stride = ir::AsConstInt(inner->loop->step());
      if (!start || !stop || !stride || *stride <= 0 || *start >= *stop) continue;
      count += (__int128{*stop} - *start + *stride - 1) / *stride * MinSubmits(inner->body);
      if (count > kMaxPlanSubmits) return kMaxPlanSubmits + 1;
    }
    return count;
  }

  // Refuses a plan past the limits, naming the outermost loop, the one to restructure.
  pypto::unexpected<ir::Diagnostic> TooLarge(const std::string& what) const {
    if (enclosing_.empty())
      return MakeError(DiagnosticKind::Resource, fmt::format("the orchestration {}", what));
    const ir::ForStmt& outer = *enclosing_.front().first;
    return MakeError(DiagnosticKind::Resource,
                     fmt::format("expanding orchestration loop '{}' into the task plan {}; loops are unrolled at "
                                 "compile time, so use larger tiles or fewer iterations",
                                 outer.loop_var()->name_hint(), what),
                     outer.span());
  }

  // " (when r = 128, c = 256)": the iteration an error happened in.
  std::string Where() const {
    if (enclosing_.empty()) return "";
    std::vector<std::string> values;
    for (const auto& [loop, value] : enclosing_)
      values.push_back(fmt::format("{} = {}", loop->loop_var()->name_hint(), value));
    return fmt::format(" (when {})", fmt::join(values, ", "));
  }

  // The orchestration parameter a task's tensor operand is (or is a view of); none for intermediates.
  std::optional<uint32_t> ParamOf(rt::PlanTensorRef ref) const {
    while (ref.kind == rt::PlanTensorRef::Kind::View) ref = views_[ref.index].base;
    if (ref.kind != rt::PlanTensorRef::Kind::Param) return std::nullopt;
    return ref.index;
  }

  // `pl.tensor.read(t, [i, ...])` of a parameter, from the tensor the caller passed. A tensor a task of
  // this run writes before the read is refused: the plan is expanded before any task runs.
  ir::Result<Value> ReadTensor(const ir::Call& read) const {
    const auto* tensor = read.args()[0]->As<ir::Var>();
    auto param = reads_ && tensor ? reads_->params.find(tensor) : decltype(reads_->params)::const_iterator{};
    if (!reads_ || !tensor || param == reads_->params.end() || reads_->tensors.empty())
      return MakeError(DiagnosticKind::Internal, "a tensor read has no tensor in the loop expansion", read.span());
    if (written_params_.contains(param->second))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("orchestration code reads '{}' after a kernel writes it{}; the task plan is built "
                                   "from the tensors as they are passed, before any kernel runs",
                                   tensor->name_hint(), Where()),
                       read.span(), "read the value before the kernel that writes the tensor is called");
    std::vector<int64_t> indices;
    for (const auto& index : read.args()[1]->As<ir::TupleLiteral>()->elements()) {
      auto value = Eval(index);
      if (!value) return value;
      indices.push_back(value->i);
    }
    auto element = ReadElement(reads_->tensors[param->second], indices, tensor->name_hint(), read.span());
    if (!element) return pypto::unexpected(element.error());
    return Value{.is_float = element->is_float, .i = element->i, .f = element->f};
  }

  ir::Result<Value> Eval(const ir::ExprPtr& expr) const {
    if (const auto* i = expr->As<ir::ConstInt>()) return Value{.i = i->value()};
    if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "tensor.read")
      return ReadTensor(*call);
    if (const auto* f = expr->As<ir::ConstFloat>()) return Value{.is_float = true, .f = f->value()};
    if (const auto* b = expr->As<ir::ConstBool>()) return Value{.i = b->value()};
    if (const auto* var = expr->As<ir::Var>()) {
      auto it = values_.find(var);
      if (it == values_.end())
        return MakeError(DiagnosticKind::Internal,
                         fmt::format("'{}' has no value in the loop expansion", var->name_hint()), expr->span());
      return it->second;
    }
    if (const ir::Call* cast = AsScalarCast(*expr)) {
      auto value = Eval(cast->args()[0]);
      if (!value) return value;
      return Narrow(*value, cast->type()->As<ir::ScalarType>()->dtype());
    }
    const auto* binary = expr->As<ir::BinaryExpr>();
    if (!binary)
      return MakeError(DiagnosticKind::Internal, "an orchestration scalar expression cannot be evaluated",
                       expr->span());
    auto lhs = Eval(binary->lhs());
    if (!lhs) return lhs;
    auto rhs = Eval(binary->rhs());
    if (!rhs) return rhs;
    const auto dtype = binary->type()->As<ir::ScalarType>()->dtype();
    const auto op = binary->op();
    if (ir::IsComparison(op)) {
      const bool floats = lhs->is_float || rhs->is_float;
      return Value{.i = floats ? ir::EvaluateComparison(op, lhs->AsDouble(), rhs->AsDouble())
                               : ir::EvaluateComparison(op, lhs->i, rhs->i)};
    }
    if (ir::IsFloat(dtype)) {
      const double l = lhs->AsDouble(), r = rhs->AsDouble();
      double result = 0;
      switch (op) {
        case ir::BinaryOp::Add: result = l + r; break;
        case ir::BinaryOp::Sub: result = l - r; break;
        case ir::BinaryOp::Mul: result = l * r; break;
        case ir::BinaryOp::FloatDiv:
          if (r == 0) return Failure(*binary, fmt::format("divides {} by zero", l));
          result = l / r;
          break;
        case ir::BinaryOp::Min: result = std::min(l, r); break;
        case ir::BinaryOp::Max: result = std::max(l, r); break;
        default: return Failure(*binary, "is not supported on floating-point values");
      }
      return Narrow(Value{.is_float = true, .f = result}, dtype);
    }
    const int64_t l = lhs->i, r = rhs->i;
    int64_t result = 0;
    bool overflow = false;
    switch (op) {
      case ir::BinaryOp::Add: overflow = __builtin_add_overflow(l, r, &result); break;
      case ir::BinaryOp::Sub: overflow = __builtin_sub_overflow(l, r, &result); break;
      case ir::BinaryOp::Mul: overflow = __builtin_mul_overflow(l, r, &result); break;
      case ir::BinaryOp::FloorDiv:
      case ir::BinaryOp::FloorMod: {
        if (r == 0) return Failure(*binary, fmt::format("divides {} by zero", l));
        if (l == std::numeric_limits<int64_t>::min() && r == -1) return Failure(*binary, "overflows 64 bits");
        // The C++ divides with truncation; Python floors. They agree unless the signs differ.
        if (l % r != 0 && ((l < 0) != (r < 0)))
          return Failure(*binary, fmt::format("divides {} by {}; '//' and '%' with a negative operand are not "
                                              "supported in orchestration code yet",
                                              l, r));
        result = op == ir::BinaryOp::FloorDiv ? l / r : l % r;
        break;
      }
      case ir::BinaryOp::Min: result = std::min(l, r); break;
      case ir::BinaryOp::Max: result = std::max(l, r); break;
      case ir::BinaryOp::Shl:
      case ir::BinaryOp::Shr:
        if (r < 0 || r >= 64) return Failure(*binary, fmt::format("shifts by {}, outside [0, 64)", r));
        result = op == ir::BinaryOp::Shl ? static_cast<int64_t>(static_cast<uint64_t>(l) << r) : l >> r;
        break;
      default: return Failure(*binary, "is not supported on integers");
    }
    if (overflow) return Failure(*binary, fmt::format("overflows 64 bits ({} {} {})", l, ir::BinaryOpSymbol(op), r));
    return Value{.i = result};
  }

  pypto::unexpected<ir::Diagnostic> Failure(const ir::BinaryExpr& binary, const std::string& what) const {
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' in orchestration code {}{}", ir::BinaryOpSymbol(binary.op()), what, Where()),
                     binary.span());
  }

  // The 64-bit pattern of a scalar argument, as EncodeScalar gives it for a literal.
  ir::Result<uint64_t> Encode(const Value& value, const ScalarOperand& scalar, const ir::Expr& arg) const {
    const auto dtype = scalar.dtype;
    if (dtype == ir::DataType::FP64) return std::bit_cast<uint64_t>(value.AsDouble());
    if (dtype == ir::DataType::FP32) return uint64_t{std::bit_cast<uint32_t>(static_cast<float>(value.AsDouble()))};
    const int64_t v = value.i;
    if (dtype == ir::DataType::BOOL) {
      if (v != 0 && v != 1)
        return MakeError(DiagnosticKind::Type, fmt::format("{} is BOOL, but {} was passed{}", scalar.what, v, Where()),
                         arg.span());
      return static_cast<uint64_t>(v);
    }
    if (ir::DataTypeBits(dtype) < 64) {
      const auto [lowest, highest] = ir::IntegerRange(dtype);
      if (v < lowest || v > highest)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{} is {}, which cannot hold {}{}", scalar.what, ir::DataTypeName(dtype), v,
                                     Where()),
                         arg.span());
    }
    return static_cast<uint64_t>(v);
  }

  const rt::TaskPlan& plan_;
  std::vector<rt::PlanSubmit>& submits_;
  std::vector<rt::PlanView>& views_;
  const TensorReads* reads_;
  std::unordered_map<uint32_t, rt::PlanTensorRef> current_views_;  // template view -> this iteration's
  std::set<uint32_t> written_params_;  // parameters a submit so far writes
  uint16_t unopened_scopes_ = 0;  // scopes begun with no submit yet to open them
  bool unopened_manual_ = false;  // the innermost of them is a manual scope
  std::unordered_map<const ir::Var*, Value> values_;
  std::unordered_map<const ir::Var*, TaskIds> task_ids_;
  std::vector<std::pair<const ir::ForStmt*, int64_t>> enclosing_;  // the loops around, with their values
  uint64_t iterations_ = 0;
};

}  // namespace

// The steps of orchestration code that reads its tensors, kept to be expanded at each run.
struct DeferredPlan {
  std::vector<Step> steps;
  TensorReads reads;
  std::vector<rt::PlanView> views;  // the plan's views (slices' templates among them)
};

namespace {

bool IsLiteral(const ir::Expr& expr) {
  return expr.Is<ir::ConstInt>() || expr.Is<ir::ConstFloat>() || expr.Is<ir::ConstBool>();
}

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

 public:
  explicit OrchestrationEmitter(const ir::Program& program) : program_(program) {}

  ir::Result<Orchestration> Run() {
    auto entry = program_.entry();
    if (!entry || entry->type() != ir::FunctionType::Orchestration)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("program '{}' has no orchestration entry (was it lowered?)", program_.name()));
    result_.function_name = entry->name();
    result_.plan.orchestration_name = entry->name();
    if (auto ok = CheckPreconditions(program_); !ok) return pypto::unexpected(ok.error());
    if (auto ok = BindParams(*entry); !ok) return pypto::unexpected(ok.error());
    // The body is one automatic runtime scope (RuntimeScopesMaterialized), which also holds the
    // intermediates' allocation; the return after it emits nothing.
    const auto stmts = StmtsInScope(*passes::AsAutoRuntimeScope(entry->body()), entry->body());
    body_ += "  PTO2_SCOPE() {\n";
    if (auto ok = AllocateIntermediates(stmts); !ok) return pypto::unexpected(ok.error());
    for (const auto& stmt : stmts)
      if (auto ok = EmitStmt(stmt); !ok) return pypto::unexpected(ok.error());
    body_ += "  }\n";
    result_.cpp_source = Source(*entry);
    if (!reads_.params.empty()) {  // the plan depends on what the tensors hold: each run expands it
      result_.deferred =
          std::make_shared<DeferredPlan>(DeferredPlan{std::move(steps_root_), std::move(reads_), result_.plan.views});
      return std::move(result_);
    }
    LoopExpander expander(result_.plan, result_.plan.submits, result_.plan.views);
    if (auto ok = expander.Run(steps_root_); !ok) return pypto::unexpected(ok.error());
    return std::move(result_);
  }

 private:
  ir::Result<bool> BindParams(const ir::Function& entry) {
    for (size_t i = 0; i < entry.params().size(); ++i) {
      const auto& param = entry.params()[i];
      const auto* tensor = param->type()->As<ir::TensorType>();
      if (param->type()->As<ir::ScalarType>())
        return MakeError(DiagnosticKind::Type,
                         fmt::format("orchestration parameter '{}' is a scalar ({}); scalar parameters of the "
                                     "orchestration entry are not supported yet",
                                     param->name_hint(), param->type()->str()),
                         param->span(), "pass the value as a literal in the kernel call instead");
      if (!tensor)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("orchestration parameter '{}' must be a tensor, got {}", param->name_hint(),
                                     param->type()->str()),
                         param->span());
      auto dtype = RuntimeDataType(tensor->dtype());
      if (!dtype) return pypto::unexpected(dtype.error());
      rt::PlanTensor plan_tensor{.name = param->name_hint(), .dtype = *dtype};
      for (auto dim : tensor->shape()) plan_tensor.shape.push_back(static_cast<uint32_t>(dim));
      uint32_t index = static_cast<uint32_t>(result_.plan.params.size());
      result_.plan.params.push_back(std::move(plan_tensor));
      result_.signature.push_back(DirectionToken(entry.param_directions()[i]));
      std::string name = "ext_" + param->name_hint();
      params_ += fmt::format("  const ChipTensor& {} = orch_args.tensor({}).ref();\n", name, index);
      bindings_[param.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Param, index}, name};
    }
    return true;
  }

  static bool IsTensorCreate(const ir::StmtPtr& stmt) {
    const auto* assign = stmt->As<ir::AssignStmt>();
    const auto* call = assign ? assign->value()->As<ir::Call>() : nullptr;
    return call && call->is_op_call() && call->op()->name == "tensor.create";
  }

  // A pl.create_tensor of the orchestration. One that a loop runs again makes a new tensor each time;
  // `carried` are the tensors loops carry by rebinding (CarryKind::Rebind) that are in scope where it
  // runs and have its dtype: the only names under which one of its earlier tensors can still be read
  // there (anything else naming one was defined in an iteration that has ended).
  struct TensorCreate {
    ir::StmtPtr stmt;
    bool repeated = false;
    std::vector<const ir::Var*> carried;
  };

  // The pl.create_tensor statements of a body, in loops and runtime scopes too, in program order.
  // `carried` holds the Rebind carries in scope: a loop's are in scope in its body and after it, those
  // of a loop body or an if branch end with it, and a runtime scope's stay (the C++ declares its
  // variables before the scope).
  static void CollectTensorCreates(const std::vector<ir::StmtPtr>& stmts, bool repeats,
                                   std::vector<const ir::Var*>& carried, std::vector<TensorCreate>& creates) {
    for (const auto& stmt : stmts) {
      if (IsTensorCreate(stmt)) {
        const auto& var = stmt->As<ir::AssignStmt>()->var();
        TensorCreate create{.stmt = stmt, .repeated = repeats};
        const auto* tensor = var->type()->As<ir::TensorType>();
        if (repeats && tensor)
          for (const ir::Var* slot : carried)
            if (slot->type()->As<ir::TensorType>()->dtype() == tensor->dtype()) create.carried.push_back(slot);
        creates.push_back(std::move(create));
      }
      if (const auto* loop = stmt->As<ir::ForStmt>()) {
        std::vector<const ir::Var*> slots;
        for (const auto& iter_arg : loop->iter_args())
          if (iter_arg.carry == ir::CarryKind::Rebind) slots.push_back(iter_arg.var.get());
        std::vector<const ir::Var*> in_body = carried;
        in_body.insert(in_body.end(), slots.begin(), slots.end());
        CollectTensorCreates(ir::FlattenStmts(loop->body()), repeats || !RunsOnce(*loop), in_body, creates);
        carried.insert(carried.end(), slots.begin(), slots.end());
      }
      if (const auto* scope = stmt->As<ir::RuntimeScopeStmt>())
        CollectTensorCreates(ir::FlattenStmts(scope->body()), repeats, carried, creates);
      if (const auto* branch = stmt->As<ir::IfStmt>()) {
        for (const auto& body : {branch->then_body(), branch->else_body()}) {
          if (!body) continue;
          std::vector<const ir::Var*> in_branch = carried;
          CollectTensorCreates(ir::FlattenStmts(body), repeats, in_branch, creates);
        }
      }
    }
  }

  // Whether a loop certainly makes one iteration (constant bounds, one step from start to stop).
  static bool RunsOnce(const ir::ForStmt& loop) {
    auto start = ir::AsConstInt(loop.start()), stop = ir::AsConstInt(loop.stop()), step = ir::AsConstInt(loop.step());
    if (!start || !stop || !step || *step == 0) return false;
    return *step > 0 ? *start < *stop && *stop - *start <= *step : *start > *stop && *start - *stop <= -*step;
  }

  // `pl.create_tensor(..., init_value=v)`: the plan's starting value and the C++ pre-fill. The buffer is
  // allocated once per run, so a tensor created in a loop that iterates again would start the next
  // iteration with what the last one left; that is refused.
  ir::Result<bool> SetInitialValue(const ir::AssignStmt& create, bool repeated, const std::string& name,
                                   rt::PlanTensor& plan_tensor) {
    const auto* call = create.value()->As<ir::Call>();
    const auto init = ir::FindAttr<double>(call->kwargs(), "init_value");
    if (!init) return true;
    if (repeated)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' is created with init_value inside a loop that runs more than once; its "
                                   "buffer is allocated once per run and would not start again at {} in later "
                                   "iterations",
                                   create.var()->name_hint(), ir::FloatLiteral(*init)),
                       create.span(), "create the tensor before the loop and reset it in a kernel, or drop init_value");
    const ir::DataType dtype = create.var()->type()->As<ir::TensorType>()->dtype();
    plan_tensor.initial_bits = ElementBits(*init, dtype);
    if (*init == 0) {
      body_ += fmt::format("    {}_ci.set_initial_value(0);\n", name);
    } else {
      const std::string value = ir::IsInteger(dtype) ? fmt::format("{}", static_cast<int64_t>(*init))
                                                     : ir::FloatLiteral(*init);
      body_ += fmt::format("    {}_ci.set_initial_value(static_cast<{}>({}));\n", name, *CppScalarType(dtype), value);
    }
    return true;
  }

  // Every pl.create_tensor of the body becomes plan intermediates, which the C++ allocates all with one
  // alloc_tensors at scope entry, before the first task. A create a loop runs again makes a new tensor
  // each time, as upstream's allocation per iteration does, but from a pool that a long loop does not
  // grow: one buffer per loop-carried tensor that may still name an earlier one (TensorCreate::carried)
  // and one more, from which each run takes the first no carried tensor names (EmitPooledCreate). The
  // runtime orders a task writing a reused buffer after the tasks still reading it (write-after-read),
  // and tasks of different buffers never wait for each other. With nothing carried the pool is one
  // buffer, reused the same way by every iteration.
  ir::Result<bool> AllocateIntermediates(const std::vector<ir::StmtPtr>& body) {
    std::vector<TensorCreate> creates;
    std::vector<const ir::Var*> carried;
    CollectTensorCreates(body, /*repeats=*/false, carried, creates);
    std::vector<std::string> infos;
    std::string refs;
    for (const auto& create : creates) {
      const auto& stmt = create.stmt;
      const auto& var = stmt->As<ir::AssignStmt>()->var();
      const auto* tensor = var->type()->As<ir::TensorType>();
      if (!tensor)
        return MakeError(DiagnosticKind::Internal, fmt::format("'{}' is created but is not a tensor", var->name_hint()),
                         stmt->span());
      if (tensor->dtype() == ir::DataType::FP4)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("intermediate '{}' is FP4; packed FP4 intermediates are not supported yet",
                                     var->name_hint()),
                         stmt->span());
      if (tensor->shape().empty() || tensor->shape().size() > PYPTO_MAX_TENSOR_DIMS)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("intermediate '{}' has rank {}; the runtime takes 1 to {} dimensions",
                                     var->name_hint(), tensor->shape().size(), PYPTO_MAX_TENSOR_DIMS),
                         stmt->span());
      auto dtype = RuntimeDataType(tensor->dtype());
      if (!dtype) {
        auto error = dtype.error();
        error.span = stmt->span();
        return pypto::unexpected(std::move(error));
      }
      rt::PlanTensor plan_tensor{.name = var->name_hint(), .dtype = *dtype};
      std::vector<std::string> dims;
      for (auto dim : tensor->shape()) {
        if (dim <= 0 || dim > std::numeric_limits<uint32_t>::max())
          return MakeError(DiagnosticKind::Type,
                           fmt::format("intermediate '{}' has dimension {}", var->name_hint(), dim), stmt->span());
        plan_tensor.shape.push_back(static_cast<uint32_t>(dim));
        dims.push_back(std::to_string(dim));
      }
      std::string name = names_.Take(var->name_hint());
      body_ += fmt::format("    uint32_t {0}_ci_shapes[{1}] = {{{2}}};\n", name, dims.size(), fmt::join(dims, ", "));
      body_ += fmt::format("    TensorCreateInfo {0}_ci({0}_ci_shapes, {1}, DataType::{2});\n", name, dims.size(),
                           rt::DtypeName(*dtype));
      if (auto ok = SetInitialValue(*stmt->As<ir::AssignStmt>(), create.repeated, name, plan_tensor); !ok) return ok;
      const auto first = static_cast<uint32_t>(result_.plan.intermediates.size());
      const size_t buffers = create.carried.size() + 1;
      std::vector<std::string> pool_refs;
      for (size_t b = 0; b < buffers; ++b) {
        result_.plan.intermediates.push_back(plan_tensor);
        pool_refs.push_back(fmt::format("&alloc_0.get_ref({})", infos.size()));
        infos.push_back(name + "_ci");
      }
      if (buffers == 1) {
        refs += fmt::format("    const ChipTensor& {} = alloc_0.get_ref({});\n", name, infos.size() - 1);
        bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Intermediate, first}, name};
        continue;
      }
      Pool pool{.cpp_name = names_.Take(name + "_pool"), .carried = create.carried};
      for (size_t b = 0; b < buffers; ++b) pool.buffers.push_back(first + static_cast<uint32_t>(b));
      refs += fmt::format("    const ChipTensor* {}[{}] = {{{}}};\n", pool.cpp_name, buffers,
                          fmt::join(pool_refs, ", "));
      // The variable is a template view each run points at the buffer it takes.
      rt::PlanView slot{.name = var->name_hint(), .base = {rt::PlanTensorRef::Kind::Intermediate, first}};
      ViewShape(*var, slot);
      pool.slot = static_cast<uint32_t>(result_.plan.views.size());
      result_.plan.views.push_back(std::move(slot));
      template_views_.insert(pool.slot);
      bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, pool.slot}, name};
      pools_[stmt.get()] = std::move(pool);
    }
    if (infos.empty()) return true;
    body_ += fmt::format("    TaskOutputTensors alloc_0 = alloc_tensors({});\n", fmt::join(infos, ", ")) + refs + "\n";
    return true;
  }

  // A run of a pl.create_tensor with a pool of buffers: the C++ takes the first buffer of the pool that
  // no loop-carried tensor in scope names (comparing allocations: a view shares its tensor's), and the
  // plan expansion does the same (CreateStep).
  ir::Result<bool> EmitPooledCreate(const ir::AssignStmt& create, const Pool& pool) {
    const auto& var = create.var();
    const Binding& binding = bindings_.at(var.get());
    CreateStep step{.slot = pool.slot, .pool = pool.buffers};
    const std::string index = names_.Take(binding.cpp_name + "_k");
    std::vector<std::string> named;
    for (const ir::Var* carried : pool.carried) {
      auto it = bindings_.find(carried);
      if (it == bindings_.end() || it->second.ref.kind != rt::PlanTensorRef::Kind::View)
        return MakeError(DiagnosticKind::Internal,
                         fmt::format("the loop-carried tensor '{}' is not in scope at '{}'", carried->name_hint(),
                                     var->name_hint()),
                         create.span());
      step.carried.push_back(it->second.ref.index);
      named.push_back(fmt::format("{}[{}]->buffer_addr == {}.buffer_addr", pool.cpp_name, index, it->second.cpp_name));
    }
    Separate();
    body_ += fmt::format("{}// '{}' is a new tensor in each iteration: a buffer of its pool no carried tensor names\n",
                         indent_, var->name_hint());
    body_ += fmt::format("{}size_t {} = 0;\n", indent_, index);
    body_ += fmt::format("{}while ({}) ++{};\n", indent_, fmt::join(named, " || "), index);
    body_ += fmt::format("{}{} = *{}[{}];\n", indent_, Declared("ChipTensor", binding.cpp_name), pool.cpp_name, index);
    steps_->push_back(Step{std::move(step)});
    return true;
  }

  ir::Result<bool> EmitStmt(const ir::StmtPtr& stmt) {
    if (stmt->Is<ir::ReturnStmt>()) {
      if (loop_depth_ > 0 || if_depth_ > 0)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("return inside an orchestration {} is not supported", loop_depth_ ? "loop" : "if"),
                         stmt->span());
      return true;
    }
    if (IsTensorCreate(stmt)) {  // allocated at scope entry (AllocateIntermediates)
      auto pool = pools_.find(stmt.get());
      return pool == pools_.end() ? true : EmitPooledCreate(*stmt->As<ir::AssignStmt>(), pool->second);
    }
    if (const auto* loop = stmt->As<ir::ForStmt>()) return EmitLoop(*loop);
    if (stmt->Is<ir::WhileStmt>())  // the task plan needs each loop's trip count
      return MakeError(DiagnosticKind::Syntax, "while loops are supported inside kernels only", stmt->span(),
                       "use pl.range(...) in orchestration code");
    if (const auto* branch = stmt->As<ir::IfStmt>()) return EmitIf(*branch);
    if (const auto* scope = stmt->As<ir::RuntimeScopeStmt>()) return EmitRuntimeScope(*scope);
    if (const auto* yield = stmt->As<ir::YieldStmt>()) return EmitLoopYield(*yield);
    const ir::Call* call = nullptr;
    const ir::Var* result = nullptr;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) {
      call = assign->value()->As<ir::Call>();
      result = assign->var().get();
      if (assign->var()->type()->As<ir::ArrayType>()) return EmitTaskIdArray(*assign);
      if (ir::IsTaskId(*assign->var()->type())) return EmitTaskIdDef(*assign);
      if ((!call || AsScalarCast(*call)) && assign->var()->type()->As<ir::ScalarType>())
        return EmitScalarDef(*assign);
      if (call && call->is_op_call() && call->op()->name == "tensor.read") return EmitTensorRead(*assign, *call);
      if (call && call->is_op_call() && call->op()->name == "tensor.reshape") return EmitReshape(*assign, *call);
      if (call && call->is_op_call() && call->op()->name == "tensor.slice") return EmitSlice(*assign, *call);
      if (call && call->is_op_call() && call->op()->name == "tensor.transpose") return EmitTranspose(*assign, *call);
      // `x_flat = x`: another name for the same tensor.
      if (const auto* source = assign->value()->As<ir::Var>(); source && bindings_.contains(source)) {
        bindings_[result] = bindings_.at(source);
        return true;
      }
    } else if (const auto* eval = stmt->As<ir::EvalStmt>()) {
      call = eval->expr()->As<ir::Call>();
      if (call && call->is_op_call() && call->op()->name == "tensor.dump_tag") return EmitDumpTag(*call);
    }
    if (call && call->is_op_call())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' is not supported in orchestration code yet; only kernel calls, "
                                   "pl.create_tensor, loops and scalar arithmetic are",
                                   call->op()->name),
                       stmt->span());
    if (!call)
      return MakeError(DiagnosticKind::Syntax,
                       "only kernel calls, pl.create_tensor, loops and scalar arithmetic are supported in "
                       "orchestration code yet",
                       stmt->span());
    return EmitSubmit(*call, result);
  }

  // The C++ name of a TaskId variable defined so far; null for anything else.
  const std::string* TaskNameOf(const ir::ExprPtr& expr) const {
    const auto* var = expr->As<ir::Var>();
    auto it = var ? task_names_.find(var) : task_names_.end();
    return it == task_names_.end() ? nullptr : &it->second;
  }

  // A TaskId variable: a copy of another, pl.system.task_invalid(), or a pl.system.task_dummy join.
  ir::Result<bool> EmitTaskIdDef(const ir::AssignStmt& assign) {
    const ir::Var* var = assign.var().get();
    const auto* call = assign.value()->As<ir::Call>();
    if (call && call->is_op_call() && call->op()->name == "system.task_dummy") return EmitTaskDummy(assign, *call);
    if (call && call->is_op_call() && call->op()->name == "array.get_element") return EmitArrayElement(assign, *call);
    const ir::Var* from = assign.value()->As<ir::Var>();
    const std::string* from_name = TaskNameOf(assign.value());
    const bool invalid = call && call->is_op_call() && call->op()->name == "system.task_invalid";
    if (!invalid && !from_name)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("TaskId '{}' must come from a launch (`as tid`, pl.submit), "
                                   "pl.system.task_dummy, pl.system.task_invalid() or another TaskId",
                                   var->name_hint()),
                       assign.span());
    Separate();
    after_scalar_ = true;
    const std::string name = names_.Take(var->name_hint());
    body_ += fmt::format("{}{} = {};\n", indent_, TaskIdDecl(name),
                         invalid ? std::string("PTO2TaskId::invalid()") : *from_name);
    task_names_[var] = name;
    steps_->push_back(Step{TaskIdStep{.var = var, .from = invalid ? nullptr : from}});
    return true;
  }

  // `join = pl.system.task_dummy(deps=[a, b])`: a task that runs no kernel and completes after a and b.
  ir::Result<bool> EmitTaskDummy(const ir::AssignStmt& assign, const ir::Call& call) {
    Separate();
    const std::string params = fmt::format("params_t{}", task_count_++);
    SubmitStep step{.submit = rt::PlanSubmit{.dummy = true}, .task_id = assign.var().get()};
    body_ += fmt::format("{}CoreTaskArgs {};\n", indent_, params);
    std::vector<ir::ExprPtr> deps;
    if (const auto* list = call.args()[0]->As<ir::TupleLiteral>()) deps = list->elements();
    if (auto ok = EmitDependencies(deps, params, step); !ok) return ok;
    const std::string name = names_.Take(assign.var()->name_hint());
    body_ += fmt::format("{}{} = rt_submit_dummy_task({}).task_id();\n", indent_, TaskIdDecl(name), params);
    task_names_[assign.var().get()] = name;
    steps_->push_back(Step{std::move(step)});
    return true;
  }

  // The start of a statement defining `name` of C++ type `type`: its declaration, or inside a runtime
  // scope (a C++ block) just the name, declared before the outermost scope so that code after the scope
  // sees it.
  std::string Declared(std::string_view type, const std::string& name) {
    if (!hoisted_) return fmt::format("{} {}", type, name);
    *hoisted_ += fmt::format("{}{} {};\n", hoist_indent_, type, name);
    return name;
  }
  std::string TaskIdDecl(const std::string& name) { return Declared("PTO2TaskId", name); }

  // `tids = pl.array.create(n, pl.TASK_ID)`: a C++ array of n TaskIds, all invalid until set.
  // `tids = pl.array.update_element(tids, i, t)` (`tids[i] = t`) sets one element in place, so the
  // updated array is the same C++ array; a loop carries it by name.
  ir::Result<bool> EmitTaskIdArray(const ir::AssignStmt& assign) {
    const ir::Var* var = assign.var().get();
    const auto* array = var->type()->As<ir::ArrayType>();
    const auto* call = assign.value()->As<ir::Call>();
    const std::string op = call && call->is_op_call() ? call->op()->name : "";
    if (array->dtype() != ir::DataType::TASK_ID)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' is {}; orchestration arrays hold TaskIds only yet", var->name_hint(),
                                   array->str()),
                       assign.span());
    if (op == "array.create") {
      Separate();
      after_scalar_ = true;
      const std::string name = names_.Take(var->name_hint());
      const std::string decl = fmt::format("PTO2TaskId {}[{}];\n", name, array->extent());
      if (hoisted_) *hoisted_ += hoist_indent_ + decl;
      else body_ += indent_ + decl;
      body_ += fmt::format("{0}for (PTO2TaskId& {1}_slot : {1}) {1}_slot = PTO2TaskId::invalid();\n", indent_, name);
      task_names_[var] = name;
      steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Create, .var = var, .extent = array->extent()}});
      return true;
    }
    if (const std::string* from = TaskNameOf(assign.value())) {  // another name for the same array
      task_names_[var] = *from;
      steps_->push_back(Step{TaskIdStep{.var = var, .from = assign.value()->As<ir::Var>()}});
      return true;
    }
    if (op != "array.update_element")
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("TaskId array '{}' must come from pl.array.create or an element update",
                                   var->name_hint()),
                       assign.span());
    const std::string* target = TaskNameOf(call->args()[0]);
    const std::string* value = TaskNameOf(call->args()[2]);
    if (!target || !value)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}[...] = ...' stores a TaskId defined earlier into a TaskId array",
                                   var->name_hint()),
                       assign.span());
    auto index = ElementIndexCpp(call->args()[1], *call);
    if (!index) return pypto::unexpected(index.error());
    // Right after the launch it records, as part of it: no blank line before it.
    body_ += fmt::format("{}{}[{}] = {};\n", indent_, *target, *index, *value);
    task_names_[var] = *target;
    steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Update,
                                      .var = var,
                                      .from = call->args()[0]->As<ir::Var>(),
                                      .index = call->args()[1],
                                      .value = call->args()[2]->As<ir::Var>()}});
    return true;
  }

  // `t = tids[i]` (pl.array.get_element): one element of a TaskId array.
  ir::Result<bool> EmitArrayElement(const ir::AssignStmt& assign, const ir::Call& call) {
    const std::string* array = TaskNameOf(call.args()[0]);
    if (!array)
      return MakeError(DiagnosticKind::Syntax, "reads an element of a TaskId array defined earlier", assign.span());
    auto index = ElementIndexCpp(call.args()[1], call);
    if (!index) return pypto::unexpected(index.error());
    Separate();
    after_scalar_ = true;
    const std::string name = names_.Take(assign.var()->name_hint());
    body_ += fmt::format("{}{} = {}[{}];\n", indent_, TaskIdDecl(name), *array, *index);
    task_names_[assign.var().get()] = name;
    steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Get,
                                      .var = assign.var().get(),
                                      .from = call.args()[0]->As<ir::Var>(),
                                      .index = call.args()[1]}});
    return true;
  }

  // The index of a TaskId array element as C++: known at compile time, since the plan expands it.
  ir::Result<std::string> ElementIndexCpp(const ir::ExprPtr& index, const ir::Call& call) {
    if (const ir::Var* unknown = UnknownScalar(index))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("a TaskId array index must be known at compile time; '{}' is only known at run "
                                   "time",
                                   unknown->name_hint()),
                       call.span());
    return CppExpr(index);
  }

  // `with pl.manual_scope():` / `with pl.scope():`: PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... } around its
  // body (PTO2_SCOPE() { ... } for an auto one). The braces make a C++ block, so the TaskIds, TaskId
  // arrays and scalars defined inside are declared before the outermost such scope (Declared), where
  // code after it sees them.
  ir::Result<bool> EmitRuntimeScope(const ir::RuntimeScopeStmt& scope) {
    Separate();
    const bool outermost = hoisted_ == nullptr;
    std::string hoisted, outer_body;
    if (outermost) {
      outer_body = std::exchange(body_, "");
      hoisted_ = &hoisted;
      hoist_indent_ = indent_;
    }
    body_ += indent_ + (scope.manual() ? "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {\n" : "PTO2_SCOPE() {\n");
    ScopeStep expanded{.manual = scope.manual()};
    std::vector<Step>* outer_steps = std::exchange(steps_, &expanded.body);
    indent_ += "  ";
    block_start_ = true;
    ir::Result<bool> ok = true;
    for (const auto& stmt : ir::FlattenStmts(scope.body()))
      if (ok = EmitStmt(stmt); !ok) break;
    indent_.resize(indent_.size() - 2);
    steps_ = outer_steps;
    body_ += indent_ + "}\n";
    block_start_ = after_scalar_ = false;
    if (outermost) {
      body_ = outer_body + hoisted + body_;
      hoisted_ = nullptr;
    }
    if (!ok) return ok;
    steps_->push_back(Step{std::move(expanded)});
    return true;
  }

  // `deps=[a, b]` of a submit: the C++ array it passes to set_dependencies, and the plan's TaskIds.
  ir::Result<bool> EmitDependencies(const std::vector<ir::ExprPtr>& deps, const std::string& params,
                                    SubmitStep& step) {
    if (deps.empty()) return true;
    std::vector<std::string> names;
    for (const auto& dep : deps) {
      const std::string* name = TaskNameOf(dep);
      if (!name)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("deps= takes TaskIds defined earlier in the orchestration; '{}' is not one",
                                     ir::PrintExpr(dep)),
                         dep->span());
      step.deps.push_back(dep->As<ir::Var>());
      const auto* array = dep->type()->As<ir::ArrayType>();
      if (!array) {
        names.push_back(*name);
        continue;
      }
      for (int64_t i = 0; i < array->extent(); ++i) names.push_back(fmt::format("{}[{}]", *name, i));
    }
    body_ += fmt::format("{0}PTO2TaskId {1}_deps[{2}] = {{{3}}};\n{0}{1}.set_dependencies({1}_deps, {2});\n",
                         indent_, params, names.size(), fmt::join(names, ", "));
    return true;
  }

  // `pl.dump_tag(t)`: t (the variable, and the results of calls writing it) is marked in every submit
  // after this point, in program order; a reshape of t is another tensor. Nothing runs for it; the C++
  // marks each such submit's argument with `params.dump(t)`.
  ir::Result<bool> EmitDumpTag(const ir::Call& call) {
    const auto* var = call.args()[0]->As<ir::Var>();
    if (!var || !bindings_.contains(var))
      return MakeError(DiagnosticKind::InvalidOperation,
                       "pl.dump_tag needs a tensor of the orchestration (a parameter, a pl.create_tensor or a view)",
                       call.span());
    dump_tagged_.insert(var);
    return true;
  }

  // A blank line between the items of a block (submits, loops, runs of scalar definitions); scalar
  // definitions stay next to the item that follows them.
  void Separate() {
    if (!block_start_ && !after_scalar_) body_ += "\n";
    block_start_ = after_scalar_ = false;
  }

  // `for r in pl.range(start, stop, step)`: a C++ for loop, and a loop the plan expands. The bounds
  // must be known at compile time: literals, enclosing loop variables and scalars computed from them.
  ir::Result<bool> EmitLoop(const ir::ForStmt& loop) {
    const auto& var = loop.loop_var();
    std::string bound_text[3];
    const ir::ExprPtr* bounds[3] = {&loop.start(), &loop.stop(), &loop.step()};
    for (int b = 0; b < 3; ++b) {
      const ir::ExprPtr& bound = *bounds[b];
      const auto* scalar = bound->type()->As<ir::ScalarType>();
      if (!scalar || !ir::IsInteger(scalar->dtype()))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("the bounds of orchestration loop '{}' must be integers, got {}",
                                     var->name_hint(), bound->type()->str()),
                         loop.span());
      if (const ir::Var* unknown = UnknownScalar(bound))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("the bounds of orchestration loop '{}' must be compile-time constants, since "
                                     "the task plan unrolls the loop; '{}' is only known at run time",
                                     var->name_hint(), unknown->name_hint()),
                         loop.span());
      auto text = CppExpr(bound);
      if (!text) return pypto::unexpected(text.error());
      bound_text[b] = *text;
    }
    const auto& [start, stop, step] = bound_text;
    const auto constant_step = ir::AsConstInt(loop.step());
    if (constant_step == 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("the step of orchestration loop '{}' is zero", var->name_hint()), loop.span());
    Separate();
    if (auto ok = EmitCarries(loop); !ok) return ok;
    const std::string name = names_.Take(var->name_hint());
    scalars_[var.get()] = name;
    std::string condition;
    if (constant_step) {
      condition = fmt::format("{} {} {}", name, *constant_step > 0 ? "<" : ">", stop);
    } else {
      condition = fmt::format("((({0}) > 0 && {1} < {2}) || (({0}) < 0 && {1} > {2}))", step, name, stop);
    }
    body_ += fmt::format("{0}for (int64_t {1} = {2}; {3}; {1} += {4}) {{\n", indent_, name, start, condition, step);
    // Each iteration is a runtime scope where the IR's loop body is one (MaterializeRuntimeScopes puts
    // it there outside manual scopes), so its tasks' ring slots come back when it ends.
    const ir::RuntimeScopeStmt* iteration_scope = passes::AsAutoRuntimeScope(loop.body());
    const bool scoped = iteration_scope != nullptr;
    if (scoped) body_ += indent_ + "  PTO2_SCOPE() {\n";

    LoopStep expanded{.loop = &loop, .carries_values_out = CarriesValuesOut(loop), .scoped = scoped};
    std::vector<Step>* outer_steps = steps_;
    steps_ = &expanded.body;
    const size_t body_indent = scoped ? 4 : 2;
    indent_ += std::string(body_indent, ' ');
    block_start_ = true;
    ++loop_depth_;
    const ir::ForStmt* outer_loop = std::exchange(current_loop_, &loop);
    for (const auto& stmt : scoped ? StmtsInScope(*iteration_scope, loop.body()) : ir::FlattenStmts(loop.body()))
      if (auto ok = EmitStmt(stmt); !ok) return ok;
    current_loop_ = outer_loop;
    --loop_depth_;
    indent_.resize(indent_.size() - body_indent);
    steps_ = outer_steps;
    body_ += (scoped ? indent_ + "  }\n" : "") + indent_ + "}\n";
    block_start_ = after_scalar_ = false;
    expanded.submits = ContainsSubmit(expanded.body);
    steps_->push_back(Step{std::move(expanded)});
    // After the loop its results name the carried values' last values: the same C++ variables.
    for (size_t i = 0; i < loop.return_vars().size(); ++i) {
      const ir::IterArg& carried = loop.iter_args()[i];
      const ir::Var* result = loop.return_vars()[i].get();
      switch (carried.carry) {
        case ir::CarryKind::Scalar:
          scalars_[result] = scalars_.at(carried.var.get());
          steps_->push_back(Step{ScalarStep{
              .var = result, .value = carried.var, .dtype = carried.var->type()->As<ir::ScalarType>()->dtype()}});
          break;
        case ir::CarryKind::Alias:
        case ir::CarryKind::Rebind: bindings_[result] = bindings_.at(carried.var.get()); break;
        default:
          task_names_[result] = task_names_.at(carried.var.get());
          steps_->push_back(Step{TaskIdStep{.var = result, .from = carried.var.get()}});
      }
    }
    return true;
  }

  // Whether the plan must expand the loop even when it submits nothing: code after it reads a scalar it
  // computes or a tensor it rebinds.
  static bool CarriesValuesOut(const ir::ForStmt& loop) {
    return std::ranges::any_of(loop.iter_args(), [](const ir::IterArg& arg) {
      return arg.carry == ir::CarryKind::Scalar || arg.carry == ir::CarryKind::Rebind;
    });
  }

  // How the loop carries each value was decided by ClassifyIterArgCarry (IterArgCarryClassified):
  // scalars (`max_bn = pl.max(max_bn, n)`), TaskIds, TaskId arrays, and tensors updated in place
  // (Alias) or rebound to another buffer (Rebind).
  ir::Result<bool> EmitCarries(const ir::ForStmt& loop) {
    for (const auto& iter_arg : loop.iter_args()) {
      ir::Result<bool> ok = true;
      switch (iter_arg.carry) {
        case ir::CarryKind::Scalar: ok = EmitCarriedScalar(loop, iter_arg); break;
        case ir::CarryKind::TaskId:
        case ir::CarryKind::TaskIdArray: ok = EmitCarriedTaskId(iter_arg); break;
        case ir::CarryKind::Alias:
        case ir::CarryKind::Rebind: ok = EmitCarriedTensor(loop, iter_arg); break;
        case ir::CarryKind::Unclassified:
          ok = MakeError(DiagnosticKind::Internal,
                         fmt::format("'{}' carried by loop '{}' is not classified", iter_arg.var->name_hint(),
                                     loop.loop_var()->name_hint()),
                         loop.span());
      }
      if (!ok) return ok;
    }
    return true;
  }

  // A carried scalar is a C++ variable declared before the loop and assigned where the body yields.
  ir::Result<bool> EmitCarriedScalar(const ir::ForStmt& loop, const ir::IterArg& iter_arg) {
    const ir::Var& var = *iter_arg.var;
    const auto dtype = var.type()->As<ir::ScalarType>()->dtype();
    auto type = CppScalarType(dtype);
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("orchestration loop '{}' carries '{}' ({}); orchestration code holds integer, "
                                   "BOOL, FP32 and FP64 scalars only",
                                   loop.loop_var()->name_hint(), var.name_hint(), ir::DataTypeName(dtype)),
                       loop.span());
    if (const ir::Var* unknown = UnknownScalar(iter_arg.init))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' starts from '{}', which is only known at run time; orchestration scalars "
                                   "must be known at compile time",
                                   var.name_hint(), unknown->name_hint()),
                       loop.span());
    auto init = CppExpr(iter_arg.init);
    if (!init) return pypto::unexpected(init.error());
    const std::string name = names_.Take(var.name_hint());
    body_ += fmt::format("{}{} = {};\n", indent_, Declared(*type, name), *init);
    scalars_[&var] = name;
    steps_->push_back(Step{ScalarStep{.var = &var, .value = iter_arg.init, .dtype = dtype}});
    return true;
  }

  // A carried TaskId (`prev = t` chains launches across iterations) is a C++ variable declared before
  // the loop and assigned where the body yields it; a carried TaskId array (`tids[i] = t`) is updated in
  // place: the carried array is the C++ array itself.
  ir::Result<bool> EmitCarriedTaskId(const ir::IterArg& iter_arg) {
    const std::string* init = TaskNameOf(iter_arg.init);
    if (!init)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' must be a TaskId before the loop", iter_arg.var->name_hint()),
                       iter_arg.init->span());
    if (iter_arg.carry == ir::CarryKind::TaskIdArray) {
      task_names_[iter_arg.var.get()] = *init;
    } else {
      const std::string name = names_.Take(iter_arg.var->name_hint());
      body_ += fmt::format("{}{} = {};\n", indent_, TaskIdDecl(name), *init);
      task_names_[iter_arg.var.get()] = name;
    }
    steps_->push_back(Step{TaskIdStep{.var = iter_arg.var.get(), .from = iter_arg.init->As<ir::Var>()}});
    return true;
  }

  // A tensor updated in place (Alias) is its initial tensor in every iteration: the same C++ tensor,
  // never copied, since the runtime orders tasks by the tensors they are handed. A tensor rebound to
  // another buffer (Rebind) is a C++ tensor variable declared before the loop and reassigned at the
  // yield; in the plan it is a template view that each rebinding points at the buffer it names then.
  ir::Result<bool> EmitCarriedTensor(const ir::ForStmt& loop, const ir::IterArg& iter_arg) {
    const auto* init_var = iter_arg.init->As<ir::Var>();
    auto init = init_var ? bindings_.find(init_var) : bindings_.end();
    if (init == bindings_.end())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("orchestration loop '{}' carries '{}', which must start from a tensor of the "
                                   "orchestration (a parameter, a pl.create_tensor or a view)",
                                   loop.loop_var()->name_hint(), iter_arg.var->name_hint()),
                       iter_arg.init->span());
    if (iter_arg.carry == ir::CarryKind::Alias) {
      bindings_[iter_arg.var.get()] = init->second;
      return true;
    }
    rt::PlanView slot{.name = iter_arg.var->name_hint(), .base = init->second.ref};
    ViewShape(*iter_arg.var, slot);
    const auto index = static_cast<uint32_t>(result_.plan.views.size());
    result_.plan.views.push_back(std::move(slot));
    template_views_.insert(index);
    const std::string name = names_.Take(iter_arg.var->name_hint());
    body_ += fmt::format("{}{} = {};\n", indent_, Declared("ChipTensor", name), init->second.cpp_name);
    const rt::PlanTensorRef ref{rt::PlanTensorRef::Kind::View, index};
    bindings_[iter_arg.var.get()] = Binding{ref, name};
    steps_->push_back(Step{RebindStep{.rebindings = {{.slot = index, .value = init->second.ref}}}});
    return true;
  }

  // The yield ending a loop body that carries values: each carried variable takes its next value.
  ir::Result<bool> EmitLoopYield(const ir::YieldStmt& yield) {
    if (!current_loop_ || current_loop_->iter_args().size() != yield.values().size())
      return MakeError(DiagnosticKind::Internal, "a yield outside a loop carrying values", yield.span());
    if (auto ok = EmitScalarYield(yield); !ok) return ok;
    if (auto ok = EmitTensorYield(yield); !ok) return ok;
    for (size_t i = 0; i < yield.values().size(); ++i) {
      const ir::IterArg& iter_arg = current_loop_->iter_args()[i];
      if (iter_arg.carry != ir::CarryKind::TaskId && iter_arg.carry != ir::CarryKind::TaskIdArray) continue;
      const ir::Var* carried = iter_arg.var.get();
      const std::string* value = TaskNameOf(yield.values()[i]);
      if (!value)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' must be a TaskId at the end of the loop body", carried->name_hint()),
                         yield.span());
      const std::string& target = task_names_.at(carried);
      if (const auto* array = carried->type()->As<ir::ArrayType>()) {
        if (*value != target)  // another array: copied element by element
          body_ += fmt::format("{0}for (int64_t {1}_k = 0; {1}_k < {2}; ++{1}_k) {1}[{1}_k] = {3}[{1}_k];\n", indent_,
                               target, array->extent(), *value);
      } else {
        body_ += fmt::format("{}{} = {};\n", indent_, target, *value);
      }
      steps_->push_back(Step{TaskIdStep{.var = carried, .from = yield.values()[i]->As<ir::Var>()}});
    }
    return true;
  }

  // The rebound tensors' next buffers. Each is read before any is assigned, since one may be another's
  // value of this iteration (`a, b = b, a`).
  ir::Result<bool> EmitTensorYield(const ir::YieldStmt& yield) {
    std::vector<std::pair<const Binding*, const Binding*>> rebinds;  // carried variable, next buffer
    for (size_t i = 0; i < yield.values().size(); ++i) {
      const ir::IterArg& iter_arg = current_loop_->iter_args()[i];
      if (iter_arg.carry != ir::CarryKind::Rebind) continue;
      const auto* value = yield.values()[i]->As<ir::Var>();
      auto next = value ? bindings_.find(value) : bindings_.end();
      if (next == bindings_.end())
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' must name a tensor of the orchestration at the end of the loop body",
                                     iter_arg.var->name_hint()),
                         yield.values()[i]->span());
      rebinds.emplace_back(&bindings_.at(iter_arg.var.get()), &next->second);
    }
    const bool several = rebinds.size() > 1;
    std::vector<std::string> temporaries;
    if (several)
      for (const auto& [carried, next] : rebinds) {
        temporaries.push_back(names_.Take(carried->cpp_name + "_next"));
        body_ += fmt::format("{}const ChipTensor {} = {};\n", indent_, temporaries.back(), next->cpp_name);
      }
    for (size_t i = 0; i < rebinds.size(); ++i) {
      const auto& [carried, next] = rebinds[i];
      body_ += fmt::format("{}{} = {};\n", indent_, carried->cpp_name, several ? temporaries[i] : next->cpp_name);
    }
    RebindStep step;
    for (const auto& [carried, next] : rebinds) step.rebindings.push_back({.slot = carried->ref.index, .value = next->ref});
    if (!step.rebindings.empty()) steps_->push_back(Step{std::move(step)});
    return true;
  }

  // The carried scalars' next values, each computed into a temporary first, since one may read
  // another's value of this iteration (`a, b = b, a + b`).
  ir::Result<bool> EmitScalarYield(const ir::YieldStmt& yield) {
    CarryStep carry;
    std::vector<std::pair<std::string, std::string>> assignments;  // C++ variable, temporary
    for (size_t i = 0; i < yield.values().size(); ++i) {
      if (current_loop_->iter_args()[i].carry != ir::CarryKind::Scalar) continue;
      const ir::Var* carried = current_loop_->iter_args()[i].var.get();
      const auto dtype = carried->type()->As<ir::ScalarType>()->dtype();
      auto value = CppExpr(yield.values()[i]);
      if (!value) return pypto::unexpected(value.error());
      const std::string next = names_.Take(carried->name_hint() + "_next");
      body_ += fmt::format("{}const {} {} = {};\n", indent_, *CppScalarType(dtype), next, *value);
      assignments.emplace_back(scalars_.at(carried), next);
      carry.updates.push_back(ScalarStep{.var = carried, .value = yield.values()[i], .dtype = dtype});
    }
    for (const auto& [target, next] : assignments) body_ += fmt::format("{}{} = {};\n", indent_, target, next);
    if (!carry.updates.empty()) steps_->push_back(Step{std::move(carry)});
    return true;
  }

  static bool ContainsSubmit(const std::vector<Step>& steps) {
    for (const auto& step : steps) {
      if (std::holds_alternative<SubmitStep>(step.node)) return true;
      if (const auto* scope = std::get_if<ScopeStep>(&step.node); scope && ContainsSubmit(scope->body)) return true;
      if (const auto* loop = std::get_if<LoopStep>(&step.node); loop && loop->submits) return true;
      if (const auto* branch = std::get_if<IfStep>(&step.node);
          branch && (ContainsSubmit(branch->then_body) || ContainsSubmit(branch->else_body)))
        return true;
    }
    return false;
  }

  // `if cond: ... else: ...` on orchestration scalars: a C++ if, and a branch the plan expansion
  // chooses with the values the condition has there (the same ones the C++ computes). Scalars and
  // TaskIds both branches assign are C++ variables declared before the if and assigned at the end of
  // each branch.
  // A tensor both branches rebind (`out = self.k1(x, out)` / `out = self.k2(x, out)`) must name the
  // same buffer after either, which is then what later code uses.
  ir::Result<bool> EmitIf(const ir::IfStmt& branch) {
    const auto* scalar = branch.condition()->type()->As<ir::ScalarType>();
    if (!scalar || !CppScalarType(scalar->dtype()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the condition of an orchestration if must be an integer, BOOL or float scalar, "
                                   "got {}",
                                   branch.condition()->type()->str()),
                       branch.span());
    const char* hint = "branch on literals, scalar parameters, loop variables and scalars computed from them";
    if (auto ok = HoistElementReads(branch.condition()); !ok) return ok;
    if (const ir::Call* read = RunTimeCall(branch.condition()))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the condition of this orchestration if calls '{}', whose value is only known at "
                                   "run time; the task plan chooses the branch when it is built",
                                   read->is_op_call() ? read->op()->name : read->callee()),
                       branch.span(), hint);
    if (const ir::Var* unknown = UnknownScalar(branch.condition()))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the condition of this orchestration if reads '{}', which is only known at run "
                                   "time; the task plan chooses the branch when it is built",
                                   unknown->name_hint()),
                       branch.span(), hint);
    auto condition = CppExpr(branch.condition());
    if (!condition) return pypto::unexpected(condition.error());
    Separate();
    std::vector<std::string> results;  // the C++ variables of the scalar and TaskId results; "" for tensors
    for (const auto& var : branch.return_vars()) {
      results.emplace_back();
      if (var->type()->As<ir::TensorType>()) continue;
      if (ir::IsTaskIdArray(*var->type())) {  // `tids[i] = t` in a branch: the one C++ array, updated in place
        results.back() = kArrayResult;
        continue;
      }
      if (ir::IsTaskId(*var->type())) {  // `with pl.at(...) as t` in both branches: the launch that ran
        results.back() = names_.Take(var->name_hint());
        body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(results.back()));
        task_names_[var.get()] = results.back();
        continue;
      }
      const auto* result = var->type()->As<ir::ScalarType>();
      auto type = result ? CppScalarType(result->dtype()) : std::nullopt;
      if (!type)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' ({}) is assigned in the branches of an orchestration if; its branches "
                                     "may assign integer, BOOL and float scalars and TaskIds, and rebind tensors only",
                                     var->name_hint(), var->type()->str()),
                         branch.span(), "assign it before the if");
      results.back() = names_.Take(var->name_hint());
      const std::string declared = Declared(*type, results.back());
      if (!hoisted_) body_ += fmt::format("{}{};\n", indent_, declared);
      scalars_[var.get()] = results.back();
    }
    // A comparison is parenthesised already.
    const auto* binary = branch.condition()->As<ir::BinaryExpr>();
    const bool wrapped = binary && ir::IsComparison(binary->op());
    body_ += fmt::format("{}if {}{}{} {{\n", indent_, wrapped ? "" : "(", *condition, wrapped ? "" : ")");
    IfStep step{.stmt = &branch};
    std::vector<std::optional<Binding>> then_tensors, else_tensors;
    if (auto ok = EmitBranch(branch.then_body(), branch, results, step.then_body, then_tensors); !ok) return ok;
    if (branch.else_body() && !ir::FlattenStmts(branch.else_body()).empty()) {
      body_ += indent_ + "} else {\n";
      if (auto ok = EmitBranch(branch.else_body(), branch, results, step.else_body, else_tensors); !ok) return ok;
    }
    body_ += indent_ + "}\n";
    block_start_ = after_scalar_ = false;
    steps_->push_back(Step{std::move(step)});
    return BindIfTensors(branch, then_tensors, else_tensors);
  }

  // The C++ "variable" of an if result that is a TaskId array: none of its own, as both branches
  // update one array in place.
  static constexpr const char* kArrayResult = "[]";

  // One branch of an orchestration if, its steps going to `steps`. The yield ending it assigns the
  // if's scalar results and records the buffers its tensor results name (`tensors`).
  ir::Result<bool> EmitBranch(const ir::StmtPtr& body, const ir::IfStmt& branch,
                              const std::vector<std::string>& results, std::vector<Step>& steps,
                              std::vector<std::optional<Binding>>& tensors) {
    std::vector<Step>* outer_steps = std::exchange(steps_, &steps);
    indent_ += "  ";
    block_start_ = true;
    ++if_depth_;
    for (const auto& stmt : ir::FlattenStmts(body)) {
      const auto* yield = stmt->As<ir::YieldStmt>();
      if (!yield) {
        if (auto ok = EmitStmt(stmt); !ok) return ok;
        continue;
      }
      if (yield->values().size() != results.size())
        return MakeError(DiagnosticKind::Internal, "an if branch yields a value per result", yield->span());
      for (size_t i = 0; i < results.size(); ++i) {
        const auto& value = yield->values()[i];
        const auto& var = branch.return_vars()[i];
        if (results[i].empty()) {
          const auto* source = value->As<ir::Var>();
          auto it = source ? bindings_.find(source) : bindings_.end();
          tensors.push_back(it == bindings_.end() ? std::nullopt : std::optional<Binding>(it->second));
          continue;
        }
        if (results[i] == kArrayResult) {
          const std::string* array = TaskNameOf(value);
          auto named = task_names_.find(var.get());
          if (!array || (named != task_names_.end() && named->second != *array))
            return MakeError(DiagnosticKind::Syntax,
                             fmt::format("'{}' names a different TaskId array after each branch of this "
                                         "orchestration if",
                                         var->name_hint()),
                             branch.span(), "update one array in both branches");
          task_names_[var.get()] = *array;
          steps_->push_back(Step{TaskIdStep{.var = var.get(), .from = value->As<ir::Var>()}});
          continue;
        }
        if (ir::IsTaskId(*var->type())) {
          const std::string* task = TaskNameOf(value);
          if (!task)
            return MakeError(DiagnosticKind::Internal, fmt::format("'{}' is not a TaskId here", var->name_hint()),
                             value->span());
          body_ += fmt::format("{}{} = {};\n", indent_, results[i], *task);
          steps_->push_back(Step{TaskIdStep{.var = var.get(), .from = value->As<ir::Var>()}});
          continue;
        }
        if (const ir::Var* unknown = UnknownScalar(value))
          return MakeError(DiagnosticKind::Syntax,
                           fmt::format("'{}' is assigned from '{}', which is only known at run time; orchestration "
                                       "scalars must be known when the task plan is built",
                                       var->name_hint(), unknown->name_hint()),
                           value->span());
        auto text = CppExpr(value);
        if (!text) return pypto::unexpected(text.error());
        body_ += fmt::format("{}{} = {};\n", indent_, results[i], *text);
        steps_->push_back(Step{ScalarStep{
            .var = var.get(), .value = value, .dtype = var->type()->As<ir::ScalarType>()->dtype()}});
      }
    }
    --if_depth_;
    indent_.resize(indent_.size() - 2);
    steps_ = outer_steps;
    return true;
  }

  // A tensor result of an orchestration if names the buffer both branches left it naming.
  ir::Result<bool> BindIfTensors(const ir::IfStmt& branch, const std::vector<std::optional<Binding>>& then_tensors,
                                 const std::vector<std::optional<Binding>>& else_tensors) {
    size_t t = 0;
    for (const auto& var : branch.return_vars()) {
      if (!var->type()->As<ir::TensorType>()) continue;
      const auto& a = then_tensors.at(t);
      const auto& b = else_tensors.at(t);
      ++t;
      if (!a || !b || a->ref.kind != b->ref.kind || a->ref.index != b->ref.index)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' names a different tensor after each branch of this orchestration if; "
                                     "the branches may choose which kernels write a tensor, not which tensor later "
                                     "code uses",
                                     var->name_hint()),
                         branch.span(), "pass the tensor each kernel writes as its output argument in both branches");
      bindings_[var.get()] = *a;
    }
    return true;
  }

  // `k0 = kb * 64`: a C++ variable, and a value the plan expansion computes in every iteration.
  ir::Result<bool> EmitScalarDef(const ir::AssignStmt& assign) {
    const auto& var = assign.var();
    const auto dtype = var->type()->As<ir::ScalarType>()->dtype();
    auto type = CppScalarType(dtype);
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("orchestration scalar '{}' is {}; orchestration code holds integer, BOOL, FP32 and "
                                   "FP64 scalars only",
                                   var->name_hint(), ir::DataTypeName(dtype)),
                       assign.span());
    if (const ir::Var* unknown = UnknownScalar(assign.value()))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' is computed from '{}', which is only known at run time; orchestration "
                                   "scalars must be known at compile time",
                                   var->name_hint(), unknown->name_hint()),
                       assign.span());
    auto value = CppExpr(assign.value());
    if (!value) return pypto::unexpected(value.error());
    Separate();
    after_scalar_ = true;
    const std::string name = names_.Take(var->name_hint());
    scalars_[var.get()] = name;
    body_ += fmt::format("{}{} = {};\n", indent_, Declared(*type, name), *value);
    steps_->push_back(Step{ScalarStep{.var = var.get(), .value = assign.value(), .dtype = dtype}});
    return true;
  }

  // `v = pl.tensor.read(t, [i, ...])` of an orchestration parameter: the C++ reads the element through
  // the runtime (get_tensor_data, as upstream's host orchestration does), and the plan is expanded for
  // each run from the tensors passed, so that v may bound a loop, choose a branch or be a kernel's
  // scalar argument. A tensor a kernel computes cannot be read: the plan is built before any runs.
  ir::Result<bool> EmitTensorRead(const ir::AssignStmt& assign, const ir::Call& read) {
    const auto& var = assign.var();
    const auto dtype = var->type()->As<ir::ScalarType>()->dtype();
    auto name = EmitElementRead(read, var->name_hint(), dtype, assign.span());
    if (!name) return pypto::unexpected(name.error());
    scalars_[var.get()] = *name;
    steps_->push_back(Step{ScalarStep{.var = var.get(), .value = assign.value(), .dtype = dtype}});
    return true;
  }

  // A read written inside a condition (`if pl.read(flags, [0]) > 0:`): read into a C++ variable first,
  // which the condition's C++ names (the plan evaluates the read where the condition is evaluated).
  ir::Result<bool> HoistElementReads(const ir::ExprPtr& expr) {
    struct Reads final : ir::IRVisitor {
      std::vector<const ir::Call*> found;
      void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
        if (call->is_op_call() && call->op()->name == "tensor.read") found.push_back(call.get());
        ir::IRVisitor::VisitCall(call);
      }
    } reads;
    reads.VisitExpr(expr);
    for (const ir::Call* read : reads.found) {
      auto name = EmitElementRead(*read, "element", read->type()->As<ir::ScalarType>()->dtype(), read->span());
      if (!name) return pypto::unexpected(name.error());
      read_names_[read] = *name;
    }
    return true;
  }

  // The C++ reading one element of an orchestration parameter into a new variable; its name.
  ir::Result<std::string> EmitElementRead(const ir::Call& read, const std::string& hint, ir::DataType dtype,
                                          const ir::Span& span) {
    const auto* tensor = read.args()[0]->As<ir::Var>();
    auto binding = tensor ? bindings_.find(tensor) : bindings_.end();
    if (binding == bindings_.end() || binding->second.ref.kind != rt::PlanTensorRef::Kind::Param)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("orchestration code reads an element of '{}', which is not a parameter of the "
                                   "orchestration; only tensors the caller passes can be read here",
                                   tensor ? tensor->name_hint() : ir::PrintExpr(read.args()[0])),
                       span, "read the element inside the kernel that uses it");
    auto type = CppScalarType(dtype);
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("orchestration scalar '{}' is {}; orchestration code holds integer, BOOL, FP32 and "
                                   "FP64 scalars only",
                                   hint, ir::DataTypeName(dtype)),
                       span);
    std::vector<std::string> indices;
    for (const auto& index : read.args()[1]->As<ir::TupleLiteral>()->elements()) {
      if (const ir::Var* unknown = UnknownScalar(index))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("the index of this read uses '{}', which has no value here", unknown->name_hint()),
                         span);
      auto text = CppExpr(index);
      if (!text) return pypto::unexpected(text.error());
      indices.push_back(fmt::format("static_cast<uint32_t>({})", *text));
    }
    Separate();
    after_scalar_ = true;
    const std::string name = names_.Take(hint);
    body_ += fmt::format("{}uint32_t {}_index[{}] = {{{}}};\n", indent_, name, indices.size(), fmt::join(indices, ", "));
    body_ += fmt::format("{}{} = get_tensor_data<{}>({}, {}, {}_index);\n", indent_, Declared(*type, name), *type,
                         binding->second.cpp_name, indices.size(), name);
    reads_.params[tensor] = binding->second.ref.index;
    return name;
  }

  // The tensor a reshape or slice views: a parameter, a pl.create_tensor tensor or another view.
  ir::Result<const Binding*> ViewedTensor(const ir::AssignStmt& assign, const ir::Call& call,
                                          std::string_view what) const {
    const ir::Var* base = call.args()[0]->As<ir::Var>();
    auto it = base ? bindings_.find(base) : bindings_.end();
    if (it == bindings_.end())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("{} a parameter, a pl.create_tensor tensor or a view of one", what),
                       assign.span());
    return &it->second;
  }

  // Sets the view's shape to the variable's; returns it as C++ initializer text ("16, 32").
  static std::string ViewShape(const ir::Var& var, rt::PlanView& view) {
    for (int64_t dim : var.type()->As<ir::TensorType>()->shape()) view.shape.push_back(static_cast<uint32_t>(dim));
    return fmt::format("{}", fmt::join(view.shape, ", "));
  }

  // `y = pl.reshape(x, [..])`: a view of the whole of x under another shape, the same buffer. Its
  // shape is static, so one view serves every iteration of a loop around it.
  ir::Result<bool> EmitReshape(const ir::AssignStmt& assign, const ir::Call& call) {
    auto viewed = ViewedTensor(assign, call, "pl.reshape in orchestration code reshapes");
    if (!viewed) return pypto::unexpected(viewed.error());
    const auto& var = assign.var();
    if (auto existing = view_of_.find(&assign); existing != view_of_.end()) {  // again, in a later iteration
      bindings_[var.get()] = existing->second;
      return true;
    }
    rt::PlanView view{.name = var->name_hint(), .base = (*viewed)->ref};
    const std::string dims = ViewShape(*var, view);
    Separate();
    const std::string name = names_.Take(var->name_hint());
    body_ += fmt::format("{0}uint32_t {1}_shapes[{2}] = {{{3}}};\n{0}const ChipTensor {1} = {4}.reshape({1}_shapes, {2});\n",
                         indent_, name, view.shape.size(), dims, (*viewed)->cpp_name);
    const Binding binding = AddView(std::move(view), name, assign.span());
    bindings_[var.get()] = binding;
    view_of_[&assign] = binding;
    return true;
  }

  // `xt = pl.transpose(x, axis1, axis2)`: x with the two axes and their strides swapped (the
  // runtime's transpose()); a kernel given xt reads x through those strides.
  ir::Result<bool> EmitTranspose(const ir::AssignStmt& assign, const ir::Call& call) {
    auto viewed = ViewedTensor(assign, call, "pl.transpose in orchestration code transposes");
    if (!viewed) return pypto::unexpected(viewed.error());
    const auto& var = assign.var();
    const auto rank = static_cast<int64_t>(var->type()->As<ir::TensorType>()->shape().size());
    const auto axis = [&](const char* key) {
      const int64_t value = *ir::FindAttr<int64_t>(call.kwargs(), key);
      return static_cast<uint32_t>(value < 0 ? value + rank : value);
    };
    rt::PlanView view{.name = var->name_hint(), .base = (*viewed)->ref};
    ViewShape(*var, view);
    view.swapped_axes = std::pair{axis("axis1"), axis("axis2")};
    Separate();
    const std::string name = names_.Take(var->name_hint());
    body_ += fmt::format("{}const ChipTensor {} = {}.transpose({}, {});\n", indent_, name, (*viewed)->cpp_name,
                         view.swapped_axes->first, view.swapped_axes->second);
    bindings_[var.get()] = AddView(std::move(view), name, assign.span());
    return true;
  }

  // Appends a view defined as a whole of its base (a reshape or a transpose). Of a view that each
  // iteration makes anew (a slice at computed offsets), it is made anew too, by a ViewStep.
  Binding AddView(rt::PlanView view, const std::string& cpp_name, const ir::Span& span) {
    const auto index = static_cast<uint32_t>(result_.plan.views.size());
    const bool of_template = view.base.kind == rt::PlanTensorRef::Kind::View && template_views_.contains(view.base.index);
    result_.plan.views.push_back(std::move(view));
    if (of_template) {
      template_views_.insert(index);
      steps_->push_back(Step{ViewStep{.view = index, .offsets = {}, .span = span}});
    }
    return Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, index}, cpp_name};
  }

  // `v = pl.slice(t, shape, offsets)` passed to kernels: a view of the window of t (the runtime's
  // view(), t's strides). At offsets computed in orchestration code, or of such a view, the plan holds
  // a template and a ViewStep makes each iteration's view.
  ir::Result<bool> EmitSlice(const ir::AssignStmt& assign, const ir::Call& call) {
    auto viewed = ViewedTensor(assign, call, "pl.slice in orchestration code slices");
    if (!viewed) return pypto::unexpected(viewed.error());
    const auto& var = assign.var();
    const rt::PlanTensorRef base = (*viewed)->ref;
    rt::PlanView view{.name = var->name_hint(), .base = base};
    const std::string dims = ViewShape(*var, view);
    std::vector<std::string> offsets;
    std::vector<ir::ExprPtr> offset_exprs;
    bool computed = base.kind == rt::PlanTensorRef::Kind::View && template_views_.contains(base.index);
    for (const auto& offset : call.args()[2]->As<ir::TupleLiteral>()->elements()) {
      if (const ir::Var* unknown = UnknownScalar(offset))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("the offset of slice '{}' is computed from '{}', which is only known when the "
                                     "kernels run",
                                     var->name_hint(), unknown->name_hint()),
                         assign.span());
      auto text = CppExpr(offset);
      if (!text) return pypto::unexpected(text.error());
      const auto constant = ir::AsConstInt(offset);
      computed |= !constant;
      view.offsets.push_back(constant ? static_cast<uint32_t>(*constant) : 0);
      offsets.push_back(constant ? *text : fmt::format("static_cast<uint32_t>({})", *text));
      offset_exprs.push_back(offset);
    }
    Separate();
    const std::string name = names_.Take(var->name_hint());
    body_ += fmt::format(
        "{0}uint32_t {1}_shapes[{2}] = {{{3}}};\n{0}uint32_t {1}_offsets[{2}] = {{{4}}};\n"
        "{0}const ChipTensor {1} = {5}.view({1}_shapes, {1}_offsets);\n",
        indent_, name, view.shape.size(), dims, fmt::join(offsets, ", "), (*viewed)->cpp_name);
    const auto index = static_cast<uint32_t>(result_.plan.views.size());
    result_.plan.views.push_back(std::move(view));
    if (computed) {
      template_views_.insert(index);
      steps_->push_back(Step{ViewStep{.view = index, .offsets = std::move(offset_exprs), .span = assign.span()}});
    }
    bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, index}, name};
    return true;
  }

  // The first variable of `expr` that is not an orchestration scalar defined so far.
  const ir::Var* UnknownScalar(const ir::ExprPtr& expr) const {
    struct Finder final : ir::IRVisitor {
      const std::unordered_map<const ir::Var*, std::string>& known;
      const std::unordered_map<const ir::Call*, std::string>& hoisted;  // element reads: values of their own
      const ir::Var* unknown = nullptr;
      Finder(const std::unordered_map<const ir::Var*, std::string>& k,
             const std::unordered_map<const ir::Call*, std::string>& h)
          : known(k), hoisted(h) {}
      void VisitVar(const std::shared_ptr<const ir::Var>& var) override {
        if (!unknown && !known.contains(var.get())) unknown = var.get();
      }
      void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
        if (!hoisted.contains(call.get())) ir::IRVisitor::VisitCall(call);
      }
    } finder(scalars_, read_names_);
    finder.VisitExpr(expr);
    return finder.unknown;
  }

  // A call in an orchestration scalar expression other than a cast and a hoisted element read: its
  // value exists only when the C++ runs, never while the plan is built.
  const ir::Call* RunTimeCall(const ir::ExprPtr& expr) const {
    struct Finder final : ir::IRVisitor {
      const std::unordered_map<const ir::Call*, std::string>& hoisted;
      const ir::Call* found = nullptr;
      explicit Finder(const std::unordered_map<const ir::Call*, std::string>& h) : hoisted(h) {}
      void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
        if (!found && !AsScalarCast(*call) && !hoisted.contains(call.get())) found = call.get();
        if (!found) ir::IRVisitor::VisitCall(call);
      }
    } finder(read_names_);
    finder.VisitExpr(expr);
    return finder.found;
  }

  // An orchestration scalar expression as C++ (upstream's spelling: binary operations parenthesised).
  ir::Result<std::string> CppExpr(const ir::ExprPtr& expr) const {
    if (const auto* i = expr->As<ir::ConstInt>())
      return i->value() == std::numeric_limits<int64_t>::min() ? std::string("INT64_MIN")
                                                               : std::to_string(i->value());
    if (const auto* f = expr->As<ir::ConstFloat>()) {
      const auto dtype = f->type()->As<ir::ScalarType>()->dtype();
      if (!std::isfinite(f->value()))
        return MakeError(DiagnosticKind::Type, "a non-finite literal in orchestration code is not supported yet",
                         expr->span());
      if (dtype == ir::DataType::FP64) return FloatLiteral(f->value());
      return FloatLiteral(static_cast<float>(f->value())) + "f";
    }
    if (const auto* b = expr->As<ir::ConstBool>()) return std::string(b->value() ? "true" : "false");
    if (const auto* var = expr->As<ir::Var>()) {
      auto it = scalars_.find(var);
      if (it == scalars_.end())
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' is not an orchestration scalar known at compile time", var->name_hint()),
                         expr->span());
      return it->second;
    }
    if (const auto* call = expr->As<ir::Call>(); call && read_names_.contains(call)) return read_names_.at(call);
    if (const ir::Call* cast = AsScalarCast(*expr)) {
      auto type = CppScalarType(cast->type()->As<ir::ScalarType>()->dtype());
      auto value = CppExpr(cast->args()[0]);
      if (!value) return value;
      if (!type)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("a cast to {} is not supported in orchestration code", cast->type()->str()),
                         expr->span());
      return fmt::format("static_cast<{}>({})", *type, *value);
    }
    if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name.starts_with("system."))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("pl.{}() is not supported in orchestration code yet", call->op()->name),
                       expr->span(),
                       call->op()->name.starts_with("system.available_")
                           ? "give the launch width as a number (the simulated SoC has 24 clusters of 1 AIC and 2 AIV "
                             "on a2a3, 36 on a5)"
                           : "");
    const auto* binary = expr->As<ir::BinaryExpr>();
    if (!binary)
      return MakeError(DiagnosticKind::Syntax, "this expression is not supported in orchestration scalar code yet",
                       expr->span());
    auto lhs = CppExpr(binary->lhs());
    if (!lhs) return lhs;
    auto rhs = CppExpr(binary->rhs());
    if (!rhs) return rhs;
    const auto dtype = binary->type()->As<ir::ScalarType>()->dtype();
    const auto op = binary->op();
    auto type = CppScalarType(dtype);
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' on {} is not supported in orchestration code", ir::BinaryOpSymbol(op),
                                   ir::DataTypeName(dtype)),
                       expr->span());
    switch (op) {
      case ir::BinaryOp::Min:
      case ir::BinaryOp::Max:
        return fmt::format("std::{}<{}>({}, {})", ir::BinaryOpSymbol(op), *type, *lhs, *rhs);
      case ir::BinaryOp::FloorDiv:
      case ir::BinaryOp::FloorMod:
        if (ir::IsFloat(dtype))
          return MakeError(DiagnosticKind::Type,
                           fmt::format("'{}' on floating-point scalars is not supported in orchestration code yet",
                                       ir::BinaryOpSymbol(op)),
                           expr->span());
        return fmt::format("({} {} {})", *lhs, op == ir::BinaryOp::FloorDiv ? "/" : "%", *rhs);
      case ir::BinaryOp::FloatDiv:
        // True division even when both operands are integers.
        return fmt::format("(static_cast<{0}>({1}) / static_cast<{0}>({2}))", *type, *lhs, *rhs);
      default: return fmt::format("({} {} {})", *lhs, ir::BinaryOpSymbol(op), *rhs);
    }
  }

  // A scalar argument that is not a literal: its C++ for add_scalar, once its type fits the parameter.
  ir::Result<std::string> ScalarArgCpp(const ir::ExprPtr& arg, ir::DataType dtype, const std::string& what) const {
    const auto* scalar = arg->type()->As<ir::ScalarType>();
    if (!scalar)
      return MakeError(DiagnosticKind::Internal, fmt::format("{} is not a scalar", what), arg->span());
    if (const ir::Var* unknown = UnknownScalar(arg))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("{} is computed from '{}', which is only known at run time; the task plan needs "
                                   "every scalar argument at compile time",
                                   what, unknown->name_hint()),
                       arg->span());
    auto text = CppExpr(arg);
    if (!text) return text;
    const auto given = scalar->dtype();
    if (dtype == ir::DataType::FP32 || dtype == ir::DataType::FP64) {
      if (given != dtype)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{} is {}, but '{}' is {}", what, ir::DataTypeName(dtype), *text,
                                     ir::DataTypeName(given)),
                         arg->span());
      return fmt::format("to_u64({})", *text);
    }
    if (dtype == ir::DataType::BOOL || ir::IsInteger(dtype)) {
      if (ir::IsFloat(given))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{} is {}, but the floating-point value '{}' was passed", what,
                                     ir::DataTypeName(dtype), *text),
                         arg->span());
      return *text;
    }
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} is {}; kernel scalars of that dtype are not supported yet", what,
                                 ir::DataTypeName(dtype)),
                     arg->span());
  }

  // The kernels a Group function runs as one MixedKernels task: its calls of one AIC and/or one AIV
  // function, each passing the group's parameters in order, since the members share one args[].
  struct GroupMembers {
    ir::FunctionPtr aic, aiv;
  };
  ir::Result<GroupMembers> MembersOf(const ir::Function& group) const {
    GroupMembers members;
    for (const auto& stmt : ir::FlattenStmts(group.body())) {
      if (stmt->As<ir::ReturnStmt>()) continue;
      const ir::Call* call = nullptr;
      if (const auto* assign = stmt->As<ir::AssignStmt>()) call = assign->value()->As<ir::Call>();
      if (const auto* eval = stmt->As<ir::EvalStmt>()) call = eval->expr()->As<ir::Call>();
      auto member = call ? program_.Find(call->callee()) : nullptr;
      if (!member || (member->type() != ir::FunctionType::AIC && member->type() != ir::FunctionType::AIV))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("group '{}' may only call one AIC and one AIV kernel", group.name()),
                         stmt->span());
      auto& slot = member->type() == ir::FunctionType::AIC ? members.aic : members.aiv;
      if (slot)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("group '{}' calls two {} kernels ('{}' and '{}')", group.name(),
                                     ir::FunctionTypeName(member->type()), slot->name(), member->name()),
                         stmt->span());
      const bool same_layout =
          call->args().size() == group.params().size() &&
          std::ranges::equal(call->args(), group.params(),
                             [](const ir::ExprPtr& arg, const ir::VarPtr& param) { return arg.get() == param.get(); });
      if (!same_layout)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("group '{}' member '{}' must take the group's parameters in order: the members "
                                     "of one mixed task share one args[]",
                                     group.name(), member->name()),
                         call->span());
      slot = member;
    }
    if (!members.aic && !members.aiv)
      return MakeError(DiagnosticKind::Syntax, fmt::format("group '{}' calls no kernel", group.name()), group.span());
    return members;
  }

  // The MixedKernels of a call of a Group: {aic, aiv, aiv again when it is dispatched on both lanes}.
  ir::Result<rt::MixedKernels> MixedKernelsOf(const ir::Function& group) {
    auto members = MembersOf(group);
    if (!members) return pypto::unexpected(members.error());
    rt::MixedKernels mixed;
    if (members->aic) mixed.aic = FuncId(*members->aic);
    if (members->aiv) {
      mixed.aiv0 = FuncId(*members->aiv);
      if (const bool* dual = ir::FunctionAttr<bool>(*members->aiv, ir::kDualAivDispatchAttr); dual && *dual)
        mixed.aiv1 = mixed.aiv0;
    }
    return mixed;
  }

  // How many blocks a kernel call launches: none given (one), a literal (0: nothing to launch), or an
  // orchestration scalar expression (`computed`) the plan evaluates at each submit. `text` is the count
  // set_block_num takes in the C++: the literal, or a variable (`cpp` is its value, unless it is an
  // orchestration scalar's own); empty for a plain call.
  struct Blocks {
    std::optional<int32_t> literal;
    ir::ExprPtr computed;
    std::string text, cpp;
  };
  ir::Result<Blocks> BlocksOf(const ir::Call& call, const ir::Function& callee) {
    const ir::ExprPtr& count = call.core_num();
    if (!count) return Blocks{};
    if (auto literal = ir::AsConstInt(count)) {
      if (*literal < 0 || *literal > std::numeric_limits<int32_t>::max())
        return MakeError(DiagnosticKind::Type, fmt::format("pl.spmd core_num {} is out of range", *literal),
                         call.span());
      return Blocks{.literal = static_cast<int32_t>(*literal), .text = std::to_string(*literal)};
    }
    const auto* scalar = count->type()->As<ir::ScalarType>();
    if (!scalar || !ir::IsInteger(scalar->dtype()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the block count of the pl.spmd launch of '{}' must be an integer, got {}",
                                   callee.name(), count->type()->str()),
                       call.span());
    const char* hint = "compute it from literals, scalar parameters, loop variables and tensor extents";
    if (const ir::Call* read = RunTimeCall(count))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the block count of the pl.spmd launch of '{}' calls '{}', whose value is only "
                                   "known at run time; the task plan needs it when it is built",
                                   callee.name(), read->is_op_call() ? read->op()->name : read->callee()),
                       call.span(), hint);
    if (const ir::Var* unknown = UnknownScalar(count))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the block count of the pl.spmd launch of '{}' reads '{}', which is only known at "
                                   "run time; the task plan needs it when it is built",
                                   callee.name(), unknown->name_hint()),
                       call.span(), hint);
    auto cpp = CppExpr(count);
    if (!cpp) return pypto::unexpected(cpp.error());
    if (count->Is<ir::Var>()) return Blocks{.computed = count, .text = *cpp};  // a C++ variable already
    return Blocks{.computed = count, .text = names_.Take(callee.name() + "_blocks"), .cpp = *cpp};
  }

  static std::string KernelIdCpp(int32_t id) { return id == rt::kNoKernel ? "INVALID_KERNEL_ID" : std::to_string(id); }

  ir::Result<bool> EmitSubmit(const ir::Call& call, const ir::Var* result) {
    auto callee = program_.Find(call.callee());
    if (!callee) return MakeError(DiagnosticKind::Internal, fmt::format("no function '{}'", call.callee()), call.span());
    const bool group = callee->type() == ir::FunctionType::Group;
    if (callee->type() != ir::FunctionType::AIV && callee->type() != ir::FunctionType::AIC && !group)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("'{}' is a {} function; only AIC, AIV and Group kernels can be submitted yet",
                                   callee->name(), ir::FunctionTypeName(callee->type())),
                       call.span());
    if (call.arg_directions().size() != call.args().size() || call.args().size() != callee->params().size())
      return MakeError(DiagnosticKind::Internal, "call directions were not derived", call.span());
    std::optional<rt::MixedKernels> mixed;
    if (group) {
      auto kernels = MixedKernelsOf(*callee);
      if (!kernels) return pypto::unexpected(kernels.error());
      mixed = *kernels;
    }
    auto blocks = BlocksOf(call, *callee);
    if (!blocks) return pypto::unexpected(blocks.error());
    const int32_t func_id = group ? rt::kNoKernel : FuncId(*callee);
    const bool aic = callee->type() == ir::FunctionType::AIC;
    Separate();
    std::string params = fmt::format("params_t{}", task_count_++);
    SubmitStep step{.submit = rt::PlanSubmit{
                        .func_id = func_id, .core_type = aic ? rt::CoreType::AIC : rt::CoreType::AIV, .mixed = mixed},
                    .call = &call};
    // `as tid`: the submit's TaskId, read off what the submit returns.
    std::string task_name;
    if (const auto& task_id = call.order().task_id) {
      task_name = names_.Take(task_id->name_hint());
      task_names_[task_id.get()] = task_name;
      step.task_id = task_id.get();
    }
    // A block count computed in orchestration code: the submit runs only when it is not 0, and its
    // TaskId is invalid when it does not (the runtime refuses a negative count).
    const bool guarded = blocks->computed != nullptr;
    if (guarded) {
      step.computed_blocks = &call;
      if (!task_name.empty())
        body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(task_name));
      if (!blocks->cpp.empty()) body_ += fmt::format("{}const int64_t {} = {};\n", indent_, blocks->text, blocks->cpp);
      body_ += fmt::format("{}if ({} != 0) {{\n", indent_, blocks->text);
      indent_ += "  ";
    } else if (blocks->literal) {
      step.submit.block_num = *blocks->literal;
    }

    // The task takes its tensors first and its scalars after them, each group in parameter order.
    std::string tensor_lines, scalar_lines, dump_lines;
    std::vector<std::optional<Binding>> written(call.args().size());
    const std::vector<size_t> dumped = ir::DumpedArgs(call);  // pl.submit(..., dumps=[...])
    for (size_t i = 0; i < call.args().size(); ++i) {
      const auto& arg = call.args()[i];
      const auto direction = call.arg_directions()[i];
      if (direction == ir::ArgDirection::Scalar) {
        const auto& param = *callee->params()[i];
        ScalarOperand operand{.dtype = ScalarDtype(param, *arg),
                              .what = fmt::format("scalar argument '{}' of '{}'", param.name_hint(), callee->name())};
        std::string cpp;
        if (IsLiteral(*arg)) {
          auto scalar = EncodeScalar(*arg, operand.dtype, operand.what);
          if (!scalar) return pypto::unexpected(scalar.error());
          operand.bits = scalar->bits;
          cpp = scalar->cpp;
        } else {
          auto text = ScalarArgCpp(arg, operand.dtype, operand.what);
          if (!text) return pypto::unexpected(text.error());
          operand.expr = arg;
          cpp = *text;
        }
        scalar_lines += fmt::format("{}{}.add_scalar({});\n", indent_, params, cpp);
        step.scalars.push_back(std::move(operand));
        continue;
      }
      const auto* var = arg->As<ir::Var>();
      auto it = var ? bindings_.find(var) : bindings_.end();
      if (it == bindings_.end())
        return MakeError(DiagnosticKind::Internal, "kernel argument is not a bound tensor", arg->span());
      tensor_lines += fmt::format("{}{}.{}({});\n", indent_, params, AddMethod(direction), it->second.cpp_name);
      const bool dump = dump_tagged_.contains(var) || std::ranges::find(dumped, i) != dumped.end();
      if (dump) dump_lines += fmt::format("{}{}.dump({});\n", indent_, params, it->second.cpp_name);
      step.submit.args.push_back(
          rt::PlanTaskArg{.direction = ToRuntime(direction), .tensor = it->second.ref, .dump = dump});
      if (direction != ir::ArgDirection::Input && direction != ir::ArgDirection::NoDep) written[i] = it->second;
    }
    if (blocks->literal == 0) {  // `pl.spmd(0)`, or a count that folded to 0: nothing to submit
      body_ += fmt::format("{}// '{}' is launched on 0 blocks: nothing to submit\n", indent_, callee->name());
      if (step.task_id) {
        body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(task_name));
        steps_->push_back(Step{TaskIdStep{.var = step.task_id}});
      }
      return BindCallResult(call, *callee, result, written);
    }
    body_ += fmt::format("{}CoreTaskArgs {};\n", indent_, params) + tensor_lines + scalar_lines + dump_lines;
    if (auto ok = EmitDependencies(call.order().deps, params, step); !ok) return ok;
    // `with pl.spmd(core_num=N)`: one submit of N blocks.
    if (!blocks->text.empty())
      body_ += fmt::format("{}{}.launch_spec.set_block_num({});\n", indent_, params, blocks->text);
    // `pl.spmd(..., sync_start=True)`: the blocks start only together (a hard syncall needs it).
    if (ir::FindAttr<bool>(call.kwargs(), ir::kSyncStartKwarg).value_or(false)) {
      step.submit.require_sync_start = true;
      body_ += fmt::format("{}{}.launch_spec.set_require_sync_start(true);\n", indent_, params);
    }
    // allow_early_resolve=True: consumers of this launch may be staged before it finishes.
    if (call.order().allow_early_resolve) {
      step.submit.allow_early_resolve = true;
      body_ += fmt::format("{}{}.set_allow_early_resolve(true);\n", indent_, params);
    }
    const std::string captured = task_name.empty() ? "" : (guarded ? task_name : TaskIdDecl(task_name)) + " = ";
    const std::string task_id_suffix = captured.empty() ? "" : ".task_id()";
    if (mixed) {
      const std::string name = fmt::format("mixed_{}", mixed_count_++);
      body_ += fmt::format("{}MixedKernels {} = {{{}, {}, {}}};\n", indent_, name, KernelIdCpp(mixed->aic),
                           KernelIdCpp(mixed->aiv0), KernelIdCpp(mixed->aiv1));
      body_ += fmt::format("{}{}rt_submit_task({}, {}){};\n", indent_, captured, name, params, task_id_suffix);
    } else {
      body_ += fmt::format("{}{}rt_submit_{}_task({}, {}){};\n", indent_, captured, aic ? "aic" : "aiv", func_id,
                           params, task_id_suffix);
    }
    if (guarded) {
      indent_.resize(indent_.size() - 2);
      body_ += indent_ + "}\n";
    }
    steps_->push_back(Step{std::move(step)});
    return BindCallResult(call, *callee, result, written);
  }

  // A call result is the Out tensor itself: later uses name the same buffer. It keeps the argument's
  // pl.dump_tag, since the variable was only renamed (by the user, or by outlining a scope).
  ir::Result<bool> BindCallResult(const ir::Call& call, const ir::Function& callee, const ir::Var* result,
                                  const std::vector<std::optional<Binding>>& written) {
    if (!result) return true;
    std::optional<size_t> bound;
    if (auto returned = passes::ReturnedParam(callee); returned && written[*returned]) bound = *returned;
    if (!bound) {
      size_t outputs = 0;
      for (size_t i = 0; i < written.size(); ++i)
        if (written[i]) bound = i, ++outputs;
      if (outputs > 1)
        return MakeError(DiagnosticKind::Internal,
                         fmt::format("'{}' writes {} tensors and does not return one of its parameters; cannot tell "
                                     "which one '{}' names",
                                     callee.name(), outputs, result->name_hint()),
                         call.span());
    }
    if (!bound) return true;
    bindings_[result] = *written[*bound];
    if (dump_tagged_.contains(call.args()[*bound]->As<ir::Var>())) dump_tagged_.insert(result);
    return true;
  }

  int32_t FuncId(const ir::Function& callee) {
    auto [it, inserted] = func_ids_.try_emplace(callee.name(), static_cast<int32_t>(func_ids_.size()));
    if (inserted) {
      KernelEntry entry{.func_id = it->second,
                        .name = callee.name(),
                        .core_type = callee.type() == ir::FunctionType::AIC ? "aic" : "aiv"};
      if (const auto* source = ir::FunctionAttr<std::string>(callee, ir::kExternalSourceAttr))
        entry.external_source = *source;
      if (const auto* dirs = ir::FunctionAttr<std::string>(callee, ir::kExternalIncludeDirsAttr))
        entry.external_include_dirs = *dirs;
      for (size_t i = 0; i < callee.params().size(); ++i)
        if (callee.params()[i]->type()->As<ir::TensorType>())
          entry.signature.push_back(DirectionToken(callee.param_directions()[i]));
      result_.plan.kernels.push_back(rt::PlanKernel{
          .func_id = it->second,
          .name = callee.name(),
          .core_type = callee.type() == ir::FunctionType::AIC ? rt::CoreType::AIC : rt::CoreType::AIV});
      result_.kernels.push_back(std::move(entry));
    }
    return it->second;
  }

  std::string Source(const ir::Function& entry) const {
    return fmt::format(
        "// Orchestration of '{0}' (program {1}), generated by pypto {2}.\n"
        "#include <stddef.h>\n"
        "#include <stdint.h>\n"
        "#include <stdio.h>\n"
        "\n"
        "#include \"pto_orchestration_api.h\"\n"
        "\n"
        "extern \"C\" {{\n"
        "\n"
        "PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {{\n"
        "  (void)orch_args;\n"
        "  return PTO2OrchestrationConfig{{\n"
        "      .expected_arg_count = {3},\n"
        "  }};\n"
        "}}\n"
        "\n"
        "void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{\n"
        "{4}\n"
        "{5}"
        "}}\n"
        "\n"
        "}}  // extern \"C\"\n",
        entry.name(), program_.name(), PYPTO_VERSION, entry.params().size(), params_, body_);
  }

  const ir::Program& program_;
  Orchestration result_;
  std::unordered_map<const ir::Var*, Binding> bindings_;
  std::unordered_map<const ir::AssignStmt*, Binding> view_of_;  // each reshape's view, made once
  std::unordered_map<const ir::Stmt*, Pool> pools_;  // the creates that take a buffer of a pool in each run
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
  TensorReads reads_;  // the parameters pl.tensor.read reads
  std::unordered_map<const ir::Call*, std::string> read_names_;  // element reads in conditions -> C++ names
};

}  // namespace


ir::Result<ExpandedPlan> ExpandDeferredPlan(const DeferredPlan& deferred, const rt::TaskPlan& plan,
                                            std::span<const rt::ChipTensor> params) {
  if (auto ok = rt::CheckPlanParams(plan, params); !ok) return MakeError(DiagnosticKind::Type, ok.error().message);
  TensorReads reads = deferred.reads;
  reads.tensors = params;
  ExpandedPlan expanded{.views = deferred.views};
  LoopExpander expander(plan, expanded.submits, expanded.views, &reads);
  if (auto ok = expander.Run(deferred.steps); !ok) return pypto::unexpected(ok.error());
  return expanded;
}

ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP32: return PYPTO_RT_FLOAT32;
    case ir::DataType::FP16: return PYPTO_RT_FLOAT16;
    case ir::DataType::BF16: return PYPTO_RT_BFLOAT16;
    case ir::DataType::INT8: return PYPTO_RT_INT8;
    case ir::DataType::INT16: return PYPTO_RT_INT16;
    case ir::DataType::INT32: return PYPTO_RT_INT32;
    case ir::DataType::INT64:
    case ir::DataType::INDEX: return PYPTO_RT_INT64;  // an index is a 64-bit integer, as upstream's
    case ir::DataType::UINT8: return PYPTO_RT_UINT8;
    case ir::DataType::UINT16: return PYPTO_RT_UINT16;
    case ir::DataType::UINT32: return PYPTO_RT_UINT32;
    case ir::DataType::UINT64: return PYPTO_RT_UINT64;
    case ir::DataType::BOOL: return PYPTO_RT_BOOL;
    case ir::DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case ir::DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case ir::DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: break;
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("tensors of dtype {} cannot be passed to the runtime", ir::DataTypeName(dtype)));
}

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered) {
  return OrchestrationEmitter(lowered).Run();
}

}  // namespace pypto::codegen_orch
