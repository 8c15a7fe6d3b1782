// Prints IR as readable, DSL-like Python text (`@pl.program class ...`).
#pragma once

#include <string>

#include "pypto/ir/program.h"

namespace pypto::ir {

std::string PrintProgram(const Program& program);
std::string PrintFunction(const Function& function);
std::string PrintExpr(const ExprPtr& expr);

}  // namespace pypto::ir
