// Properties a program can have; passes declare which they require, produce and invalidate,
// and each property has a verifier that checks it really holds.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/program.h"

namespace pypto::passes {

enum class IRProperty : uint8_t {
  SSAForm,                // each variable is defined once (a parameter, an assignment, a loop variable,
                          // a carried value, a loop's or an if's result, a launch's TaskId) before use
  NoNestedCalls,          // call arguments are variables or literals, never other calls
  NoInCoreScopes,         // every pl.at region is outlined into a kernel function
  CoreTypesResolved,      // no kernel is left as plain InCore: each is AIC or AIV
  TileMemoryAllocated,    // every tile has an address inside its on-chip buffer
  CallDirectionsDerived,  // every call to a kernel carries one direction per argument
  TileMemoryInferred,     // kernel tiles live where their ops need them (matmul operands in Left/Right)
  NoUnrollLoops,          // every pl.unroll loop is replaced by its copies
  ReturnParamsExplicit,   // a kernel returns its Out/InOut parameters themselves, in parameter order
  RuntimeScopesMaterialized,  // the orchestration body and each loop body outside a manual scope are
                              // automatic runtime scopes (RuntimeScopeStmt), unless the function
                              // is auto_scope=False (its author placed them)
  StructuredCtrlFlow,     // no break or continue is left: every loop body runs to its end
  IterArgCarryClassified, // each value an orchestration loop carries has the ir::CarryKind its type allows
  TileOps2D,              // a kernel's tiles are 1-D or 2-D, unless one of its ops has no 2-D form
  kCount,
};

std::string_view IRPropertyName(IRProperty property);

class PropertySet {
 public:
  PropertySet() = default;
  PropertySet(std::initializer_list<IRProperty> properties) {
    for (auto p : properties) insert(p);
  }
  void insert(IRProperty p) { bits_.set(static_cast<size_t>(p)); }
  void erase(IRProperty p) { bits_.reset(static_cast<size_t>(p)); }
  bool contains(IRProperty p) const { return bits_.test(static_cast<size_t>(p)); }
  void insert_all(const PropertySet& other) { bits_ |= other.bits_; }
  void erase_all(const PropertySet& other) { bits_ &= ~other.bits_; }
  std::vector<IRProperty> items() const;
  std::string str() const;

 private:
  std::bitset<static_cast<size_t>(IRProperty::kCount)> bits_;
};

// The functions ReturnParamsExplicit constrains: those the orchestration submits as tasks (kernels,
// Groups, SPMD wrappers).
bool ReturnsOutputs(const ir::Function& function);

// The parameter such a function returns as its single result (ReturnParamsExplicit made the returned
// value the parameter itself; a declaration with no body returns its first output); nullopt for none.
std::optional<size_t> ReturnedParam(const ir::Function& function);

// The automatic runtime scope (`with pl.scope():`) a body consists of, possibly followed by the
// body's terminator (a loop's pl.yield_, a function's return: no runtime work); null for any other
// body. RuntimeScopesMaterialized puts one around the orchestration body and each of its loop bodies
// outside manual scopes.
const ir::RuntimeScopeStmt* AsAutoRuntimeScope(const ir::StmtPtr& body);

// Checks one property; the error names the offending function and source location.
ir::Result<bool> VerifyProperty(IRProperty property, const ir::Program& program);

}  // namespace pypto::passes
