#include "affine_form.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "pypto/ir/dtype.h"
#include "pypto/ir/type.h"

namespace pypto::frontend {

AffineForm AffineForm::Constant(int64_t value) {
  AffineForm form;
  form.constant_ = value;
  return form;
}

AffineForm AffineForm::Atom(std::string key) {
  AffineForm form;
  form.terms_.emplace(std::move(key), 1);
  return form;
}

std::optional<int64_t> AffineForm::AsConstant() const {
  if (!terms_.empty()) return std::nullopt;
  return constant_;
}

AffineForm AffineForm::operator+(const AffineForm& other) const {
  AffineForm sum = *this;
  sum.constant_ += other.constant_;
  for (const auto& [key, coefficient] : other.terms_) {
    const int64_t total = (sum.terms_[key] += coefficient);
    if (total == 0) sum.terms_.erase(key);
  }
  return sum;
}

AffineForm AffineForm::operator-(const AffineForm& other) const { return *this + other.Scaled(-1); }

AffineForm AffineForm::Scaled(int64_t factor) const {
  if (factor == 0) return Constant(0);
  AffineForm scaled = *this;
  scaled.constant_ *= factor;
  for (auto& [key, coefficient] : scaled.terms_) coefficient *= factor;
  return scaled;
}

std::string AffineForm::Key() const {
  std::vector<std::string> parts;
  for (const auto& [key, coefficient] : terms_) parts.push_back(fmt::format("{}*{}", coefficient, key));
  parts.push_back(std::to_string(constant_));
  return fmt::format("{}", fmt::join(parts, " + "));
}

// Builds the form of an expression, expanding definitions. Definitions form no cycles (a variable
// is defined before it is read), but a long chain is cut off: past kMaxDepth a variable stays an atom.
class AffineBuilder {
 public:
  explicit AffineBuilder(const ScalarDefinition& definition) : definition_(definition) {}

  AffineForm Build(const ir::ExprPtr& expr) {
    if (const auto* literal = expr->As<ir::ConstInt>()) return AffineForm::Constant(literal->value());
    if (!IsIntegerScalar(*expr)) return Opaque(*expr);
    if (const auto* var = expr->As<ir::Var>()) return Variable(*var);
    if (const auto* binary = expr->As<ir::BinaryExpr>()) return Binary(*binary);
    return Opaque(*expr);
  }

 private:
  static constexpr int kMaxDepth = 64;

  static bool IsIntegerScalar(const ir::Expr& expr) {
    const auto* scalar = expr.type()->As<ir::ScalarType>();
    return scalar && ir::IsInteger(scalar->dtype());
  }

  // An expression compared by identity only (a call, a float): equal only to itself.
  static AffineForm Opaque(const ir::Expr& expr) {
    return AffineForm::Atom(fmt::format("@{}", static_cast<const void*>(&expr)));
  }

  AffineForm Variable(const ir::Var& var) {
    ir::ExprPtr value = depth_ < kMaxDepth && definition_ ? definition_(var) : nullptr;
    if (!value) return AffineForm::Atom(fmt::format("%{}", var.id()));
    ++depth_;
    AffineForm form = Build(value);
    --depth_;
    return form;
  }

  AffineForm Binary(const ir::BinaryExpr& binary) {
    AffineForm lhs = Build(binary.lhs()), rhs = Build(binary.rhs());
    switch (binary.op()) {
      case ir::BinaryOp::Add: return lhs + rhs;
      case ir::BinaryOp::Sub: return lhs - rhs;
      case ir::BinaryOp::Mul:
        if (auto k = rhs.AsConstant()) return lhs.Scaled(*k);
        if (auto k = lhs.AsConstant()) return rhs.Scaled(*k);
        break;
      default: break;
    }
    // Not affine: constant operands fold as the IR folds them, anything else is an atom named by its
    // operands' forms, so `(c0 // 2)` read twice is one atom.
    auto l = lhs.AsConstant(), r = rhs.AsConstant();
    if (l && r) {
      auto folded = ir::MakeBinary(binary.op(), std::make_shared<ir::ConstInt>(*l, ir::DataType::INDEX),
                                   std::make_shared<ir::ConstInt>(*r, ir::DataType::INDEX), binary.span());
      if (folded)
        if (auto value = ir::AsConstInt(*folded)) return AffineForm::Constant(*value);
    }
    return AffineForm::Atom(fmt::format("({} {} {})", lhs.Key(), ir::BinaryOpSymbol(binary.op()), rhs.Key()));
  }

  const ScalarDefinition& definition_;
  int depth_ = 0;
};

AffineForm AffineForm::Of(const ir::ExprPtr& expr, const ScalarDefinition& definition) {
  return AffineBuilder(definition).Build(expr);
}

std::optional<int64_t> ConstantDifference(const ir::ExprPtr& stop, const ir::ExprPtr& start,
                                          const ScalarDefinition& definition) {
  return (AffineForm::Of(stop, definition) - AffineForm::Of(start, definition)).AsConstant();
}

}  // namespace pypto::frontend
