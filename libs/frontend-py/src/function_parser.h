// FunctionParser, the AST walker that turns one Python function definition into one IR function,
// and what the function parsers of one program share. Private to the library: its member functions
// are defined by concept in the parse_*.cpp files named below, and the program-level entry points
// that run it in parser.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ast_node.h"
#include "call_builder.h"
#include "loop_control.h"
#include "program_signature.h"
#include "scalar_bounds.h"
#include "pypto/frontend/parser.h"
#include "type_resolver.h"

namespace pypto::ir {
class TensorAliases;
}  // namespace pypto::ir

namespace pypto::frontend {

// The structs below are hidden, as pybind11's types are: they hold py::objects or Signatures and
// never leave the library.

// A generic @pl.program method specialised for one call's argument types. Parsers hold pointers into
// it, so it lives in ProgramContext::method_specialisations (std::map nodes stay put).
struct [[gnu::visibility("hidden")]] MethodSpecialisation {
  Constants constants;  // the program's, with the dimensions its parameters agree on as numbers
  Signature signature;
  ir::FunctionPtr function;  // null while its body is being parsed
};

// What every function parser of one program shares: the request, and the kernels parsed so far
// (one per specialisation of a `@pl.jit.incore` function). A `@pl.program` has no ParseRequest but the
// signatures of its methods instead.
struct [[gnu::visibility("hidden")]] ProgramContext {
  const ParseRequest* request = nullptr;
  const std::map<std::string, Signature>* methods = nullptr;
  std::string program_name;
  std::vector<ir::FunctionPtr> kernels;
  std::map<std::string, ir::FunctionPtr> specialisations;  // "name(arg types)" -> kernel
  std::set<std::string> names;                              // function names taken
  std::set<std::string> parsing;                            // sub-functions being parsed (recursion)
  // Scalar variables assigned an integer constant: reading one reads the constant, so sizes and
  // launch counts computed from them (`t_dim // 8`) are known at compile time.
  // Keyed by Var::id(), not address: Vars of a discarded parse attempt die and their addresses return.
  std::unordered_map<uint64_t, int64_t> known_ints;
  // What each integer scalar variable was assigned (by Var id): a slice `t[c0:c1]` whose bounds were
  // computed earlier has a size known at compile time when c1 - c0 folds to a constant.
  std::unordered_map<uint64_t, ir::ExprPtr> scalar_values;
  // The range of each loop variable (by Var id), for bounding what is sized at run time.
  std::unordered_map<uint64_t, LoopRange> loop_ranges;
  // The run-time extents of each tensor allocated at the bound of its shape (by Var id), which
  // pl.tensor.dim reads.
  std::unordered_map<uint64_t, std::vector<ir::ExprPtr>> run_time_shapes;
  // Each @pl.jit.incore kernel (by name) that reads the run-time extent of an unbound axis of its own
  // parameters: (parameter, axis) for each, in the order of the INDEX parameters it takes them as after
  // its own (KernelExtentParam); each call passes those extents (ExtentArgs).
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> kernel_extent_params;
  // A @pl.program: the constants its methods read, and one specialisation per argument signature of
  // each generic method (one whose parameters name pl.dynamic dimensions).
  const Constants* constants = nullptr;
  std::map<std::string, MethodSpecialisation> method_specialisations;  // "name(arg types)" -> it
  std::map<std::string, std::vector<ir::FunctionPtr>> specialised_methods;  // generic name -> functions
};

// One function's source as the parser sees it.
struct [[gnu::visibility("hidden")]] FunctionSource {
  std::string name;
  py::object def;  // the ast.FunctionDef
  SourceMap map;
  const std::map<std::string, Constant>* constants;
  std::map<std::string, TensorSpec> tensor_specs;
  ir::FunctionType type = ir::FunctionType::Opaque;
  const Signature* signature = nullptr;  // a @pl.program method: types come from its annotations
  std::map<std::string, ir::AttrValue> attrs;  // a @pl.jit.extern kernel's "external_source", ...
};

// The one function definition in `source` (a @pl.jit function, a sub-function or a module-level
// function).
ir::Result<py::object> ParseDef(const std::string& source, const SourceMap& map);

// The specialisation of generic method `generic` for the tensors `specs` (by parameter name), parsed
// on first use; `call` is where it is called (null for the entry, which a run specialises).
ir::Result<const MethodSpecialisation*> SpecialiseMethod(ProgramContext& program, const Signature& generic,
                                                         const std::map<std::string, TensorSpec>& specs,
                                                         const ir::Span* call);

class [[gnu::visibility("hidden")]] FunctionParser {
  using Env = std::unordered_map<std::string, ir::VarPtr>;

 public:
  FunctionParser(ProgramContext& program, const FunctionSource& source)
      : program_(program), source_(source), map_(source.map),
        kernel_depth_(ir::IsKernel(source.type) ? 1 : 0) {}

  ir::Result<ir::FunctionPtr> Parse();

 private:
  // ---- types the member functions share ----------------------------------------------------------
  struct ParameterUse {
    const ir::TensorType& type;
    std::string where;  // "k() parameter 'x'"
  };

  // A tensor region written as slices, `x[r : r + 128, c : c + 256]`: its offsets and static shape.
  // The sliced value is any tensor or tile, `pl.concat(a, b)[0:16, :]` too. An integer index
  // (`x[i, :, c : c + 8]`) is a window of extent 1 on its axis, which the result drops (`dropped`).
  struct Region {
    ir::ExprPtr source;
    std::vector<ir::ExprPtr> offsets;
    ir::Shape shape;
    std::vector<size_t> dropped;
  };

  // kRead: by orchestration code; kReadInKernelScope: by a later pl.at scope; kReadInLoop: inside a
  // later loop, in a scope or not.
  enum class NameUse { kNone, kRead, kReadInKernelScope, kReadInLoop, kRebound };

  static bool IsRead(NameUse use) { return use != NameUse::kNone && use != NameUse::kRebound; }

  struct SpmdLaunch {
    ir::ExprPtr core_num;
    bool sync_start = false;
    std::string name_hint;
    std::vector<ir::ExprPtr> deps;
    bool allow_early_resolve = false;
  };

  // ---- loops with carried values, and if/else ------------------------------------------------------
  // Inside kernels, a name assigned before a loop and reassigned in its body is carried from one
  // iteration to the next (an iter_arg, yielded at the end of the body, read after the loop through
  // the loop's return var); a name assigned in a branch of an if is merged after it (the if's return
  // var, yielded by each branch). The explicit forms `for i, (a,) in pl.range(n, init_values=(x,))`
  // and `r = pl.yield_(v)` are what the printer writes, and parse back to the same IR.

  struct LoopHeader {
    ir::ForKind kind = ir::ForKind::Sequential;
    ir::ExprPtr start, stop, step;
    ir::Span span;
    ir::VarPtr loop_var;   // null for a while loop
    py::handle condition;  // a while loop's test, read with the carried values bound; null for a for loop
  };

  // The trailing `targets = pl.yield_(values)` of a body, as written.
  struct ParsedYield {
    std::vector<ir::ExprPtr> values;
    std::vector<std::string> targets;
    py::handle annotation;  // `r: T = pl.yield_(v)`; null otherwise
    ir::Span span;
  };
  struct ParsedBody {
    std::vector<ir::StmtPtr> stmts;
    std::optional<ParsedYield> yield;
  };

  // The values an inlined body produced, and its statements.
  struct InlinedBody {
    std::vector<ir::StmtPtr> stmts;
    std::vector<ir::ExprPtr> values;  // what it returns
  };

  // A call of a @pl.jit.incore or .inline function: its definition, parsed from its own source, and
  // the call's arguments in its parameter order (every parameter given, by position or keyword). The
  // source's tensor specs are the argument tensors' shapes and dtypes.
  struct SubFunctionCall {
    FunctionSource source;
    std::vector<std::string> param_names;
    std::vector<ir::ExprPtr> args;
  };

  // parse_statements.cpp: a function, its statements, returns
  ir::Result<ir::FunctionPtr> ParseFunction(py::handle def);
  void ReturnedWindowsAreWritten(const ir::StmtPtr& body, const std::vector<ir::VarPtr>& params,
                                 const std::vector<bool>& windows, std::vector<ir::ParamDirection>& directions) const;
  ir::Result<ir::FunctionPtr> ExternalDeclaration(py::handle def, const std::vector<ir::VarPtr>& params,
                                                  const std::vector<ir::ParamDirection>& directions);
  ir::Result<ir::FunctionPtr> ParseMethod(const Signature& signature);
  ir::Result<ir::StmtPtr> ParseBlock(py::handle statements);
  static void Append(std::vector<ir::StmtPtr>& stmts, const ir::StmtPtr& stmt);
  ir::Result<ir::StmtPtr> ParseStatement(py::handle stmt);
  ir::Result<ir::StmtPtr> ParseOneStatement(py::handle stmt);
  std::optional<py::object> CopyKernelScope(py::handle stmt) const;
  static py::object KernelScopeAround(py::handle stmt);
  static bool IsDumpTag(py::handle node);
  ir::Result<ir::StmtPtr> ParseDumpTag(py::handle call);
  static ir::StmtPtr Seq(std::vector<ir::StmtPtr> stmts, const ir::Span& span = {});
  ir::Result<ir::StmtPtr> ParseReturn(py::handle stmt);
  bool WrittenAsConstant(py::handle node) const;
  ir::Result<bool> CheckNoTileReturned(py::handle stmt, const std::vector<ir::ExprPtr>& values) const;
  static bool ReturnsUndeclared(const Signature& signature);
  static ir::Result<bool> CheckReturn(const Signature& signature, const std::vector<ir::ExprPtr>& values,
                                      const ir::Span& span);
  ir::Result<bool> CheckReturnAnnotation(const Signature& signature, const std::vector<ir::ExprPtr>& values,
                                         const ir::Span& span) const;

  // parse_assignments.cpp: assignments
  void RecordScalar(const ir::VarPtr& var, const ir::ExprPtr& value);
  ir::ExprPtr ScalarValue(const ir::Var& var) const;
  ir::Result<ir::StmtPtr> ParseElementWrite(py::handle stmt, py::handle call);
  bool StoresInto(const ir::Expr& value, const std::string& name) const;
  ir::Result<ir::StmtPtr> ParseAssign(py::handle stmt, bool annotated);
  ir::StmtPtr BindAssigned(py::handle target, py::handle stmt, const ir::TypePtr& type, const ir::ExprPtr& value);
  ir::Result<ir::StmtPtr> ParseRunTimeShapedTensor(py::handle target, py::handle stmt);
  std::optional<ParameterUse> FirstParameterTaking(const std::string& name, py::handle stmt);
  std::optional<std::vector<int64_t>> BoundedShape(const std::vector<ir::ExprPtr>& dims) const;
  void WarnOnCompositeShape(py::handle shape_list, const std::vector<ir::ExprPtr>& dims);
  ir::Result<ir::StmtPtr> ParseShapeUnpack(py::handle stmt, py::handle target);
  static ir::TypePtr WithValidShapeOf(const ir::TypePtr& declared, const ir::TypePtr& value);
  Constants AnnotationConstants() const;
  ir::Result<ir::ExprPtr> LiteralAsDeclared(const ir::ExprPtr& value, py::handle annotation);
  static ir::Result<ir::ExprPtr> IntegerAsDeclared(const ir::ExprPtr& value, ir::DataType dtype);

  // parse_subscripts.cpp: subscripts: regions, slice loads and stores, arrays
  const ir::ShapedType* ShapeOf(py::handle node) const;
  ir::Result<ir::ExprPtr> ParseShapeExtent(py::handle node);
  ir::Result<ir::ExprPtr> ParseListElement(py::handle node);
  ir::Result<Region> ParseRegion(py::handle subscript, bool for_load = false);
  std::optional<int64_t> StaticExtent(const ir::ExprPtr& lower, const ir::ExprPtr& upper) const;
  ir::ExprPtr Tuple(const std::vector<ir::ExprPtr>& values, const ir::Span& span);
  bool IsArray(py::handle node) const;
  ir::Result<ir::ExprPtr> ParseArrayLoad(py::handle node);
  ir::Result<ir::StmtPtr> ParseArrayStore(py::handle stmt, py::handle target);
  ir::Result<ir::ExprPtr> ParseSliceLoad(py::handle node);
  ir::Result<ir::StmtPtr> ParseSliceAssign(py::handle stmt, py::handle target);
  static ir::Shape StaticValidShape(const ir::TileType& tile);
  std::optional<ir::Result<Region>> WrittenThroughRegion(const Region& window, const ir::Span& span);
  std::optional<ir::Result<Region>> ReadThroughRegion(const Region& window, const ir::Span& span);
  std::optional<ir::Result<Region>> RegionInSlicedTensor(const Region& window, const ir::Span& span) const;
  std::optional<ir::Result<ir::ExprPtr>> SliceOfSliceAsLoad(py::handle node);
  ir::Result<ir::StmtPtr> AssignTileWindow(py::handle stmt, py::handle target, const Region& window,
                                           const ir::ExprPtr& value);

  // parse_subscript_indices.cpp: integer indices: element reads and rank-dropping windows
  ir::Result<ir::ExprPtr> ParseAxisIndex(py::handle item, const ir::ExprPtr& indexed, size_t axis);
  ir::Result<ir::ExprPtr> ReadElement(const Region& region, const ir::Span& span);
  ir::Result<ir::ExprPtr> DropIndexedAxes(const Region& region, const ir::ExprPtr& window, py::handle subscript);
  ir::Result<ir::ExprPtr> LiftIntoWindow(const Region& region, const ir::ExprPtr& value, py::handle target);

  // parse_orchestration_tensors.cpp: orchestration slices as views, in-place updates
  void RecordOrchestrationSlice(const ir::Var& var, const ir::ExprPtr& value);
  ir::StmtPtr DropUnreadSliceLoads(const ir::StmtPtr& body) const;
  static bool IsViewOfWhole(const std::string& name);
  std::optional<ir::ExprPtr> OverhangingSliceView(py::handle load);
  ir::Result<ir::ExprPtr> SliceAsView(const ir::ExprPtr& arg);
  void RecordReturnedArg(const ir::Var& result, const ir::Expr& value);
  bool IsInPlaceUpdateOf(const ir::Var* value, const ir::Var* tensor, const ir::TensorAliases& aliases) const;
  const ir::Var* InPlaceRoot(const ir::Var* value, const ir::TensorAliases& aliases) const;
  ir::Result<ir::ExprPtr> StaleSliceRead(const ir::Var& slice, const ir::Span& span) const;
  ir::Result<ir::StmtPtr> ParseOrchestrationSliceAssign(py::handle stmt, py::handle target);
  bool WritesSliceBackInPlace(py::handle stmt, py::handle target);
  bool AssemblesSliceBackInPlace(py::handle stmt);
  const ir::Var* OrchestrationSliceNamed(py::handle node) const;
  bool IsSliceAt(const ir::Var& slice, const ir::ExprPtr& tensor, const std::vector<ir::ExprPtr>& offsets,
                 const ir::Shape* shape) const;

  // parse_call_rewrites.cpp: DSL spellings rewritten into other calls
  ir::Result<ir::ExprPtr> ParseAssemble(py::handle node);
  ir::Result<ir::ExprPtr> ParseTileAssemble(const std::string& name, const ir::ExprPtr& target,
                                            const std::vector<py::object>& args, const py::list& store_keywords,
                                            const ir::Span& span);
  ir::Result<ir::ExprPtr> MovedToVecForAssemble(const ir::ExprPtr& source, const ir::ExprPtr& target,
                                                const ir::Span& span);
  static bool HasKeyword(py::handle call, const std::string& key);
  ir::Result<std::optional<py::object>> SliceOfTensorAsLoad(py::handle node);
  static bool IsElementAccess(std::string_view name);
  static bool IsElementWrite(py::handle node);
  static py::object CreatedTensorAsTile(py::handle call);
  static bool HasBareIndex(py::handle call);
  static py::object WithIndexList(py::handle call);
  ir::Result<std::optional<py::object>> AtomicKeyword(const std::string& name, py::handle value);
  std::optional<ir::Result<py::object>> IndexOpForm(const std::string& name, py::handle node);
  static std::string KernelSpelling(const std::string& name);
  ir::Result<std::optional<std::string>> RowBroadcastForm(const std::string& form,
                                                          const std::vector<ir::ExprPtr>& operands,
                                                          std::vector<std::pair<ArgValue, py::handle>>& positional,
                                                          const ir::Span& span) const;
  static bool IsUnifiedCompute(const std::string& name);
  // upstream_tensor_values.cpp: kernel values upstream types as tensors
  bool IsUpstreamTensor(py::handle expr) const;
  void RecordUpstreamTensor(const std::string& name, py::handle value);
  ir::Result<ir::ExprPtr> LoadWhole(const ir::ExprPtr& tensor, const ir::Span& span);

  // parse_scopes.cpp: `with` scopes
  ir::Result<ir::StmtPtr> ParseWith(py::handle stmt);
  ir::Result<bool> CheckNoDepArgs(py::handle value) const;
  ir::Result<ir::StmtPtr> ParseKernelScopeBody(py::handle body);
  ir::Result<ir::VarPtr> StoreIntoNewTensor(const ir::VarPtr& tile_var, std::vector<ir::StmtPtr>& stores);
  bool ReadAsTensorAfterCurrentStatement(const std::string& name) const;
  static NameUse FirstUse(py::handle statements, const std::string& name);
  static bool IsKernelScope(py::handle with);
  static bool ReadsName(py::handle node, const std::string& name);
  static bool AssignsName(py::handle stmt, const std::string& name);
  ir::Result<ir::StmtPtr> ParseRuntimeScope(py::handle stmt, py::handle context, py::handle target);
  ir::Result<ir::StmtPtr> ParseCluster(py::handle stmt, py::handle context, py::handle target);

  // parse_task_order.cpp: deps=, TaskIds, pl.submit
  ir::Result<std::vector<ir::ExprPtr>> ParseDeps(py::handle value);
  ir::Result<std::vector<ir::ExprPtr>> ParseDepsComprehension(py::handle comp);
  ir::Result<ir::ExprPtr> ParseDep(py::handle item);
  ir::Result<ir::VarPtr> BindScopeTaskId(py::handle target, const char* scope);
  bool IsSubmit(py::handle value) const;
  ir::Result<ir::StmtPtr> ParseSpmdSubmit(py::handle stmt, py::handle value, const std::vector<py::handle>& targets);
  ir::Result<ir::StmtPtr> ParseSubmit(py::handle stmt, py::handle value, std::vector<py::handle> targets);
  ir::Result<std::vector<size_t>> DumpedPositions(py::handle list, const py::list& positional);
  ir::Result<ir::ExprPtr> ParseTaskDummy(py::handle node);
  ir::Result<ir::StmtPtr> ParseKernelCallStatement(py::handle stmt);
  ir::VarPtr BindTaskId(const std::string& name, const ir::Span& span);

  // parse_spmd.cpp: SPMD launches
  ir::Result<bool> BoolOption(py::handle value, std::string_view what);
  ir::Result<SpmdLaunch> ReadSpmdLaunch(py::handle call);
  bool CallsKernel(py::handle stmt) const;
  ir::Result<ir::StmtPtr> ParseSpmd(py::handle stmt, py::handle context);
  ir::Result<ir::StmtPtr> ParseSpmdLoop(py::handle stmt, py::handle target, py::handle call);
  ir::Result<ir::StmtPtr> ParseSplitAivRegion(py::handle stmt, py::handle target, py::handle call);
  ir::Result<bool> BindRegionSplit(const ir::OpDef& op, CallBuilder& call, const ir::Span& span);
  ir::Result<bool> BindRegionPlacement(const ir::OpDef& op, CallBuilder& call, const ir::Span& span);

  // parse_for_loops.cpp: for loops, explicit carries
  ir::Result<ir::StmtPtr> ParseFor(py::handle stmt);
  ir::Result<ir::StmtPtr> ParseOrchestrationLoop(py::handle stmt, const LoopHeader& header);
  static bool IsOrchestrationCarry(const ir::Type& type);
  static ir::Result<ir::StmtPtr> RefuseOrchestrationCarry(const ir::Var& var, const ir::Span& span);
  static ir::Result<ir::StmtPtr> CheckOrchestrationCarries(ir::Result<ir::StmtPtr> loop);
  ir::Result<ir::StmtPtr> ParseExplicitLoop(py::handle stmt, const LoopHeader& header, py::handle carried_target,
                                            py::handle init_values, py::handle carry_kinds);
  ir::Result<bool> ReadCarryKinds(py::handle kinds, std::vector<ir::IterArg>& iter_args);
  ir::StmtPtr DropInPlaceTensorCarries(const LoopHeader& header, std::vector<ir::IterArg> iter_args,
                                       std::vector<ir::StmtPtr> stmts, std::vector<ir::VarPtr> results);
  static ir::StmtPtr DropUncarriedJumpValues(const ir::StmtPtr& body, const std::vector<ir::IterArg>& iter_args,
                                             const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried);
  static ir::Result<bool> CheckCarriedType(const std::string& name, const ir::TypePtr& carried,
                                           const ir::ExprPtr& next, const ir::Span& span);
  ir::Result<std::vector<ir::IterArg>> ExplicitIterArgs(py::handle target, py::handle init_values);
  ir::Result<std::vector<ir::VarPtr>> ExplicitResults(const std::vector<ir::IterArg>& iter_args, ParsedBody& body,
                                                      const ir::Span& span);
  ir::Result<ir::ExprPtr> InitValue(py::handle node);

  // parse_jumps_and_yields.cpp: break / continue and pl.yield_
  ir::Result<ir::StmtPtr> ParseLoopWithJumps(py::handle stmt, const LoopHeader& header, const LoopControl& control,
                                             bool explicit_carries);
  ir::Result<ir::StmtPtr> ParseJump(py::handle stmt, bool is_break);
  static bool IsExplicitJump(py::handle value);
  ir::Result<ir::StmtPtr> ParseExplicitJump(py::handle call, const ir::Span& span);
  static ir::StmtPtr MakeJump(bool is_break, std::vector<ir::ExprPtr> values, const ir::Span& span);
  ir::Result<std::vector<ir::StmtPtr>> FillJumps(const std::vector<ir::IterArg>& kept,
                                                 const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried,
                                                 const std::vector<ir::StmtPtr>& stmts);
  ir::Result<ParsedBody> ParseBody(py::handle statements);
  ir::Result<ParsedYield> ParseYield(py::handle stmt);
  ir::Result<std::vector<ir::VarPtr>> YieldResults(const ParsedYield& yield);
  static bool Reads(const std::vector<ir::StmtPtr>& stmts, const ir::Var* var);

  // parse_kernel_loops.cpp: kernel loops and while loops
  ir::Result<ir::StmtPtr> ParseWhile(py::handle stmt);
  std::optional<ir::Diagnostic> RefuseWhile(py::handle stmt) const;
  ir::Result<ir::ExprPtr> WhileCondition(const LoopHeader& header);
  ir::Result<ir::StmtPtr> ParseExplicitWhile(py::handle stmt);
  ir::Result<ir::StmtPtr> ParseKernelLoop(py::handle stmt, const LoopHeader& header);
  static bool IsCreation(const ir::Expr& value);
  bool RetypePlaceholders(py::handle stmt, const LoopHeader& header, std::vector<ir::StmtPtr>& prologue);
  ir::Result<ir::StmtPtr> FreshTile(const std::string& name, const ir::TileType& tile, const ir::Span& span);
  std::vector<std::string> CarryCandidates(py::handle body) const;
  ir::Diagnostic NoValueAfterLoop(const std::string& name, const ir::Span& loop) const;
  // parse_loop_liveness.cpp: whether `name` may be read after `stmt` (a loop or an if) rebinds it.
  bool ReadAfter(py::handle stmt, const std::string& name) const;
  ir::Result<ir::StmtPtr> ParseCarryingLoop(py::handle stmt, const LoopHeader& header,
                                            const std::vector<ir::StmtPtr>& /*prologue*/);
  std::vector<std::pair<std::string, ir::VarPtr>> TensorsStoredInto(
      py::handle body_statements, const std::unordered_map<std::string, ir::VarPtr>& outer, const ir::StmtPtr& body,
      const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried) const;

  // parse_if.cpp: if statements
  ir::Diagnostic Unavailable(std::string message, std::string hint) const;
  void MarkUnavailable(const std::string& name, ir::Diagnostic diagnostic);
  ir::Result<ir::StmtPtr> ParseIf(py::handle stmt);
  ir::Result<ir::StmtPtr> FinishExplicitIf(const ir::ExprPtr& condition, ParsedBody then_body, ParsedBody else_body,
                                           bool has_else, const ir::Span& span);
  ir::Result<ir::StmtPtr> FinishIfWithJump(const ir::ExprPtr& condition, ParsedBody then_body, ParsedBody else_body,
                                           bool has_else, const Env& fall_env, bool then_jumps, const Env& before,
                                           const ir::Span& span);
  ir::Result<ir::StmtPtr> FinishImplicitIf(py::handle stmt, const ir::ExprPtr& condition, ParsedBody then_body,
                                           ParsedBody else_body, bool has_else, const Env& then_env,
                                           const Env& else_env, const Env& before, const ir::Span& span);
  static ir::TypePtr WholeTileOfBoth(const ir::Type& a, const ir::Type& b);
  static ir::TypePtr WiderIntegerOfBoth(const ir::Type& a, const ir::Type& b);
  static ir::Result<ir::ExprPtr> ConvertedForMerge(const ir::VarPtr& value, const ir::TypePtr& merged,
                                                   std::vector<ir::StmtPtr>& stmts, const ir::Span& span);
  ir::VarPtr TensorBeforeIf(const std::string& name, const Env& then_env, const Env& else_env,
                            const Env& before, const ir::TensorAliases& then_aliases,
                            const ir::TensorAliases& else_aliases) const;

  // parse_expressions.cpp: expressions
  ir::Result<ir::ExprPtr> ParseExpr(py::handle node);
  ir::Result<ir::ExprPtr> DynamicExtent(const DynamicDim& dim, const ir::Span& span) const;
  ir::Result<std::vector<ir::StmtPtr>> DefineUnboundExtents(const ir::Span& span);
  ir::Result<ir::ExprPtr> AxisExtent(const std::string& tensor, const ir::ShapedType& type, size_t axis,
                                     const ir::Span& span) const;
  ir::VarPtr KernelExtentParam(const std::string& tensor, size_t axis) const;
  ir::Result<bool> ExtentArgs(const ir::Function& kernel, const std::vector<std::string>& names,
                              std::vector<ir::ExprPtr>& args, const ir::Span& span) const;
  ir::Result<ir::StmtPtr> ParseBindDynamic(py::handle call);
  ir::Result<ir::ExprPtr> ParseTensorDim(py::handle node);
  static ir::ExprPtr ConstantExpr(const Constant& value, const ir::Span& span);
  ir::Result<ir::ExprPtr> ParseBinOp(py::handle node);
  ir::Result<ir::ExprPtr> ParseCompare(py::handle node);
  static std::optional<bool> CompareConstants(ir::BinaryOp op, const ir::Expr& lhs, const ir::Expr& rhs);
  std::optional<ir::Result<ir::ExprPtr>> ParseBuiltinCall(const std::string& name, py::handle node);
  ir::Result<ir::ExprPtr> ParseUnaryOp(py::handle node);
  ir::Result<ir::ExprPtr> ParseConstant(py::handle node);
  ir::Result<ir::ExprPtr> ParseTypedConstant(py::handle node);

  // parse_inline_calls.cpp: @pl.jit.inline calls
  static bool IsMethodCall(py::handle node, std::string_view method);
  bool IsInlineCall(py::handle node) const;
  ir::Result<ir::ExprPtr> ParseInlineCall(const std::string& name, py::handle node);
  ir::Result<bool> PassSlicesAsViews(py::handle def, std::vector<ir::ExprPtr>& args);
  static void ReturnPassedSlices(const std::vector<ir::ExprPtr>& passed, const std::vector<ir::ExprPtr>& args,
                                 std::vector<ir::ExprPtr>& values);
  ir::Result<InlinedBody> InlineBody(const std::vector<ir::ExprPtr>& args, const ir::Span& call_span);
  ir::Result<bool> CheckInlineArg(py::handle param, const std::string& name, const ir::ExprPtr& arg);
  ir::Result<std::vector<ir::ExprPtr>> ReturnValues(py::handle stmt);
  ir::Result<ir::StmtPtr> BindInlineResult(py::handle target, py::handle call);

  // parse_op_calls.cpp: pl.* op calls
  ir::Result<ir::ExprPtr> ParseNoDep(py::handle node);
  ir::Result<ir::ExprPtr> ParseSoleTensorArgument(py::handle node, const std::string& usage,
                                                  const std::string& expected);
  ir::Result<ir::ExprPtr> ParseCall(py::handle node);
  ir::Result<ir::ExprPtr> MaskAsValues(const ir::ExprPtr& mask, const ir::ExprPtr& lhs, const ir::Span& span);
  ir::Result<bool> PlaceMergeScratch(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                     std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords,
                                     const ir::Span& span);
  static void PlaceMgatherOperands(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                   std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords);
  void BindDeclaredPopType(const ir::OpDef& op, CallBuilder& call, const ir::Span& span);
  std::optional<ir::Result<ir::ExprPtr>> ScalarCall(const std::string& name, const std::vector<ir::ExprPtr>& operands,
                                                    size_t positional, size_t keywords, const ir::Span& span);
  bool NamesNone(py::handle node) const;
  ir::Result<ArgValue> ParseArgValue(py::handle node);
  ir::Result<ArgValue> PadValueAttr(const std::string& dotted, py::handle node);
  ir::Result<ArgValue> PipeTypeAttr(const std::string& dotted, py::handle node);
  static ir::Result<bool> BindDefaultScratch(const std::string& name, const ir::OpDef& op, const ir::ExprPtr& operand,
                                             CallBuilder& call, const ir::Span& span);
  ir::Result<bool> TakeHighPrecision(const std::string& name,
                                     std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords);
  static ir::Result<bool> BindPrecisionScratch(const ir::OpDef& op, const ir::ExprPtr& operand, CallBuilder& call,
                                               const ir::Span& span);

  // parse_composite_ops.cpp: ops parsed by hand
  ir::Result<std::map<std::string, py::handle>> BindArguments(py::handle node, const std::vector<std::string>& names,
                                                               size_t required, const std::string& op);
  ir::Result<ir::ExprPtr> ParseCreateL1(py::handle node);
  ir::Result<ir::ExprPtr> ParseGatherRow(py::handle node);
  ir::Result<ir::ExprPtr> ParseExpandClone(py::handle node);
  static ir::Result<std::optional<size_t>> ExpandedDim(const ir::Expr& input, const ir::Expr& target,
                                                       const ir::Span& span);
  static bool IsFalse(py::handle node);
  ir::Result<ir::ExprPtr> ParsePutGet(py::handle node, bool put);
  static bool StagedInChunks(const ir::ExprPtr& shape, std::optional<int64_t> chunk);
  ir::Result<ir::ExprPtr> ParseChunkedPut(std::map<std::string, ir::ExprPtr>& values, std::optional<int64_t> chunk,
                                          ir::Call::Kwargs store_kwargs, const ir::Span& span);
  static pypto::unexpected<ir::Diagnostic> WithOpName(const std::string& op, ir::Diagnostic error);
  ir::Result<ir::ExprPtr> ParseCommCtx(py::handle node);

  // parse_function_calls.cpp: calls of the program's functions
  std::string JitFunctionName(const std::string& callee) const;
  ir::Result<ir::StmtPtr> ParseMultiResultCall(py::handle stmt, py::handle target);
  static std::vector<std::optional<size_t>> ReturnedParamIndices(const ir::StmtPtr& body,
                                                                  const std::vector<ir::VarPtr>& params,
                                                                  const std::vector<ir::ExprPtr>& values);
  std::optional<std::vector<size_t>> ReturnedParams(const std::string& kernel) const;
  std::string ParamName(const std::string& name, size_t index) const;
  ir::Result<bool> ParsePositionalArgs(const std::string& name, py::handle node, std::vector<ir::ExprPtr>& args,
                                       const ir::Span& span);
  ir::Result<bool> ParseKeywordArg(const std::string& name, py::handle keyword, size_t index,
                                   std::vector<ir::ExprPtr>& args);
  ir::Result<SubFunctionCall> ParseSubFunctionCall(const std::string& name, py::handle node);
  ir::Result<ir::ExprPtr> ParseKernelCall(const std::string& name, py::handle node);
  ir::Result<ir::ExprPtr> ParseMethodCall(const std::string& name, py::handle node);
  static std::map<std::string, TensorSpec> SpecsOf(const Signature& callee, const std::vector<ir::ExprPtr>& args);
  ir::Result<std::vector<ir::ArgDirection>> ParseCallAttrs(py::handle node);
  static std::optional<ir::ArgDirection> ArgDirectionOf(py::handle node);
  ir::Result<ir::FunctionPtr> Specialise(FunctionSource source, const std::string& key, const ir::Span& span);
  void WarnOnMisboundResult(const ir::Expr& value, const std::string& target, const ir::Span& span);
  ir::Result<ir::FunctionPtr> SpecialiseExtern(const std::string& name, const SubFunction& sub,
                                               const FunctionSource& stub, const std::string& types,
                                               const ir::Span& span);
  static ir::Result<bool> CheckKernelArgs(const ir::Function& kernel, const std::vector<ir::ExprPtr>& args,
                                          const std::vector<std::string>& names, const ir::Span& span);

  // ---- the parser's state ------------------------------------------------------------------------
  ProgramContext& program_;
  const FunctionSource& source_;
  SourceMap map_;
  int kernel_depth_ = 0;  // > 0 inside a pl.at scope or an InCore function
  int manual_scopes_ = 0;  // > 0 inside a manual runtime scope
  int cluster_depth_ = 0;  // > 0 inside 'with pl.cluster()'
  DynamicBindings dynamic_;              // pl.dynamic names -> the extents the parameters gave them
  std::vector<ir::StmtPtr> prelude_;     // inlined bodies the statement being parsed depends on
  // The blocks being parsed, innermost last, each with the index of its statement being parsed.
  struct BlockPosition {
    py::list statements;
    size_t next = 0;
  };
  std::vector<BlockPosition> blocks_;
  std::unordered_map<std::string, ir::VarPtr> env_;
  // Parses a tile annotation's valid-shape extents (`pl.TileView(valid_shape=[64, vlen])`) in the
  // current scope.
  const ExprResolver expr_resolver_ = [this](py::handle node) { return ParseExpr(node); };
  std::vector<ir::ExprPtr> returns_;
  std::unordered_set<ir::VarPtr> kernel_values_;       // scalars and tiles computed in a closed kernel scope
  // Tiles of a closed kernel scope that later code reads, stored into tensors of the run's own
  // (StoreIntoNewTensor): the tensor's variable, and the tile's type.
  std::unordered_map<const ir::Var*, ir::TypePtr> tiles_as_tensors_;
  std::set<std::string> upstream_tensors_;  // names whose last value upstream types as a tensor
  std::map<std::string, ir::Diagnostic> unavailable_;    // names a branch or loop left without a value
  // Statements the parser made (boolean conditions, shape unpacks), kept alive while parsed.
  std::vector<py::object> synthetic_nodes_;
  // The loops whose jumps are being parsed, innermost last: the jumps each owns, and each parsed
  // jump with the environment at it.
  struct JumpScope {
    py::handle loop;
    LoopControl control;
    std::vector<std::pair<ir::StmtPtr, Env>> parsed;
  };
  std::vector<JumpScope> jump_scopes_;
  std::vector<size_t> explicit_carries_;  // the number of carried values of each enclosing loop with init_values
  // Call results that are the tensor passed for the callee's output (RecordReturnedArg).
  std::unordered_map<const ir::Var*, const ir::Var*> returned_args_;
  std::unordered_map<const ir::Var*, ir::ExprPtr> orchestration_slices_;  // slice variable -> its load
  py::object function_def_;  // the def being parsed (FirstParameterTaking searches its calls)
  // A @pl.jit.incore kernel's parameters, and the INDEX parameters it takes after them for the run-time
  // extents of their unbound axes that its body reads (KernelExtentParam).
  std::vector<ir::VarPtr> kernel_params_;
  struct ExtentParam {
    size_t param = 0;
    size_t axis = 0;
    ir::VarPtr var;
  };
  mutable std::vector<ExtentParam> extent_params_;
  std::unordered_set<const ir::Var*> viewed_slices_;  // slice loads SliceAsView made views of
  // Orchestration slices the current kernel scope wrote through to their tensor (their loaded tiles
  // are stale from there on).
  std::unordered_set<const ir::Var*> written_through_;
  std::map<std::string, ir::TypePtr> assigned_types_;    // the last type each name was assigned
  std::string undefined_name_;                           // the name of the last "not defined" error
  // Values made by pl.create_tensor / pl.create_tile: storage whose contents nobody has written, so a
  // kernel loop may give such a name the type its body assigns (see RetypePlaceholders).
  std::set<uint64_t> placeholders_;  // by Var::id(), as known_ints
  // While an annotated assignment parses its value: the tile type it declares (for a tpop without a shape).
  ir::TypePtr declared_tile_;
  std::vector<int64_t> split_aiv_modes_;  // the split codes of the pl.split_aiv regions being parsed, innermost last
  int next_predicate_ = 0;  // numbers the values dispatch predicates read (pl.spmd_submit)
};

}  // namespace pypto::frontend
