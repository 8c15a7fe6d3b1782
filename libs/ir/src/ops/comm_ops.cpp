// Communication between the ranks of a distributed program (`pld.*` in a chip kernel). Every rank
// holds a window of the same layout, so a window tensor names one region on each rank: an op names a
// peer and reaches that rank's copy of the region. The DSL's comm context (`pld.get_comm_ctx(t)`)
// is the window tensor itself here, which carries its communication domain.
//
// - comm.rank(t) / comm.nranks(t): this rank's index in the domain of window `t`, and the domain's size.
// - comm.notify(target, peer, offsets, value, op=Set|AtomicAdd[, core_type="aiv"|"aic"]): set (or
//   atomically add to) one INT32 cell of the peer's signal window `target`. In a kernel mixing cube and
//   vector work, `core_type` keeps it on that member; the frontend sets "aiv" on a notify written in a
//   pl.split_aiv region, as upstream's region placement does (see NotifyCore).
// - comm.wait(signal, offsets, expected, cmp=Eq|Ne|Gt|Ge|Lt|Le): block until this rank's cell compares
//   true with `expected`.
// - comm.barrier(signal): every rank of the domain arrives before any leaves; `signal` holds one INT32
//   cell per rank ([nranks] or [nranks, 1]) and is left as it was found, so it can be used again.
// - comm.remote_load(t, peer, offsets, shape): a Vec tile read from the peer's window region.
// - comm.remote_store(tile, t, peer, offsets[, atomic="add"]): a Vec tile written into (or added to)
//   the peer's window region. pld.tensor.put / get are parsed into a load or remote_load and a
//   remote_store or store.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

constexpr std::array<std::string_view, 2> kNotifyOps = {"Set", "AtomicAdd"};
constexpr std::array<std::string_view, 6> kWaitCmps = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"};

TypePtr NoValue() { return std::make_shared<UnknownType>(); }

Result<bool> ExpectIntegerScalar(const ExprPtr& expr, const std::string& what, const Span& span) {
  const auto* scalar = expr->type()->As<ScalarType>();
  if (scalar && IsInteger(scalar->dtype())) return true;
  return TypeError(fmt::format("{} must be an integer scalar, got {}", what, expr->type()->str()), span);
}

// An INT32 signal window and the cell `offsets` names in it.
Result<bool> CheckSignalCell(const ExprPtr& signal, const ExprPtr& offsets, const Span& span) {
  auto tensor = ExpectTensor(signal, "the signal", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  if ((*tensor)->dtype() != DataType::INT32)
    return TypeError(fmt::format("the signal is a window of INT32 cells, got {}", (*tensor)->str()), span);
  auto cell = ScalarOffsets(offsets, "the signal cell's offsets", span);
  if (!cell) return pypto::unexpected(cell.error());
  if (cell->size() != (*tensor)->shape().size())
    return TypeError(fmt::format("the signal cell needs {} offsets, one per dimension of {}, got {}",
                                 (*tensor)->shape().size(), (*tensor)->str(), cell->size()),
                     span);
  return CheckRegion(**tensor, *cell, Shape((*tensor)->shape().size(), 1), span);
}

Result<bool> CheckEnum(const Call::Kwargs& kwargs, std::string_view key, std::span<const std::string_view> members,
                       std::string_view type, const Span& span) {
  auto value = FindAttr<std::string>(kwargs, key);
  if (!value || std::ranges::find(members, *value) != members.end()) return true;
  return TypeError(fmt::format("{}={} is not a member of pld.{}", key, *value, type), span,
                   fmt::format("members: {}", fmt::join(members, ", ")));
}

Result<TypePtr> DeduceDomainScalar(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the comm context (a window tensor, pld.get_comm_ctx(window))", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  return TypePtr(std::make_shared<ScalarType>(DataType::INT32));
}

Result<TypePtr> DeduceNotify(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  if (auto ok = ExpectIntegerScalar(args[1], "the peer", span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckSignalCell(args[0], args[2], span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = ExpectIntegerScalar(args[3], "the value", span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckEnum(kwargs, "op", kNotifyOps, "NotifyOp", span); !ok) return pypto::unexpected(ok.error());
  auto core_type = FindAttr<std::string>(kwargs, "core_type");
  if (core_type && *core_type != "aiv" && *core_type != "aic")
    return TypeError(fmt::format("core_type=\"{}\" is not \"aic\" or \"aiv\"", *core_type), span);
  return NoValue();
}

// The member of a mixed kernel a notify runs on, where it names one. A notify reads no tile, so
// without this ExpandMixedKernel copies it into both members: the cube's copy would then signal the
// peer as soon as the cube's matmuls are done, before the vector lanes have stored the data the
// signal announces, and add a second count the peer's wait takes for the first.
std::optional<CoreAffinity> NotifyCore(const OpAttrs& attrs) {
  auto core_type = FindAttr<std::string>(attrs, "core_type");
  if (!core_type) return std::nullopt;
  return *core_type == "aic" ? CoreAffinity::Cube : CoreAffinity::Vector;
}

Result<TypePtr> DeduceWait(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  if (auto ok = CheckSignalCell(args[0], args[1], span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = ExpectIntegerScalar(args[2], "the expected value", span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckEnum(kwargs, "cmp", kWaitCmps, "WaitCmp", span); !ok) return pypto::unexpected(ok.error());
  return NoValue();
}

Result<TypePtr> DeduceBarrier(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the barrier's signal", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  const Shape& shape = (*tensor)->shape();
  const bool one_cell_per_rank = shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
  if ((*tensor)->dtype() != DataType::INT32 || !one_cell_per_rank)
    return TypeError(fmt::format("the barrier's signal is an INT32 window with one cell per rank ([nranks] or "
                                 "[nranks, 1]), got {}",
                                 (*tensor)->str()),
                     span);
  return args[0]->type();
}

Result<TypePtr> DeduceRemoteLoad(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the window read", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  if (auto ok = ExpectIntegerScalar(args[1], "the peer", span); !ok) return pypto::unexpected(ok.error());
  auto offsets = ScalarOffsets(args[2], "the remote_load offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  auto shape = StaticInts(args[3], "the remote_load shape", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (offsets->size() != (*tensor)->shape().size() || shape->size() != offsets->size())
    return TypeError(fmt::format("remote_load of {} needs one offset and one extent per dimension", (*tensor)->str()),
                     span);
  if (auto ok = CheckRegion(**tensor, *offsets, *shape, span); !ok) return pypto::unexpected(ok.error());
  return TypePtr(std::make_shared<TileType>(*shape, (*tensor)->dtype(), MemorySpace::Vec));
}

Result<TypePtr> DeduceRemoteStore(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  if (auto atomic = FindAttr<std::string>(kwargs, "atomic"); atomic && *atomic != "add")
    return TypeError(fmt::format("remote_store atomic=\"{}\" is not supported; the atomic store is atomic=\"add\"",
                                 *atomic),
                     span);
  auto tile = ExpectTile(args[0], "the tile stored", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto tensor = ExpectTensor(args[1], "the window written", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  if (auto ok = ExpectIntegerScalar(args[2], "the peer", span); !ok) return pypto::unexpected(ok.error());
  auto offsets = ScalarOffsets(args[3], "the remote_store offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  if ((*tile)->memory_space() != MemorySpace::Vec)
    return TypeError(fmt::format("remote_store sends a Vec tile, got {}", (*tile)->str()), span);
  if ((*tile)->dtype() != (*tensor)->dtype())
    return TypeError(fmt::format("cannot store a {} tile into a {} window", DataTypeName((*tile)->dtype()),
                                 DataTypeName((*tensor)->dtype())),
                     span);
  if (offsets->size() != (*tensor)->shape().size() || (*tile)->shape().size() != offsets->size())
    return TypeError(fmt::format("remote_store of {} into {} needs one offset per dimension", (*tile)->str(),
                                 (*tensor)->str()),
                     span);
  if (auto ok = CheckRegion(**tensor, *offsets, (*tile)->shape(), span); !ok) return pypto::unexpected(ok.error());
  return NoValue();
}

}  // namespace

void RegisterCommOps(OpRegistry& registry) {
  for (const auto* name : {"comm.rank", "comm.nranks"}) {
    const bool rank = std::string_view(name) == "comm.rank";
    registry.Register(OpDef{.name = name,
                            .description = rank ? "this rank's index in the window's communication domain"
                                                : "the number of ranks in the window's communication domain",
                            .params = {Arg("ctx")},
                            .deduce_type = DeduceDomainScalar,
                            .affinity = CoreAffinity::Shared});
  }
  // The peer's window changes, not this rank's: nothing the local task graph orders is written.
  registry.Register(OpDef{.name = "comm.notify",
                          .description = "set or atomically add to one INT32 cell of a peer's signal window",
                          .params = {Arg("target"), Arg("peer"), Arg("offsets"), Arg("value"),
                                     EnumAttr("op", "pld.NotifyOp"), OptionalAttr("core_type", OpAttrKind::String)},
                          .deduce_type = DeduceNotify,
                          .affinity = CoreAffinity::Shared,
                          .affinity_from_attrs = NotifyCore});
  registry.Register(OpDef{.name = "comm.wait",
                          .description = "block until one INT32 cell of this rank's signal window compares true",
                          .params = {Arg("signal"), Arg("offsets"), Arg("expected"), EnumAttr("cmp", "pld.WaitCmp")},
                          .deduce_type = DeduceWait,
                          .affinity = CoreAffinity::Shared,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "comm.barrier",
                          .description = "every rank of the domain arrives before any leaves",
                          .params = {Arg("signal")},
                          .deduce_type = DeduceBarrier,
                          .affinity = CoreAffinity::Shared,
                          .writes_arg = 0,
                          .reads_tensor_arg = 0,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "comm.remote_load",
                          .description = "a Vec tile read from a region of a peer's window",
                          .params = {Arg("target"), Arg("peer"), Arg("offsets"), Arg("shape")},
                          .deduce_type = DeduceRemoteLoad,
                          .affinity = CoreAffinity::Vector,
                          .reads_tensor_arg = 0});
  // The window is written: a peer's, or this rank's own when the peer is itself (a put to every
  // member of a group, self included), which the local task graph must order later readers after.
  registry.Register(OpDef{.name = "comm.remote_store",
                          .description = "a Vec tile written into a region of a peer's window",
                          .params = {Arg("tile"), Arg("target"), Arg("peer"), Arg("offsets"),
                                     OptionalAttr("atomic", OpAttrKind::String)},
                          .deduce_type = DeduceRemoteStore,
                          .affinity = CoreAffinity::Vector,
                          .writes_arg = 1});
}

}  // namespace pypto::ir
