// FunctionParser: DSL ops parsed by hand into IR calls of their own: pl.create_l1 / pl.gather_row
// (kernel-driven gathers into L1), pl.expand_clone, and the distributed pld put / get /
// get_comm_ctx.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <variant>

#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// ---- kernel-driven gathers into L1 --------------------------------------------------------------

// The positional and keyword arguments of a call, by parameter name, each given at most once.
ir::Result<std::map<std::string, py::handle>> FunctionParser::BindArguments(py::handle node,
                                                                            const std::vector<std::string>& names,
                                                                            size_t required, const std::string& op) {
  std::map<std::string, py::handle> bound;
  py::list args = node.attr("args");
  if (args.size() > names.size())
    return MakeError(DiagnosticKind::Type, fmt::format("{} takes at most {} arguments", op, names.size()),
                     map_.SpanOf(node));
  for (size_t i = 0; i < args.size(); ++i) bound[names[i]] = args[i];
  for (auto keyword : node.attr("keywords")) {
    const auto arg = keyword.attr("arg");
    const std::string key = arg.is_none() ? "**" : arg.cast<std::string>();
    if (std::find(names.begin(), names.end(), key) == names.end() || bound.contains(key))
      return MakeError(DiagnosticKind::Type, fmt::format("{} got an unexpected or repeated argument '{}'", op, key),
                       map_.SpanOf(keyword));
    bound[key] = keyword.attr("value");
  }
  for (size_t i = 0; i < required; ++i)
    if (!bound.contains(names[i]))
      return MakeError(DiagnosticKind::Type, fmt::format("{} needs its '{}' argument", op, names[i]),
                       map_.SpanOf(node));
  return bound;
}

// `pl.create_l1(shape, dtype)`: an on-chip Mat tile a kernel fills row by row (pl.gather_row) and
// multiplies, with no trip through global memory.
ir::Result<ir::ExprPtr> FunctionParser::ParseCreateL1(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  if (kernel_depth_ == 0)
    return MakeError(DiagnosticKind::Syntax, "pl.create_l1 makes an on-chip tile; call it inside a pl.at scope", span);
  auto bound = BindArguments(node, {"shape", "dtype", "transpose"}, 2, "pl.create_l1");
  if (!bound) return pypto::unexpected(bound.error());
  if (bound->contains("transpose"))
    return MakeError(DiagnosticKind::InvalidOperation, "pl.create_l1(..., transpose=True) is not supported yet",
                     map_.SpanOf(bound->at("transpose")), "gather the rows untransposed and multiply with b_trans=True");
  auto shape = ParseExpr(bound->at("shape"));
  if (!shape) return shape;
  auto dtype = ParseArgValue(bound->at("dtype"));
  if (!dtype) return pypto::unexpected(dtype.error());
  const auto* attr = std::get_if<ir::OpAttr>(&*dtype);
  if (!attr || !std::holds_alternative<ir::DataType>(*attr))
    return MakeError(DiagnosticKind::Type, "the dtype of pl.create_l1 is a pl dtype such as pl.BF16",
                     map_.SpanOf(bound->at("dtype")));
  auto call = ir::OpRegistry::Get().CreateCall("tile.create", {*shape},
                                               {{"dtype", *attr}, {"target_memory", ir::OpAttr(ir::MemorySpace::Mat)}},
                                               span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

// `acc = pl.gather_row(acc, src, [r, c], [sr, sc], [1, n])`: the window of `src` at [sr, sc] loaded
// into Mat and written into `acc` at [r, c] (a load, then a tile.assemble in place).
ir::Result<ir::ExprPtr> FunctionParser::ParseGatherRow(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  auto bound = BindArguments(node, {"acc", "src", "dst_offset", "src_offset", "shapes", "transpose", "valid_shape"},
                             5, "pl.gather_row");
  if (!bound) return pypto::unexpected(bound.error());
  if (bound->contains("transpose") && !IsFalse(bound->at("transpose")))
    return MakeError(DiagnosticKind::InvalidOperation, "pl.gather_row(..., transpose=True) is not supported yet",
                     map_.SpanOf(bound->at("transpose")), "gather the rows untransposed and multiply with b_trans=True");
  std::vector<ir::ExprPtr> parsed;
  for (const char* key : {"acc", "src", "dst_offset", "src_offset", "shapes"}) {
    auto expr = ParseExpr(bound->at(key));
    if (!expr) return expr;
    parsed.push_back(*expr);
  }
  std::vector<ir::ExprPtr> load_args = {parsed[1], parsed[3], parsed[4]};
  if (bound->contains("valid_shape")) {
    auto valid = ParseExpr(bound->at("valid_shape"));
    if (!valid) return valid;
    load_args.push_back(*valid);
  }
  auto row = ir::OpRegistry::Get().CreateCall("tile.load", std::move(load_args),
                                              {{"target_memory", ir::OpAttr(ir::MemorySpace::Mat)}}, span);
  if (!row) return pypto::unexpected(row.error());
  auto written = ir::OpRegistry::Get().CreateCall("tile.assemble", {parsed[0], *row, parsed[2]}, {}, span);
  if (!written) return pypto::unexpected(written.error());
  return ir::ExprPtr(*written);
}

// `out = pl.expand_clone(x, y)` in a kernel: y filled with copies of x along the one dimension
// where x has extent 1 (in every other dimension the two agree). x is loaded whole and stored once
// per index of that dimension: a loop over all but the last index, then the store at the last one,
// which is the value (the stores update y in place).
ir::Result<ir::ExprPtr> FunctionParser::ParseExpandClone(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  if (kernel_depth_ == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     "pl.expand_clone outside a kernel (a tensor-to-tensor copy in orchestration) is not supported "
                     "yet",
                     span, "call it inside the pl.at scope or InCore function that writes the target");
  auto bound = BindArguments(node, {"input", "target"}, 2, "pl.expand_clone");
  if (!bound) return pypto::unexpected(bound.error());
  auto input = ParseExpr(bound->at("input"));
  if (!input) return input;
  auto target = ParseExpr(bound->at("target"));
  if (!target) return target;
  auto dim = ExpandedDim(**input, **target, span);
  if (!dim) return pypto::unexpected(dim.error());
  auto tile = LoadWhole(*input, span);
  if (!tile) return tile;
  const size_t rank = (*tile)->type()->As<ir::TileType>()->shape().size();
  auto zero = [&] { return std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span); };
  std::vector<ir::ExprPtr> offsets(rank);
  for (auto& offset : offsets) offset = zero();
  if (!*dim) {  // same shape: one copy
    auto store = ir::OpRegistry::Get().CreateCall("tile.store", {*tile, Tuple(offsets, span), *target}, {}, span);
    if (!store) return pypto::unexpected(store.error());
    return ir::ExprPtr(*store);
  }
  auto source = std::make_shared<ir::Var>("expand_clone_src", (*tile)->type(), span);
  prelude_.push_back(std::make_shared<ir::AssignStmt>(source, *tile, span));
  auto store_at = [&](const ir::ExprPtr& index) {
    offsets[**dim] = index;
    return ir::OpRegistry::Get().CreateCall("tile.store", {source, Tuple(offsets, span), *target}, {}, span);
  };
  const int64_t last = (*target)->type()->As<ir::TensorType>()->shape()[**dim] - 1;
  auto index = std::make_shared<ir::Var>("expand_clone_i", std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                         span);
  auto store = store_at(index);
  if (!store) return pypto::unexpected(store.error());
  auto stored = std::make_shared<ir::Var>("expand_clone_dst", (*store)->type(), span);
  prelude_.push_back(std::make_shared<ir::ForStmt>(
      index, zero(), std::make_shared<ir::ConstInt>(last, ir::DataType::INDEX, span),
      std::make_shared<ir::ConstInt>(1, ir::DataType::INDEX, span),
      Seq({std::make_shared<ir::AssignStmt>(stored, *store, span)}, span), ir::ForKind::Sequential, span));
  auto final_store = store_at(std::make_shared<ir::ConstInt>(last, ir::DataType::INDEX, span));
  if (!final_store) return pypto::unexpected(final_store.error());
  return ir::ExprPtr(*final_store);
}

// The dimension pl.expand_clone copies along (nullopt: the shapes agree): the only one where the
// input has extent 1 and the target more.
ir::Result<std::optional<size_t>> FunctionParser::ExpandedDim(const ir::Expr& input, const ir::Expr& target,
                                                              const ir::Span& span) {
  const auto* from = input.type()->As<ir::TensorType>();
  const auto* to = target.type()->As<ir::TensorType>();
  if (!from || !to)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("pl.expand_clone copies a tensor into a tensor, got {} and {}", input.type()->str(),
                                 target.type()->str()),
                     span);
  if (from->dtype() != to->dtype() || from->shape().size() != to->shape().size())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("pl.expand_clone needs an input of the target's dtype and rank, got {} and {}",
                                 from->str(), to->str()),
                     span);
  std::optional<size_t> dim;
  for (size_t i = 0; i < from->shape().size(); ++i) {
    if (from->shape()[i] == to->shape()[i]) continue;
    if (from->shape()[i] != 1)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("pl.expand_clone: dimension {} of the input is {}, neither 1 nor the target's {}",
                                   i, from->shape()[i], to->shape()[i]),
                       span);
    if (dim)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("pl.expand_clone copies along one dimension, but the input {} has extent 1 in "
                                   "dimensions {} and {} of the target {}",
                                   from->str(), *dim, i, to->str()),
                       span);
    dim = i;
  }
  return dim;
}

bool FunctionParser::IsFalse(py::handle node) {
  return IsNode(node, "Constant") && py::isinstance<py::bool_>(node.attr("value")) && !node.attr("value").cast<bool>();
}

// `pld.tensor.put(dst, peer, src[, dst_offsets, src_offsets, shape], atomic=...)` and
// `pld.tensor.get(dst, peer, src, ...)`: a copy between windows through a Vec staging tile. put
// loads the local src region and stores it into the peer's dst region (comm.remote_store, adding
// into it with atomic=pld.AtomicType.Add); get reads the peer's src region (comm.remote_load) and
// stores it into the local dst region. Without offsets and shape the whole tensors are copied.
// chunk_rows sets the rows staged at a time when the region is staged in chunks (ParseChunkedPut);
// chunk_cols and pipeline only shape the device's staging, so they are not kept.
ir::Result<ir::ExprPtr> FunctionParser::ParsePutGet(py::handle node, bool put) {
  const ir::Span span = map_.SpanOf(node);
  const std::string op = put ? "pld.tensor.put" : "pld.tensor.get";
  static const std::vector<std::string> kNames = {"dst", "peer", "src", "dst_offsets", "src_offsets", "shape"};
  std::map<std::string, py::handle> given;
  py::list args = node.attr("args");
  if (py::len(args) > kNames.size())
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes at most {} arguments, got {}", op, kNames.size(), py::len(args)), span);
  for (size_t i = 0; i < py::len(args); ++i) given[kNames[i]] = args[i];
  std::optional<py::handle> atomic, chunk_rows;
  for (auto keyword : node.attr("keywords")) {
    if (keyword.attr("arg").is_none())
      return MakeError(DiagnosticKind::Syntax, "**kwargs are not supported in op calls", map_.SpanOf(keyword));
    const auto key = keyword.attr("arg").cast<std::string>();
    if (key == "atomic") {
      atomic = keyword.attr("value");
    } else if (key == "chunk_rows") {
      chunk_rows = keyword.attr("value");
    } else if (key == "chunk_cols" || key == "pipeline") {
      continue;
    } else if (std::find(kNames.begin(), kNames.end(), key) == kNames.end()) {
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' has no argument '{}' (arguments: {}, atomic)", op, key, fmt::join(kNames, ", ")),
                       map_.SpanOf(keyword));
    } else if (!given.emplace(key, keyword.attr("value")).second) {
      return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' got argument '{}' twice", op, key),
                       map_.SpanOf(keyword));
    }
  }
  std::map<std::string, ir::ExprPtr> values;
  for (const auto& [key, arg] : given) {
    auto value = ParseExpr(arg);
    if (!value) return pypto::unexpected(value.error());
    values[key] = *value;
  }
  for (const char* key : {"dst", "peer", "src"})
    if (!values.contains(key))
      return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' is missing argument '{}'", op, key), span);
  const auto* dst = values["dst"]->type()->As<ir::TensorType>();
  const auto* src = values["src"]->type()->As<ir::TensorType>();
  if (!dst || !src)
    return MakeError(DiagnosticKind::Type, fmt::format("'{}' copies between tensors: dst and src must be tensors", op),
                     span);
  const size_t region_args = values.count("dst_offsets") + values.count("src_offsets") + values.count("shape");
  if (region_args != 0 && region_args != 3)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes dst_offsets, src_offsets and shape together, or none of them", op), span);
  if (region_args == 0) {
    if (dst->shape() != src->shape())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' of the whole tensors needs one shape, but dst is {} and src {}", op,
                                   dst->str(), src->str()),
                       span, "give dst_offsets, src_offsets and shape to copy a region");
    std::vector<ir::ExprPtr> zeros, extents;
    for (int64_t dim : src->shape()) {
      zeros.push_back(std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span));
      extents.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
    }
    values["dst_offsets"] = values["src_offsets"] = Tuple(zeros, span);
    values["shape"] = Tuple(extents, span);
  }
  ir::Call::Kwargs store_kwargs;
  if (atomic) {
    auto mode = AtomicKeyword(op, *atomic);
    if (!mode) return pypto::unexpected(mode.error());
    if (*mode && !put)
      return MakeError(DiagnosticKind::InvalidOperation, "pld.tensor.get has no atomic form; get then add locally",
                       map_.SpanOf(*atomic));
    if (*mode) store_kwargs.emplace_back("atomic", ir::OpAttr(std::string("add")));
  }
  std::optional<int64_t> chunk;
  if (chunk_rows) {
    auto rows = ParseExpr(*chunk_rows);
    if (!rows) return pypto::unexpected(rows.error());
    chunk = ir::AsConstInt(*rows);
  }
  if (put && StagedInChunks(values["shape"], chunk)) return ParseChunkedPut(values, chunk, std::move(store_kwargs), span);
  const auto& registry = ir::OpRegistry::Get();
  auto staged = put ? registry.CreateCall("tile.load", {values["src"], values["src_offsets"], values["shape"]}, {}, span)
                    : registry.CreateCall("comm.remote_load",
                                          {values["src"], values["peer"], values["src_offsets"], values["shape"]}, {},
                                          span);
  if (!staged) return WithOpName(op, staged.error());
  auto stored = put ? registry.CreateCall("comm.remote_store",
                                          {*staged, values["dst"], values["peer"], values["dst_offsets"]},
                                          std::move(store_kwargs), span)
                    : registry.CreateCall("tile.store", {*staged, values["dst_offsets"], values["dst"]}, {}, span);
  if (!stored) return WithOpName(op, stored.error());
  return ir::ExprPtr(*stored);
}

// Whether a put of region `shape` goes through the staging tile in chunks of rows: when its row count
// is known only at run time (`shape=[local_t, D]`), or exceeds `chunk_rows`; its other extents are
// constants.
bool FunctionParser::StagedInChunks(const ir::ExprPtr& shape, std::optional<int64_t> chunk) {
  const auto* extents = shape->As<ir::TupleLiteral>();
  if (!extents || extents->elements().empty()) return false;
  for (size_t d = 1; d < extents->elements().size(); ++d)
    if (!ir::AsConstInt(extents->elements()[d])) return false;
  const auto rows = ir::AsConstInt(extents->elements()[0]);
  return !rows || (chunk && *chunk > 0 && *rows > *chunk);
}

// pld.tensor.put of many rows, or of a number of rows known only at run time: staged through a Vec
// tile of `chunk` rows (chunk_rows=, else the most rows the two tensors can hold) as the device
// stages it, one load and remote store per chunk, the last one cut to the rows left. The first chunk
// is the value; the loop over the others goes before it (the chunks write disjoint rows).
ir::Result<ir::ExprPtr> FunctionParser::ParseChunkedPut(std::map<std::string, ir::ExprPtr>& values,
                                                        std::optional<int64_t> chunk, ir::Call::Kwargs store_kwargs,
                                                        const ir::Span& span) {
  const auto& extents = values["shape"]->As<ir::TupleLiteral>()->elements();
  const ir::ExprPtr rows = extents[0];
  const auto* src = values["src"]->type()->As<ir::TensorType>();
  const auto* dst = values["dst"]->type()->As<ir::TensorType>();
  if (!chunk || *chunk <= 0) chunk = std::min(src->shape()[0], dst->shape()[0]);
  auto index = [&](int64_t v) { return std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX, span); };
  auto as_index = [&](const ir::ExprPtr& e) -> ir::Result<ir::ExprPtr> {
    const auto* scalar = e->type()->As<ir::ScalarType>();
    if (scalar && scalar->dtype() == ir::DataType::INDEX) return e;
    auto cast = ir::OpRegistry::Get().CreateCall("scalar.cast", {e}, {{"target_type", ir::OpAttr(ir::DataType::INDEX)}}, span);
    if (!cast) return pypto::unexpected(cast.error());
    return ir::ExprPtr(*cast);
  };
  auto row_count = as_index(rows);
  if (!row_count) return WithOpName("pld.tensor.put", row_count.error());
  // One chunk starting `start` rows into the region.
  auto chunk_at = [&](const ir::ExprPtr& start) -> ir::Result<ir::ExprPtr> {
    auto left = ir::MakeBinary(ir::BinaryOp::Sub, *row_count, start, span);
    if (!left) return pypto::unexpected(left.error());
    auto valid_rows = ir::MakeBinary(ir::BinaryOp::Min, index(*chunk), *left, span);
    if (!valid_rows) return pypto::unexpected(valid_rows.error());
    auto shifted = [&](const ir::ExprPtr& offsets) -> ir::Result<ir::ExprPtr> {
      std::vector<ir::ExprPtr> moved = offsets->As<ir::TupleLiteral>()->elements();
      auto first = as_index(moved[0]);
      if (!first) return first;
      auto sum = ir::MakeBinary(ir::BinaryOp::Add, *first, start, span);
      if (!sum) return sum;
      moved[0] = *sum;
      return Tuple(moved, span);
    };
    auto src_offsets = shifted(values["src_offsets"]);
    if (!src_offsets) return src_offsets;
    auto dst_offsets = shifted(values["dst_offsets"]);
    if (!dst_offsets) return dst_offsets;
    std::vector<ir::ExprPtr> tile_shape = extents, valid = extents;
    tile_shape[0] = index(*chunk);
    valid[0] = *valid_rows;
    const auto& registry = ir::OpRegistry::Get();
    auto staged = registry.CreateCall("tile.load", {values["src"], *src_offsets, Tuple(tile_shape, span),
                                                    Tuple(valid, span)}, {}, span);
    if (!staged) return pypto::unexpected(staged.error());
    auto stored = registry.CreateCall("comm.remote_store", {*staged, values["dst"], values["peer"], *dst_offsets},
                                      store_kwargs, span);
    if (!stored) return pypto::unexpected(stored.error());
    return ir::ExprPtr(*stored);
  };
  auto loop_var = std::make_shared<ir::Var>("put_chunk_row", std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                            span);
  auto later = chunk_at(loop_var);
  if (!later) return WithOpName("pld.tensor.put", later.error());
  auto stored = std::make_shared<ir::Var>("put_chunk_dst", (*later)->type(), span);
  prelude_.push_back(std::make_shared<ir::ForStmt>(loop_var, index(*chunk), *row_count, index(*chunk),
                                                   Seq({std::make_shared<ir::AssignStmt>(stored, *later, span)}, span),
                                                   ir::ForKind::Sequential, span));
  auto first = chunk_at(index(0));
  if (!first) return WithOpName("pld.tensor.put", first.error());
  return first;
}

pypto::unexpected<ir::Diagnostic> FunctionParser::WithOpName(const std::string& op, ir::Diagnostic error) {
  error.message = fmt::format("{}: {}", op, error.message);
  return pypto::unexpected(std::move(error));
}

// `ctx = pld.get_comm_ctx(window)`: the window tensor itself stands for its communication context
// (the comm ops read the domain off the window they are given).
ir::Result<ir::ExprPtr> FunctionParser::ParseCommCtx(py::handle node) {
  return ParseSoleTensorArgument(node, "pld.get_comm_ctx takes one window tensor",
                                 "pld.get_comm_ctx takes a window tensor (a pld.DistributedTensor parameter)");
}

}  // namespace pypto::frontend
