// Cross-core pipes: the ops by which the AIC and AIV members of one mixed task hand tiles to each
// other through a ring of slots. A push waits while every slot is taken, a pop while none holds a
// tile, and the consumer frees a slot once it is done with what it popped. The pipe is named by
// its direction (the op) and its `id`; `split` says how the two AIV lanes share a tile (0: whole).
//
// Each op runs on one side, whatever its operands' placement says: the producer's push, the
// consumer's pop and free. A popped tile lands where that side computes with it (Vec on the vector
// core, Mat on the cube core, as upstream places it).
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using ops::TypeError;

bool OnCubeSide(MemorySpace space) { return space != MemorySpace::Vec && space != MemorySpace::DDR; }

// The pipe attributes every op of the family takes.
Result<bool> CheckPipeAttrs(const Call::Kwargs& kwargs, const char* op, const Span& span) {
  const int64_t split = FindAttr<int64_t>(kwargs, "split").value_or(0);
  if (split < 0 || split > 4)
    return TypeError(fmt::format("{}: split={} is not a split code (0 none, 1 up-down, 2 left-right, 3/4 their odd "
                                 "variants)",
                                 op, split),
                     span);
  const int64_t id = FindAttr<int64_t>(kwargs, "id").value_or(0);
  if (id < 0) return TypeError(fmt::format("{}: pipe id={} must not be negative", op, id), span);
  return true;
}

// tpush_to_aiv(tile) runs on the cube core with a cube-side tile; tpush_to_aic(tile) on the vector
// core with a Vec tile.
OpDef::DeduceFn DeducePush(const char* op, bool from_cube) {
  return [op, from_cube](const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                         const Span& span) -> Result<TypePtr> {
    auto tile = ops::ExpectTile(args[0], fmt::format("the tile of {}", op), span);
    if (!tile) return pypto::unexpected(tile.error());
    if (OnCubeSide((*tile)->memory_space()) != from_cube)
      return TypeError(fmt::format("{} pushes a tile of the {} core, got one in {}", op, from_cube ? "cube" : "vector",
                                   std::string(MemorySpaceName((*tile)->memory_space()))),
                       span, from_cube ? "push a Mat or Acc tile" : "push a Vec tile");
    if (auto ok = CheckPipeAttrs(kwargs, op, span); !ok) return pypto::unexpected(ok.error());
    return TypePtr(std::make_shared<UnknownType>());
  };
}

// tpop_from_aic(shape, dtype=) is a Vec tile of the vector core; tpop_from_aiv(...) a Mat tile of
// the cube core.
OpDef::DeduceFn DeducePop(const char* op, MemorySpace space) {
  return [op, space](const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                     const Span& span) -> Result<TypePtr> {
    const auto dtype = FindAttr<DataType>(kwargs, "dtype");
    if (args.empty() || !dtype)
      return TypeError(fmt::format("{} needs the shape and dtype of the tile it receives", op), span,
                       "pass shape=[rows, cols] and dtype=..., or annotate the assignment with the tile type");
    auto shape = ops::StaticInts(args[0], fmt::format("the shape of {}", op), span);
    if (!shape) return pypto::unexpected(shape.error());
    for (int64_t dim : *shape)
      if (dim <= 0)
        return TypeError(fmt::format("{}: tile dimensions must be positive, got {}", op, ops::ShapeStr(*shape)), span);
    if (auto ok = CheckPipeAttrs(kwargs, op, span); !ok) return pypto::unexpected(ok.error());
    return TypePtr(std::make_shared<TileType>(*shape, *dtype, space));
  };
}

// tfree_to_aic(tile) gives the slot of a tile popped on the vector core back to the cube core, and
// tfree_to_aiv(tile) the other way round.
OpDef::DeduceFn DeduceFree(const char* op, bool on_cube) {
  return [op, on_cube](const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                       const Span& span) -> Result<TypePtr> {
    auto tile = ops::ExpectTile(args[0], fmt::format("the tile of {}", op), span);
    if (!tile) return pypto::unexpected(tile.error());
    if (OnCubeSide((*tile)->memory_space()) != on_cube)
      return TypeError(fmt::format("{} frees a tile popped on the {} core, got one in {}", op,
                                   on_cube ? "cube" : "vector", std::string(MemorySpaceName((*tile)->memory_space()))),
                       span);
    if (auto ok = CheckPipeAttrs(kwargs, op, span); !ok) return pypto::unexpected(ok.error());
    return TypePtr(std::make_shared<UnknownType>());
  };
}

// aiv_shard(tile, split=) names, inside a pl.split_aiv region, a cube tile crossing to the vector
// lanes: each lane receives its half along the region's split axis (the rows for up-down, split 1,
// the columns for left-right, split 2; rounded up), in Vec; with split 0 each lane receives it whole.
Result<TypePtr> DeduceAivShard(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ops::ExpectTile(args[0], "the tile of tile.aiv_shard", span);
  if (!tile) return pypto::unexpected(tile.error());
  if (!OnCubeSide((*tile)->memory_space()))
    return TypeError(fmt::format("tile.aiv_shard hands a tile of the cube core to the vector lanes, got one in {}",
                                 std::string(MemorySpaceName((*tile)->memory_space()))),
                     span, "shard a matmul result (Acc) or a Mat tile");
  if (auto ok = CheckPipeAttrs(kwargs, "tile.aiv_shard", span); !ok) return pypto::unexpected(ok.error());
  if ((*tile)->has_partial_valid_shape())
    return TypeError(fmt::format("tile.aiv_shard of {}, whose valid region is narrower than the tile, is not "
                                 "supported yet",
                                 (*tile)->str()),
                     span, "shard the whole tile and narrow each lane's half with pl.tile.set_validshape");
  Shape shape = (*tile)->shape();
  const int64_t split = FindAttr<int64_t>(kwargs, "split").value_or(0);
  if (split != 0 && shape.size() < 2)
    return TypeError(fmt::format("tile.aiv_shard splits a matrix between the lanes, got {}", (*tile)->str()), span);
  if (split != 0) {
    int64_t& extent = shape[shape.size() - (split % 2 == 1 ? 2 : 1)];
    extent = (extent + 1) / 2;
  }
  return TypePtr(std::make_shared<TileType>(std::move(shape), (*tile)->dtype(), MemorySpace::Vec));
}

// aic/aiv_initialize_pipe: the slot buffers (addresses on a device) and the ring's geometry.
Result<TypePtr> DeduceInitPipe(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  for (const ExprPtr& arg : args)
    if (!arg->type()->As<ScalarType>())
      return TypeError(fmt::format("a pipe's consumer buffer is an integer scalar, got {}", arg->type()->str()), span);
  const int64_t dir_mask = *FindAttr<int64_t>(kwargs, "dir_mask");
  if (dir_mask < 1 || dir_mask > 3)
    return TypeError(fmt::format("dir_mask={} is not 1 (AIC to AIV), 2 (AIV to AIC) or 3 (both)", dir_mask), span);
  for (const char* name : {"slot_size", "slot_num", "local_slot_num"}) {
    const auto value = FindAttr<int64_t>(kwargs, name);
    if (value && *value <= 0) return TypeError(fmt::format("{}={} must be positive", name, *value), span);
  }
  if (auto ok = CheckPipeAttrs(kwargs, "initialize_pipe", span); !ok) return pypto::unexpected(ok.error());
  return TypePtr(std::make_shared<UnknownType>());
}

// reserve_buffer / import_peer_buffer: the address (an INT32) of a named slot buffer on the device.
Result<TypePtr> DeduceBufferAddress(const std::vector<ExprPtr>&, const Call::Kwargs& kwargs, const Span& span) {
  if (FindAttr<std::string>(kwargs, "name").value_or("").empty())
    return TypeError("a cross-core slot buffer needs a name", span);
  if (FindAttr<int64_t>(kwargs, "size").value_or(1) <= 0) return TypeError("a slot buffer's size must be positive", span);
  return TypePtr(std::make_shared<ScalarType>(DataType::INT32));
}

std::vector<OpParam> PipeAttrs(std::vector<OpParam> params) {
  params.push_back(OptionalAttr("split", OpAttrKind::Int));
  params.push_back(OptionalAttr("id", OpAttrKind::Int));
  return params;
}

}  // namespace

bool IsCrossCorePipeOp(std::string_view op) {
  return op == "tile.tpush_to_aiv" || op == "tile.tpush_to_aic" || op == "tile.tpop_from_aic" ||
         op == "tile.tpop_from_aiv" || op == "system.tfree_to_aic" || op == "system.tfree_to_aiv";
}

void RegisterCrossCoreOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.tpush_to_aiv",
                          .description = "push a cube tile into the pipe to the vector core (waits for a free slot)",
                          .params = PipeAttrs({Arg("tile")}),
                          .deduce_type = DeducePush("tile.tpush_to_aiv", true),
                          .affinity = CoreAffinity::Cube});
  registry.Register(OpDef{.name = "tile.tpush_to_aic",
                          .description = "push a Vec tile into the pipe to the cube core (waits for a free slot)",
                          .params = PipeAttrs({Arg("tile")}),
                          .deduce_type = DeducePush("tile.tpush_to_aic", false),
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.tpop_from_aic",
                          .description = "a Vec tile popped from the cube core's pipe (waits for one)",
                          .params = PipeAttrs({OptionalArg("shape"), OptionalAttr("dtype", OpAttrKind::DType)}),
                          .deduce_type = DeducePop("tile.tpop_from_aic", MemorySpace::Vec),
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.tpop_from_aiv",
                          .description = "a Mat tile popped from the vector core's pipe (waits for one)",
                          .params = PipeAttrs({OptionalArg("shape"), OptionalAttr("dtype", OpAttrKind::DType)}),
                          .deduce_type = DeducePop("tile.tpop_from_aiv", MemorySpace::Mat),
                          .affinity = CoreAffinity::Cube});
  registry.Register(OpDef{.name = "tile.aiv_shard",
                          .description = "a cube tile as a vector lane of a pl.split_aiv region receives it (its half)",
                          .params = {Arg("tile"), OptionalAttr("split", OpAttrKind::Int)},
                          .deduce_type = DeduceAivShard,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "system.tfree_to_aic",
                          .description = "give the slot of a tile popped from the cube core back to it",
                          .params = PipeAttrs({Arg("tile")}),
                          .deduce_type = DeduceFree("system.tfree_to_aic", false),
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "system.tfree_to_aiv",
                          .description = "give the slot of a tile popped from the vector core back to it",
                          .params = PipeAttrs({Arg("tile")}),
                          .deduce_type = DeduceFree("system.tfree_to_aiv", true),
                          .affinity = CoreAffinity::Cube});
  const auto init_params = [] {
    return std::vector<OpParam>{OptionalArg("c2v_consumer_buf"),
                                OptionalArg("v2c_consumer_buf"),
                                Attr("dir_mask", OpAttrKind::Int),
                                Attr("slot_size", OpAttrKind::Int),
                                OptionalAttr("slot_num", OpAttrKind::Int),
                                OptionalAttr("local_slot_num", OpAttrKind::Int),
                                OptionalAttr("id", OpAttrKind::Int)};
  };
  registry.Register(OpDef{.name = "system.aic_initialize_pipe",
                          .description = "set up the cube core's end of a pipe (slot buffers, slot count)",
                          .params = init_params(),
                          .deduce_type = DeduceInitPipe,
                          .affinity = CoreAffinity::Cube});
  registry.Register(OpDef{.name = "system.reserve_buffer",
                          .description = "the address of a named slot buffer this core's end of a pipe receives into",
                          .params = {Attr("name", OpAttrKind::String), Attr("size", OpAttrKind::Int),
                                     OptionalAttr("base", OpAttrKind::Int)},
                          .deduce_type = DeduceBufferAddress,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.import_peer_buffer",
                          .description = "the address of the slot buffer the peer function reserved under a name",
                          .params = {Attr("name", OpAttrKind::String), Attr("peer_func", OpAttrKind::String)},
                          .deduce_type = DeduceBufferAddress,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.aiv_initialize_pipe",
                          .description = "set up the vector core's end of a pipe (slot buffers, slot count)",
                          .params = init_params(),
                          .deduce_type = DeduceInitPipe,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
