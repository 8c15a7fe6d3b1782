// LegalizeTileCast: the vector core converts between a fixed set of dtype pairs in one instruction
// (`pto.tcvt`, ir/native_casts.h). A `tile.cast` outside that set becomes the shortest chain of
// native casts, each hop with the cast's rounding mode (FP32 -> INT8 on Ascend910B is FP32 -> FP16
// -> INT8); the simulator then rounds at each hop as the device does. A cast no chain reaches
// without losing values is an error at the cast, rather than a kernel that ptoas rejects or that
// computes something else on the device.
//
// Among chains of the same length the search prefers converting an integer into the float of its
// width first and then changing width among floats. An intermediate dtype that cannot hold every
// value the destination can (an integer on the way to a float, a narrower float, a narrower or
// unsigned integer on the way to a wider or signed one) is never used: it would make the chain lossy
// where the direct conversion is not. A cast of a matmul result (in Acc) is left alone: the cube's
// FIXPIPE converts it on its way out of L0C, not the vector core.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <map>
#include <optional>

#include "pypto/ir/native_casts.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"
#include "mutate_body.h"
#include "splicing_mutator.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// Significand bits (with the implicit one) and exponent bits of the floats whose range we compare.
std::optional<std::pair<int, int>> FloatFormat(DataType dtype) {
  switch (dtype) {
    case DataType::FP32: return std::pair{24, 8};
    case DataType::FP16: return std::pair{11, 5};
    case DataType::BF16: return std::pair{8, 8};
    default: return std::nullopt;
  }
}

int IntegerValueBits(DataType dtype) { return DataTypeBits(dtype) - (IsUnsignedInteger(dtype) ? 0 : 1); }

// Whether passing through `mid` provably loses values that `to` could hold. Formats this cannot
// compare are let through, so only a loss it can show rules a chain out.
bool LosesValuesOf(DataType mid, DataType to) {
  if (mid == to) return false;
  if (IsInteger(mid) && IsFloat(to)) return true;  // the fractions
  const auto mid_float = FloatFormat(mid), to_float = FloatFormat(to);
  if (IsFloat(mid) && IsFloat(to))
    return mid_float && to_float && (mid_float->first < to_float->first || mid_float->second < to_float->second);
  if (IsFloat(mid) && IsInteger(to)) return mid_float && mid_float->first < IntegerValueBits(to);
  if (IsInteger(mid) && IsInteger(to)) {
    if (IsUnsignedInteger(mid) && !IsUnsignedInteger(to)) return true;  // the negatives
    return IntegerValueBits(mid) < IntegerValueBits(to);
  }
  return false;
}

// Ranks hops among chains of equal length: an integer into the float of its width, then width
// changes among floats, then anything else.
int HopPreference(DataType from, DataType to) {
  if (IsInteger(from) && IsFloat(to) && DataTypeBits(from) == DataTypeBits(to)) return 0;
  if (IsFloat(from) && IsFloat(to)) return 1;
  return 2;
}

// The dtypes each hop converts to, ending with `to`; nullopt when no admissible chain exists.
std::optional<std::vector<DataType>> CastChain(const SocSpec& soc, DataType from, DataType to) {
  struct Reached {
    int preference;
    DataType previous;
  };
  std::map<DataType, Reached> reached = {{from, {0, from}}};
  std::vector<DataType> level = {from};
  while (!level.empty() && !reached.contains(to)) {
    std::map<DataType, Reached> next;
    for (DataType dtype : level) {
      for (DataType target : NativeCastTargets(soc, dtype)) {
        if (reached.contains(target) || (target != to && LosesValuesOf(target, to))) continue;
        int preference = reached.at(dtype).preference + HopPreference(dtype, target);
        auto it = next.find(target);
        if (it == next.end() || preference < it->second.preference) next[target] = {preference, dtype};
      }
    }
    level.clear();
    for (const auto& [dtype, how] : next) {
      reached.emplace(dtype, how);
      level.push_back(dtype);
    }
  }
  if (!reached.contains(to)) return std::nullopt;
  std::vector<DataType> chain;
  for (DataType dtype = to; dtype != from; dtype = reached.at(dtype).previous) chain.insert(chain.begin(), dtype);
  return chain;
}

class CastLegalizer final : public SplicingMutator {
 public:
  explicit CastLegalizer(const SocSpec& soc) : soc_(soc) {}
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto* call = stmt->value()->As<Call>();
    if (error_ || !call || call->target_name() != "tile.cast") return stmt;
    const auto* source = call->args()[0]->type()->As<TileType>();
    const auto* result = call->type()->As<TileType>();
    if (!source || !result || source->memory_space() == MemorySpace::Acc) return stmt;
    const DataType from = source->dtype(), to = result->dtype();
    if (from == to || IsNativeCast(soc_, from, to)) return stmt;
    auto chain = CastChain(soc_, from, to);
    if (!chain) {
      error_ = Unreachable(from, to, stmt->span());
      return stmt;
    }
    return Hops(stmt, *call, *chain);
  }

 private:
  // `v = cast(x, D)` as `v_H1 = cast(x, H1); ...; v = cast(v_Hn, D)`, every hop with the cast's mode.
  StmtPtr Hops(const std::shared_ptr<const AssignStmt>& stmt, const Call& cast, const std::vector<DataType>& chain) {
    std::vector<StmtPtr> hops;
    ExprPtr operand = cast.args()[0];
    for (size_t i = 0; i < chain.size(); ++i) {
      Call::Kwargs kwargs = cast.kwargs();
      for (auto& [name, value] : kwargs)
        if (name == "target_type") value = chain[i];
      auto call = OpRegistry::Get().CreateCall("tile.cast", {operand}, kwargs, cast.span());
      if (!call) {
        error_ = call.error();
        return stmt;
      }
      const bool last = i + 1 == chain.size();
      auto var = last ? stmt->var()
                      : std::make_shared<Var>(fmt::format("{}_{}", stmt->var()->name_hint(), Lower(DataTypeName(chain[i]))),
                                              (*call)->type(), stmt->span());
      hops.push_back(std::make_shared<AssignStmt>(var, *call, stmt->span()));
      operand = var;
    }
    return std::make_shared<SeqStmts>(std::move(hops), stmt->span());
  }

  Diagnostic Unreachable(DataType from, DataType to, const Span& span) const {
    std::vector<std::string_view> targets;
    for (DataType target : NativeCastTargets(soc_, from)) targets.push_back(DataTypeName(target));
    return Diagnostic{DiagnosticKind::Type,
                      fmt::format("{} cannot convert {} to {}: no chain of its native conversions gets there "
                                  "without losing values",
                                  soc_.name, DataTypeName(from), DataTypeName(to)),
                      span,
                      targets.empty() ? fmt::format("{} converts no {} tile", soc_.name, DataTypeName(from))
                                      : fmt::format("{} converts {} to {} directly", soc_.name, DataTypeName(from),
                                                    fmt::join(targets, ", "))};
  }

  static std::string Lower(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower;
  }

  const SocSpec& soc_;
  std::optional<Diagnostic> error_;
};

}  // namespace

Pass LegalizeTileCast() {
  return Pass("LegalizeTileCast", {IRProperty::NoNestedCalls, IRProperty::NoInCoreScopes}, {}, {},
              [](const ProgramPtr& program, const PassContext& context) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (!IsKernel(function->type())) return function;
                  CastLegalizer legalizer(*context.soc);
                  return MutateBody(function, legalizer);
                });
              });
}

}  // namespace pypto::passes
