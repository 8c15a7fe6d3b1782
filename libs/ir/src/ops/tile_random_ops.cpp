// tile.random: a tile of counter-based pseudo-random 32-bit integers (pto.trandom), a function of a
// 64-bit key, a 128-bit counter and each element's position, so the same seeds give the same tile.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

constexpr const char* kSeedNames[] = {"key0", "key1", "counter0", "counter1", "counter2", "counter3"};

// `tile.random(key0, key1, counter0, counter1, counter2, counter3, shape[, valid_shape], dtype=...,
// rounds=...)`: a 2-D Vec tile of INT32 or UINT32 (the default), of which the generator fills the
// valid region.
Result<TypePtr> DeduceRandom(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  for (size_t i = 0; i < 6; ++i) {
    const auto* seed = args[i]->type()->As<ScalarType>();
    if (!seed || !IsInteger(seed->dtype()))
      return TypeError(fmt::format("{} of pl.random must be an integer scalar, got {}", kSeedNames[i],
                                   args[i]->type()->str()),
                       span);
  }
  auto shape = StaticInts(args[6], "the shape of pl.random", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (shape->size() != 2 || (*shape)[0] <= 0 || (*shape)[1] <= 0)
    return TypeError(fmt::format("pl.random fills a 2-D tile [rows, cols], got {}", ShapeStr(*shape)), span);
  const DataType dtype = FindAttr<DataType>(kwargs, "dtype").value_or(DataType::UINT32);
  if (dtype != DataType::INT32 && dtype != DataType::UINT32)
    return TypeError(fmt::format("pl.random makes INT32 or UINT32 tiles, not {}", DataTypeName(dtype)), span);
  if (const int64_t rounds = FindAttr<int64_t>(kwargs, "rounds").value_or(10); rounds != 7 && rounds != 10)
    return TypeError(fmt::format("rounds of pl.random must be 7 or 10, got {}", rounds), span);
  ValidShape valid;
  if (args.size() > 7) {
    const auto* extents = args[7]->As<TupleLiteral>();
    if (!extents) return TypeError("the valid_shape of pl.random must be a list of integers", span);
    auto checked = CheckValidShape(extents->elements(), *shape, "the valid_shape of pl.random", span);
    if (!checked) return pypto::unexpected(checked.error());
    valid = *checked;
  }
  return std::make_shared<TileType>(*shape, dtype, MemorySpace::Vec, std::nullopt, valid);
}

}  // namespace

void RegisterTileRandomOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.random",
                          .description = "counter-based pseudo-random 32-bit integers from a key and a counter "
                                         "(pto.trandom, rounds: 7 or 10)",
                          .params = {Arg("key0"), Arg("key1"), Arg("counter0"), Arg("counter1"), Arg("counter2"),
                                     Arg("counter3"), Arg("shape"), OptionalArg("valid_shape"),
                                     OptionalAttr("dtype", OpAttrKind::DType), OptionalAttr("rounds", OpAttrKind::Int)},
                          .deduce_type = DeduceRandom,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
