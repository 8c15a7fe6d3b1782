// AutoTileMatmulL0: a matmul whose operands or result exceed the cube's L0 buffers is computed a
// block at a time. The operands stay whole in L1 (Mat); for each [m, n] block of the result, the
// K extent is walked in steps of k, each step extracting an [m, k] window of the left operand into
// L0A and a [k, n] window of the right operand into L0B (TEXTRACT) and accumulating into an [m, n]
// block of L0C; the finished block is stored where the whole result was stored. So
//
//   a_l = tile.move(a, Left); b_r = tile.move(b, Right); c = tile.matmul(a_l, b_r)
//   tile.store(c, [r, s], out)
//
// becomes (loops over a single block are left out)
//
//   for c_mi in range(0, M, m):
//     for c_ni in range(0, N, n):
//       c = tile.matmul(tile.extract(a, c_mi, 0, [m, k], Left), tile.extract(b, 0, c_ni, [k, n], Right))
//       for c_ki in range(k, K, k) carrying c:
//         c = tile.matmul_acc(c, tile.extract(a, c_mi, c_ki, ...), tile.extract(b, c_ki, c_ni, ...))
//       tile.store(c, [r + c_mi, s + c_ni], out)
//
// A product that feeds another matmul (narrowed by a cast, the FIXPIPE's job, then moved into Mat)
// is built the same way block by block, each block cast and assembled (TINSERT) into a Mat tile
// carried through the M and N loops, which the second matmul then reads (and is tiled in turn).
//
// A tile.matmul_bias is tiled the same way: the first K step of each block is a matmul_bias adding
// the block's columns of the bias row, the others matmul_acc, so the bias is added once. A block
// narrower than the product loads its [1, n] window of the row from global memory into Mat and
// moves it into Bias (only 1 KB on Ascend910B); a bias row that cannot be re-loaded keeps n = N.
//
// A product read any other way (yielded out of a branch, added to by a later matmul_acc), and every
// tile.matmul_acc, whose accumulator is whole, keeps its [M, N] shape: only K is split, the loop's
// result taking the product's place. That is how a K loop written in the kernel, whose first step
// is a matmul and whose others are matmul_acc, has each of its steps split further. Such a loop
// whose accumulator exceeds L0C is first run once per block of it (SplitOversizedAccumulatorChains),
// its matmuls reading tile.extract windows of their Mat operands, which are split along K here.
//
// An operand given transposed keeps its layout: a left operand read with a_trans=True is a [K, M]
// tile, so its K windows are row windows [k, m] at (ki, mi); a right operand read with b_trans=True
// is [N, K], its windows [n, k] at (ni, ki). Each block's matmul reads its windows with the same
// flags.
//
// A matrix may carry leading extents of 1 ([1, M, K]); they stay 1 in every window and block. A
// batched matmul too large for L0 is first split into one matmul per batch
// (SplitOversizedBatchMatmuls), each of which is then tiled as above.
//
// Blocks take at most half of each L0 buffer, leaving the other half to the next block (the
// hardware's ping-pong). Their edges are whole extents or multiples of 16 dividing them, so no block
// is partial. A product that keeps its shape and does not fit L0C, or that no such block fits, is
// left alone, and AllocateMemoryAddr reports it.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

#include "index_exprs.h"
#include "matmul_blocks.h"
#include "sequence_rewriter.h"
#include "split_accumulator_chains.h"
#include "split_matmul_batches.h"
#include "stmt_patterns.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// The block a matmul [M, K] x [K, N] is computed in, or the whole of it.
struct BlockShape {
  int64_t m, n, k;
};

// A matmul's extents and the bytes of an element of each operand and of the accumulator.
struct Product {
  BlockShape whole;  // {M, N, K}
  int64_t a_bytes, b_bytes, c_bytes;
  // A product narrowed for another matmul has its narrowed copy in L0C too (the cast's result).
  int64_t cast_bytes = 0;
};

// The block for `product`, or nullopt when the whole matmul fits (or no block of 16-multiples
// does). A `whole_result` keeps its [M, N] (only K is split), so it must fit L0C itself. A block
// has at most `max_n` columns: the bias row a biased matmul adds lives in the small Bias buffer.
std::optional<BlockShape> ChooseBlock(const Product& product, bool whole_result, int64_t max_n, const SocSpec& soc) {
  const auto [M, N, K] = product.whole;
  const int64_t a_bytes = product.a_bytes, b_bytes = product.b_bytes, c_bytes = product.c_bytes;
  const int64_t l0a = soc.capacity(MemorySpace::Left), l0b = soc.capacity(MemorySpace::Right);
  const int64_t l0c = soc.capacity(MemorySpace::Acc);
  if (M * K * a_bytes <= l0a && K * N * b_bytes <= l0b && M * N * (c_bytes + product.cast_bytes) <= l0c &&
      N <= max_n)
    return std::nullopt;
  // The longest K step an [m, n] block's windows leave room for.
  auto k_step = [&](const ResultBlock& block) -> std::optional<int64_t> {
    for (int64_t k : BlockExtents(K))
      if (block.m * k * a_bytes <= l0a / 2 && k * block.n * b_bytes <= l0b / 2) return k;
    return std::nullopt;
  };
  ResultBlock result{M, N};
  if (whole_result) {
    if (M * N * c_bytes > l0c || N > max_n) return std::nullopt;
  } else {
    auto block = ChooseResultBlock(M, N, c_bytes, l0c / 2, max_n,
                                   [&](const ResultBlock& block) { return k_step(block).has_value(); });
    if (!block) return std::nullopt;
    result = *block;
  }
  const auto k = k_step(result);
  if (!k) return std::nullopt;
  return BlockShape{result.m, result.n, *k};
}

// Whether `tile` is one matrix: 2-D, or of higher rank with every leading extent 1 (a [1, M, K]
// batch of one, as a batched matmul split per batch leaves it).
bool IsMatrix(const TileType& tile) {
  const auto& shape = tile.shape();
  return shape.size() >= 2 && std::all_of(shape.begin(), shape.end() - 2, [](int64_t extent) { return extent == 1; });
}

// Extent `dim` (0: rows, 1: columns) of a matrix tile.
int64_t MatrixDim(const TileType& tile, size_t dim) { return tile.shape()[tile.shape().size() - 2 + dim]; }

// A product that stays on chip for another matmul: cast (FIXPIPE) and moved whole into Mat.
struct MatScratch {
  size_t cast, move;    // statement indices
  Call::Kwargs cast_kwargs;
  VarPtr mat;           // the product in Mat: the scratch the blocks are assembled into
};

// The move of a whole Mat tile into L0A or L0B that feeds a matmul, or the extract of a window of
// one that SplitOversizedAccumulatorChains made (a window the kernel extracted itself stays as it
// is): the window is then at (row, col).
struct FeedingMove {
  size_t index;       // statement index
  VarPtr mat;         // the Mat tile moved
  const Var* l0;      // the moved tile the matmul reads
  bool last_read;     // the matmul is the moved tile's only remaining reader: the move goes with it
  ExprPtr row, col;   // where in `mat` the operand starts
};

// The [1, N] row a tile.matmul_bias adds, in Bias. When it was moved there from a Mat tile loaded
// from global memory, read by nothing else, a block of fewer columns loads its own window of it
// instead (the Bias buffer is small: 1 KB on Ascend910B, 256 FP32 columns).
struct BiasRow {
  VarPtr row;                  // what the matmul reads
  std::optional<size_t> move;  // `row = tile.move(mat, Bias)`, when windows of the row can be loaded
  std::optional<size_t> load;  // `mat = tile.load(tensor, offsets, [1, N], target_memory=Mat)`
  const Call* load_call = nullptr;
};

// A matmul found in a statement sequence, with the moves that fed it and what reads its result:
// stores of it to global memory, a cast into a Mat scratch, or anything else (then it is computed
// whole, in place).
struct TiledMatmul {
  FeedingMove lhs, rhs;
  size_t matmul;                      // statement index
  std::vector<size_t> stores;         // ascending
  std::optional<MatScratch> scratch;  // instead of stores
  VarPtr result;
  VarPtr acc;                         // tile.matmul_acc's accumulator
  ExprPtr init_cond;                  // ... and its init_cond, which the first K step takes
  std::optional<BiasRow> bias;        // tile.matmul_bias's, which the first K step of each block adds
  Call::Kwargs kwargs;                // the matmul's (out_dtype, a_trans, b_trans)
  bool a_trans, b_trans;
  BlockShape whole, block;

  // Neither stored nor cast into Mat: the K loop's result replaces the product where it was.
  bool in_place() const { return stores.empty() && !scratch; }
  // Where the loop nest goes: after every statement it replaces reads its inputs.
  size_t anchor() const { return scratch ? scratch->move : in_place() ? matmul : stores.front(); }
  // A block narrower than the product adds a window of the bias row, loaded for it.
  bool windows_bias() const { return bias && bias->move && block.n < whole.n; }
  bool Replaces(size_t index) const {
    const bool stored = std::ranges::find(stores, index) != stores.end();
    return (index == lhs.index && lhs.last_read) || (index == rhs.index && rhs.last_read) || index == matmul ||
           stored || (scratch && (index == scratch->cast || index == scratch->move)) ||
           (windows_bias() && (index == bias->move || index == bias->load));
  }
};

// Builds the loop nest that replaces one tiled matmul and its stores.
class BlockNestBuilder {
 public:
  BlockNestBuilder(const TiledMatmul& plan, const std::vector<StmtPtr>& stmts)
      : plan_(plan), stmts_(stmts), span_(stmts[plan.matmul]->span()), name_(plan.result->name_hint()) {}

  Result<StmtPtr> Build() {
    if (plan_.scratch) return BuildIntoScratch();
    if (plan_.in_place()) return BuildInPlace();
    return Loop("mi", M(), plan_.block.m, [&](const ExprPtr& mi) {
      return Loop("ni", N(), plan_.block.n, [&](const ExprPtr& ni) { return StoredBlock(mi, ni); });
    });
  }

 private:
  int64_t M() const { return plan_.whole.m; }
  int64_t N() const { return plan_.whole.n; }
  int64_t K() const { return plan_.whole.k; }

  // The whole product, its K steps ending in the product's own variable. A product that keeps its
  // shape is only planned when it exceeds L0A or L0B, so k < K and the K loop is there to end in it.
  Result<StmtPtr> BuildInPlace() {
    std::vector<StmtPtr> body;
    auto acc = Block(IndexConst(0, span_), IndexConst(0, span_), body, plan_.result);
    if (!acc) return pypto::unexpected(acc.error());
    return StmtPtr(std::make_shared<SeqStmts>(std::move(body), span_));
  }

  // The blocks cast and assembled into a fresh Mat tile, carried through the M and N loops (kept even
  // when they run once, so that the product's Mat variable is the outer loop's result).
  Result<StmtPtr> BuildIntoScratch() {
    const MatScratch& scratch = *plan_.scratch;
    const auto& mat_type = *scratch.mat->type()->As<TileType>();
    auto create = OpRegistry::Get().CreateCall(
        "tile.create", {IndexTuple(mat_type.shape(), span_)},
        {{"dtype", mat_type.dtype()}, {"target_memory", MemorySpace::Mat}}, span_);
    if (!create) return pypto::unexpected(create.error());
    auto empty = std::make_shared<Var>(scratch.mat->name_hint(), (*create)->type(), span_);
    auto row_blocks = [&](const ExprPtr& mi, const VarPtr& rows_in, std::vector<StmtPtr>& body) -> Result<VarPtr> {
      auto cols = CarriedLoop("ni", 0, N(), plan_.block.n, rows_in, nullptr,
                              [&](const ExprPtr& ni, const VarPtr& cols_in, std::vector<StmtPtr>& inner) {
                                return AssembledBlock(mi, ni, cols_in, inner);
                              });
      if (!cols) return pypto::unexpected(cols.error());
      body.push_back(cols->first);
      return cols->second;
    };
    auto rows = CarriedLoop("mi", 0, M(), plan_.block.m, empty, scratch.mat, row_blocks);
    if (!rows) return pypto::unexpected(rows.error());
    return StmtPtr(std::make_shared<SeqStmts>(
        std::vector<StmtPtr>{std::make_shared<AssignStmt>(empty, *create, span_), rows->first}, span_));
  }

  using CarriedBodyFn = std::function<Result<VarPtr>(const ExprPtr&, const VarPtr&, std::vector<StmtPtr>&)>;

  // `for <name>_<suffix>, (carried,) in range(start, stop, step, init_values=(init,))`, whose body
  // gives the next value; the loop's result is `result` (a fresh variable when null).
  Result<std::pair<StmtPtr, VarPtr>> CarriedLoop(const std::string& suffix, int64_t start, int64_t stop, int64_t step,
                                                 const VarPtr& init, VarPtr result, const CarriedBodyFn& body_fn) {
    auto var = std::make_shared<Var>(fmt::format("{}_{}", name_, suffix), std::make_shared<ScalarType>(DataType::INDEX),
                                     span_);
    auto carried = std::make_shared<Var>(init->name_hint(), init->type(), span_);
    std::vector<StmtPtr> body;
    auto next = body_fn(var, carried, body);
    if (!next) return pypto::unexpected(next.error());
    body.push_back(std::make_shared<YieldStmt>(std::vector<ExprPtr>{*next}, span_));
    if (!result) result = std::make_shared<Var>(init->name_hint(), init->type(), span_);
    auto loop = std::make_shared<ForStmt>(var, IndexConst(start, span_), IndexConst(stop, span_),
                                          IndexConst(step, span_), std::vector<IterArg>{IterArg{carried, init}},
                                          std::make_shared<SeqStmts>(std::move(body), span_),
                                          std::vector<VarPtr>{result}, ForKind::Sequential, span_);
    return std::pair<StmtPtr, VarPtr>(loop, result);
  }

  // One block cast as the product was and written into the scratch at (mi, ni); returns the scratch.
  Result<VarPtr> AssembledBlock(const ExprPtr& mi, const ExprPtr& ni, const VarPtr& into, std::vector<StmtPtr>& body) {
    auto acc = Block(mi, ni, body);
    if (!acc) return acc;
    auto cast = OpRegistry::Get().CreateCall("tile.cast", {*acc}, plan_.scratch->cast_kwargs, span_);
    if (!cast) return pypto::unexpected(cast.error());
    auto narrowed = std::make_shared<Var>(fmt::format("{}_cast", name_), (*cast)->type(), span_);
    body.push_back(std::make_shared<AssignStmt>(narrowed, *cast, span_));
    // Leading extents of 1 are at 0.
    std::vector<ExprPtr> offsets(into->type()->As<TileType>()->shape().size() - 2, IndexConst(0, span_));
    offsets.push_back(mi);
    offsets.push_back(ni);
    auto origin = std::make_shared<TupleLiteral>(std::move(offsets), span_);
    auto assemble = OpRegistry::Get().CreateCall("tile.assemble", {into, narrowed, origin}, {}, span_);
    if (!assemble) return pypto::unexpected(assemble.error());
    auto next = std::make_shared<Var>(into->name_hint(), (*assemble)->type(), span_);
    body.push_back(std::make_shared<AssignStmt>(next, *assemble, span_));
    return VarPtr(next);
  }

  using BodyFn = std::function<Result<StmtPtr>(const ExprPtr&)>;

  // `for <name>_<suffix> in range(0, extent, step)`, or the body at 0 when one step covers it.
  Result<StmtPtr> Loop(const std::string& suffix, int64_t extent, int64_t step, const BodyFn& body) {
    if (extent == step) return body(IndexConst(0, span_));
    auto var = std::make_shared<Var>(fmt::format("{}_{}", name_, suffix), std::make_shared<ScalarType>(DataType::INDEX),
                                     span_);
    auto inner = body(var);
    if (!inner) return inner;
    return StmtPtr(std::make_shared<ForStmt>(var, IndexConst(0, span_), IndexConst(extent, span_),
                                             IndexConst(step, span_), *inner, ForKind::Sequential, span_));
  }

  // One [m, n] block at (mi, ni), then the stores of it.
  Result<StmtPtr> StoredBlock(const ExprPtr& mi, const ExprPtr& ni) {
    std::vector<StmtPtr> body;
    auto acc = Block(mi, ni, body);
    if (!acc) return pypto::unexpected(acc.error());
    for (size_t index : plan_.stores) {
      auto store = passes::BlockStore(*stmts_[index]->As<EvalStmt>()->expr()->As<Call>(), *acc, mi, ni);
      if (!store) return store;
      body.push_back(*store);
    }
    return StmtPtr(std::make_shared<SeqStmts>(std::move(body), span_));
  }

  // One [m, n] block at (mi, ni) into `body`: the first K step (added to tile.matmul_acc's
  // accumulator), the loop over the others, whose result is `result` when given. Returns the
  // block's accumulator.
  Result<VarPtr> Block(const ExprPtr& mi, const ExprPtr& ni, std::vector<StmtPtr>& body,
                       const VarPtr& result = nullptr) {
    VarPtr bias = plan_.bias ? plan_.bias->row : nullptr;
    if (plan_.windows_bias()) {
      auto window = BiasWindow(ni, body);
      if (!window) return window;
      bias = *window;
    }
    auto first = Step(mi, ni, IndexConst(0, span_), plan_.acc, body, plan_.init_cond, bias);
    if (!first) return first;
    VarPtr acc = *first;
    if (K() > plan_.block.k) {
      // The other k-steps, carrying the block's accumulator.
      auto loop = CarriedLoop("ki", plan_.block.k, K(), plan_.block.k, acc, result,
                              [&](const ExprPtr& ki, const VarPtr& carried, std::vector<StmtPtr>& steps) {
                                return Step(mi, ni, ki, carried, steps);
                              });
      if (!loop) return pypto::unexpected(loop.error());
      body.push_back(loop->first);
      acc = loop->second;
    }
    return acc;
  }

  // The bias row's columns [ni, ni + n) for one block: loaded from where the whole row was, into
  // Mat, and moved into Bias.
  Result<VarPtr> BiasWindow(const ExprPtr& ni, std::vector<StmtPtr>& out) {
    const Call& load = *plan_.bias->load_call;
    const auto& origin = load.args()[1]->As<TupleLiteral>()->elements();
    std::vector<ExprPtr> offsets(origin.begin(), origin.end());
    auto col = Plus(offsets.back(), ni, span_);
    if (!col) return pypto::unexpected(col.error());
    offsets.back() = *col;
    const auto& extents = load.args()[2]->As<TupleLiteral>()->elements();
    std::vector<ExprPtr> shape(extents.begin(), extents.end());
    shape.back() = IndexConst(plan_.block.n, span_);
    auto window = OpRegistry::Get().CreateCall(
        "tile.load",
        {load.args()[0], std::make_shared<TupleLiteral>(std::move(offsets), span_),
         std::make_shared<TupleLiteral>(std::move(shape), span_)},
        load.kwargs(), span_);
    if (!window) return pypto::unexpected(window.error());
    const auto& mat = stmts_[*plan_.bias->load]->As<AssignStmt>()->var();
    auto window_var = std::make_shared<Var>(mat->name_hint(), (*window)->type(), span_);
    out.push_back(std::make_shared<AssignStmt>(window_var, *window, span_));
    auto move = OpRegistry::Get().CreateCall("tile.move", {window_var}, {{"target_memory", MemorySpace::Bias}}, span_);
    if (!move) return pypto::unexpected(move.error());
    auto row = std::make_shared<Var>(plan_.bias->row->name_hint(), (*move)->type(), span_);
    out.push_back(std::make_shared<AssignStmt>(row, *move, span_));
    return VarPtr(row);
  }

  // One K step: the two L0 windows and the matmul (into a fresh block, plus `bias` when given, or
  // added to `acc`, which `init_cond` overwrites instead where it holds), reading them transposed as
  // the whole matmul read its operands.
  Result<VarPtr> Step(const ExprPtr& mi, const ExprPtr& ni, const ExprPtr& ki, const VarPtr& acc,
                      std::vector<StmtPtr>& out, const ExprPtr& init_cond = nullptr, const VarPtr& bias = nullptr) {
    const BlockShape& b = plan_.block;
    auto lhs = plan_.a_trans ? Extract(plan_.lhs, ki, mi, {b.k, b.m}, MemorySpace::Left, out)
                             : Extract(plan_.lhs, mi, ki, {b.m, b.k}, MemorySpace::Left, out);
    if (!lhs) return lhs;
    auto rhs = plan_.b_trans ? Extract(plan_.rhs, ni, ki, {b.n, b.k}, MemorySpace::Right, out)
                             : Extract(plan_.rhs, ki, ni, {b.k, b.n}, MemorySpace::Right, out);
    if (!rhs) return rhs;
    std::vector<ExprPtr> acc_args = {acc, *lhs, *rhs};
    if (init_cond) acc_args.push_back(init_cond);
    auto call = acc    ? OpRegistry::Get().CreateCall("tile.matmul_acc", std::move(acc_args), TransposeFlags(), span_)
                : bias ? OpRegistry::Get().CreateCall("tile.matmul_bias", {*lhs, *rhs, bias}, plan_.kwargs, span_)
                       : OpRegistry::Get().CreateCall("tile.matmul", {*lhs, *rhs}, plan_.kwargs, span_);
    if (!call) return pypto::unexpected(call.error());
    auto var = std::make_shared<Var>(name_, (*call)->type(), span_);
    out.push_back(std::make_shared<AssignStmt>(var, *call, span_));
    return VarPtr(var);
  }

  // The matmul's a_trans / b_trans, which tile.matmul_acc takes too (out_dtype it does not).
  Call::Kwargs TransposeFlags() const {
    Call::Kwargs flags;
    for (const auto& [key, value] : plan_.kwargs)
      if (key == "a_trans" || key == "b_trans") flags.emplace_back(key, value);
    return flags;
  }

  // The window at (row, col) of the operand `feed` reads, from the Mat tile it lies in.
  Result<VarPtr> Extract(const FeedingMove& feed, const ExprPtr& row, const ExprPtr& col,
                         const std::vector<int64_t>& shape, MemorySpace space, std::vector<StmtPtr>& out) {
    const VarPtr& source = feed.mat;
    auto at_row = Plus(feed.row, row, span_);
    if (!at_row) return pypto::unexpected(at_row.error());
    auto at_col = Plus(feed.col, col, span_);
    if (!at_col) return pypto::unexpected(at_col.error());
    Call::Kwargs kwargs{{"target_memory", space}};
    auto call = OpRegistry::Get().CreateCall("tile.extract", {source, *at_row, *at_col, IndexTuple(shape, span_)},
                                             std::move(kwargs), span_);
    if (!call) return pypto::unexpected(call.error());
    const char* buffer = space == MemorySpace::Left ? "l0a" : "l0b";
    auto var = std::make_shared<Var>(fmt::format("{}_{}", source->name_hint(), buffer), (*call)->type(), span_);
    out.push_back(std::make_shared<AssignStmt>(var, *call, span_));
    return VarPtr(var);
  }

  const TiledMatmul& plan_;
  const std::vector<StmtPtr>& stmts_;
  Span span_;
  std::string name_;
};

class MatmulTiler final : public SequenceRewriter {
 public:
  MatmulTiler(const SocSpec& soc, std::unordered_map<const Var*, int> reads, std::unordered_set<const Var*> windows)
      : soc_(soc), reads_(std::move(reads)), windows_(std::move(windows)) {}

 protected:
  bool RewriteSequence(std::vector<StmtPtr>& stmts) override {
    bool changed = false;
    while (auto plan = FirstPlan(stmts)) {
      auto nest = BlockNestBuilder(*plan, stmts).Build();
      if (!nest) {
        error = nest.error();
        return false;
      }
      // The nest takes the anchor's place; the statements it replaces go.
      std::vector<StmtPtr> rewritten;
      for (size_t j = 0; j < stmts.size(); ++j) {
        if (j == plan->anchor()) {
          // Spliced, not nested: later passes look for loops among a sequence's own statements.
          if (const auto* block = (*nest)->As<SeqStmts>())
            rewritten.insert(rewritten.end(), block->stmts().begin(), block->stmts().end());
          else
            rewritten.push_back(*nest);
        }
        if (!plan->Replaces(j)) rewritten.push_back(stmts[j]);
      }
      // The nest reads the Mat tiles, not the moved ones: a move read by another matmul stays for it.
      --reads_[plan->lhs.l0];
      --reads_[plan->rhs.l0];
      stmts = std::move(rewritten);
      changed = true;
    }
    return changed;
  }

 private:
  // The move of a whole Mat tile into L0A or L0B defining `var` in `stmts` before statement `before`.
  // Rows or columns of the Mat tile beyond its valid shape are read as the whole matmul reads them,
  // but not along `k_dim`: the window sums would take them in.
  std::optional<FeedingMove> FindFeedingMove(const std::vector<StmtPtr>& stmts, const Var& var, size_t before,
                                             size_t k_dim) const {
    for (size_t j = 0; j < before; ++j) {
      const auto* assign = stmts[j]->As<AssignStmt>();
      if (!assign || assign->var().get() != &var) continue;
      const Call* extract = windows_.contains(&var) ? OpCallOf(stmts[j], "tile.extract") : nullptr;
      const Call* move = extract ? extract : OpCallOf(stmts[j], "tile.move");
      const auto source = move ? std::dynamic_pointer_cast<const Var>(move->args()[0]) : nullptr;
      const auto* tile = source ? source->type()->As<TileType>() : nullptr;
      if (!tile || tile->memory_space() != MemorySpace::Mat || !IsMatrix(*tile)) return std::nullopt;
      const size_t k_axis = tile->shape().size() - 2 + k_dim;
      if (tile->has_partial_valid_shape() && AsConstInt(tile->valid_shape()[k_axis]) != tile->shape()[k_axis])
        return std::nullopt;
      const ExprPtr zero = IndexConst(0, stmts[j]->span());
      return FeedingMove{j, source, &var, ReadsOf(var) == 1, extract ? extract->args()[1] : zero,
                         extract ? extract->args()[2] : zero};
    }
    return std::nullopt;
  }

  std::optional<TiledMatmul> FirstPlan(const std::vector<StmtPtr>& stmts) const {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (auto plan = Plan(stmts, i)) return plan;
    return std::nullopt;
  }

  // Statement `i` as a matmul (or matmul_acc) to tile: fed by moves of whole Mat tiles.
  std::optional<TiledMatmul> Plan(const std::vector<StmtPtr>& stmts, size_t i) const {
    const auto* assign = stmts[i]->As<AssignStmt>();
    const Call* call = OpCallOf(stmts[i], "tile.matmul");
    const Call* biased = call ? nullptr : OpCallOf(stmts[i], "tile.matmul_bias");
    if (biased) call = biased;
    const bool accumulates = !call;
    if (accumulates) call = OpCallOf(stmts[i], "tile.matmul_acc");
    if (!call || !assign) return std::nullopt;
    const size_t first = accumulates ? 1 : 0;
    const auto* lhs = call->args()[first]->As<Var>();
    const auto* rhs = call->args()[first + 1]->As<Var>();
    const auto acc = accumulates ? std::dynamic_pointer_cast<const Var>(call->args()[0]) : nullptr;
    if (!lhs || !rhs || (accumulates && !acc)) return std::nullopt;
    // A transposed left operand is [K, M], a transposed right one [N, K].
    const bool a_trans = FindAttr<bool>(call->kwargs(), "a_trans").value_or(false);
    const bool b_trans = FindAttr<bool>(call->kwargs(), "b_trans").value_or(false);
    auto lhs_move = FindFeedingMove(stmts, *lhs, i, a_trans ? 0 : 1);
    auto rhs_move = FindFeedingMove(stmts, *rhs, i, b_trans ? 1 : 0);
    if (!lhs_move || !rhs_move) return std::nullopt;
    // The operands as the matmul reads them: a whole Mat tile, or a window of one.
    const auto& lhs_type = *lhs->type()->As<TileType>();
    const auto& rhs_type = *rhs->type()->As<TileType>();
    if (!IsMatrix(lhs_type) || !IsMatrix(rhs_type)) return std::nullopt;
    const auto& result_type = *assign->var()->type()->As<TileType>();
    Product product{
        .whole = {.m = MatrixDim(lhs_type, a_trans ? 1 : 0),
                  .n = MatrixDim(rhs_type, b_trans ? 0 : 1),
                  .k = MatrixDim(lhs_type, a_trans ? 0 : 1)},
        .a_bytes = DataTypeBytes(lhs_type.dtype()),
        .b_bytes = DataTypeBytes(rhs_type.dtype()),
        .c_bytes = DataTypeBytes(result_type.dtype())};
    TiledMatmul plan{.lhs = *lhs_move,
                     .rhs = *rhs_move,
                     .matmul = i,
                     .result = assign->var(),
                     .acc = acc,
                     .init_cond = accumulates && call->args().size() > 3 ? call->args()[3] : nullptr,
                     .kwargs = call->kwargs(),
                     .a_trans = a_trans,
                     .b_trans = b_trans,
                     .whole = product.whole,
                     .block = product.whole};
    // A fresh product read only by stores, or only by a cast into Mat, is built block by block;
    // tile.matmul_acc's accumulator, and a product read any other way, stay whole.
    if (!accumulates) FindBlockReaders(stmts, plan);
    if (plan.scratch) {
      const auto& narrowed = *stmts[plan.scratch->cast]->As<AssignStmt>()->var()->type()->As<TileType>();
      product.cast_bytes = DataTypeBytes(narrowed.dtype());
    }
    int64_t max_n = product.whole.n;
    if (biased) {
      const auto bias = std::dynamic_pointer_cast<const Var>(call->args()[2]);
      if (!bias) return std::nullopt;
      plan.bias = FindBiasRow(stmts, bias, i);
      if (plan.bias->move) max_n = soc_.capacity(MemorySpace::Bias) / product.c_bytes;
    }
    auto block = ChooseBlock(product, plan.in_place(), max_n, soc_);
    if (!block) return std::nullopt;
    plan.block = *block;
    return plan;
  }

  // The bias row `row` read by the matmul at statement `i`, with the move and load that brought it
  // from global memory when windows of it can be loaded instead (nothing else reads them).
  BiasRow FindBiasRow(const std::vector<StmtPtr>& stmts, const VarPtr& row, size_t i) const {
    BiasRow bias{.row = row};
    if (ReadsOf(*row) != 1) return bias;
    for (size_t j = 0; j < i; ++j) {
      const auto* assign = stmts[j]->As<AssignStmt>();
      const Call* move = OpCallOf(stmts[j], "tile.move");
      if (!assign || assign->var() != row || !move) continue;
      const auto* mat = move->args()[0]->As<Var>();
      if (!mat || ReadsOf(*mat) != 1) return bias;
      for (size_t l = 0; l < j; ++l) {
        const auto* def = stmts[l]->As<AssignStmt>();
        const Call* load = OpCallOf(stmts[l], "tile.load");
        if (!def || def->var().get() != mat || !load) continue;
        // A load with a valid shape of its own keeps its row whole.
        if (load->args().size() != 3 || !load->args()[1]->Is<TupleLiteral>() || !load->args()[2]->Is<TupleLiteral>())
          return bias;
        bias.move = j;
        bias.load = l;
        bias.load_call = load;
      }
      return bias;
    }
    return bias;
  }

  // The stores of the product at statement `plan.matmul` (every read of it), or else its cast into a
  // Mat scratch (its one read).
  void FindBlockReaders(const std::vector<StmtPtr>& stmts, TiledMatmul& plan) const {
    const Var& product = *plan.result;
    for (size_t j = plan.matmul + 1; j < stmts.size(); ++j) {
      const Call* store = OpCallOf(stmts[j], "tile.store");
      if (store && stmts[j]->Is<EvalStmt>() && store->args()[0].get() == &product && store->args().size() == 3)
        plan.stores.push_back(j);
    }
    if (!plan.stores.empty() && ReadsOf(product) == plan.stores.size()) return;
    plan.stores.clear();
    if (ReadsOf(product) == 1) plan.scratch = CastIntoMat(stmts, plan.matmul, product);
  }

  size_t ReadsOf(const Var& var) const {
    const auto reads = reads_.find(&var);
    return reads == reads_.end() ? 0 : static_cast<size_t>(reads->second);
  }

  // `narrow = tile.cast(product, ...)` read only by `mat = tile.move(narrow, target_memory=Mat)`, after
  // statement `i`: the product goes on chip to another matmul (InferTileMemorySpace's Acc -> Mat path).
  std::optional<MatScratch> CastIntoMat(const std::vector<StmtPtr>& stmts, size_t i, const Var& product) const {
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      const Call* cast = OpCallOf(stmts[j], "tile.cast");
      if (!cast || cast->args()[0].get() != &product) continue;
      const VarPtr& narrow = stmts[j]->As<AssignStmt>()->var();
      if (ReadsOf(*narrow) != 1) return std::nullopt;
      for (size_t k = j + 1; k < stmts.size(); ++k) {
        const Call* move = OpCallOf(stmts[k], "tile.move");
        if (!move || move->args()[0].get() != narrow.get()) continue;
        const VarPtr& mat = stmts[k]->As<AssignStmt>()->var();
        if (mat->type()->As<TileType>()->memory_space() != MemorySpace::Mat) return std::nullopt;
        return MatScratch{j, k, cast->kwargs(), mat};
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  const SocSpec& soc_;
  // How many times each variable is still read: a tiled matmul no longer reads its moved operands.
  std::unordered_map<const Var*, int> reads_;
  // Operand windows SplitOversizedAccumulatorChains extracted, which may be cut further.
  std::unordered_set<const Var*> windows_;
};

// The matmuls, moves, loads and stores this pass (and the splits it runs first) rewrite are read by
// position, so every op call must have the arguments its op takes: a call built by hand with too
// few is reported here, as OpRegistry::CreateCall would have, instead of being read past its end.
Result<bool> CheckOpCallArities(const StmtPtr& body) {
  struct Checker final : IRVisitor {
    std::optional<Diagnostic> error;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      if (error) return;
      if (auto arity = CheckArity(*call); !arity) {
        error = arity.error();
        return;
      }
      IRVisitor::VisitCall(call);
    }
  } checker;
  checker.VisitStmt(body);
  if (checker.error) return pypto::unexpected(*checker.error);
  return true;
}

Result<FunctionPtr> TileKernelMatmuls(const FunctionPtr& function, const SocSpec& soc) {
  if (!IsKernel(function->type()) || !function->body()) return function;
  if (auto arities = CheckOpCallArities(function->body()); !arities) return pypto::unexpected(arities.error());
  auto batches = SplitOversizedBatchMatmuls(function->body(), soc);
  if (!batches) return pypto::unexpected(batches.error());
  auto split = SplitOversizedAccumulatorChains(*batches, soc);
  if (!split) return pypto::unexpected(split.error());
  MatmulTiler tiler(soc, ReadCounts(split->body), std::move(split->windows));
  StmtPtr body = tiler.MutateStmt(split->body);
  if (tiler.error) return pypto::unexpected(*tiler.error);
  return body == function->body() ? function : function->WithBody(body);
}

}  // namespace

Pass AutoTileMatmulL0() {
  // TileOps2D: a batched matmul FlattenTileNdTo2D could not expand (its kernel kept N-d tiles) is
  // split here into one batch at a time, whose [1, M, K] tiles would have a 2-D form.
  return Pass("AutoTileMatmulL0", {IRProperty::TileMemoryInferred}, {}, {IRProperty::TileOps2D},
              [](const ProgramPtr& program, const PassContext& context) -> Result<ProgramPtr> {
                return RewriteEachFunction(
                    program, [&](const FunctionPtr& function) { return TileKernelMatmuls(function, *context.soc); });
              });
}

}  // namespace pypto::passes
