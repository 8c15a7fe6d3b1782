// A pass maps a program to a new program and declares its property contract.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pypto/ir/soc.h"
#include "pypto/passes/ir_property.h"

namespace pypto::passes {

struct PassContext {
  const ir::SocSpec* soc = &ir::Ascend910B();
};

class Pass {
 public:
  using RunFn = std::function<ir::Result<ir::ProgramPtr>(const ir::ProgramPtr&, const PassContext&)>;

  Pass(std::string name, PropertySet required, PropertySet produced, PropertySet invalidated, RunFn run)
      : name_(std::move(name)),
        required_(required),
        produced_(produced),
        invalidated_(invalidated),
        run_(std::move(run)) {}

  const std::string& name() const { return name_; }
  const PropertySet& required() const { return required_; }
  const PropertySet& produced() const { return produced_; }
  const PropertySet& invalidated() const { return invalidated_; }
  ir::Result<ir::ProgramPtr> Run(const ir::ProgramPtr& program, const PassContext& context) const {
    return run_(program, context);
  }

 private:
  std::string name_;
  PropertySet required_, produced_, invalidated_;
  RunFn run_;
};

// What most passes do: rewrite each function on its own. The program with every function replaced
// by `rewrite(function)` (which may return it unchanged), or the first error.
using FunctionRewrite = std::function<ir::Result<ir::FunctionPtr>(const ir::FunctionPtr&)>;
ir::Result<ir::ProgramPtr> RewriteEachFunction(const ir::ProgramPtr& program, const FunctionRewrite& rewrite);

}  // namespace pypto::passes
