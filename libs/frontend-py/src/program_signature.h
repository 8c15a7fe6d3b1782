// The signature of each `@pl.program` method, read from its decorator and annotations before any
// body is parsed (so that functions may call functions defined after them), and the choice of the
// program's entry.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ast_node.h"
#include "pypto/ir/function.h"
#include "type_resolver.h"

namespace pypto::frontend {

// A `@pl.program` method as its decorator and annotations declare it. Hidden, as pybind11's types
// are: it holds a py::object and never leaves the library.
struct [[gnu::visibility("hidden")]] Signature {
  std::string name;
  py::object def;  // the ast.FunctionDef
  SourceMap map;   // where `def` is: the class's file, or a module-level function's own
  std::vector<ir::VarPtr> params;
  std::vector<ir::ParamDirection> directions;
  std::vector<ir::TypePtr> return_types;  // from the `->` annotation; none without one
  ir::FunctionType type = ir::FunctionType::Opaque;
  std::map<std::string, ir::AttrValue> attrs;
  // The `pl.dynamic` dimensions its parameters name. Such a method is generic: its parameters have no
  // types (UnknownType placeholders), and each call specialises it on its arguments' shapes.
  std::set<std::string> dynamic_dims;
  // A specialisation whose `->` annotation names a dimension its parameters disagree on: the return
  // types are those of the values returned, checked against the annotation.
  bool returns_from_body = false;
  DynamicBindings bindings;  // a specialisation: the extents its parameters gave each dimension

  bool generic() const { return !dynamic_dims.empty(); }
};

// `@pl.function` / `@pl.function(type=pl.FunctionType.X, attrs={...}, external_source=...)` on a
// method. `external_sources` holds the source paths Python evaluated for the methods that declare one.
ir::Result<bool> ReadFunctionDecorator(py::handle def, const SourceMap& map,
                                       const std::map<std::string, std::string>& external_sources,
                                       Signature& signature);

// `def f(self, a: T, b: pl.Out[T]) -> R:`: the parameters after self, and the declared return types.
// Parameters that name `pl.dynamic` dimensions make the signature generic.
ir::Result<bool> ReadMethodSignature(py::handle def, const SourceMap& map, const Constants* constants,
                                     Signature& signature);

// A generic method for the tensors passed to it (`specs`, by parameter name; scalars have none),
// named `name`. Each dynamic dimension of a parameter takes its own tensor's extent; `bound` becomes
// `constants` with the dimensions the parameters agree on read as numbers, for the body and the
// return annotation.
ir::Result<Signature> SpecialiseSignature(const Signature& generic, const std::string& name,
                                          const std::map<std::string, TensorSpec>& specs, const SourceMap& map,
                                          const Constants& constants, Constants& bound);

// The methods a method calls as `self.f(...)`, read from its body before anything is parsed.
std::set<std::string> CalledMethods(py::handle def);

// The function the program runs: the first Opaque or Orchestration function no other function calls.
std::string ChooseEntry(const std::vector<ir::FunctionPtr>& functions);

}  // namespace pypto::frontend
