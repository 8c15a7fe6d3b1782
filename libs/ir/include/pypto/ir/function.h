// Functions: the unit of compilation (an orchestration, a kernel, ...).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

// Values match upstream's pl.FunctionType.
enum class FunctionType : uint8_t {
  Opaque = 0,         // no plane committed yet; pl.at regions inside get outlined
  Orchestration = 1,  // control plane: allocates tensors, submits tasks
  InCore = 2,         // an AICore kernel not yet assigned a core type
  AIC = 3,            // cube-core kernel
  AIV = 4,            // vector-core kernel
  Group = 5,          // co-scheduled AIC + AIV
  Spmd = 6,           // SPMD dispatch wrapper
  Inline = 7,         // spliced into callers
};
std::string_view FunctionTypeName(FunctionType type);
inline bool IsKernel(FunctionType type) {
  return type == FunctionType::InCore || type == FunctionType::AIC || type == FunctionType::AIV;
}

// Values match upstream's pl.Level.
enum class Level : uint8_t { AIV = 0, AIC = 1, CORE_GROUP = 2, CHIP_DIE = 3, CHIP = 4, HOST = 5 };
std::string_view LevelName(Level level);

// How a function treats a tensor parameter.
enum class ParamDirection : uint8_t { In, Out, InOut };
std::string_view ParamDirectionName(ParamDirection direction);

using AttrValue = std::variant<bool, int64_t, std::string>;

// Attributes of a hand-written kernel (an AIC/AIV function declared with external_source=).
inline constexpr const char* kExternalSourceAttr = "external_source";              // absolute path
inline constexpr const char* kExternalIncludeDirsAttr = "external_include_dirs";  // JSON list of paths
inline constexpr const char* kDualAivDispatchAttr = "dual_aiv_dispatch";          // bool: both AIV lanes

// `@pl.jit(auto_scope=False)` / `@pl.function(auto_scope=False)` (bool; absent means true): the
// author places every runtime scope of this orchestration function by hand (`with pl.scope()`,
// `with pl.manual_scope()`), so MaterializeRuntimeScopes opens none around its body or loop bodies.
inline constexpr const char* kAutoScopeAttr = "auto_scope";

// An entry parameter declared a plain `pl.Tensor` (In) that a kernel writes. DeriveCallDirections
// promotes it to Out / InOut so that the kernels writing it are ordered, and records it on the entry
// as "declared_in:<param>" = the name of the (first) kernel writing it: on a device the runtime
// still treats the parameter as In and skips its device-to-host copy-back (seed 001), which the
// simulators reproduce and the toolchain warns about.
inline constexpr std::string_view kDeclaredInAttrPrefix = "declared_in:";
std::string DeclaredInAttr(std::string_view param);

// The parameter a body-less declaration (a hand-written kernel) returns: its first pl.Out or
// pl.InOut parameter; none when all are inputs.
std::optional<size_t> FirstOutputParam(const std::vector<ParamDirection>& directions);

class Function {
 public:
  Function(std::string name, std::vector<VarPtr> params, std::vector<ParamDirection> directions,
           std::vector<TypePtr> return_types, StmtPtr body, FunctionType type,
           std::map<std::string, AttrValue> attrs = {}, Span span = {});

  const std::string& name() const { return name_; }
  const std::vector<VarPtr>& params() const { return params_; }
  const std::vector<ParamDirection>& param_directions() const { return directions_; }
  const std::vector<TypePtr>& return_types() const { return return_types_; }
  const StmtPtr& body() const { return body_; }
  FunctionType type() const { return type_; }
  const std::map<std::string, AttrValue>& attrs() const { return attrs_; }
  const Span& span() const { return span_; }

  // A copy with another body/type; everything else is kept.
  std::shared_ptr<const Function> WithBody(StmtPtr body) const;
  std::shared_ptr<const Function> WithType(FunctionType type) const;
  std::shared_ptr<const Function> WithParams(std::vector<VarPtr> params, StmtPtr body) const;

 private:
  std::string name_;
  std::vector<VarPtr> params_;
  std::vector<ParamDirection> directions_;
  std::vector<TypePtr> return_types_;
  StmtPtr body_;
  FunctionType type_;
  std::map<std::string, AttrValue> attrs_;
  Span span_;
};
using FunctionPtr = std::shared_ptr<const Function>;

// The Group function `name` that runs `aic` and `aiv` (which take the same parameters) as one mixed
// task: it calls both with its own parameters, in order, and returns what `aiv` returns.
FunctionPtr MakeGroupFunction(const std::string& name, const FunctionPtr& aic, const FunctionPtr& aiv,
                              const Span& span);

// The function attribute `name` when it holds a T, else null.
template <typename T>
const T* FunctionAttr(const Function& function, const std::string& name) {
  auto it = function.attrs().find(name);
  return it == function.attrs().end() ? nullptr : std::get_if<T>(&it->second);
}

// Whether the compiler opens the runtime scopes of `function`: its kAutoScopeAttr, true when absent.
inline bool AutoScope(const Function& function) {
  const bool* auto_scope = FunctionAttr<bool>(function, kAutoScopeAttr);
  return auto_scope == nullptr || *auto_scope;
}

}  // namespace pypto::ir
