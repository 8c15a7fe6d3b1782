#include "scalar_bounds.h"

#include <algorithm>

namespace pypto::frontend {
namespace {

using Bound = std::optional<int64_t>;

// A value past this magnitude is treated as unbounded, so that sums and products of bounds never
// overflow.
constexpr int64_t kLimit = int64_t{1} << 40;

Bound Checked(Bound value) {
  if (value && (*value > kLimit || *value < -kLimit)) return std::nullopt;
  return value;
}

Bound Plus(Bound a, Bound b) { return a && b ? Checked(*a + *b) : std::nullopt; }

Bound Negated(Bound a) { return a ? Bound(-*a) : std::nullopt; }

// min and max of two bounds where a missing bound means "unbounded on this side".
Bound MinOf(Bound a, Bound b) { return a && b ? Bound(std::min(*a, *b)) : std::nullopt; }
Bound MaxOf(Bound a, Bound b) { return a && b ? Bound(std::max(*a, *b)) : std::nullopt; }

int64_t FloorDivide(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class BoundsFinder {
 public:
  BoundsFinder(const ScalarDefinition& definition, const LoopRangeOf& loop_range)
      : definition_(definition), loop_range_(loop_range) {}

  ScalarBounds Of(const ir::ExprPtr& expr, int depth = 0) {
    if (auto constant = ir::AsConstInt(expr)) return {*constant, *constant};
    if (depth > kMaxDepth) return {};
    if (const auto* var = expr->As<ir::Var>()) return OfVar(*var, depth);
    if (const auto* binary = expr->As<ir::BinaryExpr>()) return OfBinary(*binary, depth);
    return {};
  }

 private:
  static constexpr int kMaxDepth = 64;

  ScalarBounds OfVar(const ir::Var& var, int depth) {
    if (auto value = definition_(var)) return Of(value, depth + 1);
    auto range = loop_range_(var);
    if (!range) return {};
    const auto step = ir::AsConstInt(range->step);
    if (!step || *step == 0) return {};
    const ScalarBounds start = Of(range->start, depth + 1), stop = Of(range->stop, depth + 1);
    // An ascending loop runs over [start, stop - 1], a descending one over [stop + 1, start].
    if (*step > 0) return {start.lo, Plus(stop.hi, -1)};
    return {Plus(stop.lo, 1), start.hi};
  }

  ScalarBounds OfBinary(const ir::BinaryExpr& binary, int depth) {
    const ScalarBounds l = Of(binary.lhs(), depth + 1), r = Of(binary.rhs(), depth + 1);
    switch (binary.op()) {
      case ir::BinaryOp::Add: return {Plus(l.lo, r.lo), Plus(l.hi, r.hi)};
      case ir::BinaryOp::Sub: return {Plus(l.lo, Negated(r.hi)), Plus(l.hi, Negated(r.lo))};
      // min(a, b) is at most either one's upper bound, and at least the smaller lower bound.
      case ir::BinaryOp::Min: return {MinOf(l.lo, r.lo), l.hi && r.hi ? MinOf(l.hi, r.hi) : (l.hi ? l.hi : r.hi)};
      case ir::BinaryOp::Max: return {l.lo && r.lo ? MaxOf(l.lo, r.lo) : (l.lo ? l.lo : r.lo), MaxOf(l.hi, r.hi)};
      case ir::BinaryOp::Mul: return Product(l, r);
      case ir::BinaryOp::FloorDiv: return Quotient(l, ir::AsConstInt(binary.rhs()));
      case ir::BinaryOp::FloorMod: return Remainder(l, ir::AsConstInt(binary.rhs()));
      default: return {};
    }
  }

  // The product of two intervals: the extremes are among the products of their ends.
  static ScalarBounds Product(const ScalarBounds& l, const ScalarBounds& r) {
    if (!l.lo || !l.hi || !r.lo || !r.hi) return {};
    const int64_t ends[] = {*l.lo * *r.lo, *l.lo * *r.hi, *l.hi * *r.lo, *l.hi * *r.hi};
    return {Checked(*std::min_element(std::begin(ends), std::end(ends))),
            Checked(*std::max_element(std::begin(ends), std::end(ends)))};
  }

  // Floor division by a positive constant is monotone in the dividend.
  static ScalarBounds Quotient(const ScalarBounds& l, std::optional<int64_t> divisor) {
    if (!divisor || *divisor <= 0) return {};
    auto divide = [&](Bound v) { return v ? Bound(FloorDivide(*v, *divisor)) : std::nullopt; };
    return {divide(l.lo), divide(l.hi)};
  }

  // x mod c (floor mod, c > 0) lies in [0, c - 1], and is x itself when x already does.
  static ScalarBounds Remainder(const ScalarBounds& l, std::optional<int64_t> divisor) {
    if (!divisor || *divisor <= 0) return {};
    if (l.lo && l.hi && *l.lo >= 0 && *l.hi < *divisor) return l;
    return {0, *divisor - 1};
  }

  const ScalarDefinition& definition_;
  const LoopRangeOf& loop_range_;
};

}  // namespace

ScalarBounds BoundsOf(const ir::ExprPtr& expr, const ScalarDefinition& definition, const LoopRangeOf& loop_range) {
  return BoundsFinder(definition, loop_range).Of(expr);
}

}  // namespace pypto::frontend
