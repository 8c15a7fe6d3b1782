#include "op_resolver.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace pypto::frontend {
namespace {

// Alternative spellings of the same op (`not_`, `and_`, `or_`: Python reserves the bare words;
// tile.matmul multiplies batches of matrices, so `batch_matmul` is the same op).
std::string Canonical(const std::string& name) {
  static const std::map<std::string, std::string, std::less<>> kAliases = {
      {"create_tile", "create"},  {"create_tensor", "create"},        {"arange", "ci"},
      {"not_", "not"},            {"and_", "and"},                    {"or_", "or"},
      {"batch_matmul", "matmul"}, {"batch_matmul_acc", "matmul_acc"}};
  auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}

// Ops with a scalar-operand form `<op>s` chosen when the right operand is a scalar.
const std::set<std::string, std::less<>> kScalarForms = {"add", "sub", "mul", "div", "maximum", "minimum", "fmod",
                                                          "cmp", "and", "or",  "xor", "shl", "shr",     "rem"};

// Tile ops whose first operand is a global tensor rather than a tile.
const std::set<std::string, std::less<>> kTensorSourced = {"load", "mgather"};

// Cross-core ops upstream reaches through more than one module: the pipe setup and tfree ops are
// system ops also spelled `pl.X`; the tile-valued push/pop ops are tile ops also spelled `pl.system.X`.
const std::set<std::string, std::less<>> kPromotedSystemOps = {
    "tfree_to_aic", "tfree_to_aiv", "aic_initialize_pipe", "aiv_initialize_pipe", "reserve_buffer",
    "import_peer_buffer"};
const std::set<std::string, std::less<>> kPipeTileOps = {"tpush_to_aiv", "tpush_to_aic", "tpop_from_aic",
                                                         "tpop_from_aiv"};

bool IsScalar(const ir::ExprPtr& expr) { return expr && expr->type()->As<ir::ScalarType>(); }
bool IsTensor(const ir::ExprPtr& expr) { return expr && expr->type()->As<ir::TensorType>(); }

}  // namespace

std::optional<ir::BinaryOp> ScalarArithmetic(const std::string& dsl_name) {
  static const std::map<std::string, ir::BinaryOp, std::less<>> kOps = {
      {"pl.add", ir::BinaryOp::Add}, {"pl.sub", ir::BinaryOp::Sub}, {"pl.mul", ir::BinaryOp::Mul},
      {"pl.div", ir::BinaryOp::FloatDiv}, {"pl.max", ir::BinaryOp::Max}, {"pl.min", ir::BinaryOp::Min}};
  auto it = kOps.find(dsl_name);
  if (it == kOps.end()) return std::nullopt;
  return it->second;
}

ir::Result<std::string> SelectForm(const std::string& dsl_name, const std::vector<std::string>& keywords,
                                   const ir::Span& span) {
  auto has = [&](std::string_view key) { return std::find(keywords.begin(), keywords.end(), key) != keywords.end(); };
  for (std::string_view prefix : {"pl.tile.", "pl."}) {
    if (!dsl_name.starts_with(prefix)) continue;
    const std::string_view base = std::string_view(dsl_name).substr(prefix.size());
    if (base == "mrgsort") {
      return fmt::format("{}mrgsort_format{}", prefix, has("block_len") ? 1 : 2);
    }
    if (base == "gather") {
      if (has("mask_pattern")) return fmt::format("{}gather_mask", prefix);
      if (prefix == "pl.tile." || has("index")) return dsl_name;  // the index form (the parser maps pl.X's keywords)
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("only the mask and index forms of '{}' (mask_pattern=..., or dim=-1 and "
                                       "index=...) are supported yet",
                                       dsl_name),
                           span);
    }
    break;
  }
  return dsl_name;
}

ir::Result<const ir::OpDef*> ResolveOp(const std::string& dsl_name, const std::vector<ir::ExprPtr>& operands,
                                       CallContext context, const ir::Span& span) {
  const auto& registry = ir::OpRegistry::Get();
  std::string op_name;
  if (dsl_name.starts_with("pl.tile.")) {
    op_name = "tile." + Canonical(dsl_name.substr(8));
  } else if (dsl_name.starts_with("pl.tensor.")) {
    op_name = "tensor." + Canonical(dsl_name.substr(10));
    // In a kernel, upstream's tensor-level values are tiles here: pl.tensor.read(inv_rms, [b, 0]) of a
    // computed tile is the tile's element read.
    const bool on_tile = !operands.empty() && operands[0] && operands[0]->type()->As<ir::TileType>();
    if (on_tile && (op_name == "tensor.read" || op_name == "tensor.write")) op_name = "tile." + op_name.substr(7);
  } else if (dsl_name.starts_with("pl.scalar.")) {
    op_name = "scalar." + dsl_name.substr(10);
  } else if (dsl_name.starts_with("pl.system.")) {
    const std::string base = dsl_name.substr(10);
    op_name = (kPipeTileOps.contains(base) ? "tile." : "system.") + base;
  } else if (dsl_name.starts_with("pl.") && kPromotedSystemOps.contains(dsl_name.substr(3))) {
    op_name = "system." + dsl_name.substr(3);
  } else if (dsl_name.starts_with("pl.array.")) {
    op_name = "array." + dsl_name.substr(9);
  } else if (dsl_name.starts_with("pl.prefetch.")) {
    op_name = "prefetch." + dsl_name.substr(12);
  } else if (dsl_name.starts_with("pl.comm.")) {
    op_name = "comm." + dsl_name.substr(8);
  } else if (dsl_name == "pl.cast" && !operands.empty() && IsScalar(operands[0])) {
    op_name = "scalar.cast";  // the unified pl.cast given a scalar
  } else if (dsl_name == "pl.create_tile") {
    op_name = "tile.create";
  } else if (dsl_name == "pl.create_tensor") {
    op_name = "tensor.create";
  } else if (dsl_name.starts_with("pl.")) {
    std::string base = Canonical(dsl_name.substr(3));
    const ir::ExprPtr first = operands.empty() ? nullptr : operands[0];
    const bool on_tensor = first ? IsTensor(first) && !kTensorSourced.contains(base)
                                 : context == CallContext::Orchestration;
    if (operands.size() > 1 && IsScalar(operands[1]) && kScalarForms.contains(base)) base += "s";
    op_name = (on_tensor ? "tensor." : "tile.") + base;
    if (on_tensor && !registry.Find(op_name) && registry.Find("tile." + base)) {
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' on tensors is not supported yet", dsl_name), span,
                           "load tiles with pl.load inside a pl.at scope and apply the op to them");
    }
  }
  if (const auto* op = registry.Find(op_name)) return op;
  return ir::MakeError(ir::DiagnosticKind::UnknownOperation, fmt::format("unknown operation '{}'", dsl_name), span);
}

ir::Result<ir::ExprPtr> DefaultScratchTile(const std::string& dsl_name, const ir::OpDef& op,
                                           const ir::ExprPtr& operand, const ir::Span& span) {
  const bool unified_reduction = dsl_name.starts_with("pl.row_") || dsl_name.starts_with("pl.col_");
  const auto* tile = operand ? operand->type()->As<ir::TileType>() : nullptr;
  const bool needs_scratch = std::any_of(op.params.begin(), op.params.end(), [](const ir::OpParam& p) {
    return p.name == "tmp_tile" && p.required;
  });
  if (!unified_reduction || !tile || !needs_scratch) return ir::ExprPtr{};
  return CreateTileLike(*tile, span);
}

ir::Result<ir::ExprPtr> MergeScratchTile(const std::vector<ir::ExprPtr>& lists, const ir::Span& span) {
  int64_t cols = 0;
  for (size_t i = 0; i < lists.size(); ++i) {
    const auto* tile = lists[i] ? lists[i]->type()->As<ir::TileType>() : nullptr;
    if (!tile || tile->shape().size() < 2)
      return ir::MakeError(ir::DiagnosticKind::Type,
                           fmt::format("pl.mrgsort merges sorted tiles; list {} is {}", i,
                                       lists[i] ? lists[i]->type()->str() : "not a value"),
                           span);
    cols += tile->shape().back();
  }
  const auto& first = *lists[0]->type()->As<ir::TileType>();
  return CreateTileLike(ir::TileType({1, cols}, first.dtype(), first.memory_space()), span);
}

ir::Result<ir::ExprPtr> CreateTileLike(const ir::TileType& tile, const ir::Span& span) {
  std::vector<ir::ExprPtr> shape;
  for (int64_t dim : tile.shape()) shape.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
  auto call = ir::OpRegistry::Get().CreateCall(
      "tile.create", {std::make_shared<ir::TupleLiteral>(std::move(shape), span)},
      {{"dtype", ir::OpAttr(tile.dtype())}, {"target_memory", ir::OpAttr(tile.memory_space())}}, span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

}  // namespace pypto::frontend
