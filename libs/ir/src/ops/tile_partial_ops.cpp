// tile.part_add / part_mul / part_max / part_min: element-wise ops of two tiles whose valid regions
// may differ (TPARTADD, TPARTMUL, TPARTMAX, TPARTMIN). Where both operands are valid the result is
// the op of the two; where only the first is, it is the first operand's element. The result is valid
// where the first operand is, so a narrower second operand leaves the first one's values in the
// rows and columns it does not reach.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

Result<TypePtr> DeducePartial(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto src0 = ExpectTile(args[0], fmt::format("the first operand of {}", op), span);
  if (!src0) return pypto::unexpected(src0.error());
  auto src1 = ExpectTile(args[1], fmt::format("the second operand of {}", op), span);
  if (!src1) return pypto::unexpected(src1.error());
  if ((*src0)->shape() != (*src1)->shape() || (*src0)->dtype() != (*src1)->dtype())
    return TypeError(fmt::format("{} combines tiles of one shape and dtype, got {} and {}", op, (*src0)->str(),
                                 (*src1)->str()),
                     span, "the valid regions may differ; the tiles themselves may not");
  return std::make_shared<TileType>((*src0)->shape(), (*src0)->dtype(), (*src0)->memory_space(), std::nullopt,
                                    (*src0)->valid_shape());
}

OpDef Partial(const std::string& name, const std::string& what) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = fmt::format("element-wise {} of two tiles where both are valid, the first operand "
                                          "where only it is",
                                          what),
               .params = {Arg("src0"), Arg("src1")},
               .deduce_type = [full](const auto& args, const auto&, const Span& span) {
                 return DeducePartial(full, args, span);
               }};
}

}  // namespace

void RegisterTilePartialOps(OpRegistry& registry) {
  registry.Register(Partial("part_add", "sum"));
  registry.Register(Partial("part_mul", "product"));
  registry.Register(Partial("part_max", "maximum"));
  registry.Register(Partial("part_min", "minimum"));
}

}  // namespace pypto::ir
