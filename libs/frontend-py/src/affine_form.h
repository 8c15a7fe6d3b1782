// Integer index arithmetic in a normal form, so that the parser can tell when two index expressions
// differ by a constant: the size of a slice `t[ki * 128 : (ki + 1) * 128]` or `t[c0:c1]` with
// `c1 = c0 + 32` is known at compile time even though neither bound is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "pypto/ir/expr.h"

namespace pypto::frontend {

// The one value a scalar variable is bound to, or null when it has none that can stand for it (a
// parameter, a loop variable, a value carried across iterations or merged after a branch). The
// parser makes a new variable for every assignment, so a variable with a definition never holds
// another value.
using ScalarDefinition = std::function<ir::ExprPtr(const ir::Var&)>;

// sum(coefficient * atom) + constant over integers. An atom is a variable without a definition, or a
// subexpression that is not affine (`a // 2`, `min(a, b)`, a call): atoms are keyed so that equal
// subexpressions over the same variables get the same key.
class AffineForm {
 public:
  // `expr` with every defined variable replaced by its definition (transitively).
  static AffineForm Of(const ir::ExprPtr& expr, const ScalarDefinition& definition);

  // The value when no atom is left.
  std::optional<int64_t> AsConstant() const;

  AffineForm operator+(const AffineForm& other) const;
  AffineForm operator-(const AffineForm& other) const;
  AffineForm Scaled(int64_t factor) const;

  // A canonical text: equal forms print the same ("3*%12 + 1*(%7 // 2) + 5").
  std::string Key() const;

 private:
  friend class AffineBuilder;
  static AffineForm Constant(int64_t value);
  static AffineForm Atom(std::string key);

  std::map<std::string, int64_t> terms_;  // atom key -> coefficient, never 0
  int64_t constant_ = 0;
};

// `stop - start` when it is the same integer whatever the variables hold.
std::optional<int64_t> ConstantDifference(const ir::ExprPtr& stop, const ir::ExprPtr& start,
                                          const ScalarDefinition& definition);

}  // namespace pypto::frontend
